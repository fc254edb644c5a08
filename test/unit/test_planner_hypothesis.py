"""Hypothesis property tests of every planner invariant (the planner hardening), over mode sequences as
well as references (derandomized: the same examples in every run, so CI is reproducible).

* whole histories: random supervisor mode sequences (requested modes and mirrored ones, FAULT ->
  IDLE -> HOMING while braking included), references (sinusoids and pushes beyond both limits,
  orientations beyond the range), bad inputs (NaN, inf, 1.7e308, wrong sizes, non-unit
  quaternions, far-future / old / repeated / non-integer stamps, dropouts), measured poses beyond
  the hard limit or the orientation range, and limiter failures: every published pose keeps the
  invariants of test_planner_invariants.py, the guard never intervenes, plans are bounded, and
  a FAULT ends at rest, holding;
* a refused input has no effect on the motion: the output is bit-identical to the one with no
  input in that frame, and a near-unit quaternion moves the robot like the unit one;
* frames without a usable reference raise ``reference_stale`` exactly when they reach the timeout;
* the envelope alone: from any admissible state, any demanded accelerations keep the box, the
  limits, and the angular rates computed from the quaternions (the derating);
* homing/return plans from any admissible state: within the limits and the box, home at rest,
  bounded in length;
* the compliant recovery from any exit (point on the soft surface, outward velocity within the
  limits): within the velocity and acceleration limits, inside the hard limit, back inside.
"""
import numpy as np
from hypothesis import HealthCheck, assume, given, settings, strategies as st

from hil_core.supervision.modes import HilMode
from hil_core.planner.config import PlannerConfig
from hil_core.planner.dof import dof_to_pose, pose_to_dof_1
from hil_core.planner.envelope import Envelope, brake_step, rate_limits
from hil_core.planner.ellipsoid import direction
from hil_core.planner.plans import plan_home
from hil_core.planner.trajectory_planner import TrajectoryPlanner
from hil_core.maths.rotations import rpy_to_quat
from test_planner_invariants import A_MAX, DT, HOME, V_MAX, WS, recovery_path, violations

T_NS = 2_500_000
RANGE = np.asarray(WS.orientation_range)
AXES = np.array(WS.soft.semi_axes).reshape(3, 2).min(axis=1)
A_LIM, V_LIM = rate_limits(A_MAX, V_MAX, RANGE)
LOWER, UPPER = np.r_[-np.inf, -np.inf, -np.inf, -RANGE], np.r_[np.inf, np.inf, np.inf, RANGE]


