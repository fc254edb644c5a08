"""Hexaslide inverse kinematics, inverse Jacobian and kinetostatic index (seed 001 eq. 1-2)."""
import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from hil_core import hexaslide as hx
from hil_core.hexaslide import geometry as gm
from hil_core.maths.rotations import quat_multiply, rotvec_to_quat

GEOM = hx.load_geometry('hexaslide_scaled')


def closure_error(g, poses, q):
    """Independent check of eq. 1 with scipy rotations: | |p + R b - slider| - l |."""
    rot = Rotation.from_quat(poses[:, 3:]).as_matrix()
    joints = poses[:, None, :3] + np.einsum('nij,kj->nki', rot, g.platform_joints)
    sliders = g.guide_origins + (g.q_home + q)[..., None] * g.guide_directions
    return np.abs(np.linalg.norm(joints - sliders, axis=-1) - g.link_length)


@pytest.mark.parametrize('name', hx.ROBOTS)
def test_ik_satisfies_closure_and_is_vectorised(name):
    g = hx.load_geometry(name)
    poses = hx.random_poses(g, 500, rng=3)
    res = hx.inverse_kinematics(g, poses)
    assert res.q.shape == (500, 6) and res.ok.shape == (500,) and res.reason.dtype.kind == 'i'
    assert res.ok.all()
    assert closure_error(g, poses, res.q).max() < 1e-14
    single = np.array([hx.inverse_kinematics(g, p).q[0] for p in poses[:20]])
    np.testing.assert_array_equal(single, res.q[:20])


def test_ik_normalises_quaternions():
    poses = hx.random_poses(GEOM, 10, rng=4)
    scaled = poses.copy()
    scaled[:, 3:] *= 3.7
    np.testing.assert_allclose(hx.inverse_kinematics(GEOM, scaled).q,
                               hx.inverse_kinematics(GEOM, poses).q, atol=1e-15)


def test_reason_codes():
    home = hx.home_pose(GEOM)
    too_high = home + [0, 0, 0.3, 0, 0, 0, 0]                          # links cannot reach
    out_of_stroke = home + [0.12, 0, 0, 0, 0, 0, 0]                    # reachable, beyond stroke
    nan = home.copy()
    nan[0] = np.nan
    inf = home.copy()
    inf[2] = np.inf
    zero_quat = home * [1, 1, 1, 0, 0, 0, 0]
    res = hx.inverse_kinematics(GEOM, np.array([home, too_high, out_of_stroke, nan, inf, zero_quat]))
    np.testing.assert_array_equal(res.reason, [hx.OK, hx.NO_REAL_SOLUTION, hx.SLIDER_STROKE,
                                              hx.INVALID_INPUT, hx.INVALID_INPUT, hx.INVALID_INPUT])
    np.testing.assert_array_equal(res.ok, [True, False, False, False, False, False])
    assert np.isnan(res.q[1]).any() and res.discriminant[1].min() < 0
    assert np.all(np.isfinite(res.q[2])) and res.q[2].max() > GEOM.stroke_max[0]
    assert np.isnan(res.q[3:]).all()
    for code in range(5):
        assert hx.REASON_TEXT[code]


def test_passive_joint_limits():
    tight = gm.build_geometry('tight', GEOM.home_height, GEOM.half_distance, GEOM.link_length,
                              GEOM.platform_radius, np.degrees(GEOM.platform_angle),
                              GEOM.guide_directions, [-1, 1, -1, 1, -1, 1], (-0.125, 0.1), 2.0, 2.0,
                              {'surge': 0.05, 'sway': 0.025, 'heave': 0.025,
                               'roll_deg': 5, 'pitch_deg': 8, 'yaw_deg': 3})
    poses = np.array([hx.home_pose(tight), hx.poses_from_offsets(tight, [0.02, 0, 0, 0, 0, 0])[0],
                      hx.poses_from_offsets(tight, [0, 0, 0, 0, 0.1, 0])[0]])
    res = hx.inverse_kinematics(tight, poses)
    np.testing.assert_array_equal(res.reason, [hx.OK, hx.PASSIVE_JOINT_RANGE, hx.PASSIVE_JOINT_RANGE])
    # a pure translation keeps the platform orientation: same deflection seen from both ends
    np.testing.assert_allclose(res.universal_angle[1], res.spherical_angle[1], atol=1e-12)
    assert res.spherical_angle[2].max() > res.universal_angle[2].max()


def test_bad_shapes_raise():
    for bad in (np.zeros(6), np.zeros((3, 6)), np.zeros((2, 2, 7))):
        with pytest.raises(ValueError, match='shape'):
            hx.inverse_kinematics(GEOM, bad)


@pytest.mark.parametrize('name', hx.ROBOTS)
def test_inverse_jacobian_matches_finite_differences(name):
    """qdot = Jinv [v; w] against central differences of the IK along each twist direction."""
    g = hx.load_geometry(name)
    h = 1e-6
    for pose in hx.random_poses(g, 20, rng=5):
        jinv = hx.inverse_jacobian(g, pose)
        fd = np.empty((6, 6))
        for k in range(6):
            twist = np.zeros(6)
            twist[k] = h

            def moved(sign):
                p = pose.copy()
                p[:3] += sign * twist[:3]
                p[3:] = quat_multiply(rotvec_to_quat(sign * twist[3:]), pose[3:])
                return hx.inverse_kinematics(g, p).q[0]
            fd[:, k] = (moved(1) - moved(-1)) / (2 * h)
        assert np.abs(jinv - fd).max() < 1e-7


def test_inverse_jacobian_vectorised_and_nan_outside():
    poses = hx.random_poses(GEOM, 5, rng=6)
    stacked = hx.inverse_jacobian(GEOM, poses)
    assert stacked.shape == (5, 6, 6)
    np.testing.assert_allclose(stacked[2], hx.inverse_jacobian(GEOM, poses[2]), atol=0)
    too_high = hx.home_pose(GEOM) + [0, 0, 0.3, 0, 0, 0, 0]
    assert np.isnan(hx.inverse_jacobian(GEOM, too_high)).any()


def test_kinetostatic_index_is_the_max_load_multiplication():
    """||J^-T||: largest slider force per unit wrench, attained by the worst wrench direction."""
    poses = hx.random_poses(GEOM, 30, rng=7)
    index = hx.kinetostatic_index(GEOM, poses)
    rng = np.random.default_rng(8)
    for pose, k in zip(poses, index):
        jinv = hx.inverse_jacobian(GEOM, pose)
        assert k == pytest.approx(np.linalg.norm(np.linalg.inv(jinv).T, 2), rel=1e-10)
        wrenches = rng.normal(size=(200, 6))
        forces = np.linalg.solve(jinv.T, wrenches.T).T                 # W = Jinv^T f
        gains = np.linalg.norm(forces, axis=1) / np.linalg.norm(wrenches, axis=1)
        assert gains.max() <= k * (1 + 1e-12)
        _, _, vt = np.linalg.svd(jinv.T)                               # worst wrench direction
        worst = jinv.T @ vt[-1]
        assert np.linalg.norm(np.linalg.solve(jinv.T, worst)) / np.linalg.norm(worst) == pytest.approx(k)
    assert hx.kinetostatic_index(GEOM, hx.home_pose(GEOM) + [0, 0, 0.3, 0, 0, 0, 0])[0] == np.inf
