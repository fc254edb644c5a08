"""The timebase pipeline end to end (seed 000 sections 4.2, 4.3, 5): constant four-pose delay,
reproduction in joint space, velocity continuity under seeded writer faults, recovery of the
W-R distance, drain and hold, IK failure. Joint-space expectations are the inverse kinematics
of the reference itself, delayed by the paper's 10 ms."""
import numpy as np
import pytest

from hil_core.hexaslide import home_pose
from hil_core.maths.rotations import rotvec_to_quat
from hil_core.timebase import (FaultSpec, TimeBaseConfig, TimeBaseEngine, hexaslide_ik, simulate,
                               writer_events)

CFG = TimeBaseConfig()
T, TS = CFG.move_time, CFG.servo_period
FOUR_POSES = 4 * 0.0025                      # seed 000 section 5: 10 ms
A_MAX = 2.0                                  # joint acceleration limit of the property tests, m/s^2
M = np.random.default_rng(7).uniform(-1.5, 1.5, size=(6, 6)) + 2 * np.eye(6)
HOME = np.array([0.0, 0.0, 0.1543, 0.0, 0.0, 0.0, 1.0])


def linear_ik(poses7):
    """A well-conditioned linear 'robot' for properties that do not depend on geometry."""
    from hil_core.timebase import pose7_to_pose6
    return pose7_to_pose6(poses7) @ M.T, np.ones(len(poses7), bool)


def smooth_reference(stamps, amp=0.004, freq=1.0):
    """Starts at rest (as the planner's synchronisation ramp guarantees), accel <= 0.16 m/s^2."""
    s = np.asarray(stamps, float)
    w = 2 * np.pi * freq
    p = np.tile(HOME, (len(s), 1))
    p[:, 0] += amp * (1 - np.cos(w * s))
    p[:, 2] += 0.5 * amp * (1 - np.cos(0.7 * w * s))
    p[:, 3:] = rotvec_to_quat(np.column_stack([0.01 * (1 - np.cos(w * s)), 0 * s, 0 * s]))
    return p


def run(spec=FaultSpec(), n=600, ik=linear_ik, reference=smooth_reference, seed=0, **cfg):
    eng = TimeBaseEngine(TimeBaseConfig(**cfg), ik)
    # the writer runs a little longer than the reader so a fast writer never ends first
    return eng, simulate(eng, reference, writer_events(n + 20, T, spec, seed), n, T)


def test_default_conditions_delay_is_exactly_four_poses():
    eng, r = run()
    assert np.allclose(r['delay'], FOUR_POSES, atol=1e-12, rtol=0)
    assert np.all(r['distance'] == 2) and np.all(r['factor'] == 1.0)
    assert r['underruns'].sum() == 0


@pytest.mark.parametrize('distance', [1, 3])
def test_delay_follows_the_default_distance(distance):
    _, r = run(n=100, default_distance=distance, max_gap_fill=3)
    assert np.allclose(r['delay'], (distance + 1.5) * T + CFG.segmentation_time, atol=1e-12)


def _sine(stamps):
    s = np.asarray(stamps, float)
    p = np.tile(home_pose(IK.geometry), (len(s), 1))
    p[:, 0] += 0.005 * np.sin(2 * np.pi * 1.0 * s)
    p[:, 1] += 0.003 * np.sin(2 * np.pi * 0.7 * s + 0.3)
    p[:, 3:] = rotvec_to_quat(np.column_stack([0.02 * np.sin(2 * np.pi * 0.5 * s), 0 * s, 0 * s]))
    return p


def _ramp(stamps):
    s = np.asarray(stamps, float)
    p = np.tile(home_pose(IK.geometry), (len(s), 1))
    p[:, 0] += 0.02 * s
    p[:, 2] += 0.01 * s
    p[:, 3:] = rotvec_to_quat(np.column_stack([0 * s, 0.05 * s, 0.02 * s]))
    return p


IK = hexaslide_ik('hexaslide_scaled')


@pytest.mark.parametrize('reference', [_ramp, _sine], ids=['ramp', 'sine'])
def test_reference_reproduced_in_joint_space_below_one_micrometre(reference):
    eng, r = run(n=400, ik=IK, reference=reference)
    expected, ok = IK(reference(r['time'] - FOUR_POSES))
    assert ok.all()
    after_start = r['time'] > 0.05                  # the first moves start from rest
    err = np.abs(r['q'] - expected)[after_start]
    assert err.max() < 1e-6
    assert np.abs(r['q']).max() > 1e-3             # it did move (millimetres)


FAULTS = {
    'jitter': FaultSpec(jitter=0.2),
    'drift_slow': FaultSpec(drift=0.004, jitter=0.05),
    'drift_fast': FaultSpec(drift=-0.004, jitter=0.05),
    'late': FaultSpec(late_prob=0.1, late_max=1.2),
    'early': FaultSpec(early_prob=0.2, early_max=0.9),
    'dropped': FaultSpec(drop_prob=0.05),
    'duplicated': FaultSpec(dup_prob=0.1),
    'all': FaultSpec(jitter=0.1, drift=0.002, late_prob=0.03, late_max=0.8, early_prob=0.03,
                     drop_prob=0.02, dup_prob=0.03),
}


