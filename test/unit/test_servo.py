"""hil_core.drives.servo and hil_core.drives.joint_trajectory: the mock hexapod's drive model and command checks.

ServoAxes is the compiled class; its numpy oracle ServoAxesNumpy is compared with it frame by
frame in test_servo_compiled.py, and checked here where noted.

Expected values come from independent computations: scipy.signal (ZOH discretisation of the
plant, closed with the same gains), the continuous second-order step response in closed form,
scipy's CubicHermiteSpline, and the analytic ramp lag of a PD loop without feedforward.
"""
import numpy as np
import pytest
from scipy import signal
from scipy.interpolate import CubicHermiteSpline

from hil_core.drives.joint_trajectory import order_joint_trajectory, sample_knots, validate_joint_trajectory
from hil_core.drives.servo import ServoAxes, ServoAxesNumpy, ServoConfig

NAMES = [f'slider_{i}' for i in range(1, 7)]
BIG = dict(position_min=(-10.0,) * 6, position_max=(10.0,) * 6, velocity_max=(1e3,) * 6,
           acceleration_max=(1e6,) * 6)


def _step_response(servo, step, m):
    ref_p = np.full((m + 1, servo.n), step)
    servo.run(ref_p, np.zeros_like(ref_p), np.zeros((m, servo.n)))


def test_step_response_matches_scipy_sampled_data_loop():
    cfg = ServoConfig(bandwidth=40.0, damping=0.6, **BIG)
    servo = ServoAxes(cfg, np.zeros(6))
    h, m = servo.h, 400
    # Plant p'' = a discretised with scipy's ZOH; loop a = Kp (r - p) - Kv v closed by hand.
    ad, bd, _, _, _ = signal.cont2discrete((np.array([[0, 1], [0, 0]]), np.array([[0], [1]]),
                                            np.eye(2), np.zeros((2, 1))), h, method='zoh')
    wn = 2 * np.pi * 40.0
    k = np.array([[wn * wn, 2 * 0.6 * wn]])
    acl = ad - bd @ k
    bcl = bd * wn * wn
    _, y, x = signal.dlsim((acl, bcl, np.eye(2), np.zeros((2, 1)), h), np.full(m + 1, 0.01))
    traj = []
    for _ in range(m):
        _step_response(servo, 0.01, 1)
        traj.append(servo.position[0])
    np.testing.assert_allclose(traj, x[1:, 0], rtol=0, atol=1e-13)


def test_fine_integration_converges_to_continuous_second_order_step():
    zeta, fn = 0.7, 50.0
    wn = 2 * np.pi * fn
    wd = wn * np.sqrt(1 - zeta ** 2)
    errors = []
    for steps in (5, 20, 80):
        servo = ServoAxes(ServoConfig(bandwidth=fn, damping=zeta, internal_steps=steps, **BIG), np.zeros(6))
        m = 40 * steps                      # 25 ms, five time constants
        t = servo.h * np.arange(1, m + 1)
        y = []
        for _ in range(m):
            _step_response(servo, 1.0, 1)
            y.append(servo.position[0])
        exact = 1 - np.exp(-zeta * wn * t) * (np.cos(wd * t) + zeta / np.sqrt(1 - zeta ** 2) * np.sin(wd * t))
        errors.append(np.max(np.abs(np.array(y) - exact)))
    assert errors[0] < 0.03                 # default 125 us loop: within 3 % of the continuous design
    assert errors[2] < errors[1] < errors[0]
    assert errors[2] < 0.002


def test_ramp_lag_without_feedforward_and_none_with_it():
    v = 0.05
    for kvff, expected_lag in ((0.0, 2 * 0.7 / (2 * np.pi * 50.0)), (1.0, 0.0)):
        servo = ServoAxes(ServoConfig(velocity_feedforward=kvff, acceleration_feedforward=0.0, **BIG),
                          np.zeros(6))
        m = 5 * 400                         # 0.25 s: transient gone
        t = servo.h * np.arange(m + 1)
        ref_p = np.outer(v * t, np.ones(6))
        servo.run(ref_p, np.full_like(ref_p, v), np.zeros((m, 6)))
        lag = (ref_p[-1, 0] - servo.position[0]) / v
        assert lag == pytest.approx(expected_lag, abs=1e-9)


