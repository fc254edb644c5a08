"""Hexafloat graph in real time: F/T-sample-to-setpoint latency of the chain, p50/p99.

Runs `hil run hexafloat --realtime` and a probe node that timestamps, with one wall clock, the
arrival of each mock F/T sample (stamp t) and of the servo command for frame t (the
JointTrajectory whose header stamp is t). Their difference is the compute and transport latency
of ft_sensor -> admittance -> planner -> timebase, i.e. what the chain adds *beyond* the designed
delay (10 ms buffer + ~6 ms filter, which is inside the command's content, not its timing).
Also prints the wall time per simulated second in lockstep for one process and isolated.
"""
import os
import subprocess
import sys
import time

import numpy as np
import rclpy
from geometry_msgs.msg import WrenchStamped
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from trajectory_msgs.msg import JointTrajectory

DOMAIN = 200 + os.getpid() % 30
DURATION = float(os.environ.get('HIL_BENCH_DURATION', '6'))


def _key(stamp):
    return stamp.sec * 1_000_000_000 + stamp.nanosec


def latency():
    cmd = [sys.executable, '-m', 'hil_nodes.cli.main', 'run', 'hexafloat', '--realtime', '--duration',
           str(DURATION), '--domain-id', str(DOMAIN), '--quiet']
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    rclpy.init(domain_id=DOMAIN)
    node = rclpy.create_node('latency_probe')
    qos = QoSProfile(depth=1000, reliability=ReliabilityPolicy.BEST_EFFORT, durability=DurabilityPolicy.VOLATILE)
    sample_at, command_at = {}, {}
    node.create_subscription(WrenchStamped, '/mock_ft/wrench',
                             lambda m: sample_at.setdefault(_key(m.header.stamp), time.perf_counter()), qos)
    node.create_subscription(JointTrajectory, '/hexapod_controller/joint_trajectory',
                             lambda m: command_at.setdefault(_key(m.header.stamp), time.perf_counter()), qos)
    try:
        while proc.poll() is None:
            rclpy.spin_once(node, timeout_sec=0.05)
    finally:
        node.destroy_node()
        rclpy.shutdown()
    out = proc.stdout.read()
    common = sorted(set(sample_at) & set(command_at))
    lat = np.array([command_at[k] - sample_at[k] for k in common]) * 1e6
    lat = lat[lat > 0]
    if lat.size:
        print(f'hexafloat.realtime.ft_to_setpoint_latency_p50: {np.percentile(lat, 50):.0f} us')
        print(f'hexafloat.realtime.ft_to_setpoint_latency_p99: {np.percentile(lat, 99):.0f} us')
        print(f'hexafloat.realtime.frames_measured: {lat.size} frames')
    late = [line for line in out.splitlines() if line.startswith('late_commands')]
    if late:
        print(f'hexafloat.realtime.late_commands: {late[0].split(": ")[1]} frames')


def lockstep_speed():
    for name, extra in (('one_process', []), ('isolated', ['--isolated'])):
        cmd = [sys.executable, '-m', 'hil_nodes.cli.main', 'run', 'hexafloat', '--duration', str(DURATION),
               '--domain-id', str(DOMAIN), '--quiet'] + extra
        res = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
        s = dict(line.split(': ', 1) for line in res.stdout.splitlines() if ': ' in line)
        if res.returncode == 0:
            print(f'hexafloat.lockstep.{name}.wall_per_sim_second: {float(s["wall_time_s"]) / float(s["sim_time_s"]):.2f} s')
        else:
            print(f'hexafloat.lockstep.{name}.failed: {res.returncode} exit')


if __name__ == '__main__':
    latency()
    lockstep_speed()
