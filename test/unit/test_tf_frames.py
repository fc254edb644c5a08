"""hil_core.maths.tf_frames against independent computations: pinocchio's forward kinematics of the
same URDF, scipy's rotations, and the Hexaslide's own chain points."""
import pathlib

import numpy as np
import pinocchio as pin
import pytest
from scipy.spatial.transform import Rotation

from hil_core import hexaslide as hx
from hil_core.maths import tf_frames as tf

ROOT = pathlib.Path(__file__).resolve().parents[2]
rng = np.random.default_rng(11)


def test_rpy_is_the_urdf_convention():
    for _ in range(20):
        rpy = rng.uniform(-3, 3, 3)
        q = tf.rpy_to_quat(rpy)
        ref = Rotation.from_euler('xyz', rpy).as_quat()          # extrinsic x, y, z = URDF rpy
        assert min(np.abs(q - ref).max(), np.abs(q + ref).max()) < 1e-14


def test_iiwa_chain_equals_pinocchio_forward_kinematics():
    text = (ROOT / 'urdf' / 'iiwa14.urdf').read_text()
    joints = tf.urdf_joints(text)
    model = pin.buildModelFromUrdf(str(ROOT / 'urdf' / 'iiwa14.urdf'))
    data = model.createData()
    fid = model.getFrameId('iiwa_link_ee')
    for _ in range(5):
        q = rng.uniform(-2, 2, 7)
        pin.framesForwardKinematics(model, data, q)
        chain = tf.moving_transforms(joints, {f'iiwa_joint_{i + 1}': q[i] for i in range(7)})
        chain += tf.fixed_transforms(joints)
        by_parent = {t[0]: t for t in chain}
        acc = by_parent['iiwa_link_0']
        while acc[1] in by_parent:
            acc = tf.compose(acc, by_parent[acc[1]])
        assert acc[1] == 'iiwa_link_ee'
        M = data.oMf[fid]
        np.testing.assert_allclose(acc[2], M.translation, atol=1e-12)
        np.testing.assert_allclose(Rotation.from_quat(acc[3]).as_matrix(), M.rotation, atol=1e-12)


@pytest.mark.parametrize('name, fname', [('hexaslide_scaled', 'hexafloat_scaled.urdf'),
                                         ('hexaslide_full', 'hexafloat_full.urdf')])
def test_hexapod_slider_frames_are_the_slider_positions(name, fname):
    g = hx.load_geometry(name)
    joints = tf.urdf_joints((ROOT / 'urdf' / fname).read_text())
    fl = tf.floating_joint(joints)
    assert (fl.parent, fl.child) == ('hexapod_base', 'tcp')
    assert tf.fixed_transforms(joints) == []
    pose = hx.random_poses(g, 1, rng=2)[0]
    q = hx.inverse_kinematics(g, pose[None]).q[0]
    frames = tf.moving_transforms(joints, dict(zip(g.joint_names, q)))
    sliders, pjoints = hx.chain_points(g, pose, q)
    assert [f[1] for f in frames] == [f'{n}_link' for n in g.joint_names]
    np.testing.assert_allclose(np.array([f[2] for f in frames]), sliders, atol=1e-12)
    legs = tf.hexapod_leg_frames('hexapod_base', sliders, pjoints)
    for (_, child, xyz, quat), s, p in zip(legs, sliders, pjoints):
        z = Rotation.from_quat(quat).apply([0.0, 0.0, 1.0])
        np.testing.assert_allclose(z, (p - s) / np.linalg.norm(p - s), atol=1e-12)
        np.testing.assert_allclose(xyz, s)


def test_z_alignment_in_the_degenerate_directions():
    for d in ([0, 0, 1.0], [0, 0, -2.0], [1e-15, 0, 1.0]):
        z = Rotation.from_quat(tf.quat_from_z(d)).apply([0.0, 0.0, 1.0])
        np.testing.assert_allclose(z, np.asarray(d) / np.linalg.norm(d), atol=1e-12)


def test_the_rows_at_once_are_the_one_at_a_time_bit_for_bit():
    """``quats_from_z`` (the legs' frames in one pass) gives exactly ``quat_from_z`` of each row,
    the degenerate directions included."""
    rng = np.random.default_rng(5)
    rows = np.vstack([rng.normal(size=(200, 3)), [[0, 0, 1.0], [0, 0, -2.0], [1e-15, 0, 1.0]]])
    at_once = tf.quats_from_z(rows)
    assert np.array_equal(at_once, np.array([tf.quat_from_z(d) for d in rows]))
