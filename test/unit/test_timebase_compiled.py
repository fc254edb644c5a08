"""The compiled timebase engine against its numpy oracle (TimeBaseEngineNumpy), frame by frame.

Both run the same seeded writer streams (jitter, drift both ways, late, early, dropped and
duplicated references, stalls that drain the buffer, restarts, invalid and stale writes), with
the time base free or off, both prefilters, other distances, the reader clock counted or given
per frame (lockstep, with skipped frames), and IK failures that latch. Expected: the same
write results, the same discrete decisions (distances, factors, underruns, holds, faults) and
the same numbers to 1e-12. The stamp channel, on which the control decides, is computed by
the same operations in both; the pose channels may differ in the last bit where numpy's SIMD
sin/cos/atan2/pow round differently from libm (a few 1e-16 here).
"""
import hashlib
import pathlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hil_core.hexaslide import home_pose
from hil_core.hexaslide import inverse_kernel
from hil_core.maths import jit
from hil_core.maths.rotations import rotvec_to_quat
from hil_core.timebase import (FaultSpec, TimeBaseEngineNumpy, RingBuffer, TimeBaseConfig, TimeBaseControl,
                               TimeBaseEngine, WriterEvents, hexaslide_ik, pose7_to_pose6, writer_events)
from hil_core.timebase import engine as tb_compiled
from hil_core.timebase import engine_kernel as K

TOL = 1e-12
T = TimeBaseConfig().move_time
M = np.random.default_rng(7).uniform(-1.5, 1.5, size=(6, 6)) + 2 * np.eye(6)
IK_C = hexaslide_ik('hexaslide_scaled')
IK_N = hexaslide_ik('hexaslide_scaled', compiled=False)
HOME = home_pose(IK_C.geometry)


def linear_ik(poses7):
    """A linear 'robot' (as test_timebase_engine.py): the engine calls it from Python."""
    return pose7_to_pose6(poses7) @ M.T, np.ones(len(poses7), bool)


def fence_ik(poses7):
    """linear_ik, unreachable beyond x = 3 mm (the IK failure of test_timebase_engine.py)."""
    q, _ = linear_ik(poses7)
    ok = poses7[:, 0] < HOME[0] + 0.003
    q[~ok] = np.nan
    return q, ok


def reference(stamps, amp=0.004):
    s = np.asarray(stamps, float)
    w = 2 * np.pi
    p = np.tile(HOME, (len(s), 1))
    p[:, 0] += amp * (1 - np.cos(w * s))
    p[:, 1] += 0.6 * amp * np.sin(0.7 * w * s)
    p[:, 2] += 0.5 * amp * (1 - np.cos(0.7 * w * s))
    p[:, 3:] = rotvec_to_quat(np.column_stack([0.02 * (1 - np.cos(0.5 * w * s)), 0.01 * np.sin(w * s), 0 * s]))
    return p


def run_pair(events, n_frames, ik=(linear_ik, linear_ik), ref=reference, frame_times=None, extra_writes=(),
             **cfg):
    """Drive both engines identically, comparing every write result and every frame."""
    config = TimeBaseConfig(**cfg)
    eng_n, eng_c = TimeBaseEngineNumpy(config, ik[1]), TimeBaseEngine(config, ik[0])
    start = ref(np.array([0.0]))[0]
    eng_n.start(start, 0.0)
    eng_c.start(start, 0.0)
    poses = ref(events.stamp) if len(events.stamp) else np.zeros((0, 7))
    extra = dict(extra_writes)
    e = 0
    frames = ([], [])
    for k in range(n_frames):
        tick = k * T
        while e < len(events.arrival) and events.arrival[e] <= tick:
            assert eng_c.write(poses[e], events.stamp[e]) == eng_n.write(poses[e], events.stamp[e])
            e += 1
        for pose, stamp in extra.get(k, ()):
            assert eng_c.write(pose, stamp) == eng_n.write(pose, stamp)
        ft = None if frame_times is None else frame_times[k]
        for out, eng in zip(frames, (eng_n, eng_c)):
            out.append(eng.step_frame(ft))
        assert_state_equal(eng_n, eng_c, k)
    assert_frames_equal(*frames)
    return eng_n, eng_c


