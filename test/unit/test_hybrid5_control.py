"""Hybrid robot plant, nonlinear integrator and CTM tracking (seed 003 eq. 21-37).

The closed-loop tests simulate an excerpt of the AGH path at 2 m/min, pieces of the letters
joined without rapids (the apex of the A in XY, a quarter of the G's arc in the ZX plane, a
corner of the H in the YZ plane, a table tilt/turn and back) at 10 kHz with one fixed plant
step per control cycle; the whole AGH path runs in ``bench/hybrid5.py --full`` (too long for a
unit test in Python).
"""
import dataclasses

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from hil_core.hybrid5 import dynamics as dyn
from hil_core.hybrid5.control import NonlinearIntegrator
from hil_core.hybrid5.gcode import parse
from hil_core.hybrid5.params import load_params
from hil_core.hybrid5.tracking import simulate
from hil_core.hybrid5.trajectory import PathTrajectory

P = load_params()
EXCERPT = """G21 G90 G17
G0 X-62 Y12 Z0
G1 X-60 Y20 F2000
G1 X-58 Y12
G18 G2 X-78 Z20 I-20 K0
G19 G1 Z28
G1 Y20
G1 A2 C3
G1 A0 C0
"""


def path(program):
    t = P.trajectory
    return PathTrajectory(parse(program, t.rapid_feed), P.Ts, t.a_max, t.j_max,
                          np.radians(t.angular_feed) / 60, P.work_origin)


def test_plant_conserves_energy_without_friction_and_forces():
    """Checks the Coriolis/centrifugal terms: with F = 0 and no friction T + V is constant."""
    pl = dataclasses.replace(P.plant, fc_leg=0.0, b_leg=0.0, fc_table=(0.0, 0.0), b_table=(0.0, 0.0))
    prm = dataclasses.replace(P, plant=pl)
    plant = dyn.Plant(prm, [0.02, -0.03, 0.9])

    def rhs(_, y):
        plant.p, plant.v = y[:3].copy(), y[3:6].copy()
        return np.concatenate([y[3:6], plant.accelerations(np.zeros(3), np.zeros(2))[0]])

    def energy(y):
        M = dyn.task_mass(y[:3], P.R, pl.m_p, pl.m_s, pl.J_r)
        return 0.5 * y[3:] @ M @ y[3:] + dyn.potential(y[:3], P.R, pl.m_p, pl.m_s, pl.q_g)

    y0 = np.array([0.02, -0.03, 0.9, 0.3, -0.2, 0.4])
    sol = solve_ivp(rhs, (0, 0.2), y0, rtol=1e-11, atol=1e-12, dense_output=True)
    E = [energy(sol.sol(t)) for t in np.linspace(0, 0.2, 21)]
    assert np.ptp(E) < 1e-7 * abs(E[0])
    assert np.linalg.norm(sol.y[:3, -1] - y0[:3]) > 0.01           # it really moved


def test_plant_unrolled_equals_matrix_form():
    plant = dyn.Plant(P, [0.03, -0.02, 0.85], [0.2, 0.1])
    plant.v, plant.omega = np.array([0.05, -0.03, 0.02]), np.array([0.3, -0.2])
    F = np.array([300.0, 200.0, 250.0])
    a, _ = plant.accelerations(F, np.zeros(2))
    J = dyn.kin.jacobian(plant.p, P.R)
    ld = J @ plant.v
    pl = P.plant
    Q = J.T @ (F - pl.fc_leg * np.tanh(ld / pl.v_stribeck) - pl.b_leg * ld) \
        - dyn.task_bias(plant.p, plant.v, P.R, pl.m_s, pl.J_r) - dyn.gravity_task(plant.p, P.R, pl.m_p, pl.m_s, pl.q_g)
    np.testing.assert_allclose(a, np.linalg.solve(dyn.task_mass(plant.p, P.R, pl.m_p, pl.m_s, pl.J_r), Q), atol=1e-12)


def test_nonlinear_integrator_eq29_35():
    g = P.legs
    Ts = 1e-4
    it = NonlinearIntegrator(g, 1, Ts)
    e = 5e-9                           # small error: far from the limit S_max
    s, rates = 0.0, []
    vd = [0.0] * 5 + [0.01] * 400      # start of motion (stop -> moving) at cycle 5
    for v in vd:
        s_new = it.update([e], [v])[0]
        rates.append((s_new - s) / (e * Ts))
        s = s_new
    rates = np.array(rates)
    n_half = int(g.Tc / 2 / Ts)
    np.testing.assert_allclose(rates[5:5 + n_half], g.xi, rtol=1e-9)  # boosted by xi (eq. 31)
    # second half: phi_e = 0 because |e| < e_c -> the boost stops early (eq. 32)
    assert e < g.e_c
    np.testing.assert_allclose(rates[5 + n_half + 1:], 1.0, rtol=1e-9)
    np.testing.assert_allclose(rates[:5], 1.0, rtol=1e-9)             # before the event: plain
    # with a large error the second half ramps linearly down (eq. 31) and s is limited (eq. 29)
    it = NonlinearIntegrator(g, 1, Ts)
    it.update([0.0], [0.0])
    it.update([0.0], [-0.01])                                          # reversal -> t_c = 0
    big = 1e-4
    for _ in range(n_half + 10):
        it.update([big], [-0.01])
    assert it.s[0] == pytest.approx(g.s_max)                           # clamped
    it2 = NonlinearIntegrator(dataclasses.replace(g, s_max=1.0), 1, Ts)
    it2.update([0.0], [-0.01])
    r = []
    for _ in range(int(g.Tc / Ts) + 5):
        before = it2.s[0]
        r.append((it2.update([big], [-0.01])[0] - before) / (big * Ts))
    r = np.array(r)
    k = np.arange(1, len(r) + 1) * Ts                                  # t_c of each update
    expect = np.where(k <= g.Tc / 2, g.xi, np.where(k <= g.Tc, 1 + 2 * (g.xi - 1) * (1 - k / g.Tc), 1.0))
    np.testing.assert_allclose(r, expect, rtol=1e-6, atol=1e-6)


def test_ctm_tracks_the_agh_excerpt_below_10um():
    log = simulate(P, path(EXCERPT))
    err = log.position_error
    assert err.max() < 10e-6, f'max tool error {err.max() * 1e6:.2f} um'
    # table: 10 um at 0.2 m from the axis is 50 urad
    assert np.abs(log.th_d - log.th).max() < 50e-6
    assert np.all(np.isfinite(log.F)) and np.abs(log.F).max() < 5000


def test_nonlinear_integrator_reduces_post_reversal_error():
    """Measured on the plant: the A's apex, where legs 1 and 2 reverse under friction."""
    tr = path('G21 G90\nG0 X-62 Y12 Z0\nG1 X-60 Y20 F2000\nG1 X-58 Y12\n')
    res = {}
    for plain in (False, True):
        log = simulate(P, tr, plain_integrator=plain)
        sg = np.sign(np.round(log.v_d, 7))
        rev = np.flatnonzero(np.any(np.diff(sg, axis=0) != 0, axis=1)) + 1
        window = np.zeros(len(sg), bool)
        for r in rev:
            window[r:r + int(0.03 / P.Ts)] = True
        res[plain] = np.abs(log.e_leg[window]).max()
    assert res[False] < 0.8 * res[True], res
