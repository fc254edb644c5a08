"""hil_core.drives.scripted_motion: ramps, quintic moves, braking and the scripted source's mode flow.

Expected values: boundary conditions solved independently with numpy.linalg, numerical
derivatives, closed-form stopping distances, and the seed-000 mode flow."""
import numpy as np
import pytest

from hil_core.drives.scripted_motion import (Decelerate, MotionLimits, ScriptConfig, ScriptedMotion, SineScript,
                                      SyncRamp, eval_polynomial, quintic_coefficients, quintic_to, smoothstep5)

T, DT = 0.0025, 0.000625
LIMITS = MotionLimits(np.full(6, 0.2), np.full(6, 2.0))


def test_smoothstep_is_c2_with_zero_end_derivatives():
    u = np.linspace(0, 1, 2001)
    s, ds, dds = smoothstep5(u)
    assert s[0] == 0 and s[-1] == 1
    assert ds[0] == ds[-1] == 0 and dds[0] == dds[-1] == 0
    np.testing.assert_allclose(np.gradient(s, u)[1:-1], ds[1:-1], atol=1e-5)
    np.testing.assert_allclose(np.gradient(ds, u)[1:-1], dds[1:-1], atol=1e-4)
    assert ds.max() == pytest.approx(1.875, rel=1e-6)


def test_quintic_coefficients_match_linear_solve():
    rng = np.random.default_rng(0)
    p0, v0, a0, p1, v1, a1 = rng.normal(size=(6, 3))
    dur = 0.7
    c = quintic_coefficients(p0, v0, a0, p1, v1, a1, dur)
    rows = []
    for tt in (0.0, dur):
        rows.append([tt ** k for k in range(6)])
        rows.append([k * tt ** (k - 1) if k else 0 for k in range(6)])
        rows.append([k * (k - 1) * tt ** (k - 2) if k > 1 else 0 for k in range(6)])
    rhs = np.stack([p0, v0, a0, p1, v1, a1])
    np.testing.assert_allclose(c, np.linalg.solve(np.array(rows), rhs), atol=1e-9)
    p, v, a = eval_polynomial(c, np.array([dur]))
    np.testing.assert_allclose(np.r_[p[0], v[0], a[0]], np.r_[p1, v1, a1], atol=1e-9)


def test_quintic_to_respects_limits_from_a_moving_state():
    p0, v0, a0 = np.full(6, 0.05), np.linspace(-0.15, 0.15, 6), np.linspace(1, -1, 6)
    seg = quintic_to(1.0, p0, v0, a0, np.zeros(6), LIMITS, 0.2)
    t = np.linspace(1.0, seg.end + 0.1, 4001)
    p, v, a = seg.evaluate(t)
    np.testing.assert_allclose(np.r_[p[0], v[0], a[0]], np.r_[p0, v0, a0], atol=1e-12)
    assert np.all(np.abs(v) <= 0.2 * 1.001) and np.all(np.abs(a) <= 2.0 * 1.001)
    np.testing.assert_allclose(p[-1], 0.0, atol=1e-12)
    assert np.all(v[-1] == 0)
    tight = quintic_to(1.0, p0, v0, a0, np.zeros(6), MotionLimits(np.full(6, 0.05), np.full(6, 0.5)), 0.2)
    assert tight.duration > seg.duration


def test_sync_ramp_starts_at_home_at_rest_and_becomes_the_script():
    script = SineScript.from_seed(np.full(6, 0.01), np.linspace(0.3, 1.0, 6), seed=7)
    ramp = SyncRamp(2.0, np.zeros(6), script, 1.5)
    p, v, a = ramp.evaluate(np.array([2.0]))
    assert np.all(p == 0) and np.all(v == 0) and np.allclose(a, 0)
    t = np.linspace(3.5, 5.0, 50)
    sp, sv, sa = script.evaluate(t - 2.0)
    rp, rv, ra = ramp.evaluate(t)
    np.testing.assert_allclose(rp, sp, atol=1e-15)
    np.testing.assert_allclose(rv, sv, atol=1e-15)
    tt = np.linspace(1.9, 4.0, 20001)
    p, v, a = ramp.evaluate(tt)
    np.testing.assert_allclose(np.gradient(p, tt, axis=0)[1:-1], v[1:-1], atol=1e-6)
    np.testing.assert_allclose(np.gradient(v, tt, axis=0)[1:-1], a[1:-1], atol=2e-4)