def assert_frames_equal(a, b):
    """Every field of every frame: exact for the discrete ones, to TOL for the numbers."""
    assert [(f.underruns, f.fault) for f in b] == [(f.underruns, f.fault) for f in a]
    for name in ('distances', 'factors'):
        np.testing.assert_array_equal(*(np.array([getattr(f, name) for f in x]) for x in (b, a)), err_msg=name)
    for name in ('positions', 'velocities', 'ref_stamps', 'fractional_distances'):
        x, y = (np.array([getattr(f, name) for f in frames]) for frames in (b, a))
        np.testing.assert_allclose(x, y, rtol=0, atol=TOL, err_msg=name)


def assert_state_equal(a, b, k):
    assert (b.holding, b.holds, b.underruns, b.fault) == (a.holding, a.holds, a.underruns, a.fault), k
    assert (b.buffer.distance, b.buffer.overruns, b.buffer.refused, b.buffer.filled) == \
        (a.buffer.distance, a.buffer.overruns, a.buffer.refused, a.buffer.filled), k
    assert (b.control.n, b.control.level, b.control.factor) == (a.control.n, a.control.level, a.control.factor), k
    assert np.abs(b.last_valid_pose7 - a.last_valid_pose7).max() <= TOL, k


FAULTS = {
    'clean': FaultSpec(),
    'jitter': FaultSpec(jitter=0.3),
    'drift_slow': FaultSpec(drift=0.004, jitter=0.05),
    'drift_fast': FaultSpec(drift=-0.004, jitter=0.05),
    'late': FaultSpec(late_prob=0.1, late_max=1.5),
    'early': FaultSpec(early_prob=0.2, early_max=0.9),
    'dropped': FaultSpec(drop_prob=0.08),
    'duplicated': FaultSpec(dup_prob=0.1),
    'all': FaultSpec(jitter=0.15, drift=0.002, latency=0.3, late_prob=0.05, late_max=1.2, early_prob=0.03,
                     drop_prob=0.04, dup_prob=0.04),
}


@pytest.mark.parametrize('name', list(FAULTS))
def test_long_faulty_streams_equal_the_oracle(name):
    events = writer_events(3020, T, FAULTS[name], seed=11)
    eng_n, _ = run_pair(events, 3000)
    if name in ('drift_slow', 'drift_fast', 'all'):
        assert eng_n.control.n != 0 or eng_n.buffer.filled or eng_n.underruns   # the faults acted


@pytest.mark.parametrize('cfg', [dict(time_base_control=False), dict(prefilter='none'),
                                 dict(default_distance=1, extrapolate_moves=0),
                                 dict(default_distance=3, max_gap_fill=3, extrapolate_moves=2),
                                 dict(step=0.02, max_steps=20, gentle_steps=4, patience=2),
                                 dict(buffer_size=3, default_distance=1, max_gap_fill=1)],
                         ids=lambda c: '-'.join(f'{k}={v}' for k, v in c.items()))
def test_configurations_equal_the_oracle(cfg):
    run_pair(writer_events(1220, T, FAULTS['all'], seed=5), 1200, **cfg)


def test_stalls_underruns_restarts_and_invalid_writes_equal_the_oracle():
    """The writer stalls twice (the buffer drains, moves extrapolate, then hold), restarts far
    ahead (gap filling, overruns); invalid, stale and malformed references are refused alike."""
    ev = writer_events(1500, T, FaultSpec(jitter=0.1, drift=0.001), seed=3)
    keep = ((ev.index < 300) | (ev.index > 340)) & ((ev.index < 800) | (ev.index > 806))
    ev = WriterEvents(ev.arrival[keep], ev.stamp[keep], ev.index[keep], ev.kind[keep], ev.index[~keep])
    burst = [(reference([1000 * T + i * T / 3])[0], 1000 * T + i * T / 3) for i in range(12)]  # overrun
    bad = [(np.array([np.nan, 0, 0.15, 0, 0, 0, 1.0]), 0.5), (np.array([0, 0, 0.15, 0, 0, 0, 0.0]), 0.6),
           (HOME, np.nan), (HOME[:6], 0.7), (HOME, 0.0), (list(HOME), 1.1)]
    eng_n, eng_c = run_pair(ev, 1400, extra_writes={400: bad, 999: burst})
    assert eng_n.holds > 0 and eng_n.underruns > 0 and eng_n.buffer.refused >= 5
    assert eng_n.buffer.overruns > 0 and eng_n.buffer.filled > 0


