"""Timebase bench (seed 000 sections 4.2-4.3, 5): cost per high-level cycle, and the delay from
reference stamp to servo setpoint with and without time-base control under the same seeded
writer faults. Prints ``name: value unit`` lines.

Scenarios (writer = the high-level loop, reader = the servo-side motion program):
* clock: writer timing routine 0.2 % slow (seed 000: CPU clock resolution overestimates the
  waiting time) with 0.15 T arrival jitter;
* faults: the same plus late, early, dropped and duplicated references.

Cost: one high-level cycle (write one reference + ``step_frame``: its 4 servo points, the moves
it starts with their segment points' IK, the B-spline) for the compiled ``TimeBaseEngine``
(hexaslide IK inside the kernel; suffix ``_compiled``) and for the numpy oracle
``TimeBaseEngineNumpy`` with the numpy IK (suffix ``_numpy``, the pipeline before compilation).
``timebase_warm_up`` is the first-call cost in this process (numba cache load, or compilation
when there is no cache); ``--cold`` also compiles the kernels in a subprocess with an empty
cache (``timebase_cold_compile``).
"""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, 'src/hil_core')
T_IMPORT = time.perf_counter()
from hil_core.hexaslide import home_pose  # noqa: E402
from hil_core.maths.rotations import rotvec_to_quat  # noqa: E402
from hil_core.timebase import (FaultSpec, TimeBaseEngineNumpy, TimeBaseConfig, TimeBaseEngine,  # noqa: E402
                               hexaslide_ik, simulate, warm_up, writer_events)

T_IMPORT = time.perf_counter() - T_IMPORT
IK = hexaslide_ik('hexaslide_scaled')
IK_NUMPY = hexaslide_ik('hexaslide_scaled', compiled=False)
HOME = home_pose(IK.geometry)
CFG = TimeBaseConfig()
T, TS = CFG.move_time, CFG.servo_period


def reference(stamps):
    s = np.maximum(np.asarray(stamps, float), 0.0)
    w = 2 * np.pi * 1.0
    p = np.tile(HOME, (len(s), 1))
    p[:, 0] += 0.005 * (1 - np.cos(w * s))
    p[:, 1] += 0.003 * (1 - np.cos(0.7 * w * s))
    p[:, 3:] = rotvec_to_quat(np.column_stack([0.02 * (1 - np.cos(0.5 * w * s)), 0 * s, 0 * s]))
    return p


def cost(engine_cls, ik, n=3000):
    """Microseconds per high-level cycle (write + step_frame) and per step_frame alone."""
    eng = engine_cls(CFG, ik)
    eng.start(reference([0.0])[0], 0.0)
    poses = reference(np.arange(1, n + 1) * T)
    cycle, step = np.empty(n), np.empty(n)
    clock = time.perf_counter_ns
    for k in range(n):
        t0 = clock()
        eng.write(poses[k], (k + 1) * T)
        t1 = clock()
        eng.step_frame()
        t2 = clock()
        cycle[k], step[k] = t2 - t0, t2 - t1
    return cycle / 1e3, step / 1e3


def ik_cost(ik, n=3000):
    two = np.tile(HOME, (CFG.n_seg, 1))
    out = np.empty(n)
    for k in range(n):
        t0 = time.perf_counter_ns()
        ik(two)
        out[k] = time.perf_counter_ns() - t0
    return out / 1e3


SCENARIOS = {
    'clock': FaultSpec(drift=0.002, jitter=0.15),
    'faults': FaultSpec(drift=0.002, jitter=0.15, late_prob=0.03, late_max=1.0, early_prob=0.03,
                        drop_prob=0.02, dup_prob=0.02),
}


def delay_figures(n=2400, seed=0):
    for name, spec in SCENARIOS.items():
        events = writer_events(n + 20, T, spec, seed)
        for control in (True, False):
            eng = TimeBaseEngine(TimeBaseConfig(time_base_control=control), IK)
            r = simulate(eng, reference, events, n, T)
            d = r['delay'][r['time'] > 0.1] * 1e3
            acc = np.abs(np.diff(r['qd'], axis=0)).max() / TS
            tag = f'timebase_{name}_{"tbc" if control else "no_tbc"}'
            print(f'{tag}_delay_mean: {d.mean():.4f} ms')
            print(f'{tag}_delay_std: {d.std() * 1e3:.2f} us')
            print(f'{tag}_delay_peak_to_peak: {np.ptp(d) * 1e3:.1f} us')
            print(f'{tag}_underruns: {int(r["underruns"].sum())} moves')
            print(f'{tag}_holds: {eng.holds} moves')
            print(f'{tag}_max_joint_accel: {acc:.3f} m/s^2')
            print(f'{tag}_factor_range: {r["factor"].min():.2f}..{r["factor"].max():.2f} x')


def cold_compile_seconds() -> float:
    """Compile the engine and IK kernels in a fresh process whose numba cache is an empty
    directory (set for that subprocess only)."""
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache, NUMBA_CACHE_LOCATOR_CLASSES='UserProvidedCacheLocator')
        code = 'from hil_core.timebase import warm_up; print(warm_up())'
        out = subprocess.run([sys.executable, '-c', code], env=env, capture_output=True, text=True, check=True)
    return float(out.stdout.split()[-1])


def main():
    print(f'load_average_1min: {os.getloadavg()[0]:.2f} processes')
    print(f'timebase_import: {T_IMPORT:.3f} s')
    print(f'timebase_warm_up: {warm_up():.3f} s')
    if '--cold' in sys.argv[1:]:
        print(f'timebase_cold_compile: {cold_compile_seconds():.2f} s')
    for impl, cls, ik in (('compiled', TimeBaseEngine, IK), ('numpy', TimeBaseEngineNumpy, IK_NUMPY)):
        cycle, step = cost(cls, ik)
        print(f'timebase_cycle_{impl}_p50: {np.percentile(cycle, 50):.1f} us')
        print(f'timebase_cycle_{impl}_p99: {np.percentile(cycle, 99):.1f} us')
        print(f'timebase_step_frame_{impl}_p50: {np.percentile(step, 50):.1f} us')
        print(f'timebase_step_frame_{impl}_p99: {np.percentile(step, 99):.1f} us')
        ik_us = ik_cost(ik)
        print(f'timebase_ik_2_points_{impl}_p50: {np.percentile(ik_us, 50):.1f} us')
    print(f'timebase_default_delay: {CFG.default_delay * 1e3:.3f} ms')
    delay_figures()


if __name__ == '__main__':
    main()
