"""hil_core.drives.servo.ServoAxes (numba kernels, hil_core.drives.servo_kernel) against its plain-numpy
oracle ServoAxesNumpy, and the compiled sample_knots and replan_knots against sample_knots_numpy and
replan_knots_numpy.

The two must agree to 1e-12 on every frame of seeded random command streams shaped like the
mock drives': 4-point lockstep messages (points at 0.625..2.5 ms after the stamp) and 8-point
overlapping real-time messages (points at 0.625..5 ms, the first four equal to the previous
message's last four), late and early stamps, gaps (holds), linear and Hermite knots, and
references far beyond the limits, so that the position, velocity and acceleration limits act.
"""
import hashlib
import pathlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hil_core.drives import servo_kernel
from hil_core.maths import jit
from hil_core.drives.joint_trajectory import sample_knots
from hil_core.drives.joint_trajectory_legacy import replan_knots, replan_knots_numpy, sample_knots_numpy
from hil_core.drives.servo import ServoAxes, ServoAxesNumpy, ServoConfig

TOL = 1e-12
DT, FRAME = 0.000625, 0.0025
TIGHT = dict(position_min=(-0.05,) * 6, position_max=(0.06,) * 6, velocity_max=(0.3,) * 6,
             acceleration_max=(6.0,) * 6)


class Oracles:
    """The numpy class in both modes, driven alongside: its step loop (the arithmetic the kernels
    repeat) and its default mode, whose matrix-product fast path equals the step loop up to
    rounding (within 1e-12 at the mock's gains; slower loops can differ by a few 1e-12, so the
    random-gain test compares with the step loop only)."""

    def __init__(self, cfg, p0, both=True):
        self.servos = [ServoAxesNumpy(cfg, p0, fast_path=False)] + ([ServoAxesNumpy(cfg, p0)] if both else [])

    def __getattr__(self, name):           # follow / hold / run on every oracle
        def call(*args):
            for servo in self.servos:
                getattr(servo, name)(*args)
        return call


def pair(cfg=None, p0=None, both=True):
    cfg = cfg or ServoConfig()
    p0 = np.zeros(6) if p0 is None else p0
    return ServoAxes(cfg, p0), Oracles(cfg, p0, both)


def assert_same(fast, oracles, what=''):
    for slow in oracles.servos:
        for name in ('position', 'velocity', 'acceleration'):
            np.testing.assert_allclose(getattr(fast, name), getattr(slow, name), rtol=0, atol=TOL,
                                       err_msg=f'{name} {what} (oracle fast_path={slow.fast_path})')


class Commands:
    """The mock's active trajectory: each message starts from the current setpoint (as a JTC
    does, hil_sim.mock_hexapod._set_trajectory); the oracle samples the knots for both."""

    def __init__(self, p0):
        self.knots = (np.array([0.0]), p0[None, :], None)

    def accept(self, now, stamp, times, pos, vel):
        sp_p, sp_v = sample_knots_numpy(*self.knots, np.array([now]))
        kt = stamp + times
        keep = kt > now + 1e-12
        if not np.any(keep):
            self.knots = (np.array([now]), pos[-1:], None)
            return
        knot_v = None if vel is None else np.vstack([sp_v, vel[keep]])
        self.knots = (np.r_[now, kt[keep]], np.vstack([sp_p, pos[keep]]), knot_v)

    def hold(self, now):
        sp_p, _ = sample_knots_numpy(*self.knots, np.array([now]))
        self.knots = (np.array([now]), sp_p, None)

    def frame(self, servo, now):
        knot_t, knot_p, knot_v = self.knots
        if knot_t.size == 1:
            servo.hold(4, knot_p[0])
        else:
            servo.follow(now, 4, knot_t, knot_p, knot_v)


def reference_grid(rng, n_frames, amplitude):
    """Positions and velocities on the 0.625 ms grid: a few random sines per axis."""
    t = DT * np.arange(4 * n_frames + 16)
    freq = rng.uniform(0.5, 9.0, (3, 6))
    amp = amplitude * rng.uniform(0.2, 1.0, (3, 6))
    phase = rng.uniform(0, 2 * np.pi, (3, 6))
    arg = 2 * np.pi * freq[None] * t[:, None, None] + phase[None]
    pos = np.sum(amp * np.sin(arg), axis=1)
    vel = np.sum(amp * 2 * np.pi * freq * np.cos(arg), axis=1)
    return pos, vel