def test_given_reader_clock_with_skipped_frames_equals_the_oracle():
    """step_frame(frame_time): lockstep frame stamps, some frames skipped (the hardware advanced
    without us) and a reader clock that runs 0.3 % fast, as the node passes it."""
    rng = np.random.default_rng(4)
    frame_times = np.cumsum(np.where(rng.random(1500) < 0.02, 2 * T, T)) * 1.003
    eng_n, _ = run_pair(writer_events(1520, T, FAULTS['jitter'], seed=4), 1500, frame_times=frame_times)
    assert eng_n.control.n != 0 or eng_n.control.level != 0 or eng_n.underruns


def test_compiled_hexaslide_ik_inside_the_kernel_equals_the_numpy_pipeline():
    """The node's configuration: hexaslide IK solved in the frame kernel vs the numpy engine
    with numpy IK, under all faults."""
    assert hasattr(IK_C, 'kernel_params') and not hasattr(IK_N, 'kernel_params')
    run_pair(writer_events(2020, T, FAULTS['all'], seed=8), 2000, ik=(IK_C, IK_N))


@pytest.mark.parametrize('mode', ['callback', 'inline'])
def test_ik_failure_latches_identically(mode):
    """The reference leaves the reachable set: both engines latch the same fault at the same
    segment point, hold the same last reachable point, and keep holding."""
    if mode == 'callback':
        ik, ref = (fence_ik, fence_ik), reference
    else:
        def ref(stamps):                          # surge ramp beyond the slider stroke
            p = reference(stamps)
            p[:, 0] += 0.2 * np.maximum(np.asarray(stamps) - 0.3, 0.0)
            return p
        ik = (IK_C, IK_N)
    eng_n, eng_c = run_pair(writer_events(1220, T, FAULTS['late'], seed=9), 1200, ik=ik, ref=ref)
    assert eng_c.fault is not None and eng_c.fault == eng_n.fault and 'inverse kinematics' in eng_c.fault


def test_start_refusals_match_the_oracle():
    for pose in (np.array([0, 0, 5.0, 0, 0, 0, 1]), np.array([np.nan, 0, 0.15, 0, 0, 0, 1]), np.zeros(7),
                 np.zeros(6)):
        errors = []
        for cls in (TimeBaseEngineNumpy, TimeBaseEngine):
            with pytest.raises(ValueError) as exc:
                cls(TimeBaseConfig(), IK_C).start(pose, 0.0)
            errors.append(str(exc.value))
        assert errors[0] == errors[1]
    with pytest.raises(RuntimeError):
        TimeBaseEngine(TimeBaseConfig(), IK_C).step_frame()


_rate = st.floats(0.0, 0.15)


@settings(max_examples=25, deadline=None)
@given(jitter=st.floats(0.0, 0.4), drift=st.floats(-0.01, 0.01), late=_rate, early=_rate, drop=_rate,
       dup=_rate, seed=st.integers(0, 2 ** 16), control=st.booleans())
def test_any_seeded_fault_mix_equals_the_oracle(jitter, drift, late, early, drop, dup, seed, control):
    spec = FaultSpec(jitter=jitter, drift=drift, late_prob=late, late_max=1.5, early_prob=early,
                     drop_prob=drop, dup_prob=dup)
    run_pair(writer_events(420, T, spec, seed), 400, time_base_control=control)


# --- the stages alone, on inputs the streams rarely produce -------------------------------------
_distance = st.one_of(st.floats(0.0, 4.0), st.sampled_from([2.0, 2.00125, 1.99875, 2.0025, 1.5, 3.0]))


