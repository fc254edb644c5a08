"""Trajectory planner figures: cycle cost inside the limits and during a recovery (p50/p99), the
bounded return plans (length over a grid of stop states, and the cost of the cycle that computes
one), the derated angle limits, and ASC vs ruckig on the same spike / step / dropout inputs (peak
acceleration, tracking error, delay). Prints `name: value unit` lines (docs/CONTRACTS.md
"Benchmarks")."""
from __future__ import annotations

import pathlib
import sys
import time

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / 'src' / 'hil_core'))

from hil_core.supervision.modes import HilMode  # noqa: E402
from hil_core.planner.asc import AccelerationSaturationControl, RuckigLimiter  # noqa: E402
from hil_core.planner.config import PlannerConfig, Workspace  # noqa: E402
from hil_core.planner.dof import pose_to_dof_1  # noqa: E402
from hil_core.planner.plans import plan_home  # noqa: E402
from hil_core.planner.trajectory_planner import TrajectoryPlanner  # noqa: E402

DT = 0.0025
WS = Workspace.load(str(ROOT / 'config' / 'workspace_hexaslide_scaled.yaml'))
HOME = np.asarray(WS.home_pose, dtype=float)
CFG = PlannerConfig(WS, homing_min_duration=0.01, sync_duration=0.01)


def cycle_costs(compiled: bool = True):
    """Cycle cost inside the limits (as the node calls it: stamps on the frame clock, so quiet
    frames take the compiled path unless ``compiled`` is False) and during recoveries."""
    pl = TrajectoryPlanner(CFG, compiled=compiled)
    ns = int(round(DT * 1e9))
    pl.step(None, None, HilMode.IDLE, measured=HOME, now_ns=0)
    inside, recovery = [], []
    k = 0

    def step(ref, mode):
        nonlocal k
        k += 1
        return pl.step(ref, None if ref is None else k * ns, mode, measured=pl.pose, now_ns=k * ns)
    for _ in range(10):                                   # homing + sync
        step(HOME, HilMode.HOMING)
    t = np.arange(4000) * DT
    for i in range(4000):
        ref = HOME.copy()
        ref[0] += 0.01 * (1 - np.cos(2 * np.pi * 0.5 * t[i]))
        t0 = time.perf_counter_ns()
        step(ref, HilMode.RUNNING)
        inside.append(time.perf_counter_ns() - t0)
    for push in range(6):                                   # repeated exits at different angles
        ang = push * np.pi / 3
        u = np.array([np.cos(ang), np.sin(ang), 0.3])
        for i in range(3000):
            ref = HOME.copy()
            ref[:3] += u * min(0.4 * i * DT, 0.15)
            t0 = time.perf_counter_ns()
            step(ref, HilMode.RUNNING)
            dt_ns = time.perf_counter_ns() - t0
            if pl.phase is HilMode.SAFETY_RECOVERY:
                recovery.append(dt_ns)
            if pl.phase is HilMode.IDLE:
                break
        step(None, HilMode.IDLE)                   # supervisor mirrors IDLE, then restarts
        for _ in range(10):
            step(HOME, HilMode.HOMING)
    return np.array(inside) / 1e3, np.array(recovery) / 1e3


def return_plans():
    """Plans from a grid of stop states: positions up to the soft limit along 26 directions, every
    DOF at +-v_lim (the worst: at the velocity limit towards or away from home) or at rest."""
    pl = TrajectoryPlanner(CFG)
    home = pose_to_dof_1(HOME)
    dirs = [np.array(d, dtype=float) for d in np.ndindex(3, 3, 3) if d != (1, 1, 1)]
    durations, kinds = [], {}
    for d in dirs:
        u = (d - 1.0) / np.linalg.norm(d - 1.0)
        for frac in (0.0, 0.5, 0.95):
            p = HOME[:3] + frac * WS.soft.radius(u) * u
            for sign in (-1.0, 0.0, 1.0):
                v = np.r_[sign * pl.v_lim[:3] * np.sign(u + 1e-12), 0.0, 0.0, 0.0]
                x0 = np.r_[p, 0.0, 0.0, 0.0]
                plan = plan_home(x0 - v * DT, x0, home, DT, pl.a_lim, pl.v_lim, CFG.ramp_shape,
                                 CFG.return_min_duration, pl.lower, pl.upper)
                durations.append(plan.duration)
                kinds[plan.kind] = kinds.get(plan.kind, 0) + 1
    return np.array(durations), kinds


def return_plan_cycles(n=60):
    """Cost of the planner cycle that starts a return plan: RUNNING along x at v_max towards and
    away from home, then the supervisor's RETURNING_HOME (stop) request (the plan is chosen in that
    very cycle), and of the cycles that follow it home (one sample each)."""
    costs, lengths, following = [], [], []
    for i in range(n):
        pl = TrajectoryPlanner(CFG)
        pl.step(None, None, HilMode.IDLE, measured=HOME)
        k = 0
        while pl.phase is not HilMode.RUNNING:
            k += 1
            pl.step(HOME, k, HilMode.HOMING)
        direction = 1.0 if i % 2 else -1.0
        for j in range(60 + i % 40):
            k += 1
            ref = HOME.copy()
            ref[0] += direction * min(0.15 * j * DT, 0.04)
            pl.step(ref, k, HilMode.RUNNING)
        t0 = time.perf_counter_ns()
        res = pl.step(None, None, HilMode.RETURNING_HOME)
        costs.append(time.perf_counter_ns() - t0)
        lengths += [e.values['duration'] for e in res.events if e.name == 'returning_home']
        while pl.phase is HilMode.RETURNING_HOME:          # the plan's own frames, one sample each
            t0 = time.perf_counter_ns()
            pl.step(None, None, HilMode.RETURNING_HOME)
            following.append(time.perf_counter_ns() - t0)
    return np.array(costs) / 1e3, np.array(lengths), np.array(following) / 1e3


