"""Hybrid robot kinematics (seed 003 eq. 1-20) against independent computations."""
import numpy as np
import pytest

from hil_core.hybrid5 import dynamics as dyn, kinematics as kin

R = 0.6


def workspace(n=2000, seed=1):
    rng = np.random.default_rng(seed)
    return np.column_stack([rng.uniform(-0.2, 0.2, n), rng.uniform(-0.2, 0.2, n), rng.uniform(0.5, 1.2, n)])


def test_inverse_is_eq7_written_out():
    p = workspace(200)
    x, y, z = p.T
    s3 = np.sqrt(3) / 2 * R
    ref = np.column_stack([np.sqrt(x**2 + (y - R)**2 + z**2), np.sqrt((x - s3)**2 + (y + R / 2)**2 + z**2),
                           np.sqrt((x + s3)**2 + (y + R / 2)**2 + z**2)])
    np.testing.assert_allclose(kin.inverse(p, R), ref, rtol=0, atol=1e-15)
    # base points on radius R at 90, 330, 210 deg (eq. 4-6)
    ang = np.radians([90, 330, 210])
    np.testing.assert_allclose(kin.base_points(R), R * np.column_stack([np.cos(ang), np.sin(ang)]), atol=1e-15)


def test_forward_of_inverse_is_identity_over_the_workspace():
    p = workspace()
    np.testing.assert_allclose(kin.forward(kin.inverse(p, R), R), p, rtol=0, atol=1e-12)


def test_forward_rejects_lengths_without_assembly():
    with pytest.raises(ValueError):
        kin.forward(np.array([0.01, 1.0, 1.0]), R)
    with pytest.raises(ValueError):
        kin.forward(np.array([np.nan, 1.0, 1.0]), R)


def _curve(t):
    """Smooth test trajectory with analytic velocity/acceleration."""
    w = np.array([1.3, 2.1, 0.7])
    amp = np.array([0.08, -0.06, 0.1])
    p = np.array([0.01, -0.02, 0.85]) + amp * np.sin(w * t[:, None])
    return p, amp * w * np.cos(w * t[:, None]), -amp * w * w * np.sin(w * t[:, None])


def test_derivatives_match_finite_differences():
    t = np.linspace(0, 5, 401)
    h = 1e-5
    p, v, a = _curve(t)
    l, ld, ldd = kin.inverse_derivatives(p, v, a, R)
    lp, lm = kin.inverse(_curve(t + h)[0], R), kin.inverse(_curve(t - h)[0], R)
    np.testing.assert_allclose(ld, (lp - lm) / (2 * h), atol=1e-9)
    ldp = kin.inverse_derivatives(*_curve(t + h), R)[1]
    ldm = kin.inverse_derivatives(*_curve(t - h), R)[1]
    np.testing.assert_allclose(ldd, (ldp - ldm) / (2 * h), atol=1e-8)
    # and back: forward kinematics with derivatives recovers p, v, a
    p2, v2, a2 = kin.forward_derivatives(l, ld, ldd, R)
    np.testing.assert_allclose(p2, p, atol=1e-12)
    np.testing.assert_allclose(v2, v, atol=1e-12)
    np.testing.assert_allclose(a2, a, atol=1e-10)


def test_inverse_jacobian_against_numeric_jacobian():
    p = workspace(20)
    h = 1e-6
    for q in p:
        J = np.column_stack([(kin.inverse(q + h * e, R) - kin.inverse(q - h * e, R)) / (2 * h) for e in np.eye(3)])
        np.testing.assert_allclose(kin.inverse_jacobian(q, R) @ J, np.eye(3), atol=1e-8)


def test_leg_model_is_the_kinetostatic_reduction():
    """Eq. 23-24 closed form == diag(J^-T M_x J^-1) and J^-T (0, 0, m_g g) with a numeric J."""
    h = 1e-6
    for q in workspace(10, seed=3):
        J = np.column_stack([(kin.inverse(q + h * e, R) - kin.inverse(q - h * e, R)) / (2 * h) for e in np.eye(3)])
        Jinv = np.linalg.inv(J)
        M, G = dyn.leg_model(q, R, 26.0, 13.0, 3.6, 75.0)
        Mx = dyn.task_mass(q, R, 26.0, 13.0, 3.6)
        np.testing.assert_allclose(M, np.diag(Jinv.T @ Mx @ Jinv), rtol=1e-7)
        np.testing.assert_allclose(G, Jinv.T @ np.array([0, 0, 75.0 * dyn.G0]), rtol=1e-7)


def test_float32_stays_float32():
    p = workspace(5).astype(np.float32)
    out = kin.inverse_derivatives(p, p * 0, p * 0, R)
    assert all(x.dtype == np.float32 for x in out)
    assert kin.forward(out[0], R).dtype == np.float32
    assert dyn.leg_model(p, R, 26.0, 13.0, 3.6, 75.0)[0].dtype == np.float32


def test_table_kinematics_eq17_and_derivatives():
    h = 0.05
    t = np.linspace(0, 3, 301)
    th = np.column_stack([0.6 * np.sin(1.7 * t), 2.0 * t])
    om = np.column_stack([0.6 * 1.7 * np.cos(1.7 * t), 2.0 + 0 * t])
    ep = np.column_stack([-0.6 * 1.7**2 * np.sin(1.7 * t), 0 * t])
    pos, vel, acc, ori = kin.table_forward(th, om, ep, h)
    np.testing.assert_allclose(pos, np.column_stack([0 * t, -h * np.sin(th[:, 0]), h * np.cos(th[:, 0])]), atol=1e-15)
    np.testing.assert_allclose(ori, th)
    dt = t[1] - t[0]
    np.testing.assert_allclose(vel[1:-1], (pos[2:] - pos[:-2]) / (2 * dt), atol=2e-5)
    np.testing.assert_allclose(acc[1:-1], (vel[2:] - vel[:-2]) / (2 * dt), atol=5e-5)
    # eq. 18-20: the table's inverse kinematics is the identity on (alpha, gamma) and derivatives
    for a, b in zip(kin.table_inverse(th, om, ep), (th, om, ep)):
        np.testing.assert_array_equal(a, b)
