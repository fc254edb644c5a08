"""Hardware-side watchdog (hil_core.drives.command_watchdog): when it trips (commands stopped, the
supervisor's heartbeat lost), that it stays tripped, and the braking profile's safety
properties over random states (hypothesis): starts at the setpoint with its velocity, never
exceeds the deceleration, never reverses, comes to rest and stays there; its knots reproduce
it under cubic Hermite interpolation (what a drive does between setpoints)."""
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hil_core.drives.command_watchdog import (CALLER, COMMAND_TIMEOUT, SUPERVISOR_TIMEOUT, CommandWatchdog,
                                              WatchdogConfig, braking_knots, braking_profile, stop_time)

# command_timeout binary-exact, so that 'exactly at the timeout' is exact
CFG = WatchdogConfig(command_timeout=0.0625, supervisor_timeout=0.5, deceleration=(5.0,) * 6)


def test_nothing_trips_before_the_first_command_or_heartbeat():
    w = CommandWatchdog(CFG)
    assert w.check(1e6) is None and not w.braking


def test_commands_stopping_trip_it_once_and_it_stays_tripped():
    w = CommandWatchdog(CFG)
    w.command(1.0)
    assert w.check(1.0 + CFG.command_timeout) is None  # exactly at the timeout: not yet
    reason = w.check(1.07)
    assert reason == 'no valid command for 0.070 s (command_timeout 0.0625 s)' and w.braking
    assert w.cause == COMMAND_TIMEOUT                  # what tripped it, kept apart from the text
    assert w.check(2.0) is None and w.trips == 1       # reported once
    w.command(2.0)                                     # a stream coming back is not followed
    assert w.braking and w.check(2.01) is None
    w.rearm()
    assert not w.braking and w.cause == '' and w.check(10.0) is None   # nothing watched until the next command


def test_supervisor_death_trips_it():
    w = CommandWatchdog(CFG)
    w.supervisor_beat(0.0)
    for t in np.arange(0.0, 0.5, 0.01):                # commands keep coming
        w.command(t)
        assert w.check(t) is None
    w.command(0.51)
    assert 'supervisor heartbeat lost for 0.510 s' in w.check(0.51) and w.cause == SUPERVISOR_TIMEOUT


def test_supervisor_watch_can_be_off():
    w = CommandWatchdog(WatchdogConfig(0.05, 0.0, (5.0,)))
    w.supervisor_beat(0.0)
    w.command(100.0)
    assert w.check(100.01) is None


@pytest.mark.parametrize('cfg', [WatchdogConfig(0.0, 0.5, (5.0,)), WatchdogConfig(0.05, -1.0, (5.0,)),
                                 WatchdogConfig(0.05, 0.5, (5.0, 0.0)), WatchdogConfig(math.nan, 0.5, (5.0,)),
                                 WatchdogConfig(0.05, 0.5, ())])
def test_bad_config_is_refused(cfg):
    assert cfg.problem()
    with pytest.raises(ValueError):
        CommandWatchdog(cfg)


def test_a_known_stop():
    """v0 = 0.3 m/s at 6 m/s^2: 50 ms and 7.5 mm; the other joint, at 0.15 m/s, synchronised:
    3 m/s^2 and 3.75 mm in the same 50 ms."""
    p, v, a = braking_profile([0.01, -0.02], [0.3, -0.15], 6.0, [0.0, 0.025, 0.05, 0.1])
    assert stop_time([0.3, -0.15], 6.0) == pytest.approx(0.05)
    assert np.allclose(p[-1], [0.01 + 0.0075, -0.02 - 0.00375])
    assert np.allclose(v[1], [0.15, -0.075]) and np.allclose(v[-1], 0.0)
    assert np.allclose(a[0], [-6.0, 3.0]) and np.allclose(a[-1], 0.0)
    p2, _, a2 = braking_profile([0.0, 0.0], [0.3, -0.15], 6.0, [0.1], synchronized=False)
    assert np.allclose(p2[0], [0.0075, -0.001875])     # each at its full deceleration


states = st.integers(1, 6).flatmap(lambda n: st.tuples(
    st.lists(st.floats(-0.2, 0.2, allow_subnormal=False), min_size=n, max_size=n),
    st.lists(st.floats(-1.0, 1.0, allow_subnormal=False), min_size=n, max_size=n),
    st.lists(st.floats(0.5, 20.0), min_size=n, max_size=n)))