def stream(seed, n_points, amplitude, with_velocities, cfg=None, n_frames=240):
    """Run both servos over a seeded command stream; compare after every frame."""
    rng = np.random.default_rng(seed)
    fast, slow = pair(cfg)
    commands = Commands(np.zeros(6))
    pos, vel = reference_grid(rng, n_frames, amplitude)
    last = None
    margin, peak = np.inf, 0.0              # least distance to a position limit, largest |a|
    for k in range(n_frames):
        now = k * FRAME
        event = rng.uniform()
        if event < 0.08:                                  # no message: hold (lockstep) / run on
            if n_points == 4:
                commands.hold(now)
            last = None
        else:
            jitter = 0.0 if event < 0.7 else rng.uniform(-1.2e-3, 1.5e-3)    # early / late stamps
            idx = 4 * k + np.arange(1, n_points + 1)
            times = DT * np.arange(1, n_points + 1)
            p, v = pos[idx], vel[idx]
            if n_points == 8 and last is not None and jitter == 0.0:
                assert np.array_equal(p[:4], last[4:])   # the overlapping layout
            last = p
            commands.accept(now, now + jitter, times, p, v if with_velocities else None)
        commands.frame(fast, now)
        commands.frame(slow, now)
        assert_same(fast, slow, f'seed {seed} frame {k}')
        margin = min(margin, np.min(np.minimum(fast.position - fast.p_min, fast.p_max - fast.position)))
        peak = max(peak, np.max(np.abs(fast.acceleration)))
    return margin, peak


@pytest.mark.parametrize('seed', range(4))
@pytest.mark.parametrize('n_points', [4, 8])
@pytest.mark.parametrize('with_velocities', [True, False])
def test_command_streams_match_the_numpy_oracle(seed, n_points, with_velocities):
    stream(seed, n_points, 0.004, with_velocities)


@pytest.mark.parametrize('seed', range(3))
@pytest.mark.parametrize('n_points', [4, 8])
def test_command_streams_beyond_the_limits_match_the_numpy_oracle(seed, n_points):
    margin, peak_acceleration = stream(100 + seed, n_points, 0.3, True, ServoConfig(**TIGHT))
    # the limits acted (the references go to about 0.5 m): a position limit was reached, not
    # passed, and the acceleration limit was applied
    assert -1e-12 <= margin < 1e-4
    assert peak_acceleration == pytest.approx(6.0, rel=1e-12)


def test_holds_and_limit_hits_match_the_numpy_oracle():
    rng = np.random.default_rng(7)
    fast, slow = pair(ServoConfig(**TIGHT), rng.uniform(-0.04, 0.05, 6))
    setpoint = np.zeros(6)
    for k in range(300):
        if k % 25 == 0:                     # a new setpoint, mostly beyond the position limits
            setpoint = rng.uniform(-0.3, 0.3, 6)
        n_servo = int(rng.integers(1, 9))
        fast.hold(n_servo, setpoint)
        slow.hold(n_servo, setpoint)
        assert_same(fast, slow, f'hold {k}')
    fast.hold(4, 0.01)                      # a scalar setpoint (numpy broadcasting path)
    slow.hold(4, 0.01)
    assert_same(fast, slow, 'scalar hold')


@pytest.mark.parametrize('given_acceleration', [True, False])
def test_run_with_wild_references_matches_the_numpy_oracle(given_acceleration):
    """ServoAxes.run as the plant adapter calls it: (m+1) setpoint rows, feedforward rows."""
    rng = np.random.default_rng(11)
    cfg = ServoConfig(position_min=(-0.1,) * 6, position_max=(0.15,) * 6, velocity_max=(0.5,) * 6,
                      acceleration_max=(8.0,) * 6)
    fast, slow = pair(cfg, rng.uniform(-0.09, 0.14, 6))
    for k in range(300):
        m = int(rng.choice([1, 5, 20, 45]))       # 45 > MAX_BLOCK: the oracle runs in blocks
        scale = [0.001, 0.05, 1.0][k % 3]
        ref_p = np.cumsum(rng.normal(0, scale, (m + 1, 6)), axis=0) + fast.position
        ref_v = rng.normal(0, 20 * scale, (m + 1, 6))
        ref_a = rng.normal(0, 200 * scale, (m, 6)) if given_acceleration else None
        fast.run(ref_p, ref_v, ref_a)
        slow.run(ref_p, ref_v, ref_a)
        assert_same(fast, slow, f'run {k}')


