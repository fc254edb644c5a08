"""Rotation helpers against scipy's Rotation (an independent implementation)."""
import numpy as np
from scipy.spatial.transform import Rotation

from hil_core.maths import rotations as rot

RNG = np.random.default_rng(11)


def test_quaternion_matrix_rpy_round_trips_match_scipy():
    q = Rotation.random(500, random_state=3).as_quat()
    np.testing.assert_allclose(rot.quat_to_matrix(q), Rotation.from_quat(q).as_matrix(), atol=1e-12)
    q_back = rot.matrix_to_quat(rot.quat_to_matrix(q))
    same = np.minimum(np.abs(q_back - q).max(axis=1), np.abs(q_back + q).max(axis=1))
    assert same.max() < 1e-12
    rpy = RNG.uniform([-3, -1.5, -3], [3, 1.5, 3], size=(500, 3))
    np.testing.assert_allclose(rot.rpy_to_matrix(rpy), Rotation.from_euler('xyz', rpy).as_matrix(), atol=1e-12)
    np.testing.assert_allclose(rot.matrix_to_rpy(rot.rpy_to_matrix(rpy)), rpy, atol=1e-12)
    qr = rot.rpy_to_quat(rpy)
    np.testing.assert_allclose(rot.quat_to_matrix(qr), Rotation.from_euler('xyz', rpy).as_matrix(), atol=1e-12)


def test_rotvec_maps_match_scipy_including_tiny_angles():
    v = np.vstack([RNG.normal(size=(200, 3)), RNG.normal(size=(20, 3)) * 1e-10, np.zeros((1, 3))])
    q = rot.rotvec_to_quat(v)
    np.testing.assert_allclose(rot.quat_to_matrix(q), Rotation.from_rotvec(v).as_matrix(), atol=1e-12)
    small = np.linalg.norm(v, axis=1) < np.pi
    np.testing.assert_allclose(rot.quat_to_rotvec(q)[small], v[small], atol=1e-12)


def test_multiply_and_rotate_compose_like_matrices():
    a, b = Rotation.random(2, random_state=5).as_quat()
    np.testing.assert_allclose(rot.quat_to_matrix(rot.quat_multiply(a, b)),
                               rot.quat_to_matrix(a) @ rot.quat_to_matrix(b), atol=1e-12)
    v = RNG.normal(size=3)
    np.testing.assert_allclose(rot.rotate(a, v), Rotation.from_quat(a).apply(v), atol=1e-12)