@settings(max_examples=300, deadline=None)
@given(states, st.booleans())
def test_braking_is_continuous_bounded_monotone_and_ends_at_rest(state, synchronized):
    p0, v0, d = (np.asarray(x, float) for x in state)
    t_stop = stop_time(v0, d, synchronized)
    assert t_stop == pytest.approx(np.max(np.abs(v0) / d))
    t = np.linspace(0.0, 1.5 * t_stop + 1e-3, 400)
    p, v, a = braking_profile(p0, v0, d, t, synchronized)
    assert np.allclose(p[0], p0) and np.allclose(v[0], v0)              # from the setpoint, no jump
    assert np.all(np.abs(a) <= d * (1 + 1e-12))
    dv = np.diff(v, axis=0) / np.diff(t)[:, None]                       # velocity changes at most d
    assert np.all(np.abs(dv) <= d * (1 + 1e-9) + 1e-12)
    assert np.all(v * np.sign(v0) >= -1e-15)                            # never reverses
    assert np.all(np.diff(p, axis=0) * np.sign(v0) >= -1e-15)           # nor moves back
    rest = t >= t_stop
    assert np.allclose(v[rest], 0.0, atol=1e-15)
    assert np.allclose(p[rest], p[rest][0], atol=1e-15)                 # and stays there
    # the distance is the one of a constant deceleration from v0 to 0 at each joint's rate
    rate = np.where(v0 != 0, np.abs(a[0]), 1.0)
    assert np.allclose(p[-1] - p0, v0 * np.abs(v0) / (2 * rate), atol=1e-12)
    if synchronized and t_stop > 0:      # all joints together: v(t) = v0 (1 - t/T), a straight line
        assert np.allclose(v, v0 * np.clip(1.0 - t / t_stop, 0.0, 1.0)[:, None], atol=1e-15)


def _hermite(t_knots, p_knots, v_knots, t):
    """Cubic Hermite interpolation, written out (independent of the library's)."""
    i = np.clip(np.searchsorted(t_knots, t, side='right') - 1, 0, len(t_knots) - 2)
    h = (t_knots[i + 1] - t_knots[i])[:, None]
    s = ((t - t_knots[i]) / h[:, 0])[:, None]
    h00, h10, h01, h11 = 2 * s**3 - 3 * s**2 + 1, s**3 - 2 * s**2 + s, -2 * s**3 + 3 * s**2, s**3 - s**2
    return h00 * p_knots[i] + h10 * h * v_knots[i] + h01 * p_knots[i + 1] + h11 * h * v_knots[i + 1]


@settings(max_examples=100, deadline=None)
@given(states, st.booleans())
def test_knots_reproduce_the_profile_under_hermite_interpolation(state, synchronized):
    p0, v0, d = (np.asarray(x, float) for x in state)
    times, pos, vel = braking_knots(p0, v0, d, 0.000625, synchronized)
    assert times[0] == 0.0 and np.all(np.diff(times) > 0)
    assert np.allclose(vel[-1], 0.0) and times[-1] == pytest.approx(stop_time(v0, d, synchronized))
    if len(times) < 2:
        assert np.allclose(v0, 0.0)
        return
    t = np.linspace(0.0, times[-1], 257)
    expected, _, _ = braking_profile(p0, v0, d, t, synchronized)
    assert np.allclose(_hermite(times, pos, vel, t), expected, atol=1e-12)


def test_supervisor_only_check_and_a_trip_found_by_the_caller():
    w = CommandWatchdog(CFG)
    w.command(0.0)
    assert w.check(5.0, commands=False) is None            # commands judged by the caller (lockstep)
    # a reason that reads like the watchdog's own is still the caller's (the drives name the
    # supervisor only after a command timeout of the watchdog's)
    assert w.trip('no valid command for 0.2 s of sim time') and w.braking and w.cause == CALLER
    assert w.trip('again') is None and w.trips == 1 and w.cause == CALLER


@pytest.mark.parametrize('v0, d', [(0.1, 4.0), (0.05, 2.0), (0.3, 6.0), (0.000625 * 7, 1.0)])
def test_a_stop_on_the_knot_grid_gives_no_double_knot(v0, d):
    """0.1 m/s at 4 m/s^2 stops at 25 ms, on the 0.625 ms grid up to rounding: one knot there."""
    times, pos, vel = braking_knots([0.0] * 6, [v0] * 6, [d] * 6, 0.000625)
    assert np.min(np.diff(times)) > 0.5 * 0.000625
    t = np.linspace(0.0, times[-1], 101)
    assert np.allclose(_hermite(times, pos, vel, t), braking_profile([0.0] * 6, [v0] * 6, d, t)[0], atol=1e-12)


def test_the_supervisor_silence_is_told_only_when_watched_heard_and_longer():
    w = CommandWatchdog(CFG)
    assert w.supervisor_silence(5.0, 0.1) is None                      # never heard
    w.supervisor_beat(1.0)
    assert w.supervisor_silence(1.25, 0.25) is None                    # exactly as long: not longer
    assert w.supervisor_silence(1.375, 0.25) == 0.375
    off = CommandWatchdog(WatchdogConfig(0.05, 0.0, (5.0,)))
    off.supervisor_beat(1.0)
    assert off.supervisor_silence(9.0, 0.1) is None                    # not watched: not named
