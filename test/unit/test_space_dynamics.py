"""Free-floating satellite + iiwa (seed 002 eq. 5-12): momentum map, Dynamic Jacobian,
control law, limits, closed loop and validation against the forward-dynamics reference."""
import numpy as np
import pinocchio as pin
import pytest

from hil_core.space import reference
from hil_core.space.control import ControlGains, JointLimiter, damped_pinv, rotation_error
from hil_core.space.model import (FreeFloatingModel, SatelliteParams, euler_rate_matrix, euler_zyx,
                                  euler_zyx_to_matrix)
from hil_core.space.plant import SpacePlant

Q0 = np.radians([-26.25, 65.96, 0.72, 67.57, -63.15, -2.56, 140.79])      # seed 002 initial joints
EE_DES = [1.448, -0.236, 0.094]          # seed 002 desired EE, shifted by our mount r_q (docs)
THETA_DES = np.radians([-88.38, -37.27, -56.99])
VMAX = np.radians([85, 85, 100, 75, 130, 135, 135]) * 0.5


@pytest.fixture(scope='module')
def model():
    return FreeFloatingModel()


def random_state(rng, model):
    pose = np.concatenate([rng.normal(size=3), pin.Quaternion(pin.SE3.Random().rotation).coeffs()])
    q = rng.uniform(model.model.lowerPositionLimit[7:], model.model.upperPositionLimit[7:])
    return pose, q, rng.normal(size=7)


def test_momentum_stays_zero_under_the_computed_base_velocity(model):
    rng = np.random.default_rng(0)
    worst = 0.0
    for _ in range(200):
        pose, q, qd = random_state(rng, model)
        nu = model.base_twist(q, qd)
        h = model.momentum(model.config(pose, q), np.concatenate([nu, qd]))
        worst = max(worst, np.abs(h).max())
    assert worst < 1e-12
    # and the arm really moves the satellite (the coupling is visible)
    assert np.linalg.norm(model.base_twist(Q0, np.ones(7))) > 1e-3


def _flow(model, pose, q, qd, t, steps=40):
    """Free-floating FK at time t of q(t) = q + t qd under momentum conservation (RK4 on the
    base twist eq. 7 along the straight joint path), independent of the Dynamic Jacobian."""
    x = model.config(pose, q)
    h = t / steps
    for k in range(steps):
        def f(s):
            return model.base_twist(q + s * qd, qd)
        s0 = k * h
        k1 = f(s0)
        k2 = f(s0 + h / 2)
        k4 = f(s0 + h)
        # base twist is time-varying but its frame moves with the base: integrate in the body
        x[:7] = pin.SE3ToXYZQUAT(pin.XYZQUATToSE3(x[:7]) * pin.exp6(pin.Motion(h / 6 * (k1 + 4 * k2 + k4))))
    x[7:] = q + t * qd
    return model.ee_pose(x)


def test_dynamic_jacobian_matches_finite_differences_under_momentum_conservation(model):
    rng = np.random.default_rng(1)
    for _ in range(5):
        pose, q, qd = random_state(rng, model)
        Jd = model.dynamic_jacobian(model.config(pose, q))
        h = 1e-4
        Mp, Mm = _flow(model, pose, q, qd, h), _flow(model, pose, q, qd, -h)
        v = (Mp.translation - Mm.translation) / (2 * h)
        w = pin.log3(Mp.rotation @ Mm.rotation.T) / (2 * h)
        np.testing.assert_allclose(Jd @ qd, np.concatenate([v, w]), atol=1e-6)
        # and it differs from the fixed-base Jacobian: the satellite reacts
        assert np.abs(Jd - model.jacobians(model.config(pose, q))[1]).max() > 1e-3


def test_euler_zyx_rate_matrix_matches_finite_differences():
    rng = np.random.default_rng(2)
    for _ in range(20):
        th, dth = rng.uniform(-1.2, 1.2, 3), rng.normal(size=3)
        h = 1e-6
        Rp, Rm = euler_zyx_to_matrix(th + h * dth), euler_zyx_to_matrix(th - h * dth)
        w = pin.log3(Rp @ Rm.T) / (2 * h)
        np.testing.assert_allclose(euler_rate_matrix(th) @ dth, w, atol=1e-8)
        np.testing.assert_allclose(euler_zyx(euler_zyx_to_matrix(th)), th, atol=1e-12)


def test_damped_pinv_is_exact_away_from_singularities_and_reports_damping_near_them():
    rng = np.random.default_rng(3)
    J = rng.normal(size=(6, 7))
    Jp, lam, smin = damped_pinv(J, 0.05, 0.05)
    np.testing.assert_allclose(Jp, np.linalg.pinv(J), atol=1e-10)
    assert lam == 0.0 and smin == pytest.approx(np.linalg.svd(J)[1][-1])
    U, s, Vt = np.linalg.svd(J, full_matrices=False)
    s[-1] = 1e-9                                   # a singular direction
    Js = (U * s) @ Vt
    Jp, lam, smin = damped_pinv(Js, 0.05, 0.05)
    assert lam == pytest.approx(0.05, rel=1e-6)
    assert np.abs(Jp).max() < 1.0 / 0.05           # bounded, unlike the plain inverse


