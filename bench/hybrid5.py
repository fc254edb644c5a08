"""Hybrid robot (seed 003): compute budget of one 10 kHz control cycle, operation count, float32.

Prints ``name: value unit`` lines:
* per-cycle cost of trajectory generation + inverse kinematics with derivatives + forward
  kinematics + model + CTM with the nonlinear integrator (both manipulators): float64 compiled
  (``cycle_float64_*``: hybrid5.tracking_kernel, numba, the default), float64 in Python
  (``cycle_float64_numpy_*``: the oracle, python floats) and float32 (numpy float32 scalars),
  wall and thread-CPU p50/p99 over the AGH path, next to the seed's 100 us budget and its
  DSP-C28x (43 us) and FPGA3 (21 us) figures; the first controller construction (numba
  cache load, or compilation without a cache);
* the operation count of one tracking cycle (counted by running it on a counting number
  type), next to seed table 1 (186 +/-, 216 x, 31 /, 13 sqrt, 1 sin, 5 casts, 5 sat);
* table 3: max |float32 - float64| of l, ldot, lddot per leg and of the table angles over
  every cycle of the AGH path, and the closed-loop float32 vs float64 tool positions on the
  A of the path (plant in float64).
``--full``: also the closed-loop CTM on the whole AGH path (about 230k cycles: minutes).
"""
from __future__ import annotations

import math
import os
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np

from hil_core.hybrid5 import dynamics as dyn, kinematics as kin
from hil_core.hybrid5.control import CTM
from hil_core.hybrid5.gcode import parse_file
from hil_core.hybrid5.motion import Hybrid5Motion
from hil_core.hybrid5.params import load_params
from hil_core.hybrid5.study import closed_loop_errors, reference_errors
from hil_core.hybrid5.tracking import HybridController, simulate
from hil_core.hybrid5.trajectory import PathTrajectory

ROOT = Path(__file__).resolve().parents[1]
SEED_TABLE1 = {'add_sub': 186, 'mul': 216, 'div': 31, 'sqrt': 13, 'sin': 1, 'cast': 5, 'sat': 5}
OPS = Counter()


class Op(float):
    """A float that counts the arithmetic done with it (results stay Op)."""

    def __pow__(self, e):
        OPS['sqrt' if e == 0.5 else 'mul'] += 1
        return Op(float.__pow__(self, e))

    def __neg__(self):
        return Op(-float(self))

    def __abs__(self):
        return Op(abs(float(self)))


def _counted(method: str, kind: str):
    base = getattr(float, method)

    def op(self, other):
        OPS[kind] += 1
        return Op(base(self, other))
    return op


for _m, _kind in (('add', 'add_sub'), ('radd', 'add_sub'), ('sub', 'add_sub'), ('rsub', 'add_sub'),
                  ('mul', 'mul'), ('rmul', 'mul'), ('truediv', 'div'), ('rtruediv', 'div')):
    setattr(Op, f'__{_m}__', _counted(f'__{_m}__', _kind))


def count_ops(P, path) -> Counter:
    """One tracking cycle (reference already in joint space as the seed's table 1 counts it:
    the trajectory generator is separate) on the counting type."""
    OPS.clear()
    (p, v, a), (g, gd, gdd) = path.sample_cycle(5000)
    R = Op(P.R)
    ref = kin.ik_derivatives_scalar(*(Op(x) for x in (*p, *v, *a)), R)                  # eq. 7-11
    l_meas = [x + 1e-7 for x in ref[:3]]
    legs = CTM(P.legs, 3, P.Ts, Op, resolution=P.plant.encoder_leg)
    table = CTM(P.table, 2, P.Ts, Op, resolution=P.plant.encoder_table)
    ml = legs.measure([float(x) for x in l_meas])
    mt = table.measure([float(x) for x in g])
    OPS['cast'] += 5                                     # float(count) per axis
    x, y, z2, z = kin.fk_scalar(*ml[0], R)                                              # eq. 12-15
    m = P.model
    r = dyn.leg_model_scalar(x, y, z, R, *(Op(q) for q in (m.m_p, m.m_s, m.J_r, m.m_g)))  # eq. 23-24
    legs.update(ref[0:3], ref[3:6], ref[6:9], ml, r[:3], r[3:])                          # eq. 28-35
    OPS['sin'] += 1                                      # G_4 = m4 r4 g sin(theta4), eq. 27
    Gt = (Op(m.m4r4 * dyn.G0) * Op(math.sin(mt[0][0])), Op(0.0))
    table.update([Op(q) for q in g], [Op(q) for q in gd], [Op(q) for q in gdd], mt,
                 (Op(m.J44), Op(m.J55)), Gt)                                            # eq. 36
    OPS['sat'] += 5                                      # integrator limits (eq. 29), one per axis
    return Counter(OPS)


