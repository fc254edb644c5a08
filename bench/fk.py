"""Hexaslide forward/inverse kinematics timing (seed 000/001: JFMD in C, 50 us at 1.6 kHz).

Prints ``name: value unit`` lines: FK p50/p99 per solve, warm-started along a 1 kHz
sea-state-like trajectory of the scaled robot, for the analytic-Jacobian Newton and the
finite-difference JFMD, each with the Jacobian kept across calls (chord, the default) and
refreshed every call; cold start from home; IK per pose (single call and vectorised batch).
"""
from __future__ import annotations

import sys
import time

import numpy as np

from hil_core import hexaslide as hx


def percentiles(samples_ns):
    a = np.asarray(samples_ns) / 1e3
    return float(np.percentile(a, 50)), float(np.percentile(a, 99))


def time_fk(geom, q, method, chord, reset_each=False):
    fk = hx.ForwardKinematics(geom, method=method, chord=chord)
    fk.solve(q[0])
    times, iters = [], []
    clock = time.perf_counter_ns
    for qi in q:
        if reset_each:
            fk.reset()
        t0 = clock()
        res = fk.solve(qi)
        times.append(clock() - t0)
        if not res.converged:
            raise SystemExit(f'FK did not converge: {res.reason}')
        iters.append(res.iterations)
    return times, iters


def main() -> int:
    geom = hx.load_geometry('hexaslide_scaled')
    traj = hx.sinusoid_trajectory(geom, duration=4.0, rate=1000.0)
    ik = hx.inverse_kinematics(geom, traj)
    assert ik.ok.all()
    for method in ('newton', 'jfmd'):
        for chord, label in ((True, 'chord'), (False, 'refresh')):
            times, iters = time_fk(geom, ik.q, method, chord)
            p50, p99 = percentiles(times)
            print(f'fk_{method}_{label}_warm_p50: {p50:.1f} us')
            print(f'fk_{method}_{label}_warm_p99: {p99:.1f} us')
            print(f'fk_{method}_{label}_warm_max_iterations: {max(iters)} iterations')
    cold = hx.inverse_kinematics(geom, hx.random_poses(geom, 500, rng=1))
    for method in ('newton', 'jfmd'):
        times, iters = time_fk(geom, cold.q, method, True, reset_each=True)
        p50, p99 = percentiles(times)
        print(f'fk_{method}_cold_from_home_p50: {p50:.1f} us')
        print(f'fk_{method}_cold_from_home_p99: {p99:.1f} us')
        print(f'fk_{method}_cold_from_home_max_iterations: {max(iters)} iterations')
    single = []
    for pose in traj[:2000]:
        t0 = time.perf_counter_ns()
        hx.inverse_kinematics(geom, pose)
        single.append(time.perf_counter_ns() - t0)
    p50, p99 = percentiles(single)
    print(f'ik_single_pose_p50: {p50:.1f} us')
    print(f'ik_single_pose_p99: {p99:.1f} us')
    batch = hx.random_poses(geom, 10000, rng=2)
    t0 = time.perf_counter()
    hx.inverse_kinematics(geom, batch)
    print(f'ik_batch_10000_per_pose: {(time.perf_counter() - t0) / 1e4 * 1e6:.2f} us')
    return 0


if __name__ == '__main__':
    sys.exit(main())
