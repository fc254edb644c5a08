"""Hexaslide forward/inverse kinematics timing (seed 000/001: JFMD in C, 50 us at 1.6 kHz).

Prints ``name: value unit`` lines: FK per solve, warm-started along a 4 s, 1 kHz sea-state-like
trajectory of the scaled robot, for the analytic-Jacobian Newton and the finite-difference JFMD
in the same run, each with the inverse Jacobian kept across calls (chord, the default),
refreshed every call, and (Newton) with the constant-velocity predictor; cold start from home;
IK per pose (single call and vectorised batch). Every figure for the compiled kernels (the
public ``ForwardKinematics`` / ``inverse_kinematics``, suffix ``_compiled``) and for their
numpy oracles (``ForwardKinematicsNumpy`` / ``inverse_kinematics_numpy``, suffix ``_numpy``).
Wall-clock p50/p99 and the p50 of the thread's CPU time (less sensitive to other processes on
a shared machine); the load average is printed.

First call: ``hexaslide_warm_up`` is what the first use costs in this process (loading the
kernels from numba's on-disk cache, or compiling them when there is none); ``--cold`` also
compiles them in a subprocess with an empty cache (``hexaslide_cold_compile``).
"""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time

import numpy as np

T_IMPORT = time.perf_counter()
from hil_core import hexaslide as hx  # noqa: E402

T_IMPORT = time.perf_counter() - T_IMPORT
IMPLEMENTATIONS = (('compiled', hx.ForwardKinematics, hx.inverse_kinematics),
                   ('numpy', hx.ForwardKinematicsNumpy, hx.inverse_kinematics_numpy))
VARIANTS = (('newton', dict(method='newton')), ('newton_predict', dict(method='newton', predict=True)),
            ('newton_refresh', dict(method='newton', chord=False)), ('jfmd', dict(method='jfmd')),
            ('jfmd_refresh', dict(method='jfmd', chord=False)))


def timed(fn, items, keep=lambda r: None):
    """Wall and thread-CPU microseconds per call, and ``keep(result)`` of each call (results
    are not kept: a caller drops them too, so their memory is reused as in a node)."""
    wall, cpu, out = [], [], []
    clock, tclock = time.perf_counter_ns, time.thread_time_ns
    for item in items:
        c0 = tclock()
        t0 = clock()
        r = fn(item)
        t1 = clock()
        c1 = tclock()
        wall.append(t1 - t0)
        cpu.append(c1 - c0)
        out.append(keep(r))
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


def cold_compile_seconds() -> float:
    """Compile every hexaslide kernel in a fresh process whose numba cache is an empty directory
    (set for that subprocess only)."""
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache, NUMBA_CACHE_LOCATOR_CLASSES='UserProvidedCacheLocator')
        out = subprocess.run([sys.executable, '-c', 'from hil_core import hexaslide as hx; print(hx.warm_up())'],
                             env=env, capture_output=True, text=True, check=True)
    return float(out.stdout.split()[-1])


def main() -> int:
    print(f'load_average_1min: {os.getloadavg()[0]:.2f} processes')
    print(f'python_reference_loop: {reference_loop():.1f} ns')
    print(f'hexaslide_import: {T_IMPORT:.3f} s')
    print(f'hexaslide_warm_up: {hx.warm_up():.3f} s')
    if '--cold' in sys.argv[1:]:
        print(f'hexaslide_cold_compile: {cold_compile_seconds():.2f} s')
    geom = hx.load_geometry('hexaslide_scaled')
    traj = hx.sinusoid_trajectory(geom, duration=4.0, rate=1000.0)
    ik = hx.inverse_kinematics(geom, traj)
    assert ik.ok.all()
    q_warm = list(ik.q)                    # rows of a float array, as a node passes them
    q_cold = list(hx.inverse_kinematics(geom, hx.random_poses(geom, 500, rng=1)).q)
    for label, opts in VARIANTS:
        for impl, cls, _ in IMPLEMENTATIONS:
            fk = cls(geom, **opts)
            fk.solve(q_warm[0])
            wall, cpu, res = timed(fk.solve, q_warm, keep=lambda r: (r.converged, r.iterations))
            if not all(ok for ok, _ in res):
                raise SystemExit(f'{label} ({impl}): FK did not converge')
            report(f'fk_{label}_warm_{impl}', wall, cpu)
            print(f'fk_{label}_warm_{impl}_max_iterations: {max(it for _, it in res)} iterations')
    for method in ('newton', 'jfmd'):
        for impl, cls, _ in IMPLEMENTATIONS:
            fk = cls(geom, method=method)
            home = hx.home_pose(geom)
            wall, cpu, res = timed(lambda q: fk.solve(q, guess=home), q_cold,
                                   keep=lambda r: (r.converged, r.iterations))
            if not all(ok for ok, _ in res):
                raise SystemExit(f'{method} ({impl}): cold FK did not converge')
            report(f'fk_{method}_cold_from_home_{impl}', wall, cpu)
            print(f'fk_{method}_cold_from_home_{impl}_max_iterations: {max(it for _, it in res)} iterations')
    batch = hx.random_poses(geom, 10000, rng=2)
    for impl, _, inverse in IMPLEMENTATIONS:
        wall, cpu, _ = timed(lambda pose: inverse(geom, pose), traj[:2000])
        report(f'ik_single_pose_{impl}', wall, cpu)
        t0 = time.perf_counter()
        inverse(geom, batch)
        print(f'ik_batch_10000_per_pose_{impl}: {(time.perf_counter() - t0) / 1e4 * 1e6:.2f} us')
    return 0


if __name__ == '__main__':
    sys.exit(main())