def test_rotation_error_is_the_rotation_vector():
    rng = np.random.default_rng(4)
    for _ in range(20):
        v = rng.normal(size=3)
        v *= rng.uniform(0, 3.1) / np.linalg.norm(v)
        R = pin.SE3.Random().rotation
        np.testing.assert_allclose(rotation_error(pin.exp3(v) @ R, R), v, atol=1e-7)


def test_limiter_is_smooth_and_keeps_direction():
    lim = JointLimiter(-np.ones(7) * 2, np.ones(7) * 2, VMAX, np.full(7, 5.0))
    dt = 1e-3
    prev = np.zeros(7)
    want = np.array([3.0, -1.0, 0.5, 0.2, 0, 0, 0])
    for _ in range(2000):
        out, _ = lim.step(want, np.zeros(7), dt)
        assert np.all(np.abs(out - prev) <= 5.0 * dt + 1e-12)
        assert np.all(np.abs(out) <= VMAX + 1e-12)
        prev = out
    np.testing.assert_allclose(out / np.linalg.norm(out), want / np.linalg.norm(want), atol=1e-9)
    # next to the upper limit of joint 1 the command toward it goes to zero, away from it is free
    out, _ = lim.step(np.ones(7) * 0.1, np.full(7, 2.0 - 0.02), dt)
    assert np.all(out[0] <= prev[0])
    steps = 0
    while np.any(lim.last != 0):
        b = lim.brake(dt)
        steps += 1
        assert steps < 1000
    assert np.all(b == 0)


def test_bad_satellite_parameters_are_refused():
    with pytest.raises(ValueError):
        FreeFloatingModel(SatelliteParams(mass=-1.0))
    with pytest.raises(ValueError):
        FreeFloatingModel(SatelliteParams(inertia=(1, 1, 1, 5, 0, 0)))
    with pytest.raises(ValueError):
        FreeFloatingModel(SatelliteParams(mount_xyz=(np.nan, 0, 0)))


def run_closed_loop(model, gains, T, dt=1e-3, lag=0.01):
    """Pure-core lockstep: frame k = plant step on q_k, the arm follows the command through a
    first-order joint velocity loop (time constant ``lag``) integrated exactly over the frame."""
    plant = SpacePlant(model, gains, VMAX, np.full(7, 5.0))
    plant.reset(Q0)
    plant.set_setpoint(EE_DES, euler_zyx_to_matrix(THETA_DES))
    q, qd = Q0.copy(), np.zeros(7)
    rec = []
    a = np.exp(-dt / lag)
    for k in range(int(round(T / dt)) + 1):
        out = plant.step(q, dt, qd_measured=qd)
        rec.append((k * dt, q.copy(), out))
        # exact first-order response to a constant command over one frame
        q = q + out.command * dt + (qd - out.command) * lag * (1 - a)
        qd = out.command + (qd - out.command) * a
    return rec


def test_closed_loop_pi_converges_and_the_satellite_moves(model):
    pi = dict(kv=(2.0,) * 3, kw=(2.0,) * 3, ki_v=(1.0,) * 3, ki_w=(1.0,) * 3)
    rec = run_closed_loop(model, ControlGains(**pi), 10.0)
    err0, errT = rec[0][2].error, rec[-1][2].error
    assert np.linalg.norm(err0[:3]) > 0.3
    assert np.linalg.norm(errT[:3]) < 5e-4 and np.degrees(np.linalg.norm(errT[3:])) < 0.05
    assert np.linalg.norm(rec[-1][2].sat_pose[:3]) > 5e-4    # moved as momentum demands
    # P law of the seed is slower: at 3 s the PI law is closer to the set-point than P
    p = run_closed_loop(model, ControlGains(), 3.0)     # seed: K_v = K_w = identity
    assert np.linalg.norm(rec[3000][2].error[:3]) < np.linalg.norm(p[-1][2].error[:3])


def test_hil_plant_matches_the_forward_dynamics_reference(model):
    gains = ControlGains(ki_v=(0.5,) * 3, ki_w=(0.5,) * 3)
    rec = run_closed_loop(model, gains, 3.0)
    t = np.array([r[0] for r in rec])
    qs = np.array([r[1] for r in rec])
    sat = np.array([r[2].sat_pose for r in rec])
    ee = np.array([r[2].ee_pose for r in rec])
    ref_sat, ref_ee = reference.simulate(model, t, qs, dt=5e-4)
    d = reference.compare(sat, ee, ref_sat, ref_ee)
    assert np.linalg.norm(sat[-1, :3]) > 5e-4
    assert d['satellite_position_diff_m'] <= 1e-4 and d['ee_position_diff_m'] <= 1e-4
    assert d['satellite_attitude_diff_deg'] <= 0.01 and d['ee_orientation_diff_deg'] <= 0.01