def test_knot_layouts_match_the_numpy_oracle():
    rng = np.random.default_rng(5)
    fast, slow = pair()
    layouts = [
        (np.array([0.001]), rng.normal(0, 0.01, (1, 6)), None),                       # one knot
        (np.array([0.001]), rng.normal(0, 0.01, (1, 6)), rng.normal(0, 0.1, (1, 6))),
        (np.array([-0.01, 0.0]), rng.normal(0, 0.01, (2, 6)), None),                   # all past
        (np.array([0.02, 0.03]), rng.normal(0, 0.01, (2, 6)), rng.normal(0, 0.1, (2, 6))),  # future
        (np.cumsum(rng.uniform(1e-4, 2e-3, 12)), rng.normal(0, 0.01, (12, 6)), rng.normal(0, 0.1, (12, 6))),
        (np.array([0.0, 0.001, 0.001, 0.003]), rng.normal(0, 0.01, (4, 6)), None),     # repeated time
    ]
    for knot_t, knot_p, knot_v in layouts:
        for now in (0.0, 0.0015):
            outcomes = []
            for servo in (fast, slow):
                try:
                    servo.follow(now, 4, knot_t, knot_p, knot_v)
                    outcomes.append('ok')
                except ValueError as exc:
                    outcomes.append(str(exc))
            assert outcomes[0] == outcomes[1], (knot_t, outcomes)
            assert_same(fast, slow, str(knot_t))


def test_non_finite_setpoints_are_refused_and_the_state_is_kept():
    fast, _ = pair()
    fast.hold(4, np.full(6, 0.01))
    before = [fast.position.copy(), fast.velocity.copy(), fast.acceleration.copy()]
    knot_t = DT * np.arange(5)
    bad_p = np.full((5, 6), 0.01)
    bad_p[3, 2] = np.nan
    bad_v = np.zeros((5, 6))
    bad_v[4, 0] = np.inf
    calls = [lambda: fast.follow(0.0, 4, knot_t, bad_p, np.zeros((5, 6))),
             lambda: fast.follow(0.0, 4, knot_t, np.zeros((5, 6)), bad_v),
             lambda: fast.hold(4, bad_p[3]),
             lambda: fast.run(bad_p, np.zeros((5, 6))),
             lambda: fast.run(np.zeros((5, 6)), np.zeros((5, 6)), np.full((4, 6), np.nan))]
    for call in calls:
        with pytest.raises(ValueError, match='not finite'):
            call()
        for kept, now in zip(before, (fast.position, fast.velocity, fast.acceleration)):
            np.testing.assert_array_equal(kept, now)


def test_each_frame_gives_new_state_arrays():
    """As the numpy class: a caller may keep the previous frame's arrays."""
    fast, _ = pair()
    kept = fast.position
    kept_copy = kept.copy()
    fast.hold(4, np.full(6, 0.01))
    assert fast.position is not kept
    np.testing.assert_array_equal(kept, kept_copy)


def test_sample_knots_matches_the_numpy_oracle():
    rng = np.random.default_rng(3)
    for n_knots in (1, 2, 5, 9):
        knot_t = np.cumsum(rng.uniform(1e-4, 1e-3, n_knots))
        knot_p = rng.normal(size=(n_knots, 6))
        knot_v = rng.normal(size=(n_knots, 6))
        t = np.r_[knot_t, rng.uniform(knot_t[0] - 1e-3, knot_t[-1] + 1e-3, 40)]    # at, between, outside
        for v in (knot_v, None):
            got, want = sample_knots(knot_t, knot_p, v, t), sample_knots_numpy(knot_t, knot_p, v, t)
            for g, w in zip(got, want):
                np.testing.assert_allclose(g, w, rtol=0, atol=TOL)
    # inputs the kernel leaves to the oracle: lists, a NaN time, non-increasing knots
    got = sample_knots([0.0, 1.0], [[0.0], [2.0]], None, np.array([0.5, np.nan]))
    want = sample_knots_numpy([0.0, 1.0], [[0.0], [2.0]], None, np.array([0.5, np.nan]))
    np.testing.assert_array_equal(got[0], want[0])


def _assert_same_knots(got, want):
    (gk, g_replanned), (wk, w_replanned) = got, want
    assert g_replanned == w_replanned
    for g, w in zip(gk, wk):
        assert (g is None) == (w is None)
        if g is not None:
            np.testing.assert_allclose(g, w, rtol=0, atol=TOL)


@settings(max_examples=200, deadline=None)
@given(n_knots=st.integers(1, 9), n_points=st.integers(1, 8), knot_velocities=st.booleans(),
       point_velocities=st.booleans(), measured=st.booleans(), start=st.floats(-0.01, 0.01),
       now=st.floats(-0.005, 0.02), seed=st.integers(0, 2 ** 16))
