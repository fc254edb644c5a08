"""The planner's compiled quiet RUNNING frame (hil_core.planner.quiet_frame) against its oracle,
the plain path (``TrajectoryPlanner(cfg, compiled=False)``): the same inputs, frame by frame, give
the same output bits, the same events and the same state, over quiet motion, pushes through the
soft limit, orientation clamps, saturations, mode changes and every kind of bad input; and the
compiled path really serves the quiet frames (a dead fast path would pass the equality alone)."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

from hil_core.supervision.modes import HilMode
from hil_core.planner.config import PlannerConfig
from hil_core.planner.trajectory_planner import TrajectoryPlanner
from hil_core.maths.rotations import rpy_to_quat
from test_planner_hypothesis import fast
from test_planner_invariants import HOME, WS

T_NS = 2_500_000
RANGE = np.asarray(WS.orientation_range)


def _same(a, b, what):
    if a is None or b is None:
        assert a is None and b is None, what
        return
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape and np.array_equal(a.view(np.uint8), b.view(np.uint8)), f'{what}: {a} != {b}'


def _state(pl):
    asc, inp = pl.limiter, pl.inputs
    return dict(phase=pl.phase, mode=pl.supervisor_mode, x=pl.x, v=pl.v, pose=pl.pose, measured=pl.measured,
                clamping=pl.clamping, guard=pl.guard_interventions, streaks=dict(pl._streaks),
                asc_x=asc.x, asc_v=asc.v, r1=asc._r1, r2=asc._r2, integrator=asc.integrator,
                saturated=asc.saturated, scale=asc.scale, since=inp.since_accept, unusable=inp.unusable,
                bad=inp.bad_streak, last_stamp=inp.last_stamp, last_ref=inp.last_ref)


class Twins:
    """The compiled planner and its oracle, driven by the same frames and compared after each."""

    def __init__(self, **cfg):
        cfg = PlannerConfig(WS, **{'homing_min_duration': 0.01, 'sync_duration': 0.01, **cfg})
        self.fast, self.plain = TrajectoryPlanner(cfg), TrajectoryPlanner(cfg, compiled=False)
        assert self.fast.quiet is not None and self.plain.quiet is None
        self.k = 0
        self.step(None, HilMode.IDLE, measured=HOME)

    def step(self, ref, mode, stamp='frame', now='frame', measured=None):
        self.k += 1
        stamp = self.k * T_NS if stamp == 'frame' else stamp
        now = self.k * T_NS if now == 'frame' else now
        results = []
        for pl in (self.fast, self.plain):
            # each planner gets its own copies: the output may be the reference object itself
            r = ref.copy() if isinstance(ref, np.ndarray) else ref
            if isinstance(ref, np.ndarray):
                r.flags.writeable = ref.flags.writeable
            m = measured.copy() if isinstance(measured, np.ndarray) else measured
            results.append((pl.step(r, None if ref is None else stamp, mode, measured=m, now_ns=now), r))
        (a, ra), (b, rb) = results
        _same(a.pose, b.pose, f'frame {self.k}: pose')
        _same(a.twist, b.twist, f'frame {self.k}: twist')
        assert (a.pose is ra) == (b.pose is rb), f'frame {self.k}: the reference forwarded as itself in one only'
        assert a.phase == b.phase
        assert [(e.name, e.message, e.level) for e in a.events] == [(e.name, e.message, e.level) for e in b.events]
        sa, sb = _state(self.fast), _state(self.plain)
        for key in sa:
            if isinstance(sa[key], np.ndarray) or isinstance(sb[key], np.ndarray):
                _same(sa[key], sb[key], f'frame {self.k}: {key}')
            else:
                assert sa[key] == sb[key], f'frame {self.k}: {key} {sa[key]!r} != {sb[key]!r}'
        return a

    def until_running(self):
        while self.fast.phase is not HilMode.RUNNING:
            self.step(HOME, HilMode.HOMING, measured=HOME)
            assert self.k < 2000
        return self


def _pose(dx=0.0, dy=0.0, dz=0.0, rpy=(0.0, 0.0, 0.0)):
    return np.r_[HOME[:3] + [dx, dy, dz], rpy_to_quat(np.asarray(rpy))]


def test_quiet_motion_is_served_by_the_compiled_frame_bit_for_bit():
    tw = Twins().until_running()
    start = tw.fast.quiet.frames
    for i in range(800):
        t = i * 0.0025
        # (smooth from rest: a step would saturate the ASC, which is the plain path's business)
        ref = _pose(0.01 * (1 - np.cos(2 * np.pi * 0.7 * t)), 0.004 * (1 - np.cos(2 * np.pi * 1.3 * t)),
                    0.003 * (1 - np.cos(2 * np.pi * 0.5 * t)), (0.02 * (1 - np.cos(2 * np.pi * 0.4 * t)), 0.0,
                                                                 0.02 * (1 - np.cos(2 * np.pi * 0.9 * t))))
        tw.step(ref, HilMode.RUNNING, measured=tw.plain.pose)
    assert tw.fast.quiet.frames - start == 799          # every frame but the first (its mode changed)


def _synchronizing(**cfg):
    """Twins homed, their first synchronizing frame taken (it starts the ramp on the plain path)."""
    tw = Twins(sync_duration=0.5, **cfg)
    while tw.fast.phase is not HilMode.SYNCHRONIZING:
        tw.step(HOME, HilMode.HOMING, measured=HOME)
        assert tw.k < 2000
    return tw


@pytest.mark.parametrize('offset', [(0.0, 0.0, 0.0, (0.0, 0.0, 0.0)), (0.004, -0.003, 0.002, (0.01, -0.008, 0.012)),
                                    (0.0, 0.0, 0.0, (0.0, 0.0, 1e-13))])
def test_synchronizing_frames_are_served_by_the_compiled_frame_bit_for_bit(offset):
    """Seed 000 4.1.1: the robot's pose blended into a reference that starts elsewhere (position
    and orientation, a rotation too small for the rotation vector's own formula too) and moves;
    every blending frame is compiled but the first (the ramp starts) and the last (c reaches 1:
    the phase changes, with its event); the same bits, events and state as the plain path."""
    dx, dy, dz, rpy = offset
    tw = _synchronizing()
    start = tw.fast.quiet.frames
    n = tw.fast.sync.steps
    for i in range(n + 100):
        t = i * 0.0025
        ref = _pose(dx + 0.002 * np.sin(2 * np.pi * 0.5 * t), dy, dz, (rpy[0], rpy[1] + 0.005 * np.sin(2 * np.pi * t),
                                                                        rpy[2]))
        res = tw.step(ref, HilMode.HOMING, measured=tw.plain.pose)
        if i == n - 1:
            assert [e.name for e in res.events] == ['synchronized'] and tw.fast.phase is HilMode.RUNNING
    assert tw.fast.phase is HilMode.RUNNING
    assert tw.fast.quiet.frames - start == (n - 2) + 100          # the blending frames and RUNNING


def test_a_synchronizing_frame_the_kernel_does_not_serve_takes_the_plain_path():
    """Bad input, a stamp out of its window and a mode change while synchronizing: the plain
    path from the untouched state, the same frames; quiet frames on either side."""
    tw = _synchronizing()
    base = _pose(0.003, rpy=(0.01, 0.0, 0.0))
    for i in range(60):
        j = i % 6
        if j == 1:
            tw.step(np.r_[np.nan, base[1:]], HilMode.HOMING, measured=tw.plain.pose)
        elif j == 3:
            tw.step(base, HilMode.HOMING, stamp=tw.k * T_NS - 10**9)
        elif j == 5:
            tw.step(base, 'NOT_A_MODE', measured=tw.plain.pose)
        else:
            tw.step(base, HilMode.HOMING, measured=tw.plain.pose)
    assert tw.fast.phase is HilMode.SYNCHRONIZING and tw.fast.quiet.frames > 0
    tw.step(base, HilMode.HOMING, measured=np.r_[HOME[:3] + [0.5, 0.0, 0.0], HOME[3:]])   # beyond the hard limit
    assert tw.fast.phase is HilMode.FAULT


def test_a_near_unit_quaternion_is_normalised_the_same_and_a_pose_array_is_forwarded_as_itself():
    tw = Twins().until_running()
    tw.step(HOME, HilMode.RUNNING)            # (the mode's change: a plain frame)
    near = HOME.copy()
    near[3:] *= 1 + 1e-7                     # within the tolerance, beyond UNIT: normalised copy
    start = tw.fast.quiet.frames
    tw.step(near, HilMode.RUNNING, measured=near)
    res = tw.step(HOME.copy(), HilMode.RUNNING)
    assert tw.fast.quiet.frames - start == 2
    assert res.pose is not None


@pytest.mark.parametrize('scenario', ['push_out', 'clamp', 'jump', 'return_home', 'fault', 'bad_inputs'])
def test_every_other_frame_takes_the_plain_path_with_the_same_result(scenario):
    tw = Twins().until_running()
    for i in range(40):
        tw.step(_pose(0.0005 * i), HilMode.RUNNING, measured=tw.plain.pose)
    base = _pose(0.02)
    if scenario == 'push_out':                # through the soft limit: takeover, recovery, home
        for i in range(1500):
            tw.step(_pose(0.02 + 0.0004 * i), HilMode.RUNNING, measured=tw.plain.pose)
    elif scenario == 'clamp':                 # beyond the orientation range and back
        for i in range(300):
            tw.step(_pose(0.02, rpy=(min(1.5 * RANGE[0], 0.002 * i), 0.0, 0.0)), HilMode.RUNNING)
        for i in range(300):
            tw.step(base, HilMode.RUNNING)
    elif scenario == 'jump':                  # a step the ASC saturates, then rejoins
        for i in range(400):
            tw.step(_pose(0.03 if i < 200 else 0.025), HilMode.RUNNING, measured=tw.plain.pose)
    elif scenario == 'return_home':
        for i in range(600):
            tw.step(base, HilMode.RETURNING_HOME if i >= 10 else HilMode.RUNNING)
    elif scenario == 'fault':
        for i in range(300):
            tw.step(base, HilMode.FAULT if i >= 10 else HilMode.RUNNING)
    else:
        bad = [np.r_[np.nan, HOME[1:]], np.r_[1.7e308, HOME[1:]], np.r_[HOME[:3], 0.0, 0.0, 0.0, 1.5],
               np.r_[HOME[:3], 0.0, 0.0, 0.0, 3.0], np.zeros(6), [0.0] * 7]
        for i in range(600):
            j = i % 12
            if j < len(bad):
                tw.step(bad[j], HilMode.RUNNING, measured=tw.plain.pose)
            elif j == 6:
                tw.step(base, HilMode.RUNNING, stamp=tw.k * T_NS + 10**9)       # far future
            elif j == 7:
                tw.step(base, HilMode.RUNNING, stamp=tw.k * T_NS - 10**9)       # old
            elif j == 8:
                tw.step(base, HilMode.RUNNING, stamp=float(tw.k * T_NS))        # not an integer
            elif j == 9:
                tw.step(None, HilMode.RUNNING)
            elif j == 10:
                tw.step(base, HilMode.RUNNING, measured=np.r_[HOME[:3] + [0.5, 0.0, 0.0], HOME[3:]])
            else:
                tw.step(base, 'NOT_A_MODE')


modes = st.sampled_from([HilMode.RUNNING] * 6 + [HilMode.RETURNING_HOME, HilMode.FAULT, HilMode.IDLE, HilMode.HOMING])


@fast(60)
@given(st.lists(st.tuples(st.floats(-0.06, 0.06), st.floats(-0.04, 0.04), st.floats(-0.03, 0.03),
                          st.floats(-1.2, 1.2), st.integers(5, 80), modes, st.booleans()),
                min_size=3, max_size=12))
def test_random_histories_give_the_same_frames(segments):
    """Random segments: a target pose (some beyond the soft limit or the orientation range), held
    for some frames under a mode, with or without the measured pose."""
    tw = Twins().until_running()
    for dx, dy, dz, angle, frames, mode, measured in segments:
        target = _pose(dx, dy, dz, (angle * RANGE[0], 0.3 * angle * RANGE[1], 0.0))
        for i in range(frames):
            a = (i + 1) / frames
            ref = np.r_[(1 - a) * HOME[:3] + a * target[:3], target[3:]]
            tw.step(ref, mode, measured=tw.plain.pose if measured else None)


def test_arrays_the_frozen_kernel_does_not_take_go_the_plain_path():
    """A strided state vector, a read-only reference, a (6,) array: the plain path, same result."""
    tw = Twins().until_running()
    tw.step(HOME, HilMode.RUNNING)
    tw.step(HOME, HilMode.RUNNING)
    start = tw.fast.quiet.frames
    for pl in (tw.fast, tw.plain):
        pl.v = np.zeros(12)[::2]                   # the same values, not contiguous
    tw.step(HOME, HilMode.RUNNING)
    assert tw.fast.quiet.frames == start and tw.fast.quiet.refused == 1
    tw.step(HOME, HilMode.RUNNING)                 # (the plain path made contiguous state again)
    assert tw.fast.quiet.frames == start + 1
    frozen = HOME.copy()
    frozen.flags.writeable = False
    tw.step(frozen, HilMode.RUNNING)
    tw.step(HOME[:6].copy(), HilMode.RUNNING)
    assert tw.fast.quiet.frames == start + 1 and tw.fast.quiet.refused == 1
