"""Hexafloat graph in real time: latency the chain adds beyond its designed delay, p50/p99.

Runs `hil run hexafloat --realtime` with a probe node that timestamps, with one wall clock:
* each mock F/T sample (stamp t) and the model reference computed from it (the admittance keeps
  the sample's stamp): F/T sample -> reference latency of ft_sensor + admittance;
* the time base's own measurement of reference stamp -> servo setpoint (its diagnostics), whose
  designed value is the 10 ms buffer delay: what exceeds 10 ms is latency beyond the design.
In real time the planner and the time base run on frame timers, so they add up to one frame
(2.5 ms) of sampling on top of their compute; the filter's ~6 ms is in the signal, not the timing.
Also prints the wall time per simulated second in lockstep for one process and isolated.
"""
import os
import subprocess
import sys
import time

import numpy as np
import rclpy
from diagnostic_msgs.msg import DiagnosticArray
from geometry_msgs.msg import PoseStamped, WrenchStamped
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy

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
    sample_at, command_at, tb_delays = {}, {}, []
    node.create_subscription(WrenchStamped, '/mock_ft/wrench',
                             lambda m: sample_at.setdefault(_key(m.header.stamp), time.perf_counter()), qos)
    node.create_subscription(PoseStamped, '/admittance/reference',
                             lambda m: command_at.setdefault(_key(m.header.stamp), time.perf_counter()), qos)

    def on_diag(msg):
        for st in msg.status:
            if st.hardware_id == 'timebase':
                v = {kv.key: kv.value for kv in st.values}
                if 'delay_max_ms' in v:
                    tb_delays.append((float(v['delay_min_ms']), float(v['delay_max_ms'])))
    node.create_subscription(DiagnosticArray, '/diagnostics', on_diag, 100)
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
        print(f'hexafloat.realtime.ft_sample_to_reference_p50: {np.percentile(lat, 50):.0f} us')
        print(f'hexafloat.realtime.ft_sample_to_reference_p99: {np.percentile(lat, 99):.0f} us')
        print(f'hexafloat.realtime.samples_measured: {lat.size} samples')
    if tb_delays:
        d = np.array(tb_delays[1:] or tb_delays)
        print(f'hexafloat.realtime.reference_to_setpoint_min: {d[:, 0].min() * 1e3:.0f} us')
        print(f'hexafloat.realtime.reference_to_setpoint_max: {d[:, 1].max() * 1e3:.0f} us')
        print(f'hexafloat.realtime.beyond_designed_10ms_max: {(d[:, 1].max() - 10.0) * 1e3:.0f} us')
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