def timed_cycles(P, path, dtype, n, compiled=True):
    ctl = HybridController(P, path, dtype, compiled=compiled)
    ks = np.linspace(0, path.n_cycles - 1, n).astype(int)
    refs = [ctl.desired(k) for k in ks[:1]]
    wall, cpu = [], []
    prev = refs[0][0][0]
    for k in ks:
        t0, c0 = time.perf_counter_ns(), time.thread_time_ns()
        out = ctl.cycle(k, prev, [0.0, 0.0])                 # trajectory + IK + FK + model + CTM
        c1, t1 = time.thread_time_ns(), time.perf_counter_ns()
        prev = [float(x) for x in out.l_d]
        wall.append(t1 - t0)
        cpu.append(c1 - c0)
    return np.asarray(wall) / 1e3, np.asarray(cpu) / 1e3


def timed_parts(P, path, n):
    """float64 (Python oracle) CPU p50 of the three parts of a cycle: trajectory sample, IK
    with derivatives, the rest (FK + model + both CTMs with integrators)."""
    ctl = HybridController(P, path, np.float64, compiled=False)
    ks = np.linspace(0, path.n_cycles - 1, n).astype(int)
    parts = {'trajectory': [], 'ik_derivatives': [], 'fk_model_ctm': []}
    clock = time.thread_time_ns
    for k in ks:
        c0 = clock()
        (p, v, a), (g, gd, gdd) = path.sample_cycle(k)
        c1 = clock()
        ref = ctl.joint_reference(p, v, a, g, gd, gdd)
        c2 = clock()
        ctl.cycle(k, ref[0][0], [0.0, 0.0], ref)
        c3 = clock()
        for name, dt in zip(parts, (c1 - c0, c2 - c1, c3 - c2)):
            parts[name].append(dt / 1e3)
    return {name: float(np.percentile(v, 50)) for name, v in parts.items()}


def timed_parts_compiled(P, path, n):
    """Compiled float64 CPU p50: the reference (trajectory + IK, ``desired``: what the node's
    motion calls) and the cycle on a given reference (measure + FK + model + CTMs)."""
    ctl = HybridController(P, path, np.float64)
    ks = np.linspace(0, path.n_cycles - 1, n).astype(int)
    parts = {'reference': [], 'cycle_on_reference': []}
    clock = time.thread_time_ns
    for k in ks:
        c0 = clock()
        ref = ctl.desired(int(k))
        c1 = clock()
        ctl.cycle(int(k), ref[0][0], [0.0, 0.0], ref)
        c2 = clock()
        parts['reference'].append((c1 - c0) / 1e3)
        parts['cycle_on_reference'].append((c2 - c1) / 1e3)
    return {name: float(np.percentile(v, 50)) for name, v in parts.items()}


def timed_node_path(P, path, n):
    """CPU p50/p99 of what the hybrid_controller node runs per cycle while RUNNING the path:
    the motion state machine's reference (compiled path sampler + IK) + the compiled cycle on it."""
    (p0, _, _), (g0, _, _) = path.sample_cycle(0)
    start = np.r_[p0, g0]
    motion = Hybrid5Motion(P, path, start, 2.0, [1.0, 1.0, 1.0, 5.0, 5.0], 0.001)
    ctl = HybridController(P, path)
    l0 = kin.inverse(p0, P.R)
    k, mode = 0, 'HOMING'
    while motion.phase.value != 'RUNNING':                 # homed at once (already there), short sync
        motion.cycle(k, mode, l0, g0)
        k += 1
    cpu = []
    clock = time.thread_time_ns
    for k in range(k, k + n):
        c0 = clock()
        ref, _ = motion.cycle(k, 'RUNNING', l0, g0)
        ctl.cycle(k, l0, g0, ref)
        cpu.append((clock() - c0) / 1e3)
    return np.percentile(cpu, 50), np.percentile(cpu, 99)


