"""Hexaslide geometry: seed 001 tables 1-3 and the reconstruction of the lost signs/offsets."""
import math

import numpy as np
import pytest
import yaml

from hil_core import hexaslide as hx
from hil_core.hexaslide import geometry as gm

# seed 001 table 2 (full, scaled) in mm / deg
TABLE2 = {'hexaslide_full': (463.0, 203.0, 686.6, 238.71, 38.474),
          'hexaslide_scaled': (154.3, 67.7, 228.9, 79.6, 38.5)}
SQ3 = math.sqrt(3.0) / 2.0


@pytest.mark.parametrize('name', hx.ROBOTS)
def test_table_values(name):
    g = hx.load_geometry(name)
    z, s, l, rp, th = TABLE2[name]
    assert (g.home_height, g.half_distance, g.link_length, g.platform_radius) == pytest.approx(
        (z / 1e3, s / 1e3, l / 1e3, rp / 1e3), abs=1e-12)
    assert math.degrees(g.platform_angle) == pytest.approx(th)
    table1 = [(1, 0, 0), (1, 0, 0), (-0.5, SQ3, 0), (-0.5, SQ3, 0), (-0.5, -SQ3, 0), (-0.5, -SQ3, 0)]
    np.testing.assert_allclose(g.guide_directions, table1, atol=1e-15)
    # base joints of a pair 2 s apart, platform joints on the radius R_p
    np.testing.assert_allclose(np.linalg.norm(g.guide_origins[0::2] - g.guide_origins[1::2], axis=1), 2 * s / 1e3)
    np.testing.assert_allclose(np.linalg.norm(g.platform_joints, axis=1), rp / 1e3)
    scale = 3.0 if name == 'hexaslide_scaled' else 1.0
    np.testing.assert_allclose(g.workspace_half_range[:3], np.array([0.150, 0.075, 0.075]) / scale)
    np.testing.assert_allclose(np.degrees(g.workspace_half_range[3:]), [5, 8, 3])
    assert g.joint_names == tuple(f'slider_{i}' for i in range(1, 7))


@pytest.mark.parametrize('name', hx.ROBOTS)
def test_home_is_zero_and_legs_have_link_length(name):
    g = hx.load_geometry(name)
    res = hx.inverse_kinematics(g, hx.home_pose(g))
    assert res.ok.all()
    np.testing.assert_allclose(res.q, 0.0, atol=1e-15)
    # independent closure: slider at c_i + q_home_i u_i is exactly l from the platform joint
    sliders = g.guide_origins + g.q_home[:, None] * g.guide_directions
    joints = g.home_position + g.platform_joints
    np.testing.assert_allclose(np.linalg.norm(joints - sliders, axis=1), g.link_length, rtol=1e-14)
    # + root of eq. 2: every slider outboard of its platform joint along its guide
    assert np.all(np.einsum('ij,ij->i', sliders - joints, g.guide_directions) > 0)
    # three-fold symmetry: a 120 deg yaw maps the robot onto itself (sliders 1,2 -> 3,4 -> 5,6)
    rot = np.array([[-0.5, -SQ3, 0], [SQ3, -0.5, 0], [0, 0, 1]])
    np.testing.assert_allclose(sliders[:2] @ rot.T, sliders[2:4], atol=1e-12)


@pytest.mark.parametrize('name', hx.ROBOTS)
@pytest.mark.parametrize('scale', [1.0, 1.1])
def test_nominal_workspace_corners_reachable_with_margin(name, scale):
    """Table 3 (translations /3 for the scaled robot): every corner of the box, and of a box
    10 % larger, has a real IK solution inside the stroke and the passive joint limits."""
    g = hx.load_geometry(name)
    corners = hx.box_corners(g, scale=scale, levels=(-1.0, 0.0, 1.0))
    res = hx.inverse_kinematics(g, corners)
    assert res.ok.all(), np.bincount(res.reason)
    assert res.discriminant.min() > 0.1 * g.link_length ** 2      # far from Delta = 0
    assert np.all(hx.kinetostatic_index(g, corners) < 4 * hx.kinetostatic_index(g, hx.home_pose(g)))


def test_theta_p_interpretation_is_the_well_conditioned_one():
    """The other reading of theta_p (+-theta_p/2 around the pair axis) is far worse conditioned."""
    data = yaml.safe_load((gm.CONFIG_DIR / 'hexafloat_full.yaml').read_text())

    def build(angle):
        return gm.build_geometry('x', data['home_height'], data['half_distance'], data['link_length'],
                                 data['platform_radius'], angle, data['guide_directions'],
                                 data['guide_side'], data['slider_stroke'], 90.0, 90.0,
                                 data['nominal_workspace'])
    chosen, half = build(data['platform_angle_deg']), build(data['platform_angle_deg'] / 2)
    k_chosen = hx.kinetostatic_index(chosen, hx.box_corners(chosen)).max()
    k_half = hx.kinetostatic_index(half, hx.box_corners(half)).max()
    assert k_half > 20 * k_chosen


def test_load_geometry_errors(tmp_path):
    with pytest.raises(ValueError, match='unknown hexaslide'):
        hx.load_geometry('hexapod_xl')
    bad = tmp_path / 'bad.yaml'
    data = yaml.safe_load((gm.CONFIG_DIR / 'hexafloat_scaled.yaml').read_text())
    del data['link_length']
    bad.write_text(yaml.safe_dump(data))
    with pytest.raises(ValueError, match='link_length'):
        hx.load_geometry(str(bad))
    data = yaml.safe_load((gm.CONFIG_DIR / 'hexafloat_scaled.yaml').read_text())
    data['link_length'] = 0.05                                        # cannot reach home
    bad.write_text(yaml.safe_dump(data))
    with pytest.raises(ValueError, match='no real inverse kinematics'):
        hx.load_geometry(str(bad))
    data['link_length'] = 0.2289
    data['guide_directions'][0] = [0.0, 0.0, 1.0]
    bad.write_text(yaml.safe_dump(data))
    with pytest.raises(ValueError, match='horizontal'):
        hx.load_geometry(str(bad))


def test_geometry_arrays_are_read_only():
    g = hx.load_geometry('hexaslide_scaled')
    with pytest.raises(ValueError):
        g.q_home[0] = 1.0