@pytest.mark.parametrize('name', list(FAULTS))
@pytest.mark.parametrize('seed', [1, 2])
def test_velocity_continuous_and_delay_constant_under_writer_faults(name, seed):
    eng, r = run(FAULTS[name], n=800, seed=seed)
    jumps = np.abs(np.diff(r['qd'], axis=0)).max()
    assert jumps <= A_MAX * TS, f'{name}: velocity jump {jumps:.3g} m/s per servo cycle'
    assert eng.holds == 0                  # late poses were at most extrapolated, never a stop
    bound = CFG.max_steps * CFG.step
    assert np.all(np.abs(r['factor'] - 1.0) <= bound + 1e-12)
    settled = r['time'] > 0.5
    # constant delay: the time base keeps it within a few servo-step quanta of 10 ms
    assert np.abs(r['delay'][settled] - FOUR_POSES).max() < 0.1 * T
    if name == 'dropped':
        assert len(writer_events(800, T, FAULTS[name], seed).dropped) > 10


def test_without_time_base_control_a_drifting_writer_underruns_and_the_delay_wanders():
    _, on = run(FAULTS['drift_slow'], n=800, seed=1)
    _, off = run(FAULTS['drift_slow'], n=800, seed=1, time_base_control=False)
    assert on['underruns'].sum() == 0 and off['underruns'].sum() > 0
    assert np.ptp(off['delay'][400:]) > 0.5 * T > 20 * np.ptp(on['delay'][400:])


def test_distance_returns_to_default_within_bounded_cycles_after_a_stall():
    # lockstep-like writer (no jitter); references 100..105 never arrive, then resume
    ev = writer_events(400, T, FaultSpec(), 0)
    keep = (ev.index < 100) | (ev.index > 105)
    from hil_core.timebase import WriterEvents
    ev = WriterEvents(ev.arrival[keep], ev.stamp[keep], ev.index[keep], ev.kind[keep], ev.index[~keep])
    eng = TimeBaseEngine(CFG, linear_ik)
    r = simulate(eng, smooth_reference, ev, 400, T)
    frame = np.repeat(np.arange(400), 4)
    assert r['underruns'][100:110].sum() > 0
    back = frame[(frame > 106) & (r['distance'] == 2) & (np.abs(r['delay'] - FOUR_POSES) < 1e-9)]
    assert back.size and back.min() <= 106 + 60          # within 60 moves = 240 servo cycles
    late = frame > back.min()
    assert np.all(r['distance'][late] == 2)
    assert np.all(np.abs(r['factor'] - 1) <= CFG.max_steps * CFG.step + 1e-12)


def test_missing_references_drain_gracefully_and_hold_at_the_last_pose():
    eng = TimeBaseEngine(CFG, linear_ik)
    ev = writer_events(120, T)
    r = simulate(eng, smooth_reference, ev, 200, T)      # the writer stops after frame 120
    q, _ = linear_ik(smooth_reference(np.array([119 * T, 120 * T])))
    rest = q[1] + (q[1] - q[0])            # one move continued at constant velocity, then hold
    assert np.allclose(r['q'][-40:], rest, atol=1e-12)
    assert np.allclose(r['qd'][-40:], 0.0, atol=1e-12)
    assert eng.underruns > 0
    # the stop is velocity-continuous: one move decelerates from the last speed
    v_last = np.abs(r['qd'][118 * 4]).max()
    assert np.abs(np.diff(r['qd'], axis=0)).max() <= v_last / T * TS * 1.01 + A_MAX * TS


def test_ik_failure_holds_without_a_jump_and_latches():
    def fence_ik(poses7):
        q, ok = linear_ik(poses7)
        ok = poses7[:, 0] < 0.003                      # unreachable beyond x = 3 mm
        q[~ok] = np.nan
        return q, ok
    eng, r = run(n=300, ik=fence_ik)
    assert eng.fault is not None and 'inverse kinematics' in eng.fault
    assert np.all(np.isfinite(r['q'])) and np.all(np.isfinite(r['qd']))
    dq = np.abs(np.diff(r['q'], axis=0)).max()
    assert dq <= np.abs(r['qd']).max() * TS * 1.5        # no step larger than the motion itself
    assert np.allclose(r['qd'][-20:], 0.0, atol=1e-12)
    held = fence_ik(eng.last_valid_pose7[None])
    assert held[1][0] and np.allclose(r['q'][-1], held[0][0], atol=1e-9)


def test_start_refuses_bad_poses():
    eng = TimeBaseEngine(CFG, IK)
    with pytest.raises(ValueError):
        eng.start(np.array([0, 0, 5.0, 0, 0, 0, 1]), 0.0)         # unreachable
    with pytest.raises(ValueError):
        eng.start(np.array([np.nan, 0, 0.15, 0, 0, 0, 1]), 0.0)
    with pytest.raises(RuntimeError):
        eng.step_frame()


def test_writer_events_are_a_pure_function_of_the_seed():
    spec = FAULTS['all']
    a, b, c = writer_events(500, T, spec, 4), writer_events(500, T, spec, 4), writer_events(500, T, spec, 5)
    assert np.array_equal(a.arrival, b.arrival) and np.array_equal(a.dropped, b.dropped)
    assert not np.array_equal(a.arrival, c.arrival)
    assert np.all(np.diff(a.arrival) >= 0)
    assert {'late', 'early', 'dup'} <= set(a.kind)
    with pytest.raises(ValueError):
        FaultSpec(drop_prob=1.5)