def fast(n):
    return settings(max_examples=n, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


unit = st.floats(-1.0, 1.0)
MODES = [HilMode.IDLE, HilMode.HOMING, HilMode.RETURNING_HOME, HilMode.FAULT, HilMode.RUNNING,
         HilMode.SYNCHRONIZING, HilMode.SAFETY_RECOVERY]
BAD = ('nan', 'inf', 'huge', 'size', 'nonunit', 'future', 'far_future', 'old', 'repeat', 'float_stamp', 'none')
# always refused ('repeat' is refused only while the stamp it repeats is the last accepted one)
INVALID = tuple(b for b in BAD if b not in ('repeat', 'none'))


@st.composite
def motions(draw):
    """Reference as a function of the frame: home + sinusoids (up to 1.6x the soft limit, angles
    up to 2x the range) + a push along a random direction at up to 0.6 m/s."""
    amp = np.array([draw(st.sampled_from([0.0, 0.3, 0.8, 1.2, 1.6]) | st.floats(0.0, 1.6)) for _ in range(3)]) * AXES
    rot = np.array([draw(st.sampled_from([0.0, 0.5, 1.0, 2.0]) | st.floats(0.0, 2.0)) for _ in range(3)]) * RANGE
    freq = draw(st.sampled_from([0.3, 1.0, 3.0]) | st.floats(0.05, 4.0))
    u = np.array([draw(unit), draw(unit), draw(unit)])
    u = u / np.linalg.norm(u) if np.linalg.norm(u) > 1e-3 else np.array([1.0, 0.0, 0.0])
    speed = draw(st.sampled_from([0.0, 0.0, 0.05, 0.2, 0.6]))
    phase = draw(st.floats(0.0, 6.3))

    def ref(k):
        t = k * DT
        s = 1.0 - np.cos(2 * np.pi * freq * t + phase * np.r_[0.0, 1.0, 2.0])
        pos = HOME[:3] + amp * s + u * min(speed * t, 0.15)
        return np.r_[pos, rpy_to_quat(rot * np.sin(2 * np.pi * freq * t + phase))]
    return ref


def spoil(kind, ref, stamp, rng):
    """A bad (reference, stamp) of the given kind made from a good one."""
    r = ref.copy()
    if kind == 'nan':
        r[rng.integers(7)] = np.nan
    elif kind == 'inf':
        r[rng.integers(7)] = -np.inf
    elif kind == 'huge':
        r[rng.integers(3)] = 1.7e308
    elif kind == 'size':
        r = r[:int(rng.integers(0, 7))]
    elif kind == 'nonunit':
        r[3:] *= rng.choice([0.0, 0.5, 1.01, 1.5, 3.0])
    elif kind == 'future':
        stamp = stamp + 2 * 10 ** 9
    elif kind == 'far_future':
        stamp = 10 ** 18
    elif kind == 'old':
        stamp = stamp - 5 * 10 ** 9
    elif kind == 'repeat':
        stamp = stamp - T_NS
    elif kind == 'float_stamp':
        stamp = float(stamp)
    else:
        r, stamp = None, None
    return r, stamp


def scenario(draw):
    """Supervisor mode segments: free sequences, or the ones the adversarial check found worst
    (reset and re-home within a few frames while braking; stop requests while moving)."""
    M = HilMode
    kind = draw(st.sampled_from(['free', 'reset_while_braking', 'stop_while_moving']))
    run = [(M.HOMING, draw(st.integers(30, 500))), (M.RUNNING, draw(st.integers(1, 500)))]
    if kind == 'reset_while_braking':
        return run + [(M.FAULT, draw(st.integers(1, 12))), (M.IDLE, draw(st.integers(1, 12))),
                      (M.HOMING, draw(st.integers(1, 600)))]
    if kind == 'stop_while_moving':
        return run + [(M.RETURNING_HOME, draw(st.integers(1, 700))), (M.IDLE, draw(st.integers(1, 5))),
                      (M.HOMING, draw(st.integers(1, 300)))]
    return [run[0]] + draw(st.lists(st.tuples(st.sampled_from(MODES), st.integers(1, 250)), max_size=6))


@st.composite
def histories(draw):
    segments = scenario(draw)
    modes = [m for m, n in segments for _ in range(n)]
    n = len(modes)
    bad = draw(st.lists(st.tuples(st.integers(0, n - 1), st.sampled_from(BAD), st.integers(1, 50)), max_size=6))
    measured = draw(st.lists(st.tuples(st.integers(0, n - 1), st.sampled_from(['beyond', 'tilted', 'invalid'])),
                             max_size=1)) if draw(st.integers(0, 3)) == 0 else []
    start = HOME.copy()
    if draw(st.booleans()):
        start[:3] += np.array([draw(unit), draw(unit), draw(unit)]) * 2.0 * AXES       # maybe beyond the hard limit
        start[3:] = rpy_to_quat(np.array([draw(unit), draw(unit), draw(unit)]) * 3.0 * RANGE)
    return dict(modes=modes, ref=draw(motions()), bad=bad, measured=measured, start=start,
                limiter=draw(st.sampled_from(['asc', 'asc', 'asc', 'ruckig'])),
                fail_at=draw(st.integers(0, n - 1)) if draw(st.integers(0, 3)) == 0 else None,
                homing=draw(st.sampled_from([0.01, 0.1]) | st.floats(0.01, 1.0)),
                sync=draw(st.sampled_from([0.01, 0.1]) | st.floats(0.01, 0.5)), seed=draw(st.integers(0, 2 ** 31)))


class _FailingOnce:
    """Stands in for ruckig for one frame: raises like it does on a refused input."""

    def __init__(self, real):
        self.real = real

    def update(self, *_):
        from ruckig import RuckigError
        raise RuckigError('[ruckig] error in step 1, dof: 0 input: injected')


def drive(h, tail=60):
    """Run a history; FAULT for ``tail`` frames at the end. Returns (planner, poses, events, phases)."""
    pl = TrajectoryPlanner(PlannerConfig(WS, limiter=h['limiter'], homing_min_duration=h['homing'],
                                         sync_duration=h['sync']))
    rng = np.random.default_rng(h['seed'])
    bad = {}
    for k0, kind, length in h['bad']:
        for k in range(k0, k0 + (length if kind in ('none', 'far_future', 'repeat') else 1)):
            bad[k] = kind
    meas = dict(h['measured'])
    modes = h['modes'] + [HilMode.FAULT] * tail
    poses, events, phases = [], [], []
    measured = h['start']
    for k, mode in enumerate(modes):
        ref, stamp = h['ref'](k), (k + 1) * T_NS
        if k in bad:
            ref, stamp = spoil(bad[k], ref, stamp, rng)
        if meas.get(k) == 'beyond':
            measured = np.r_[HOME[:3] + 1.05 * WS.hard_expansion * AXES * np.r_[0, 0, 1], HOME[3:]]
        elif meas.get(k) == 'tilted':
            measured = np.r_[HOME[:3], rpy_to_quat(1.3 * WS.hard_expansion * RANGE * np.r_[0, 1, 0])]
        elif meas.get(k) == 'invalid':
            measured = np.full(7, np.nan)
        real = None
        if k == h['fail_at'] and h['limiter'] == 'ruckig':
            real, pl.limiter._otg = pl.limiter._otg, _FailingOnce(pl.limiter._otg)
        res = pl.step(ref, stamp, mode, measured=measured, now_ns=(k + 1) * T_NS)
        if real is not None:
            pl.limiter._otg = real
        if res.pose is not None:
            poses.append(res.pose)
            measured = res.pose                   # an ideal robot follows the output
        events += [(k, e) for e in res.events]
        phases.append(res.phase)
    return pl, poses, events, phases


def plan_bound(e):
    """Longest plan the bounded planner may make for a plan event (independent of plans.py):
    the candidate growth 1.25^7 on a rest-to-rest ramp over at most the hard-limit radius (or the
    position bound for a start far away), with limits derated to 80 %, plus a full brake."""
    d = 10.0 * WS.hard_expansion * max(WS.soft.semi_axes)
    rest = max(1.875 * d / (0.8 * V_MAX.min()), np.sqrt(5.78 * d / (0.8 * A_MAX.min())), 1.0)
    return 1.25 ** 7 * rest + 1.0 / (0.8 * A_MAX.min()) * V_MAX.max()


@fast(60)
@given(histories())
def test_every_history_keeps_every_invariant(h):
    pl, poses, events, phases = drive(h)
    bad = violations(poses)
    assert not bad, f'invariants broken: {bad}'
    assert pl.guard_interventions == 0
    names = [e.name for _, e in events]
    assert 'acceleration_guard' not in names
    # the final FAULT is a controlled stop: at rest, holding the very same pose
    assert phases[-1] is HilMode.FAULT and not np.any(pl.v)
    assert np.array_equal(poses[-1], poses[-2])
    for _, e in events:
        if 'duration' in e.values:
            assert e.values['duration'] <= plan_bound(e) and e.values['frames'] * DT == e.values['duration']
        if e.name == 'fault':
            assert e.message
    if h['fail_at'] is not None and h['limiter'] == 'ruckig':
        k_fail = [k for k, e in events if e.name == 'limiter_error']
        assert all(phases[k] is HilMode.FAULT for k in k_fail)


@fast(25)
@given(motions(), st.lists(st.tuples(st.integers(0, 899), st.sampled_from(INVALID)), min_size=1, max_size=12),
       st.integers(0, 2 ** 31))
def test_a_refused_input_moves_the_robot_exactly_like_no_input(ref, spoiled, seed):
    rng = np.random.default_rng(seed)
    bad = dict(spoiled)

    def run(spoil_them):
        pl = TrajectoryPlanner(PlannerConfig(WS, homing_min_duration=0.05, sync_duration=0.05))
        out, names = [], []
        pl.step(None, None, HilMode.IDLE, measured=HOME, now_ns=0)
        for k in range(900):
            r, s = ref(k), (k + 1) * T_NS
            if k in bad:
                r, s = spoil(bad[k], r, s, rng) if spoil_them else (None, None)
            res = pl.step(r, s, HilMode.HOMING, now_ns=(k + 1) * T_NS)
            out.append(res.pose)
            names += [e.name for e in res.events]
        return np.array(out), names
    state = rng.bit_generator.state
    spoiled_out, spoiled_names = run(True)
    rng.bit_generator.state = state
    clean_out, clean_names = run(False)
    np.testing.assert_array_equal(spoiled_out, clean_out)
    assert 'reference_invalid' in spoiled_names and 'reference_invalid' not in clean_names
    assert [n for n in spoiled_names if n != 'reference_invalid'] == clean_names


@fast(15)
@given(motions(), st.floats(-0.9e-3, 0.9e-3))
def test_a_near_unit_quaternion_moves_the_robot_like_the_unit_one(ref, eps):
    def run(scale):
        pl = TrajectoryPlanner(PlannerConfig(WS, homing_min_duration=0.05, sync_duration=0.05))
        pl.step(None, None, HilMode.IDLE, measured=HOME, now_ns=0)
        out = []
        for k in range(500):
            r = ref(k)
            r[3:] *= scale
            out.append(pl.step(r, (k + 1) * T_NS, HilMode.HOMING, now_ns=(k + 1) * T_NS).pose)
        return np.array(out)
    np.testing.assert_allclose(run(1.0 + eps), run(1.0), atol=1e-12)


@fast(30)
@given(st.integers(5, 60), st.integers(1, 120), st.lists(st.sampled_from(INVALID + ('none',)), min_size=1, max_size=5))
def test_reference_stale_comes_exactly_when_the_unusable_frames_reach_the_timeout(timeout, streak, kinds):
    pl = TrajectoryPlanner(PlannerConfig(WS, homing_min_duration=0.01, sync_duration=0.01,
                                         reference_timeout_frames=timeout))
    pl.step(None, None, HilMode.IDLE, measured=HOME, now_ns=0)
    rng = np.random.default_rng(streak)
    k = 0
    while pl.phase is not HilMode.RUNNING:
        k += 1
        pl.step(HOME, k * T_NS, HilMode.HOMING, now_ns=k * T_NS)
    stale = []
    for i in range(streak):
        k += 1
        r, s = spoil(kinds[i % len(kinds)], HOME, k * T_NS, rng)
        stale += [i + 1 for e in pl.step(r, s, HilMode.RUNNING, now_ns=k * T_NS).events if e.name == 'reference_stale']
    assert stale == ([timeout] if streak >= timeout else [])
    k += 1
    assert not [e for e in pl.step(HOME, k * T_NS, HilMode.RUNNING, now_ns=k * T_NS).events
                if e.name.startswith('reference_')]


def admissible_state(draw):
    """Angles inside the box, velocities within the limits, able to stop inside the box."""
    rot = np.array([draw(unit) for _ in range(3)]) * RANGE
    w = np.array([draw(unit) for _ in range(3)]) * V_LIM[3:]
    x, v = np.r_[HOME[:3] + np.array([draw(unit) for _ in range(3)]) * 0.5 * AXES, rot], \
        np.r_[np.array([draw(unit) for _ in range(3)]) * V_LIM[:3], w]
    for _ in range(60):                           # slow down until the stop stays inside the box
        xs, vs = x, v
        stop_ok = True
        while np.any(vs):
            xs, vs = brake_step(xs, vs, A_LIM, DT)
            stop_ok &= bool(np.all(np.abs(xs[3:]) <= RANGE))
        if stop_ok and np.all(np.abs(x[3:] - v[3:] * DT) <= RANGE):      # and came from inside
            return x, v
        v = v * 0.8
    return x, np.zeros(6)


@fast(60)
@given(st.data())
def test_the_envelope_keeps_box_limits_and_quaternion_rates_for_any_demand(data):
    x, v = admissible_state(data.draw)
    env = Envelope(DT, A_LIM, V_LIM, LOWER, UPPER)
    demands = data.draw(st.lists(st.tuples(*[st.floats(-200.0, 200.0)] * 6), min_size=50, max_size=300))
    xs = [x - v * DT, x]
    for u in demands:
        a = env.clip(x, v, np.array(u))
        v = v + a * DT
        x = x + v * DT
        xs.append(x)
    xs = np.array(xs)
    assert np.all(np.abs(xs[:, 3:]) <= RANGE * (1 + 1e-12))
    # the envelope has no position bound on x, y, z (the soft/hard limits are the recovery's job)
    bad = {k: r for k, r in violations(dof_to_pose(xs)).items() if k != 'hard_limit'}
    assert not bad, bad
    # and the controlled stop from wherever it ended stays inside the box as well
    while np.any(v):
        x, v = brake_step(x, v, A_LIM, DT)
        assert np.all(np.abs(x[3:]) <= RANGE * (1 + 1e-12))


@fast(60)
@given(st.data(), st.sampled_from(['quintic', 'cubic', 'cosine']), st.floats(0.0, 1.0))
def test_plans_home_stay_within_the_limits_and_the_box_and_are_bounded(data, shape, min_duration):
    x0, v0 = admissible_state(data.draw)
    home = pose_to_dof_1(HOME)
    p = plan_home(x0 - v0 * DT, x0, home, DT, A_LIM, V_LIM, shape, min_duration, LOWER, UPPER)
    samples = p.samples()
    seq = np.vstack([x0 - v0 * DT, x0, samples, home])
    assert np.array_equal(samples[-1], home)
    assert len(samples) == p.frames or p.switched        # a blend that had to switch to brake-then-ramp
    assert np.all(np.abs(np.diff(seq, axis=0)) / DT <= V_LIM * (1 + 1e-9))
    assert np.all(np.abs(np.diff(seq, 2, axis=0)) / DT ** 2 <= A_LIM * (1 + 1e-9))
    assert np.all(np.abs(seq[:, 3:]) <= RANGE * (1 + 1e-12))
    d = np.abs(x0 - home) + V_LIM ** 2 / (2 * A_LIM)          # + a full stop (brake, then ramp)
    rest = max(min_duration, float(np.max(1.875 * d / V_LIM)), float(np.max(np.sqrt(10.0 * d / A_LIM))))
    assert len(samples) * DT <= 1.25 ** 7 * rest / (1 - 1e-6) + np.max(V_LIM / A_LIM) + 2 * DT


sign = st.sampled_from([-1.0, 1.0])


@fast(120)
@given(st.floats(-np.pi / 2, np.pi / 2), st.floats(-np.pi / 2, 1.5 * np.pi), sign, sign, sign,
       st.sampled_from([1.0, 0.7]) | st.floats(0.0, 1.0))
def test_recovery_from_any_exit_keeps_the_limits_and_comes_back(phi, theta, sx, sy, sz, speed):
    """Exits with every DOF at (a fraction of) its velocity limit are the worst: the field turns
    speed of one axis into another (x at 0.15 m/s into y/z, limited to 0.1 m/s)."""
    u = direction(phi, theta)
    p0 = HOME[:3] + 1.001 * WS.soft.radius(u) * u
    v = np.array([sx, sy, sz]) * speed * V_LIM[:3]
    assume(np.dot(v, WS.soft.normal(p0 - HOME[:3])) > 0)          # an exit moves outward
    xs, back = recovery_path(p0, v, A_LIM, V_LIM, 4000)
    assert back
    assert not violations(dof_to_pose(xs)), violations(dof_to_pose(xs))
