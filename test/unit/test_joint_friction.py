"""Joint friction at the mock's fixed 1 ms step vs a fine-step reference of the same LuGre
equations (plain explicit Euler at 5 us, scalar Python: independent of the closed-form implicit
scheme): stick-slip, pre-sliding hysteresis, no chattering at zero velocity.

Tolerances: stick-slip position within 3 % of the stick-slip amplitude and slip onsets within
5 ms (the Stribeck level is the one explicit part of the 1 ms scheme, so slip onsets shift a
little);
pre-sliding displacement within 5 % of its peak (the loop is micro-radians wide)."""
import numpy as np
import pytest

from hil_core.drives.joint_friction import FrictionParams, JointFriction

PARAMS = dict(fc=1.0, fs=1.5, vs=0.01, sigma0=1e4, sigma1=50.0, sigma2=0.4)


def simulate(h, T, force, m=0.5, n=1):
    fr = JointFriction(FrictionParams.make(n, **PARAMS))
    x, v = np.zeros(n), np.zeros(n)
    steps = int(round(T / h))
    xs, vs, fs = np.empty((steps, n)), np.empty((steps, n)), np.empty((steps, n))
    for k in range(steps):
        t = (k + 1) * h
        tau = force(t, x)
        v, f = fr.step(v, tau, m, h)
        x = x + h * v
        xs[k], vs[k], fs[k] = x, v, f
    return xs, vs, fs


def reference(T, force, m=0.5, h=5e-6, every=200):
    """Explicit LuGre, fine step; samples every ``every`` steps (1 ms)."""
    import math
    fc, fs, vs, s0, s1, s2 = (PARAMS[k] for k in ('fc', 'fs', 'vs', 'sigma0', 'sigma1', 'sigma2'))
    x = v = z = 0.0
    xs, vs_, fs_ = [], [], []
    for k in range(int(round(T / h))):
        t = k * h
        g = fc + (fs - fc) * math.exp(-(v / vs) ** 2)
        dz = v - s0 * abs(v) * z / g
        f = s0 * z + s1 * dz + s2 * v
        tau = float(force(t, x))
        z += h * dz
        v += h * (tau - f) / m
        x += h * v
        if (k + 1) % every == 0:
            xs.append(x)
            vs_.append(v)
            fs_.append(f)
    return np.array(xs)[:, None], np.array(vs_)[:, None], np.array(fs_)[:, None]


def test_stick_slip_at_1ms_equals_the_fine_step_reference():
    k_spring, v_pull = 200.0, 0.02          # N m/rad, rad/s: drive through a spring

    def force(t, x):
        return k_spring * (v_pull * t - x)
    T = 3.0
    x1, v1, _ = simulate(1e-3, T, force)
    xf, vf, _ = reference(T, force)
    amp = xf.max() - xf.min()
    # stick-slip really happens: sticks (LuGre creep, v << v_pull) and slips (v >> v_pull)
    assert vf.max() > 3 * v_pull and np.sum(np.abs(vf) < 0.25 * v_pull) > 1000
    assert np.abs(x1 - xf).max() < 0.03 * amp
    slips1 = np.flatnonzero(np.diff((v1[:, 0] > 2 * v_pull).astype(int)) == 1)
    slipsf = np.flatnonzero(np.diff((vf[:, 0] > 2 * v_pull).astype(int)) == 1)
    assert len(slips1) == len(slipsf) >= 5
    assert np.abs(slips1 - slipsf).max() <= 5


def test_presliding_hysteresis_at_1ms_equals_the_fine_step_reference():
    def force(t, x):
        return 0.8 * PARAMS['fc'] * np.sin(2 * np.pi * 2.0 * t)   # below breakaway: no sliding
    x1, _, f1 = simulate(1e-3, 1.0, force)
    xf, _, ff = reference(1.0, force)
    peak = np.abs(xf).max()
    assert 0 < peak < 10 * PARAMS['fs'] / PARAMS['sigma0']          # micro-displacement regime
    assert np.abs(x1 - xf).max() < 0.05 * peak
    # a hysteresis loop: at zero force the displacement differs on the way up and down
    second = slice(500, 1000)
    xs, fs = x1[second, 0], f1[second, 0]
    up = xs[(np.abs(fs) < 0.05) & (np.gradient(fs) > 0)]
    down = xs[(np.abs(fs) < 0.05) & (np.gradient(fs) < 0)]
    assert up.size and down.size and abs(up.mean() - down.mean()) > 0.05 * peak


def test_no_chattering_at_zero_velocity():
    # constant load below the Coulomb level (LuGre creeps above it): stick without sign flips
    x, v, f = simulate(1e-3, 2.0, lambda t, x: np.full(1, 0.9 * PARAMS['fc']))
    assert np.abs(v[500:, 0]).max() < 1e-6
    # the bristle spring (sigma0, sigma1: 22 Hz, damping ratio 0.35) swings a few times like
    # the continuous model, then rests; chattering would flip the sign every step or two
    significant = np.abs(v[:, 0]) > 1e-9
    flips = np.flatnonzero(np.diff(np.sign(v[:, 0])) != 0)
    flips = flips[significant[flips] & significant[flips + 1]]
    assert flips.size == 0 or (flips.max() < 500 and np.diff(flips).min() >= 10)
    xf, _, _ = reference(2.0, lambda t, x: 0.9 * PARAMS['fc'])
    # resting offset within 15 %: the implicit step damps the 22 Hz bristle swing, so a little
    # less LuGre creep accumulates during it (the rest is the elastic offset, exact)
    assert x[-1, 0] == pytest.approx(xf[-1, 0], rel=0.15)
    assert f[-1, 0] == pytest.approx(0.9 * PARAMS['fc'], rel=1e-6)
    # no load at rest: exactly nothing moves
    x, v, f = simulate(1e-3, 0.5, lambda t, x: np.zeros(1))
    assert np.all(v == 0) and np.all(x == 0)


def test_sliding_friction_follows_the_stribeck_curve():
    fr = JointFriction(FrictionParams.make(3, **PARAMS))
    vel = np.array([0.005, 0.05, 1.0])
    v = vel.copy()
    for _ in range(2000):   # drive at constant velocity: torque = friction
        v, f = fr.step(vel, fr.p.sigma0 * fr.z + fr.p.sigma2 * vel, 1e9, 1e-3)
    expected = fr.level(vel) + PARAMS['sigma2'] * vel
    np.testing.assert_allclose(f, expected, rtol=1e-3)


@pytest.mark.parametrize('bad', [dict(fc=-1.0), dict(fs=0.5), dict(vs=0.0), dict(sigma0=np.nan)])
def test_bad_friction_parameters_are_refused(bad):
    with pytest.raises(ValueError):
        FrictionParams.make(2, **{**PARAMS, **bad})
