"""Planner hardening: each planner defect found by the adversarial histories, as a test that failed
before the hardening and passes now (the invariants are in test_planner_invariants.py)."""
import numpy as np
import pytest

from hil_core.supervision.modes import HilMode
from hil_core.planner.config import PlannerConfig
from hil_core.planner.trajectory_planner import TrajectoryPlanner
from hil_core.maths.rotations import quat_to_rpy, rpy_to_quat
from test_planner_invariants import A_MAX, DT, HOME, V_MAX, WS, assert_safe, recovery_path, violations

T_NS = 2_500_000
RANGE = np.asarray(WS.orientation_range)


class Run:
    """A planner driven frame by frame; records poses, events (frame, event) and phases."""

    def __init__(self, limiter='asc', measured=HOME, **cfg):
        cfg = {'homing_min_duration': 0.01, 'sync_duration': 0.01, **cfg}
        self.pl = TrajectoryPlanner(PlannerConfig(WS, limiter=limiter, **cfg))
        self.k = 0
        self.poses, self.events, self.phases = [], [], []
        self.step(None, HilMode.IDLE, measured=measured)

    def step(self, ref, mode, stamp='frame', now='frame', **kw):
        self.k += 1
        stamp = self.k * T_NS if stamp == 'frame' else stamp
        now = self.k * T_NS if now == 'frame' else now
        res = self.pl.step(ref, None if ref is None else stamp, mode, now_ns=now, **kw)
        if res.pose is not None:
            self.poses.append(res.pose)
        self.events += [(self.k, e) for e in res.events]
        self.phases.append(res.phase)
        return res

    def names(self):
        return [e.name for _, e in self.events]

    def until_running(self):
        while self.pl.phase is not HilMode.RUNNING:
            self.step(HOME, HilMode.HOMING)
            assert self.k < 2000
        return self


def test_a_huge_finite_reference_is_refused_before_any_arithmetic():
    """x = 1.7e308 overflowed the ASC to NaN; the output then coasted through the hard limit."""
    run = Run().until_running()
    for _ in range(20):
        run.step(np.r_[HOME[:3] + [0.0, 0.01, 0.0], HOME[3:]], HilMode.RUNNING)
    huge = np.r_[1.7e308, HOME[1:]]
    for _ in range(50):
        run.step(huge, HilMode.RUNNING)
    for _ in range(400):
        run.step(HOME, HilMode.RUNNING)
    bad = [e for _, e in run.events if e.name == 'reference_invalid']
    assert bad and 'position' in bad[0].message
    assert run.pl.phase is HilMode.RUNNING and 'fault' not in run.names()
    assert_safe(run.poses, 'huge reference')
    assert run.pl.guard_interventions == 0
    np.testing.assert_allclose(run.poses[-1][:3], HOME[:3], atol=1e-6)     # follows good references again


def test_a_limiter_that_returns_nan_is_a_controlled_stop_not_a_coast():
    run = Run().until_running()
    for i in range(60):                                      # moving along +y at 0.06 m/s
        run.step(np.r_[HOME[:3] + [0.0, 0.06 * i * DT, 0.0], HOME[3:]], HilMode.RUNNING)
    run.pl.limiter.step = lambda ref: (np.full(6, np.nan), False)
    res = run.step(HOME, HilMode.RUNNING)
    assert res.phase is HilMode.FAULT and any('not finite' in e.message for e in res.events if e.name == 'fault')
    for _ in range(100):
        run.step(None, HilMode.RUNNING)
    assert_safe(run.poses, 'NaN limiter')
    assert not np.any(run.pl.v) and np.array_equal(run.poses[-1], run.poses[-2])


def test_homing_requested_while_braking_outward_starts_from_rest():
    """FAULT, IDLE, then HOMING within 25 ms while braking outward: the homing blend used to carry
    on outward to 34 mm beyond the hard limit."""
    run = Run(homing_min_duration=1.0).until_running()
    u = np.array([1.0, 0.0, 0.0])
    r_soft = WS.soft.radius(u)
    i = 0
    while run.pl.x[0] - HOME[0] < 0.9 * r_soft:               # outward at the x velocity limit
        i += 1
        run.step(np.r_[HOME[:3] + u * min(0.15 * i * DT, 0.99 * r_soft), HOME[3:]], HilMode.RUNNING)
    assert run.pl.v[0] == pytest.approx(0.15)
    run.step(None, HilMode.FAULT)                            # FAULT, IDLE, HOMING: 5 ms, still braking
    run.step(None, HilMode.IDLE)
    for _ in range(8):
        run.step(None, HilMode.HOMING)
    assert run.pl.phase is HilMode.HOMING
    for _ in range(2000):
        run.step(None, HilMode.HOMING)
        if run.names().count('homed') == 2:                  # the first one was the start-up homing
            break
    assert run.names().count('homed') == 2
    assert_safe(run.poses, 'FAULT-IDLE-HOMING')
    x = np.array(run.poses)[:, 0] - HOME[0]
    assert x.max() < r_soft                                  # it stopped, then went home: no overshoot
    turn = int(np.argmax(x))
    assert np.all(np.diff(x[turn:]) <= 0)


