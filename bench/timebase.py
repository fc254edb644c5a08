"""Timebase bench (seed 000 sections 4.2-4.3, 5): cost per high-level cycle, and the delay from
reference stamp to servo setpoint with and without time-base control under the same seeded
writer faults. Prints ``name: value unit`` lines.

Scenarios (writer = the high-level loop, reader = the servo-side motion program):
* clock: writer timing routine 0.2 % slow (seed 000: CPU clock resolution overestimates the
  waiting time) with 0.15 T arrival jitter;
* faults: the same plus late, early, dropped and duplicated references.
"""
from __future__ import annotations

import sys
import time

import numpy as np

sys.path.insert(0, 'src/hil_core')
from hil_core.hexaslide import home_pose  # noqa: E402
from hil_core.rotations import rotvec_to_quat  # noqa: E402
from hil_core.timebase import (FaultSpec, TimeBaseConfig, TimeBaseEngine, hexaslide_ik,  # noqa: E402
                               simulate, writer_events)

IK = hexaslide_ik('hexaslide_scaled')
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


def cost(n=3000):
    eng = TimeBaseEngine(CFG, IK)
    eng.start(reference([0.0])[0], 0.0)
    poses = reference(np.arange(1, n + 1) * T)
    per = np.empty(n)
    for k in range(n):
        t0 = time.perf_counter()
        eng.write(poses[k], (k + 1) * T)
        eng.step_frame()
        per[k] = time.perf_counter() - t0
    ik = np.empty(n)
    two = np.tile(HOME, (CFG.n_seg, 1))
    for k in range(n):
        t0 = time.perf_counter()
        IK(two)
        ik[k] = time.perf_counter() - t0
    return per * 1e6, ik * 1e6


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


def main():
    per, ik = cost()
    print(f'timebase_cycle_p50: {np.percentile(per, 50):.1f} us')
    print(f'timebase_cycle_p99: {np.percentile(per, 99):.1f} us')
    print(f'timebase_ik_2_points_p50: {np.percentile(ik, 50):.1f} us')
    print(f'timebase_default_delay: {CFG.default_delay * 1e3:.3f} ms')
    delay_figures()


if __name__ == '__main__':
    main()
