"""Per-frame cost of the mock drives' servo model (compiled vs its numpy oracle) and the lockstep
frame rate of the mock hexapod with a test-side responder in the same process.

``python bench/mock_hexapod_frame.py [DURATION] [--no-ros]``. Prints ``name: value unit`` lines:

* servo_first_construction_{cold,warm}_s: a new process importing hil_core.drives.servo and building
  the first ServoAxes, with an empty numba cache (compiles) and with the cache the first left;
* servo_<call>_{compiled,numpy}_p50/p99: microseconds per 2.5 ms frame (6 axes, 4 servo
  periods x 5 loop updates) of ``follow`` along 4-point lockstep messages and along 8-point
  overlapping real-time messages, ``hold``, ``run`` with the (m+1, n) rows the plant adapter
  passes, and ``sample_knots`` at the 21 step boundaries (what the mock hardware's controller calls);
  servo_frame_compute_p50/p99 (the name earlier runs used) is the compiled 4-point ``follow``;
* mock_hexapod_frames_per_wall_second (unless --no-ros or hil_sim.mock_hardware cannot be imported):
  frames advanced per wall second when a responder answers every /joint_states with the
  command of that frame (EventsExecutor, one process, real DDS), i.e. the ceiling the mock puts
  on a lockstep run; mock_hexapod_sim_seconds_per_wall_second: the same as a time ratio.
"""
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

os.environ.setdefault('ROS_AUTOMATIC_DISCOVERY_RANGE', 'LOCALHOST')
os.environ.setdefault('ROS_DOMAIN_ID', str(150 + os.getpid() % 50))

from hil_core.drives.joint_trajectory_legacy import sample_knots, sample_knots_numpy  # noqa: E402
from hil_core.drives.servo import ServoAxes, ServoAxesNumpy, ServoConfig  # noqa: E402

ARGS = [a for a in sys.argv[1:] if not a.startswith('--')]
DURATION = float(ARGS[0]) if ARGS else 5.0
FRAMES = 3000
DT, FRAME = 0.000625, 0.0025
FIRST = ('import time; t0 = time.perf_counter(); import numpy as np; '
         'from hil_core.drives.servo import ServoAxes, ServoConfig; ServoAxes(ServoConfig(), np.zeros(6)); '
         'print(time.perf_counter() - t0)')


def first_construction(cache_dir=None) -> float:
    env = dict(os.environ)
    if cache_dir:
        env['NUMBA_CACHE_DIR'] = cache_dir          # an empty cache: everything compiles
    out = subprocess.run([sys.executable, '-c', FIRST], env=env, capture_output=True, text=True, check=True)
    return float(out.stdout.split()[-1])


def percentiles(seconds):
    us = np.array(seconds[100:]) * 1e6
    return np.percentile(us, 50), np.percentile(us, 99)


def knots_of(k, n_points, sp_p, sp_v):
    """The knots the mock follows in frame k: the setpoint now, then the message's points."""
    kt = k * FRAME + DT * np.arange(1, n_points + 1)
    kp = np.outer(0.002 * np.sin(2 * np.pi * kt), np.linspace(0.5, 1.0, 6))
    kv = np.outer(0.002 * 2 * np.pi * np.cos(2 * np.pi * kt), np.linspace(0.5, 1.0, 6))
    return np.r_[k * FRAME, kt], np.vstack([sp_p, kp]), np.vstack([sp_v, kv])


def follow_times(cls, n_points):
    servo = cls(ServoConfig(), np.zeros(6))
    times, sp_p, sp_v = [], np.zeros(6), np.zeros(6)
    for k in range(FRAMES):
        knot_t, knot_p, knot_v = knots_of(k, n_points, sp_p, sp_v)
        t0 = time.perf_counter()
        servo.follow(k * FRAME, 4, knot_t, knot_p, knot_v)
        times.append(time.perf_counter() - t0)
        sp_p, sp_v = knot_p[4], knot_v[4]          # the setpoint at the next frame
    return percentiles(times)


def hold_times(cls):
    servo = cls(ServoConfig(), np.zeros(6))
    times = []
    for k in range(FRAMES):
        setpoint = np.full(6, 0.01 * np.sin(k / 50))
        t0 = time.perf_counter()
        servo.hold(4, setpoint)
        times.append(time.perf_counter() - t0)
    return percentiles(times)


def run_times(cls):
    servo = cls(ServoConfig(), np.zeros(6))
    times, h = [], servo.h
    for k in range(FRAMES):
        t = k * FRAME + h * np.arange(21)
        ref_p = np.outer(0.002 * np.sin(2 * np.pi * t), np.ones(6))
        ref_v = np.outer(0.002 * 2 * np.pi * np.cos(2 * np.pi * t), np.ones(6))
        ref_a = np.diff(ref_v, axis=0) / h
        t0 = time.perf_counter()
        servo.run(ref_p, ref_v, ref_a)
        times.append(time.perf_counter() - t0)
    return percentiles(times)