def inputs():
    t = np.arange(1600) * DT
    clean = np.zeros((len(t), 6))
    clean[:, 0] = 0.01 * (1 - np.cos(2 * np.pi * 0.5 * t))
    clean[:, 1] = 0.005 * (1 - np.cos(2 * np.pi * 0.8 * t))
    k0 = 400
    spike = clean.copy()
    spike[k0, 0] += 0.03
    step = clean.copy()
    step[k0:, 0] += 0.02
    drop = clean.copy()
    drop[k0:k0 + 40] = clean[k0 - 1]
    return t, k0, {'spike': (spike, clean), 'step': (step, step), 'dropout': (drop, clean)}, clean


def delay(t, ref, out):
    """Pure delay tau that best explains out(t) = ref(t - tau) (least squares, 0.05 ms grid)."""
    taus = np.arange(0.0, 0.1, 5e-5)
    sel = t > 0.2
    errs = [np.sum((out[sel] - np.interp(t[sel] - tau, t, ref)) ** 2) for tau in taus]
    return taus[int(np.argmin(errs))]


def run(limiter, refs):
    limiter.reset(refs[0])
    return np.array([limiter.step(r)[0] for r in refs])


def make(name):
    if name == 'asc':
        return AccelerationSaturationControl(DT, CFG.a_max, CFG.v_max, CFG.asc_bandwidth_hz)
    return RuckigLimiter(DT, CFG.a_max, CFG.v_max, CFG.j_max)


def main() -> None:
    inside, recovery = cycle_costs()
    plain, _ = cycle_costs(compiled=False)
    print(f'planner_cycle_inside_p50: {np.percentile(inside, 50):.1f} us')
    print(f'planner_cycle_inside_p99: {np.percentile(inside, 99):.1f} us')
    print(f'planner_cycle_inside_plain_p50: {np.percentile(plain, 50):.1f} us')
    print(f'planner_cycle_inside_plain_p99: {np.percentile(plain, 99):.1f} us')
    print(f'planner_cycle_recovery_p50: {np.percentile(recovery, 50):.1f} us')
    print(f'planner_cycle_recovery_p99: {np.percentile(recovery, 99):.1f} us')
    pl = TrajectoryPlanner(CFG)
    print(f'planner_angle_a_lim: {pl.a_lim[3]:.2f} rad/s^2 (configured {CFG.a_max[3]:.1f})')
    print(f'planner_angle_v_lim: {pl.v_lim[3]:.3f} rad/s (configured {CFG.v_max[3]:.1f})')
    durations, kinds = return_plans()
    print(f'planner_return_plans: {len(durations)} stop states ({", ".join(f"{k} {v}" for k, v in sorted(kinds.items()))})')
    print(f'planner_return_plan_duration_max: {durations.max():.3f} s')
    print(f'planner_return_plan_duration_p50: {np.percentile(durations, 50):.3f} s')
    costs, lengths, following = return_plan_cycles()
    print(f'planner_return_plan_cycle_p50: {np.percentile(costs, 50):.1f} us')
    print(f'planner_return_plan_cycle_max: {costs.max():.1f} us')
    print(f'planner_returning_home_cycle_p50: {np.percentile(following, 50):.1f} us')
    print(f'planner_returning_home_cycle_p99: {np.percentile(following, 99):.1f} us')
    print(f'planner_stop_at_v_max_plan_duration_max: {lengths.max():.3f} s')
    t, k0, cases, clean = inputs()
    for name in ('asc', 'ruckig'):
        out = run(make(name), clean)
        print(f'{name}_smooth_delay: {delay(t, clean[:, 0], out[:, 0]) * 1e3:.2f} ms')
        print(f'{name}_smooth_max_error: {np.abs(out - clean)[:, :3].max() * 1e3:.4f} mm')
        for case, (refs, ideal) in cases.items():
            out = run(make(name), refs)
            acc = np.abs(np.diff(out, 2, axis=0)) / DT ** 2
            err = np.abs(out[k0:, 0] - ideal[k0:, 0])
            print(f'{name}_{case}_peak_accel: {acc[:, 0].max():.3f} m/s^2')
            print(f'{name}_{case}_rms_error: {np.sqrt(np.mean(err ** 2)) * 1e3:.3f} mm')
            print(f'{name}_{case}_max_error: {err.max() * 1e3:.3f} mm')
            if case == 'step':
                reach = np.argmax(out[k0:, 0] - clean[k0:, 0] >= 0.9 * 0.02)
                print(f'{name}_step_rise_90: {reach * DT * 1e3:.1f} ms')
            settled = np.nonzero(err > 1e-4)[0]
            print(f'{name}_{case}_settle_0.1mm: {(settled[-1] + 1 if len(settled) else 0) * DT * 1e3:.1f} ms')
    print(f'reference_accel_limit: {CFG.a_max[0]:.1f} m/s^2')


if __name__ == '__main__':
    main()