@pytest.mark.parametrize('freq', [1.0, 3.0, 7.0, 11.0])
def test_servo_with_feedforward_adds_far_less_than_1ms_delay(freq):
    servo = ServoAxes(ServoConfig(), np.zeros(6))
    amp, w, T, dt = 0.002, 2 * np.pi * freq, 0.0025, 0.000625
    sp_p, sp_v, out, ts = np.zeros(6), np.zeros(6), [], []
    for k in range(int(1.5 / T)):
        tk = k * T
        kt = tk + dt * np.arange(1, 5)
        kp = np.outer(amp * np.sin(w * kt), np.ones(6))
        kv = np.outer(amp * w * np.cos(w * kt), np.ones(6))
        servo.follow(tk, 4, np.r_[tk, kt], np.vstack([sp_p, kp]), np.vstack([sp_v, kv]))
        sp_p, sp_v = kp[-1], kv[-1]
        ts.append(tk + T)
        out.append(servo.position[0])
    ts, out = np.array(ts), np.array(out)
    keep = ts > 0.3                       # the start-up transient (setpoint velocity 0 -> A w) is gone
    ts, out = ts[keep], out[keep]
    c = np.linalg.lstsq(np.c_[np.sin(w * ts), np.cos(w * ts)], out, rcond=None)[0]
    delay = -np.arctan2(c[1], c[0]) / w
    assert abs(np.hypot(*c) / amp - 1) < 1e-3
    assert abs(delay) < 1e-5               # << 1 ms


@pytest.mark.parametrize('axes', [ServoAxes, ServoAxesNumpy])
def test_limits_never_exceeded_under_random_references(axes):
    rng = np.random.default_rng(1234)
    cfg = ServoConfig(position_min=(-0.1,) * 6, position_max=(0.15,) * 6, velocity_max=(0.5,) * 6,
                      acceleration_max=(8.0,) * 6)
    for trial in range(20):
        servo = axes(cfg, rng.uniform(-0.09, 0.14, 6))
        p_lo, p_hi = np.inf * np.ones(6), -np.inf * np.ones(6)
        for _ in range(300):
            kind = rng.integers(3)
            if kind == 0:       # jumps far beyond the limits
                target = rng.uniform(-1, 1, 6)
                ref_p, ref_v = np.tile(target, (2, 1)), np.zeros((2, 6))
            elif kind == 1:     # wild velocity feedforward
                ref_p = np.tile(servo.position, (2, 1))
                ref_v = np.tile(rng.uniform(-20, 20, 6), (2, 1))
            else:               # spike in the acceleration feedforward
                ref_p = np.tile(servo.position + rng.normal(0, 0.01, 6), (2, 1))
                ref_v = np.vstack([np.zeros(6), rng.uniform(-5, 5, 6)])
            p0, v0 = servo.position.copy(), servo.velocity.copy()
            servo.run(ref_p, ref_v)
            a = servo.acceleration
            assert np.all(np.abs(a) <= cfg.acceleration_max[0] * (1 + 1e-12))
            assert np.all(np.abs(servo.velocity) <= cfg.velocity_max[0] * (1 + 1e-12))
            assert np.allclose(servo.velocity, v0 + a * servo.h)     # continuous velocity
            # Continuous-time extremum inside the step (where v crosses zero).
            tau = np.clip(-v0 / np.where(a == 0, np.inf, a), 0, servo.h)
            p_mid = p0 + v0 * tau + 0.5 * a * tau ** 2
            p_lo = np.minimum(p_lo, np.minimum(p_mid, servo.position))
            p_hi = np.maximum(p_hi, np.maximum(p_mid, servo.position))
        assert np.all(p_lo >= -0.1 - 1e-12) and np.all(p_hi <= 0.15 + 1e-12), trial


def test_far_setpoint_moves_smoothly_and_nan_is_refused_without_motion():
    servo = ServoAxes(ServoConfig(), np.zeros(6))
    prev = servo.position.copy()
    for _ in range(200):
        servo.hold(1, np.full(6, 0.19))
        assert np.all(np.abs(servo.position - prev) <= 1.0 * servo.config.servo_period + 1e-12)
        prev = servo.position.copy()
    before = (servo.position.copy(), servo.velocity.copy())
    bad = np.full((6, 6), 0.1)
    bad[3, 2] = np.nan
    with pytest.raises(ValueError, match='not finite'):
        servo.run(bad, np.zeros((6, 6)))
    np.testing.assert_array_equal(servo.position, before[0])
    np.testing.assert_array_equal(servo.velocity, before[1])


def test_config_problems_are_named():
    assert 'too high' in ServoConfig(bandwidth=300.0).problem()
    assert 'above' in ServoConfig(position_min=(0.1,) * 6, position_max=(0.0,) * 6).problem()
    assert 'one value per joint' in ServoConfig(velocity_max=(1.0,) * 5).problem()
    with pytest.raises(ValueError, match='beyond the position limits'):
        ServoAxes(ServoConfig(), np.full(6, 0.5))