@settings(max_examples=200, deadline=None)
@given(distances=st.lists(st.tuples(_distance, st.integers(1, 6)), min_size=1, max_size=40),
       patience=st.integers(1, 5), gentle=st.integers(1, 3), enabled=st.booleans())
def test_control_update_equals_time_base_control(distances, patience, gentle, enabled):
    """Every branch of the control law (deadband edges, 'worse', patience escalation with
    constant errors, the level limit), fed runs of repeated distances."""
    cfg = TimeBaseConfig(patience=patience, gentle_steps=gentle, time_base_control=enabled)
    eng = TimeBaseEngine(cfg, linear_ik)
    ref = TimeBaseControl(cfg.default_distance, cfg.step, cfg.gentle_steps, cfg.max_steps, cfg.patience,
                          cfg.time_base_control, cfg.servo_per_move)
    ist, fst = np.zeros(K.INT_SIZE, dtype=np.int64), np.zeros(K.FLOAT_SIZE)
    for d, repeat in distances:
        for _ in range(repeat):
            ref.update(d)
            K.control_update(eng._cf, ist, fst, d)
            assert (ist[K.I_N], ist[K.I_LEVEL], ist[K.I_STUCK]) == (ref.n, ref.level, ref._stuck)
            assert fst[K.F_PREV_E] == ref._prev


_gap = st.one_of(st.floats(-1.0, 9.0), st.sampled_from([0.0, 0.49, 0.5, 1.0, 1.5, 2.5, 3.5, np.nan, np.inf]))


@settings(max_examples=200, deadline=None)
@given(gaps=st.lists(_gap, min_size=1, max_size=30), size=st.integers(3, 7), fill=st.integers(1, 3),
       seed=st.integers(0, 1000))
def test_buffer_write_equals_ring_buffer(gaps, size, fill, seed):
    """Stale, duplicate, out-of-order, non-finite, gap-filled (rounding half to even) and
    overrunning writes: the same results, indices, counters, poses and stamps."""
    cfg = TimeBaseConfig(buffer_size=size, default_distance=1, max_gap_fill=max(fill, 1))
    cf = TimeBaseEngine(cfg, linear_ik)._cf
    ist, buf, scratch = np.zeros(K.INT_SIZE, dtype=np.int64), np.zeros((size, 7)), np.zeros(18)
    ist[K.I_W] = ist[K.I_R] = -1
    ref = RingBuffer(size, T, cfg.max_gap_fill)
    rng = np.random.default_rng(seed)
    stamp = 0.0
    names = {K.W_OK: 'ok', K.W_STALE: 'stale', K.W_INVALID: 'invalid'}
    for gap in gaps:
        stamp = stamp + gap * T if np.isfinite(stamp) else 0.0
        pose6 = rng.normal(size=6)
        code, n = K.buffer_write(cf, ist, buf, pose6, stamp, scratch)
        assert (f'filled:{n}' if code == K.W_FILLED else names[code]) == ref.write(pose6, stamp)
        assert (ist[K.I_W], ist[K.I_R], ist[K.I_OVERRUNS], ist[K.I_REFUSED], ist[K.I_FILLED]) == \
            (ref.w, ref.r, ref.overruns, ref.refused, ref.filled)
        np.testing.assert_array_equal(buf[:, :6], ref.poses)
        np.testing.assert_array_equal(buf[:, 6], ref.stamps)
        if rng.random() < 0.3 and ref.distance > 0:                 # the reader takes one
            ref.read()
            ist[K.I_R] += 1


def test_warm_up_is_done_once_and_the_cache_knows_the_inlined_ik():
    first = tb_compiled.warm_up()                # compiles or loads (0 if a test above did)
    assert first >= 0.0 and tb_compiled.warm_up() == 0.0
    # an edit of inverse_kernel.py must invalidate the cached frame kernel that inlines it
    h = hashlib.sha256()
    for m in (jit, K, inverse_kernel):
        h.update(pathlib.Path(m.__file__).read_bytes())
    assert jit.cache_stamp(K.run_frame)[1] == h.hexdigest()
