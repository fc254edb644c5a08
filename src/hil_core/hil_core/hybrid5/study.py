"""Numerical study of seed 003 table 3: the tracking algorithm in float32 vs float64.

``reference_errors``: trajectory generation + inverse kinematics with first and second
derivatives of both manipulators, run end to end in float32 (every operation rounded to
float32: numpy float32 arrays, constants cast) and in float64, over every control cycle of
a path; maximum absolute differences per quantity (the rows of table 3).
``closed_loop_errors``: the whole cycle (reference + forward kinematics + model + CTM with
the nonlinear integrator) in float32 and in float64, each in closed loop with the plant.
"""
from __future__ import annotations

import numpy as np

from . import kinematics as kin
from .params import Hybrid5Params
from .tracking import simulate
from .trajectory import PathTrajectory

BLOCK = 20000


def reference_errors(params: Hybrid5Params, path: PathTrajectory, stride: int = 1) -> dict:
    """Max |float32 - float64| of l, ldot, lddot per leg and theta, omega, eps per table axis."""
    names = ['dl', 'dv', 'da', 'dtheta', 'domega', 'deps']
    worst = {f'{n}{i}': 0.0 for n in names[:3] for i in (1, 2, 3)}
    worst.update({f'{n}{i}': 0.0 for n in names[3:] for i in (4, 5)})
    worst['dp'] = 0.0
    ks_all = np.arange(0, path.n_cycles, stride)
    for b in range(0, len(ks_all), BLOCK):
        ks = ks_all[b:b + BLOCK]
        out = {}
        for dt in (np.float64, np.float32):
            (p, v, a), ang = path.sample_cycles(ks, dt)
            out[dt] = (kin.inverse_derivatives(p, v, a, params.R), kin.table_inverse(*ang), p)
        (j64, t64, p64), (j32, t32, p32) = out[np.float64], out[np.float32]
        for n, x64, x32 in zip(names, (*j64, *t64), (*j32, *t32)):
            err = np.max(np.abs(x32.astype(np.float64) - x64), axis=0)
            for i, e in enumerate(err):
                key = f'{n}{i + 1 if n in names[:3] else i + 4}'
                worst[key] = max(worst[key], float(e))
        worst['dp'] = max(worst['dp'], float(np.max(np.linalg.norm(p32.astype(np.float64) - p64, axis=1))))
    return worst


def closed_loop_errors(params: Hybrid5Params, path: PathTrajectory, n_cycles: int | None = None) -> dict:
    """The whole cycle (reference, kinematics, model, CTM with the nonlinear integrator) in
    float32 and in float64, each closing the loop on the simulated plant (float64).

    Forces are not compared directly: the integrator turns any float32 bias of the ~1 m
    lengths (one ulp = 1.2e-7 m) into a slowly growing force difference that the loop then
    cancels, so the meaningful figure is where the tool ends up: max |p32 - p64| and each
    run's max tracking error (m), plus the table angle difference (rad)."""
    logs = {dt: simulate(params, path, n_cycles, dtype=dt) for dt in (np.float64, np.float32)}
    a, b = logs[np.float64], logs[np.float32]
    return {'dp': float(np.max(np.linalg.norm(b.p - a.p, axis=1))),
            'dtheta': float(np.max(np.abs(b.th - a.th))),
            'err64': float(np.max(a.position_error)), 'err32': float(np.max(b.position_error)),
            'cycles': len(a.p)}