def test_ruckig_limiter_errors_become_a_state_not_an_exception():
    from hil_core.planner.asc import RuckigLimiter
    lim = RuckigLimiter(DT, A_MAX, V_MAX, np.full(6, 500.0))
    lim.reset(np.zeros(6), np.r_[0.1, 0.0, 0.0, 0.0, 0.0, 0.0])
    x, passthrough = lim.step(np.r_[1e9, 0.0, 0.0, 0.0, 0.0, 0.0])   # ruckig raises RuckigError here
    assert np.all(np.isfinite(x)) and not passthrough
    assert lim.error and 'ruckig' in lim.error
    assert x[0] - 0.1 * DT == pytest.approx(0.0, abs=1e-12) or x[0] < 0.1 * DT    # braking, not moving on


def test_a_ruckig_error_in_the_planner_is_a_controlled_stop_with_its_reason():
    from ruckig import RuckigError
    run = Run(limiter='ruckig').until_running()
    for i in range(80):
        run.step(np.r_[HOME[:3] + [0.05 * i * DT, 0.0, 0.0], HOME[3:]], HilMode.RUNNING)

    class Failing:
        def update(self, *_):
            raise RuckigError('[ruckig] error in step 1, dof: 0 input: synthetic')
    run.pl.limiter._otg = Failing()
    res = run.step(HOME, HilMode.RUNNING)
    assert res.phase is HilMode.FAULT
    faults = [e for e in res.events if e.name == 'fault']
    assert faults and 'ruckig' in faults[0].message
    assert 'limiter_error' in [e.name for e in res.events]
    for _ in range(100):
        run.step(HOME, HilMode.FAULT)
    assert_safe(run.poses, 'ruckig error')
    assert not np.any(run.pl.v)


def test_a_return_home_after_a_stop_at_v_max_is_short_and_bounded():
    """A stop request while moving home at v_max gave 54-132 s plans computed in one cycle."""
    run = Run().until_running()
    for i in range(400):                                    # out to +30 mm, slowly
        run.step(np.r_[HOME[:3] + [min(0.05 * i * DT, 0.03), 0.0, 0.0], HOME[3:]], HilMode.RUNNING)
    i = 0
    while run.pl.x[0] - HOME[0] > 0.02:                     # back towards home at the velocity limit
        i += 1
        run.step(np.r_[HOME[:3] + [0.03 - 0.15 * i * DT, 0.0, 0.0], HOME[3:]], HilMode.RUNNING)
    assert run.pl.v[0] == pytest.approx(-0.15)
    k0 = run.k
    run.step(None, HilMode.RETURNING_HOME)
    plan = [e for _, e in run.events if e.name == 'returning_home'][-1]
    assert plan.values['duration'] <= 2.0
    while 'home_reached' not in run.names():
        run.step(None, HilMode.RETURNING_HOME)
        assert run.k - k0 < 2.0 / DT
    assert_safe(run.poses, 'stop at v_max')
    np.testing.assert_array_equal(run.poses[-1], HOME)


def test_blend_home_plans_are_bounded_even_when_the_seed_blend_cannot_meet_v_max():
    from hil_core.planner.recovery import plan_blend_home
    home = np.r_[HOME[:3], 0.0, 0.0, 0.0]
    x0 = home + np.r_[0.02, 0, 0, 0, 0, 0]
    x_prev = x0 + np.r_[0.15 * DT, 0, 0, 0, 0, 0]           # at v_max towards home
    y = plan_blend_home(x_prev, x0, home, DT, A_MAX, V_MAX, 'quintic', 0.5)
    assert len(y) * DT <= 2.0
    seq = np.vstack([x_prev, x0, y, home])
    assert np.all(np.abs(np.diff(seq, axis=0)) / DT <= V_MAX * (1 + 1e-9))
    assert np.all(np.abs(np.diff(seq, 2, axis=0)) / DT ** 2 <= A_MAX * (1 + 1e-9))
    assert np.array_equal(y[-1], home)


