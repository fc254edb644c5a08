"""iiwa 14 kinematics: URDF (pinocchio) vs the seed-002 DH table implemented by hand."""
import numpy as np
import pinocchio as pin
import pytest

from hil_core.iiwa.kinematics import JOINT_NAMES, IiwaKinematics, dh_forward
from hil_core.maths.rotations import quat_to_matrix


@pytest.fixture(scope='module')
def kin():
    return IiwaKinematics.from_urdf()


def test_pinocchio_fk_equals_dh_table_on_1000_random_configurations(kin):
    rng = np.random.default_rng(2)
    qs = rng.uniform(kin.lower, kin.upper, size=(1000, 7))
    T_dh = dh_forward(qs)
    worst = 0.0
    for q, T in zip(qs, T_dh):
        M = kin.fk_transform(q)
        worst = max(worst, np.abs(M.translation - T[:3, 3]).max(), np.abs(M.rotation - T[:3, :3]).max())
        pose = kin.fk(q)
        worst = max(worst, np.abs(quat_to_matrix(pose[3:]) - T[:3, :3]).max())
    assert worst < 1e-12


def test_zero_configuration_is_the_stretched_arm(kin):
    pose = kin.fk(np.zeros(7))
    np.testing.assert_allclose(pose[:3], [0, 0, 0.36 + 0.42 + 0.40 + 0.126], atol=1e-12)


def test_jacobian_matches_finite_differences(kin):
    rng = np.random.default_rng(3)
    for _ in range(20):
        q = rng.uniform(kin.lower, kin.upper)
        J = kin.jacobian(q)
        h = 1e-6
        num = np.zeros((6, 7))
        for i in range(7):
            dq = np.zeros(7)
            dq[i] = h
            Mp, Mm = kin.fk_transform(q + dq), kin.fk_transform(q - dq)
            num[:3, i] = (Mp.translation - Mm.translation) / (2 * h)
            num[3:, i] = pin.log3(Mp.rotation @ Mm.rotation.T) / (2 * h)
        np.testing.assert_allclose(J, num, atol=1e-7)


def test_limits_and_names_from_the_urdf(kin):
    assert kin.joint_names == list(JOINT_NAMES)
    np.testing.assert_allclose(np.degrees(kin.upper), [170, 120, 170, 120, 170, 120, 175])
    np.testing.assert_allclose(np.degrees(kin.velocity_limit), [85, 85, 100, 75, 130, 135, 135])
    np.testing.assert_allclose(kin.effort_limit, [320, 320, 176, 176, 110, 40, 40])
    masses = [kin.model.inertias[i].mass for i in range(1, 8)]
    np.testing.assert_allclose(masses, [5.29, 5.69, 3.46, 4.12, 1.56, 2.46, 0.27])


@pytest.mark.parametrize('bad', [np.full(7, np.nan), np.zeros(6), [0, 0, 0, np.inf, 0, 0, 0]])
def test_bad_joint_vectors_are_refused(kin, bad):
    with pytest.raises(ValueError):
        kin.fk(bad)