def sample_times(fn):
    times, h = [], DT / 5
    for k in range(FRAMES):
        knot_t, knot_p, knot_v = knots_of(k, 4, np.zeros(6), np.zeros(6))
        t = k * FRAME + h * np.arange(21)
        t0 = time.perf_counter()
        fn(knot_t, knot_p, knot_v, t)
        times.append(time.perf_counter() - t0)
    return percentiles(times)


def servo_figures():
    with tempfile.TemporaryDirectory() as cache:
        print(f'servo_first_construction_cold_s: {first_construction(cache):.2f} s', flush=True)
    print(f'servo_first_construction_warm_s: {first_construction():.3f} s', flush=True)
    cases = [('follow_4point', lambda c: follow_times(c, 4)), ('follow_8point', lambda c: follow_times(c, 8)),
             ('hold', hold_times), ('run', run_times)]
    for name, measure in cases:
        for label, cls in (('compiled', ServoAxes), ('numpy', ServoAxesNumpy)):
            p50, p99 = measure(cls)
            print(f'servo_{name}_{label}_p50: {p50:.1f} us')
            print(f'servo_{name}_{label}_p99: {p99:.1f} us', flush=True)
            if name == 'follow_4point' and label == 'compiled':
                print(f'servo_frame_compute_p50: {p50:.1f} us')
                print(f'servo_frame_compute_p99: {p99:.1f} us')
    for label, fn in (('compiled', sample_knots), ('numpy', sample_knots_numpy)):
        p50, p99 = sample_times(fn)
        print(f'servo_sample_knots_{label}_p50: {p50:.1f} us')
        print(f'servo_sample_knots_{label}_p99: {p99:.1f} us', flush=True)


def frame_rate():
    import rclpy
    from rclpy.context import Context
    from rclpy.experimental import EventsExecutor
    from sensor_msgs.msg import JointState
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

    from hil_nodes import qos, topics
    from hil_nodes.msgs.convert import sec_to_duration
    from hil_sim.mock_hardware.system_mock import system_mock
    ctx = Context()
    rclpy.init(context=ctx)
    mock = system_mock('hexafloat', dict(lockstep=True, time_scale=0.0, lockstep_timeout=5.0), context=ctx)
    responder = rclpy.create_node('bench_responder', context=ctx)
    pub = responder.create_publisher(JointTrajectory, topics.HEXAPOD_JOINT_TRAJECTORY, qos.command(50, lockstep=True))
    names = [f'slider_{i}' for i in range(1, 7)]
    points = [JointTrajectoryPoint(positions=[0.0] * 6, velocities=[0.0] * 6,
                                   time_from_start=sec_to_duration(0.000625 * (i + 1))) for i in range(4)]

    def answer(msg):
        cmd = JointTrajectory(joint_names=names, points=points)
        cmd.header.stamp = msg.header.stamp
        pub.publish(cmd)

    responder.create_subscription(JointState, topics.JOINT_STATES, answer, qos.joint_states(True))
    executor = EventsExecutor(context=ctx)
    executor.add_node(mock)
    executor.add_node(responder)
    mock.trigger_configure()
    mock.trigger_activate()
    end = time.monotonic() + 3.0
    while mock.frames < 10 and time.monotonic() < end:       # discovery, then warm-up
        executor.spin_once(timeout_sec=0.01)
    f0, t0 = mock.frames, time.monotonic()
    while time.monotonic() - t0 < DURATION:
        executor.spin_once(timeout_sec=0.01)
    rate = (mock.frames - f0) / (time.monotonic() - t0)
    late = mock.late_commands
    executor.shutdown(timeout_sec=1.0)
    mock.destroy_node()
    responder.destroy_node()
    rclpy.try_shutdown(context=ctx)
    return rate, late


if __name__ == '__main__':
    servo_figures()
    try:
        import hil_sim.mock_hardware.node  # noqa: F401
    except ImportError as exc:
        print(f'# mock_hexapod frame rate skipped: {exc}')
        sys.exit(0)
    if '--no-ros' in sys.argv:
        sys.exit(0)
    rate, late = frame_rate()
    print(f'mock_hexapod_frames_per_wall_second: {rate:.0f} 1/s')
    print(f'mock_hexapod_sim_seconds_per_wall_second: {rate * 0.0025:.2f} s/s')
    print(f'mock_hexapod_bench_late_commands: {late} count')