def test_yaw_steps_inside_the_range_never_take_the_output_outside_it():
    """A reference jumping between the yaw range edges: the ASC's position loop overshot to 2x."""
    run = Run().until_running()
    for i in range(1200):
        yaw = RANGE[2] if (i // 100) % 2 else -RANGE[2]
        rpy = [RANGE[0] * np.sign(np.sin(i / 37)), -RANGE[1], yaw]
        run.step(np.r_[HOME[:3], rpy_to_quat(rpy)], HilMode.RUNNING)
    assert_safe(run.poses, 'yaw steps')
    rpy = np.abs(quat_to_rpy(np.array(run.poses)[:, 3:]))
    assert rpy[:, 2].max() <= RANGE[2] * (1 + 1e-12) and rpy[:, 2].max() > 0.99 * RANGE[2]


def test_a_measured_orientation_beyond_the_range_is_a_fault():
    """The limits hold only inside the total-orientation range: a robot measured beyond it (by
    the hard-limit expansion) is treated like one beyond the hard limit."""
    run = Run().until_running()
    run.step(HOME, HilMode.RUNNING)
    tilted = np.r_[HOME[:3], rpy_to_quat([0.0, 0.0, 1.3 * WS.hard_expansion * RANGE[2]])]
    res = run.step(HOME, HilMode.RUNNING, measured=tilted)
    assert res.phase is HilMode.FAULT
    assert any('orientation' in e.message for e in res.events if e.name == 'fault')


def test_non_unit_quaternions_are_normalised_near_one_and_refused_otherwise():
    run = Run().until_running()
    q = rpy_to_quat([0.02, -0.03, 0.01])
    near = np.r_[HOME[:3] + [0.001, 0, 0], q * (1 + 1e-5)]
    for _ in range(800):
        run.step(near, HilMode.RUNNING)
    assert 'reference_invalid' not in run.names()
    np.testing.assert_allclose(quat_to_rpy(run.poses[-1][3:]), [0.02, -0.03, 0.01], atol=1e-9)
    far = np.r_[HOME[:3], q * 1.5]
    for _ in range(5):
        run.step(far, HilMode.RUNNING)
    bad = [e for _, e in run.events if e.name == 'reference_invalid']
    assert len(bad) == 1 and 'quaternion' in bad[0].message
    assert_safe(run.poses, 'quaternions')


@pytest.mark.parametrize('with_clock', [True, False])
def test_one_far_future_stamp_neither_freezes_the_reference_nor_stays_silent(with_clock):
    """A stamp far in the future used to become the newest stamp: every later reference was
    refused as out of order, for good, and no `reference_stale` came. Without the frame clock
    (now_ns None) the planner bounds the lead against its own frame count."""
    run = Run().until_running()
    now = 'frame' if with_clock else None
    for i in range(20):
        run.step(HOME, HilMode.RUNNING, now=now)
    run.step(HOME, HilMode.RUNNING, stamp=10 ** 18, now=now)
    for i in range(200):
        run.step(np.r_[HOME[:3] + [0.0, min(0.02 * i * DT, 0.005), 0.0], HOME[3:]], HilMode.RUNNING, now=now)
    bad = [e for _, e in run.events if e.name == 'reference_invalid']
    assert len(bad) == 1 and 'future' in bad[0].message
    assert 'reference_stale' not in run.names()
    assert run.poses[-1][1] - HOME[1] == pytest.approx(0.005, abs=1e-6)       # still following
    # a stamp frozen in the future: every reference refused, so it is stale after the timeout
    frozen = (run.k + 4) * T_NS
    for i in range(60):
        run.step(HOME, HilMode.RUNNING, stamp=frozen, now=now)
    stale = [k for k, e in run.events if e.name == 'reference_stale']
    assert len(stale) == 1
    assert_safe(run.poses, 'stamps')


def test_stamps_older_than_the_window_are_refused():
    """A reference lagging the frame clock by 2 s (newer than the last one all the same)."""
    run = Run().until_running()
    for _ in range(10):
        run.step(HOME, HilMode.RUNNING)
    run.step(HOME, HilMode.RUNNING, now=(run.k + 1) * T_NS + 2 * 10 ** 9)
    bad = [e for _, e in run.events if e.name == 'reference_invalid']
    assert len(bad) == 1 and 's old (more than' in bad[0].message


def test_recovery_speed_never_exceeds_v_max():
    """The force field turned the exit velocity (x at 0.15 m/s) into y/z speed above their
    0.1 m/s limit (2 % over on this exit)."""
    u = np.array([-0.90107882, -0.2398506, 0.36128749])
    v = np.array([-0.14982395, -0.06213029, -0.09880704])
    p0 = HOME[:3] + 1.001 * WS.soft.radius(u) * u
    xs, back = recovery_path(p0, v, A_MAX, V_MAX, 3000)
    assert back
    vel = np.abs(np.diff(xs, axis=0)) / DT
    assert np.all(vel <= V_MAX * (1 + 1e-9)), (vel / V_MAX).max()


def test_angular_acceleration_from_the_quaternions_stays_within_its_limit():
    """Roll and yaw at 18 rad/s^2 in opposite phase, pitch at 7.5 deg: per-angle within 20 rad/s^2,
    but the base-frame z angular acceleration is -sin(pitch) roll'' + yaw'' > 20 rad/s^2."""
    run = Run().until_running()
    w = 19.0
    refs = []
    for i in range(1600):
        t = i * DT
        env = min(t / 1.0, 1.0) ** 2 * (3 - 2 * min(t / 1.0, 1.0))        # smooth amplitude ramp
        a = 0.05 * env * np.sin(w * t)
        refs.append(np.r_[HOME[:3], rpy_to_quat([a, np.radians(7.5) * env, -a])])
        run.step(refs[-1], HilMode.RUNNING)
    assert 'angular_acceleration_space' in violations(refs)      # the reference asks too much
    assert_safe(run.poses, 'roll/yaw at pitch')
