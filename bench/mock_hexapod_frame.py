"""Lockstep frame rate of the mock hexapod with a test-side responder in the same process.

Prints ``name: value unit`` lines:
* mock_hexapod_frames_per_wall_second: frames advanced per wall second when a responder
  answers every /joint_states with the command of that frame (EventsExecutor, one process,
  real DDS), i.e. the ceiling the mock puts on a lockstep run;
* mock_hexapod_sim_seconds_per_wall_second: the same as a time ratio (frame = 2.5 ms);
* servo_frame_compute_p50/p99: hil_core servo integration of one frame (4 substeps x 5 loop
  updates, 6 axes, Hermite setpoints), without ROS.
"""
import os
import sys
import time

import numpy as np

os.environ.setdefault('ROS_AUTOMATIC_DISCOVERY_RANGE', 'LOCALHOST')
os.environ.setdefault('ROS_DOMAIN_ID', str(150 + os.getpid() % 50))

import rclpy  # noqa: E402
from rclpy.context import Context  # noqa: E402
from rclpy.experimental import EventsExecutor  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint  # noqa: E402

from hil_core.servo import ServoAxes, ServoConfig  # noqa: E402
from hil_nodes import qos, topics  # noqa: E402
from hil_nodes.convert import sec_to_duration  # noqa: E402
from hil_sim.mock_hexapod import MockHexapodNode  # noqa: E402

DURATION = float(sys.argv[1]) if len(sys.argv) > 1 else 5.0


def servo_compute():
    servo = ServoAxes(ServoConfig(), np.zeros(6))
    times = []
    sp_p, sp_v = np.zeros(6), np.zeros(6)
    for k in range(2000):
        tk = k * 0.0025
        kt = tk + 0.000625 * np.arange(1, 5)
        kp = np.outer(0.002 * np.sin(2 * np.pi * kt), np.ones(6))
        kv = np.outer(0.002 * 2 * np.pi * np.cos(2 * np.pi * kt), np.ones(6))
        t0 = time.perf_counter()
        servo.follow(tk, 4, np.r_[tk, kt], np.vstack([sp_p, kp]), np.vstack([sp_v, kv]))
        times.append(time.perf_counter() - t0)
        sp_p, sp_v = kp[-1], kv[-1]
    us = np.array(times[100:]) * 1e6
    return np.percentile(us, 50), np.percentile(us, 99)


def frame_rate():
    ctx = Context()
    rclpy.init(context=ctx)
    mock = MockHexapodNode(context=ctx, parameter_overrides=[
        Parameter('lockstep', value=True), Parameter('time_scale', value=0.0),
        Parameter('lockstep_timeout', value=5.0)])
    responder = rclpy.create_node('bench_responder', context=ctx)
    pub = responder.create_publisher(JointTrajectory, topics.HEXAPOD_JOINT_TRAJECTORY, qos.command(50))
    names = [f'slider_{i}' for i in range(1, 7)]
    points = [JointTrajectoryPoint(positions=[0.0] * 6, velocities=[0.0] * 6,
                                   time_from_start=sec_to_duration(0.000625 * (i + 1))) for i in range(4)]

    def answer(msg):
        cmd = JointTrajectory(joint_names=names, points=points)
        cmd.header.stamp = msg.header.stamp
        pub.publish(cmd)

    responder.create_subscription(JointState, topics.JOINT_STATES, answer, qos.stream(True))
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
    p50, p99 = servo_compute()
    print(f'servo_frame_compute_p50: {p50:.1f} us')
    print(f'servo_frame_compute_p99: {p99:.1f} us')
    rate, late = frame_rate()
    print(f'mock_hexapod_frames_per_wall_second: {rate:.0f} 1/s')
    print(f'mock_hexapod_sim_seconds_per_wall_second: {rate * 0.0025:.2f} s/s')
    print(f'mock_hexapod_bench_late_commands: {late} count')