def main() -> None:
    P = load_params()
    t = P.trajectory
    segs = parse_file(ROOT / 'config' / 'gcode' / 'agh.nc', t.rapid_feed)
    mk = lambda s: PathTrajectory(s, P.Ts, t.a_max, t.j_max, math.radians(t.angular_feed) / 60,  # noqa: E731
                                  P.work_origin)
    path = mk(segs)
    print(f'load_average_1min: {os.getloadavg()[0]:.2f}')
    print(f'agh_path_cycles: {path.n_cycles}')
    print(f'agh_path_duration: {path.duration:.3f} s')
    print('seed_budget: 100 us')
    print('seed_dsp_c28x: 43 us')
    print('seed_fpga3: 21 us')
    t0 = time.perf_counter()
    HybridController(P, path)
    print(f'cycle_compiled_first_construction: {(time.perf_counter() - t0) * 1e3:.1f} ms')
    for name, dt, compiled in (('float64', np.float64, True), ('float64_numpy', np.float64, False),
                               ('float32', np.float32, False)):
        wall, cpu = timed_cycles(P, path, dt, 4000, compiled)
        for tag, arr in (('wall', wall), ('cpu', cpu)):
            print(f'cycle_{name}_{tag}_p50: {np.percentile(arr, 50):.1f} us')
            print(f'cycle_{name}_{tag}_p99: {np.percentile(arr, 99):.1f} us')
    for name, v in timed_parts(P, path, 4000).items():
        print(f'part_float64_numpy_{name}_cpu_p50: {v:.1f} us')
    for name, v in timed_parts_compiled(P, path, 4000).items():
        print(f'part_float64_compiled_{name}_cpu_p50: {v:.1f} us')
    p50, p99 = timed_node_path(P, path, 4000)
    print(f'node_path_motion_and_cycle_cpu_p50: {p50:.1f} us')
    print(f'node_path_motion_and_cycle_cpu_p99: {p99:.1f} us')
    ops = count_ops(P, path)
    for k, seed in SEED_TABLE1.items():
        print(f'ops_{k}: {ops.get(k, 0)} ops (seed table 1: {seed})')
    err = reference_errors(P, path)
    for k, v in err.items():
        unit = 'rad' if 'theta' in k else 'rad/s' if 'omega' in k else 'rad/s^2' if 'eps' in k else \
            'm/s' if k.startswith('dv') else 'm/s^2' if k.startswith('da') else 'm'
        print(f'float32_{k}: {v:.3e} {unit}')
    a_letter = mk(segs[1:9])                              # the A: plunge, strokes, crossbar
    cl = closed_loop_errors(P, a_letter)
    print(f'closed_loop_A_cycles: {cl["cycles"]}')
    print(f'closed_loop_A_float64_max_error: {cl["err64"] * 1e6:.3f} um')
    print(f'closed_loop_A_float32_max_error: {cl["err32"] * 1e6:.3f} um')
    print(f'closed_loop_A_float32_vs_float64: {cl["dp"] * 1e6:.3f} um')
    if '--full' in sys.argv:
        log = simulate(P, path)
        e = log.position_error
        print(f'closed_loop_agh_max_error: {e.max() * 1e6:.3f} um')
        print(f'closed_loop_agh_p99_error: {np.percentile(e, 99) * 1e6:.3f} um')
        print(f'closed_loop_agh_table_max_error: {np.abs(log.th_d - log.th).max() * 1e6:.3f} urad')
        plain = simulate(P, path, plain_integrator=True)
        print(f'closed_loop_agh_plain_integrator_max_error: {plain.position_error.max() * 1e6:.3f} um')


if __name__ == '__main__':
    main()
