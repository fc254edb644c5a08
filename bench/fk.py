"""Hexaslide forward/inverse kinematics timing (seed 000/001: JFMD in C, 50 us at 1.6 kHz).

Prints ``name: value unit`` lines: FK per solve, warm-started along a 4 s, 1 kHz sea-state-like
trajectory of the scaled robot, for the analytic-Jacobian Newton and the finite-difference JFMD
in the same run, each with the inverse Jacobian kept across calls (chord, the default),
refreshed every call, and (Newton) with the constant-velocity predictor; cold start from home;
IK per pose (single call and vectorised batch). Wall-clock p50/p99 and the p50 of the thread's
CPU time (less sensitive to other processes on a shared machine); the load average is printed.
"""
from __future__ import annotations

import os
import sys
import time

import numpy as np

from hil_core import hexaslide as hx

VARIANTS = (('newton', dict(method='newton')), ('newton_predict', dict(method='newton', predict=True)),
            ('newton_refresh', dict(method='newton', chord=False)), ('jfmd', dict(method='jfmd')),
            ('jfmd_refresh', dict(method='jfmd', chord=False)))


def timed(fn, items):
    wall, cpu, out = [], [], []
    clock, tclock = time.perf_counter_ns, time.thread_time_ns
    for item in items:
        t0, c0 = clock(), tclock()
        r = fn(item)
        c1, t1 = tclock(), clock()
        wall.append(t1 - t0)
        cpu.append(c1 - c0)
        out.append(r)
    return np.asarray(wall) / 1e3, np.asarray(cpu) / 1e3, out


def report(name, wall, cpu):
    print(f'{name}_p50: {np.percentile(wall, 50):.1f} us')
    print(f'{name}_p99: {np.percentile(wall, 99):.1f} us')
    print(f'{name}_cpu_p50: {np.percentile(cpu, 50):.1f} us')


def reference_loop() -> float:
    """CPU ns per iteration of a fixed float loop: scales the figures between machines/loads."""
    t0 = time.thread_time_ns()
    acc, x = 0.0, 1.0000001
    for _ in range(200_000):
        acc = acc * x + 1e-9
    return (time.thread_time_ns() - t0) / 200_000


def main() -> int:
    print(f'load_average_1min: {os.getloadavg()[0]:.2f} processes')
    print(f'python_reference_loop: {reference_loop():.1f} ns')
    geom = hx.load_geometry('hexaslide_scaled')
    traj = hx.sinusoid_trajectory(geom, duration=4.0, rate=1000.0)
    ik = hx.inverse_kinematics(geom, traj)
    assert ik.ok.all()
    q_warm = [list(q) for q in ik.q]
    for label, opts in VARIANTS:
        fk = hx.ForwardKinematics(geom, **opts)
        fk.solve(q_warm[0])
        wall, cpu, res = timed(fk.solve, q_warm)
        if not all(r.converged for r in res):
            raise SystemExit(f'{label}: FK did not converge')
        report(f'fk_{label}_warm', wall, cpu)
        print(f'fk_{label}_warm_max_iterations: {max(r.iterations for r in res)} iterations')
    q_cold = [list(q) for q in hx.inverse_kinematics(geom, hx.random_poses(geom, 500, rng=1)).q]
    for method in ('newton', 'jfmd'):
        fk = hx.ForwardKinematics(geom, method=method)
        home = hx.home_pose(geom)
        wall, cpu, res = timed(lambda q: fk.solve(q, guess=home), q_cold)
        if not all(r.converged for r in res):
            raise SystemExit(f'{method}: cold FK did not converge')
        report(f'fk_{method}_cold_from_home', wall, cpu)
        print(f'fk_{method}_cold_from_home_max_iterations: {max(r.iterations for r in res)} iterations')
    wall, cpu, _ = timed(lambda pose: hx.inverse_kinematics(geom, pose), traj[:2000])
    report('ik_single_pose', wall, cpu)
    batch = hx.random_poses(geom, 10000, rng=2)
    t0 = time.perf_counter()
    hx.inverse_kinematics(geom, batch)
    print(f'ik_batch_10000_per_pose: {(time.perf_counter() - t0) / 1e4 * 1e6:.2f} us')
    return 0


if __name__ == '__main__':
    sys.exit(main())