def test_replan_knots_matches_the_numpy_oracle(n_knots, n_points, knot_velocities, point_velocities, measured,
                                               start, now, seed):
    """The knots after a trajectory is taken in a frame: from the setpoint (sampled at, between
    and past the current knots) or the measured state, the points before, at and after ``now``
    (all dropped: the last one held, and ``replanned`` False)."""
    rng = np.random.default_rng(seed)
    knots = (np.cumsum(rng.uniform(1e-4, 3e-3, n_knots)), rng.normal(size=(n_knots, 6)),
             rng.normal(size=(n_knots, 6)) if knot_velocities else None)
    entry = (np.cumsum(rng.uniform(0.0, 3e-3, n_points)) + rng.uniform(0.0, 1e-3),
             rng.normal(size=(n_points, 6)), rng.normal(size=(n_points, 6)) if point_velocities else None)
    state = (rng.normal(size=6), rng.normal(size=6)) if measured else None
    _assert_same_knots(replan_knots(knots, entry, start, now, state),
                       replan_knots_numpy(knots, entry, start, now, state))


def test_replan_knots_leaves_unusual_knots_to_the_oracle():
    """Knots ``sample`` does not take (not increasing, a NaN time) and lists go the numpy way."""
    entry = (np.array([0.001, 0.002]), np.ones((2, 6)), None)
    for knot_t in (np.array([0.0, 0.0, 1.0]), np.array([0.0, np.nan, 1.0])):
        knots = (knot_t, np.zeros((3, 6)), None)
        with np.errstate(invalid='ignore', divide='ignore'):
            got, want = replan_knots(knots, entry, 0.0, 0.0005), replan_knots_numpy(knots, entry, 0.0, 0.0005)
        for g, w in zip(got[0], want[0]):
            np.testing.assert_array_equal(g, w)
    listed = ([0.0, 1.0], [[0.0] * 6, [1.0] * 6], None)
    _assert_same_knots(replan_knots(listed, entry, 0.0, 0.0), replan_knots_numpy(listed, entry, 0.0, 0.0))


@settings(max_examples=40, deadline=None)
@given(bandwidth=st.floats(1.0, 60.0), damping=st.floats(0.1, 2.0), kvff=st.floats(0.0, 1.5),
       kaff=st.floats(0.0, 1.5), steps=st.integers(3, 12), a_max=st.floats(0.5, 100.0),
       v_max=st.floats(0.01, 2.0), seed=st.integers(0, 2 ** 16))
def test_any_valid_configuration_matches_the_numpy_oracle(bandwidth, damping, kvff, kaff, steps, a_max, v_max, seed):
    cfg = ServoConfig(bandwidth=bandwidth, damping=damping, velocity_feedforward=kvff,
                      acceleration_feedforward=kaff, internal_steps=steps, velocity_max=(v_max,) * 6,
                      acceleration_max=(a_max,) * 6, position_min=(-0.1,) * 6, position_max=(0.1,) * 6)
    rng = np.random.default_rng(seed)
    fast, slow = pair(cfg, rng.uniform(-0.09, 0.09, 6), both=False)
    for k in range(30):
        knot_t = k * FRAME + DT * np.arange(5)
        knot_p = rng.uniform(-0.15, 0.15, (5, 6))
        knot_v = rng.normal(0, v_max, (5, 6))
        fast.follow(k * FRAME, 4, knot_t, knot_p, knot_v)
        slow.follow(k * FRAME, 4, knot_t, knot_p, knot_v)
        assert_same(fast, slow, f'frame {k}')


def test_no_frame_compiles():
    """The constructor compiled every entry point for its one signature and froze it: frames
    with other array layouts (views, Fortran order, read-only) use it without compiling."""
    fast, slow = pair()
    kernels = (servo_kernel.follow, servo_kernel.hold, servo_kernel.run, servo_kernel.sample, servo_kernel.replan)
    before = [len(k.signatures) for k in kernels]
    assert before == [1, 1, 1, 1, 1]
    knot_t = DT * np.arange(5)
    knot_p = np.asfortranarray(np.random.default_rng(1).normal(0, 0.01, (5, 6)))
    knot_v = np.broadcast_to(np.linspace(0, 0.1, 6), (5, 6))                  # read-only view
    for servo in (fast, slow):
        servo.follow(0.0, 4, knot_t, knot_p, knot_v)
        servo.hold(4, knot_p[1])                                             # strided row
        servo.run(knot_p[::-1], knot_v)
    assert_same(fast, slow)
    sample_knots(knot_t, knot_p[:, ::2], None, knot_t[::2])
    replan_knots((knot_t, knot_p, knot_v), (knot_t[1:], knot_p[1:], None), 0.0, DT)
    replan_knots((knot_t, knot_p, None), (knot_t[1:], knot_p[1:], knot_v[1:]), 0.0, DT, (knot_p[0], knot_v[0]))
    assert [len(k.signatures) for k in kernels] == before


def test_cache_is_stamped_with_the_kernel_sources():
    h = hashlib.sha256()
    for module in (jit, servo_kernel):
        h.update(pathlib.Path(module.__file__).read_bytes())
    assert jit.cache_stamp(servo_kernel.follow)[1] == h.hexdigest()
