"""The force joystick's limiter (hil_core.ft.joystick): magnitude and rate limits as properties
over any input history (NaN/inf, huge values, bursts, silence), the stale release, and a ramp
against its closed form."""
import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from hil_core.ft.joystick import JoystickLimits, JoystickLoad, check_wrench, limit_magnitude

LIM = JoystickLimits(force_max=50.0, torque_max=5.0, force_rate=200.0, torque_rate=20.0, timeout=0.5)
DT = 625_000                      # 1.6 kHz samples
TOL = 1e-9

component = st.one_of(st.floats(allow_nan=True, allow_infinity=True, width=64),
                      st.floats(-1e3, 1e3), st.just(0.0))
wrench = st.lists(component, min_size=6, max_size=6)
event = st.one_of(
    st.tuples(st.just('cmd'), wrench),
    st.tuples(st.just('bad'), st.lists(st.floats(-10, 10), min_size=0, max_size=9)),
    st.tuples(st.just('samples'), st.integers(1, 2000), st.integers(1, 4 * DT)),
    st.tuples(st.just('release'), st.none()))


def _norms(w):
    return np.linalg.norm(w[..., :3], axis=-1), np.linalg.norm(w[..., 3:], axis=-1)


@settings(max_examples=300, deadline=None)
@given(st.lists(event, min_size=1, max_size=40), st.integers(0, 10**12))
def test_never_above_the_magnitude_nor_faster_than_the_rate(events, t0):
    load = JoystickLoad(LIM)
    t, prev, prev_t = t0, np.zeros(6), None
    for ev in events:
        if ev[0] == 'cmd':
            why = load.command(ev[1], load.last_ns)
            assert (why is None) == bool(np.all(np.isfinite(np.asarray(ev[1], float))))
        elif ev[0] == 'bad':
            before = load.target.copy()
            assert load.command(ev[1], load.last_ns) is not None or len(ev[1]) == 6
            if len(ev[1]) != 6:
                assert np.array_equal(load.target, before)        # refused: nothing changed
        elif ev[0] == 'release':
            load.release()
        else:
            n, step = ev[1], ev[2]
            stamps = t + step * np.arange(1, n + 1, dtype=np.int64)
            t = int(stamps[-1])
            out = load.sample(stamps)
            assert np.all(np.isfinite(out))
            f, m = _norms(out)
            assert np.all(f <= LIM.force_max + TOL) and np.all(m <= LIM.torque_max + TOL)
            seq = np.vstack([prev[None], out])
            times = np.concatenate([[stamps[0] - step if prev_t is None else prev_t], stamps]) * 1e-9
            df, dm = _norms(np.diff(seq, axis=0))
            dts = np.diff(times)
            assert np.all(df <= LIM.force_rate * dts + 1e-9), (df.max(), dts.min())
            assert np.all(dm <= LIM.torque_rate * dts + 1e-9)
            prev, prev_t = out[-1], int(stamps[-1])


@settings(max_examples=100, deadline=None)
@given(wrench.filter(lambda w: all(map(math.isfinite, w))), st.integers(1, 3000))
def test_silence_releases_at_the_rate_limit(w, n_hold):
    load = JoystickLoad(LIM)
    load.sample([0])
    assert load.command(w, 0) is None
    stamps = np.arange(1, n_hold + 1) * DT
    out = load.sample(stamps)
    f, m = _norms(out[-1])
    # no input after t = 0: beyond the timeout the target is zero, the ramp down takes at most
    # (limit / rate) more, the whole wrench is gone one sample after
    t_end = LIM.timeout + max(LIM.force_max / LIM.force_rate, LIM.torque_max / LIM.torque_rate) + 2 * DT * 1e-9
    later = np.arange(n_hold + 1, n_hold + 1 + int(t_end / (DT * 1e-9)) + 2) * DT
    out2 = load.sample(later)
    assert np.array_equal(out2[-1], np.zeros(6))
    assert load.idle


def test_a_step_is_the_closed_form_ramp_to_the_clipped_target():
    load = JoystickLoad(LIM)
    load.sample([0])
    assert load.command([300.0, 400.0, 0.0, 0.0, 0.0, 2.0], 0) is None     # |F| = 500 N -> 50 N along (0.6, 0.8)
    stamps = np.arange(1, 801) * DT                                         # 0.5 s
    out = load.sample(stamps)
    t = stamps * 1e-9
    mag = np.minimum(200.0 * t, 50.0)
    np.testing.assert_allclose(out[:, 0], 0.6 * mag, atol=1e-9)
    np.testing.assert_allclose(out[:, 1], 0.8 * mag, atol=1e-9)
    np.testing.assert_allclose(out[:, 5], np.minimum(20.0 * t, 2.0), atol=1e-9)
    np.testing.assert_allclose(out[:, [2, 3, 4]], 0.0)


def test_refusals_name_the_problem_and_keep_the_target():
    load = JoystickLoad(LIM)
    load.command([10, 0, 0, 0, 0, 0], 0)
    assert 'non-finite' in load.command([float('nan'), 0, 0, 0, 0, 0], 0)
    assert 'non-finite' in load.command([0, 0, float('inf'), 0, 0, 0], 0)
    assert '6 values' in load.command([1, 2, 3], 0)
    assert np.array_equal(load.target, [10, 0, 0, 0, 0, 0]) and load.refused == 3
    assert check_wrench('abc')[1] is not None
    np.testing.assert_allclose(limit_magnitude([0, 0, 60, 0, 0, 0], LIM), [0, 0, 50, 0, 0, 0])


@settings(max_examples=200, deadline=None)
@given(st.lists(event, min_size=1, max_size=40), st.integers(0, 10**12))
def test_the_idle_fast_path_gives_what_sample_gives(events, t0):
    """``sample_active`` (the F/T node's frame path) against ``sample`` on a twin fed the same
    history: None exactly when the twin's output is all zeros from an idle joystick, the same rows
    otherwise, and the same newest stamp (where the next ramp step starts from) every time."""
    fast, twin = JoystickLoad(LIM), JoystickLoad(LIM)
    t = t0
    for ev in events:
        if ev[0] in ('cmd', 'bad'):
            assert fast.command(ev[1], fast.last_ns) == twin.command(ev[1], twin.last_ns)
        elif ev[0] == 'release':
            fast.release()
            twin.release()
        else:
            n, step = ev[1], ev[2]
            stamps = t + step * np.arange(1, n + 1, dtype=np.int64)
            t = int(stamps[-1])
            idle = twin.idle
            want, got = twin.sample(stamps), fast.sample_active(stamps)
            if got is None:
                assert idle and not want.any()
            else:
                assert not idle and np.array_equal(got, want)
            assert fast.last_ns == twin.last_ns and np.array_equal(fast.applied, twin.applied)