def test_sample_knots_matches_scipy_cubic_hermite_and_linear():
    rng = np.random.default_rng(3)
    kt = np.cumsum(rng.uniform(0.1, 0.5, 6))
    kp, kv = rng.normal(size=(6, 6)), rng.normal(size=(6, 6))
    t = np.linspace(kt[0], kt[-1], 101)
    p, v = sample_knots(kt, kp, kv, t)
    ref = CubicHermiteSpline(kt, kp, kv)
    np.testing.assert_allclose(p, ref(t), atol=1e-12)
    np.testing.assert_allclose(v, ref(t, 1), atol=1e-10)
    p, v = sample_knots(kt, kp, None, t)
    np.testing.assert_allclose(p[:, 2], np.interp(t, kt, kp[:, 2]), atol=1e-12)
    p, v = sample_knots(kt, kp, kv, np.array([kt[0] - 1, kt[-1] + 1]))
    np.testing.assert_array_equal(p, kp[[0, -1]])
    np.testing.assert_array_equal(v, 0.0)


GOOD_T = [0.000625, 0.00125, 0.001875, 0.0025]


def _points(value=0.01, n=6):
    return [[value] * n for _ in GOOD_T]


@pytest.mark.parametrize('names, times, positions, velocities, reason', [
    (NAMES[:5], GOOD_T, _points(n=5), None, 'wrong joint count'),
    (NAMES[:5] + ['slider_1'], GOOD_T, _points(), None, 'duplicate joint name'),
    (NAMES[:5] + ['wrist'], GOOD_T, _points(), None, 'unknown joint name'),
    (NAMES, [], [], None, 'no points'),
    (NAMES, GOOD_T, _points()[:3] + [[0.0] * 5], None, 'wrong joint count'),
    (NAMES, GOOD_T, _points()[:2] + [[np.nan] * 6] + _points()[:1], None, 'NaN'),
    (NAMES, GOOD_T, _points()[:3] + [[np.inf] + [0.0] * 5], None, 'NaN/inf'),
    (NAMES, GOOD_T, _points(), [[0.0] * 6] * 3 + [[0, 0, np.nan, 0, 0, 0]], 'velocity'),
    (NAMES, GOOD_T, _points(), [[0.0] * 6] * 3 + [[0.0] * 4], 'velocities'),
    (NAMES, [0.000625, 0.00125, 0.00125, 0.0025], _points(), None, 'non-monotonic'),
    (NAMES, [0.000625, 0.0025, 0.001875, 0.003], _points(), None, 'non-monotonic'),
    (NAMES, [-0.001, 0.00125, 0.001875, 0.0025], _points(), None, 'negative'),
    (NAMES, [np.nan, 0.00125, 0.001875, 0.0025], _points(), None, 'non-finite time'),
    (NAMES, GOOD_T, _points(0.25), None, 'beyond its limits'),
    (NAMES, GOOD_T, _points(), [[5.0] * 6] * 4, 'exceeds its limit'),
])
def test_bad_trajectories_are_rejected_with_a_reason(names, times, positions, velocities, reason):
    ok, why = validate_joint_trajectory(names, NAMES, times, positions, velocities,
                                        position_min=[-0.2] * 6, position_max=[0.2] * 6,
                                        velocity_max=[1.0] * 6)
    assert not ok
    assert reason in why


def test_good_trajectory_is_reordered_by_name():
    shuffled = NAMES[::-1]
    pos = [[0.01 * (j + 1) for j in range(6)] for _ in GOOD_T]      # value = 0.01 * index in shuffled
    vel = [[0.1 * (j + 1) for j in range(6)] for _ in GOOD_T]
    ok, why = validate_joint_trajectory(shuffled, NAMES, GOOD_T, pos, vel, [-0.2] * 6, [0.2] * 6)
    assert ok, why
    p, v = order_joint_trajectory(shuffled, NAMES, pos, vel)
    np.testing.assert_allclose(p[0], [0.06, 0.05, 0.04, 0.03, 0.02, 0.01])
    np.testing.assert_allclose(v[1], [0.6, 0.5, 0.4, 0.3, 0.2, 0.1])
    _, v = order_joint_trajectory(NAMES, NAMES, pos, [[] for _ in GOOD_T])
    assert v is None


def test_linear_block_fast_path_equals_the_step_loop():
    """The numpy oracle's matrix-product fast path is its own step loop up to rounding."""
    rng = np.random.default_rng(9)
    m = 237                                   # several blocks, last one partial
    t = np.arange(m + 1) * 125e-6
    for amp in (0.001, 0.3):                  # inside the limits / saturating them
        ref_p = np.outer(amp * np.sin(2 * np.pi * 7 * t), rng.uniform(0.5, 1, 6))
        ref_v = np.gradient(ref_p, t, axis=0)
        fast, slow = ServoAxesNumpy(ServoConfig(), np.zeros(6)), ServoAxesNumpy(ServoConfig(), np.zeros(6))
        fast.run(ref_p, ref_v)
        slow._run_steps(ref_p, ref_v, np.diff(ref_v, axis=0) / slow.h)
        np.testing.assert_allclose(fast.position, slow.position, atol=1e-12)
        np.testing.assert_allclose(fast.velocity, slow.velocity, atol=1e-10)