def test_decelerate_stops_within_the_closed_form_distance():
    v0 = np.array([0.2, -0.1, 0.0, 0.05, -0.2, 0.01])
    dec = np.full(6, 2.0)
    seg = Decelerate(0.0, np.zeros(6), v0, dec)
    t = np.linspace(0, 0.2, 2001)
    p, v, a = seg.evaluate(t)
    np.testing.assert_allclose(p[-1], v0 * np.abs(v0) / (2 * dec), atol=1e-12)
    assert np.all(v[-1] == 0) and np.all(np.abs(a) <= 2.0)
    np.testing.assert_allclose(v[0], v0)
    assert np.all(np.abs(np.diff(v, axis=0)) <= 2.0 * (t[1] - t[0]) + 1e-12)


def config(**kw):
    base = dict(amplitudes=(0.01,) * 6, frequencies=(0.5, 0.6, 0.7, 0.8, 0.9, 1.0), seed=3,
                sync_duration=0.5, homing_min_duration=0.2)
    base.update(kw)
    return ScriptConfig(**base)


def run(motion, modes, measured0):
    """Drive frames; modes(k, events_so_far) -> requested mode. Returns points, events."""
    pts, vels, events = [], [], []
    measured = np.asarray(measured0, dtype=float)
    for k in range(int(3.0 / T)):
        t = k * T
        p, v, ev = motion.frame(t, modes(k, [e for _, e in events]), measured, t + DT * np.arange(1, 5))
        events += [(t, name) for name, _ in ev]
        pts.append(p)
        vels.append(v)
        measured = p[-1]                # an ideal drive
    return np.concatenate(pts), np.concatenate(vels), events


def supervisor(fault_at=None, stop_at=None):
    def modes(k, seen):
        if fault_at is not None and k >= fault_at:
            return 'FAULT'
        if k < 40:
            return 'IDLE'
        if stop_at is not None and k >= stop_at:
            return 'IDLE' if 'home_reached' in seen else 'RETURNING_HOME'
        if 'synchronized' in seen:
            return 'RUNNING'
        return 'SYNCHRONIZING' if 'homed' in seen else 'HOMING'
    return modes


def test_mode_flow_events_and_continuity():
    motion = ScriptedMotion(config())
    start = np.array([0.02, -0.01, 0.0, 0.005, 0.01, -0.02])
    p, v, events = run(motion, supervisor(stop_at=700), start)
    names = [e for _, e in events]
    assert names == ['homed', 'synchronized', 'home_reached']
    np.testing.assert_allclose(p[:160], np.tile(start, (160, 1)))          # IDLE holds the measured joints
    t_homed, t_sync = events[0][0], events[1][0]
    assert t_sync - t_homed == pytest.approx(0.5, abs=T)
    np.testing.assert_allclose(p[-1], 0.0, atol=1e-12)                       # back home
    # Velocity continuity and acceleration limits at servo rate over the whole run.
    assert np.all(np.abs(np.diff(v, axis=0)) <= 2.0 * DT * 1.01)
    assert np.all(np.abs(v) <= 0.2)
    np.testing.assert_allclose(np.diff(p, axis=0), 0.5 * (v[1:] + v[:-1]) * DT, atol=2e-8)


def test_fault_holds_with_zero_velocity_without_jump():
    motion = ScriptedMotion(config())
    p, v, events = run(motion, supervisor(fault_at=500), np.zeros(6))
    k = 500 * 4
    assert np.all(np.abs(np.diff(v[k - 4:], axis=0)) <= 2.0 * DT * 1.01)
    assert np.all(v[-200:] == 0)
    assert np.all(p[-200:] == p[-1])
    assert motion.phase.value == 'FAULT'


def test_same_seed_same_motion_other_seed_differs():
    a = run(ScriptedMotion(config()), supervisor(), np.zeros(6))[0]
    b = run(ScriptedMotion(config()), supervisor(), np.zeros(6))[0]
    c = run(ScriptedMotion(config(seed=4)), supervisor(), np.zeros(6))[0]
    np.testing.assert_array_equal(a, b)
    assert np.max(np.abs(a - c)) > 1e-3


def test_bad_script_configs_are_named():
    assert 'peak velocity' in config(amplitudes=(0.1,) * 6, frequencies=(5.0,) * 6).problem()
    assert 'peak acceleration' in config(frequencies=(3.0,) * 6, velocity_max=(1.0,) * 6).problem()
    assert 'one value per joint' in config(frequencies=(1.0,) * 5).problem()
    with pytest.raises(ValueError):
        ScriptedMotion(config(sync_duration=0.0))
