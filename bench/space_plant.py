"""Space plant bench (seed 002): the seed's 20 s experiment in lockstep with the mock iiwa's
joint model (LuGre friction, PI joint loops) at 1 kHz, pure core (no DDS).

Prints: plant + control step p50/p99 (us; real-time target p50 <= 50 us, seed ~25 ms per loop)
for the compiled plant (``space_plant_step_*``: SpacePlant, space.plant_kernel, numba) in
closed loop with the mock arm, and for the pinocchio + numpy oracle (``space_plant_numpy_step_*``:
SpacePlantNumpy) in a second pass fed the same joint history (each timed in its own loop: run
interleaved, each would evict the other's code and data from the caches and both would look
slower), the largest command difference between them, the compiled plant's first construction
in a fresh process (numba cache load, or compilation without a cache), momentum residual,
validation errors vs the forward-dynamics reference, the run's summary.
"""
import pathlib
import sys
import time

import numpy as np
import yaml

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / 'src' / 'hil_core'))

from hil_core.iiwa.arm_sim import ArmSim  # noqa: E402
from hil_core.space import reference  # noqa: E402
from hil_core.drives.plants.description import parse_ros2_control  # noqa: E402
from hil_core.space.control import ControlGains  # noqa: E402
from hil_core.space.model import FreeFloatingModel, euler_zyx_to_matrix  # noqa: E402
from hil_core.space.plant import SpacePlant, SpacePlantNumpy  # noqa: E402


def main():
    cfg = yaml.safe_load((ROOT / 'config' / 'space_plant.yaml').read_text())['space_plant']['ros__parameters']
    # the mock arm's start: the initial positions of the iiwa URDF's <ros2_control> block
    q0 = parse_ros2_control((ROOT / 'urdf' / 'iiwa14.urdf').read_text()).initial('position')
    T = float(sys.argv[1]) if len(sys.argv) > 1 else 20.0
    dt = 1e-3
    model = FreeFloatingModel()
    gains = ControlGains(tuple(cfg['kv']), tuple(cfg['kw']), tuple(cfg['ki_v']), tuple(cfg['ki_w']), cfg['kd'],
                         20.0, cfg['integral_limit'], cfg['orientation_error'], cfg['sigma_threshold'],
                         cfg['lambda_max'])
    v_max = np.asarray(model.model.velocityLimit[6:]) * cfg['velocity_scale']
    args = (model, gains, v_max, cfg['acceleration_max'], cfg['velocity_cutoff_hz'], cfg['position_margin'])
    t0 = time.perf_counter()
    plant = SpacePlant(*args)
    print(f'space_plant_compiled_first_construction: {(time.perf_counter() - t0) * 1e3:.1f} ms')
    oracle = SpacePlantNumpy(*args)
    for p in (plant, oracle):
        p.set_setpoint(cfg['setpoint_position'], euler_zyx_to_matrix(np.radians(cfg['setpoint_euler_zyx_deg'])))
    arm = ArmSim()
    arm.reset(q0)
    n = int(round(T / dt))
    times, qs, sats, ees, step_us, cpu_us, np_us, np_cpu_us = [0.0], [arm.q.copy()], [], [], [], [], [], []
    history, commands = [], []
    out = None
    for k in range(n + 1):
        history.append((arm.q.copy(), arm.v.copy()))
        t0, c0 = time.perf_counter(), time.thread_time()
        out = plant.step(arm.q, dt, arm.v)
        step_us.append((time.perf_counter() - t0) * 1e6)
        cpu_us.append((time.thread_time() - c0) * 1e6)
        commands.append(out.command)
        sats.append(out.sat_pose)
        ees.append(out.ee_pose)
        if k < n:
            arm.step(out.command, dt)          # the mock's frame k -> k+1
            times.append((k + 1) * dt)
            qs.append(arm.q.copy())
    s, c = np.asarray(step_us[10:]), np.asarray(cpu_us[10:])
    # wall time includes preemption by other processes on a shared machine; thread CPU time is
    # the compute cost of the step itself
    print(f'space_plant_step_p50: {np.percentile(s, 50):.1f} us')
    print(f'space_plant_step_p99: {np.percentile(s, 99):.1f} us')
    print(f'space_plant_step_cpu_p50: {np.percentile(c, 50):.1f} us')
    print(f'space_plant_step_cpu_p99: {np.percentile(c, 99):.1f} us')
    print(f'space_plant_compute_rate_cpu_p99: {1e6 / np.percentile(c, 99):.0f} Hz')
    worst = 0.0
    for (q, v), cmd in zip(history, commands):        # the oracle on the same joint history
        t0, c0 = time.perf_counter(), time.thread_time()
        ref = oracle.step(q, dt, v)
        np_us.append((time.perf_counter() - t0) * 1e6)
        np_cpu_us.append((time.thread_time() - c0) * 1e6)
        worst = max(worst, float(np.max(np.abs(cmd - ref.command))))
    s, c = np.asarray(np_us[10:]), np.asarray(np_cpu_us[10:])
    print(f'space_plant_numpy_step_p50: {np.percentile(s, 50):.1f} us')
    print(f'space_plant_numpy_step_p99: {np.percentile(s, 99):.1f} us')
    print(f'space_plant_numpy_step_cpu_p50: {np.percentile(c, 50):.1f} us')
    print(f'space_plant_numpy_step_cpu_p99: {np.percentile(c, 99):.1f} us')
    print(f'space_plant_compiled_vs_numpy_command_max_diff: {worst:.2e} rad/s')
    rng = np.random.default_rng(0)
    worst = 0.0
    for _ in range(200):
        q = rng.uniform(model.model.lowerPositionLimit[7:], model.model.upperPositionLimit[7:])
        qd = rng.normal(size=7)
        h = model.momentum(model.config([0, 0, 0, 0, 0, 0, 1], q), np.concatenate([model.base_twist(q, qd), qd]))
        worst = max(worst, np.abs(h).max())
    print(f'momentum_residual_max: {worst:.2e} kg m/s')
    t0 = time.perf_counter()
    every = 10       # compare every 10 ms; RK4 at the 1 ms sample period on the C2 spline
    # (a step longer than the sample period only sees the spline at its knots: aliasing)
    ref_sat, ref_ee = reference.simulate(model, np.array(times), np.array(qs), dt=dt, out_every=every)
    ref_time = time.perf_counter() - t0
    d = reference.compare(np.array(sats)[::every], np.array(ees)[::every], ref_sat, ref_ee)
    print(f"validation_satellite_position_diff: {d['satellite_position_diff_m'] * 1e3:.2e} mm")
    print(f"validation_satellite_attitude_diff: {d['satellite_attitude_diff_deg']:.2e} deg")
    print(f"validation_ee_position_diff: {d['ee_position_diff_m'] * 1e3:.2e} mm")
    print(f"validation_ee_orientation_diff: {d['ee_orientation_diff_deg']:.2e} deg")
    print(f'reference_simulation_time: {ref_time:.1f} s')
    print(f"reference_step: {dt * 1e3:.1f} ms")
    print(f'experiment_duration: {T:.1f} s')
    print(f'satellite_displacement_m: {np.linalg.norm(out.sat_pose[:3]):.6f} m')
    print(f'ee_position_error_m: {np.linalg.norm(out.error[:3]):.6f} m')
    print(f'ee_orientation_error_deg: {np.degrees(np.linalg.norm(out.error[3:])):.5f} deg')


if __name__ == '__main__':
    main()
