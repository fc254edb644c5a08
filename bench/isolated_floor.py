"""The floor under the isolated layout's CPU budget: its message pattern with no work at all.

The real-time targets (docs/realtime.md) give Hexafloat with one process per node and the
recorder on at most 0.8 CPU-s per sim-s. This bench starts the same eight processes (the
supervisor included; the `hil` command is left out) with the same 400 Hz streams, message
types and sizes, QoS, grid timers, 10 Hz heartbeats and the recorder's drained readers, and
callbacks that only forward a prebuilt message: the chain F/T -> admittance -> planner -> time
base -> drives, the drives' joint states -> kinematics -> TCP pose to the planner and the F/T
node. What it costs is what
rclpy and Fast DDS charge for that graph on this machine before any node computes anything.

Variants: ``as_built`` (what the graph publishes today), ``no_tf_no_raw`` (without the 400 Hz
/tf and /ft_sensor/wrench_raw: the least a recorded Hexafloat run can carry).
Prints CPU-s per wall-s per process and in total. Nothing here is asserted.
Usage: `.venv/bin/python bench/isolated_floor.py [variant ...]` (HIL_BENCH_SECONDS, default 15).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time

SECONDS = float(os.environ.get('HIL_BENCH_SECONDS', '15'))
WARMUP = 4.0          # discovery and matching of eight participants
PERIOD = 0.0025

# node -> (topics its 400 Hz grid timer publishes, {topic it serves: topics it publishes per message})
GRAPH = {
    'mock_hexapod': (['/joint_states'], {'/hexapod_controller/joint_trajectory': []}),
    'ft_sensor': (['/ft_sensor/wrench', '/ft_sensor/wrench_raw'], {'/kinematics/tcp_pose': []}),
    'admittance': ([], {'/ft_sensor/wrench': ['/admittance/reference']}),
    'planner': ([], {'/admittance/reference': ['/planner/safe_reference'], '/kinematics/tcp_pose': []}),
    'timebase': ([], {'/planner/safe_reference': ['/hexapod_controller/joint_trajectory']}),
    'kinematics': ([], {'/joint_states': ['/kinematics/tcp_pose', '/tf']}),
    'supervisor': ([], {'/hil/heartbeat': []}),
}
LEAN = {'/tf', '/ft_sensor/wrench_raw'}     # left out by the no_tf_no_raw variant


def _messages():
    """One message per topic, the sizes the Hexafloat graph sends (bag: 84-1300 bytes)."""
    from builtin_interfaces.msg import Duration
    from geometry_msgs.msg import PoseStamped, TransformStamped, WrenchStamped
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Header
    from tf2_msgs.msg import TFMessage
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint
    joints = [f'slider_{i}' for i in range(1, 7)]
    six = [0.1] * 6
    pose = PoseStamped()
    pose.header.frame_id = 'base'
    wrench = WrenchStamped()
    wrench.header.frame_id = 'ft_sensor'
    points = [JointTrajectoryPoint(positions=six, velocities=six, time_from_start=Duration(nanosec=625_000 * k))
              for k in range(8)]
    frames = ['tcp'] + [f'slider_{i}_link' for i in range(1, 7)] + [f'leg_{i}' for i in range(1, 7)]
    tf = TFMessage(transforms=[TransformStamped(child_frame_id=f) for f in frames])
    return {'/joint_states': JointState(name=joints, position=six, velocity=six, effort=six),
            '/ft_sensor/wrench': wrench, '/ft_sensor/wrench_raw': wrench,
            '/admittance/reference': pose, '/planner/safe_reference': pose, '/kinematics/tcp_pose': pose,
            '/hexapod_controller/joint_trajectory': JointTrajectory(joint_names=joints, points=points),
            '/tf': tf, '/hil/heartbeat': Header(frame_id='node')}


def _qos(topic: str):
    from hil_nodes import qos
    if topic == '/joint_states':
        return qos.joint_states(False)
    if topic == '/hexapod_controller/joint_trajectory':
        return qos.command()
    if topic == '/tf':
        return qos.tf()
    if topic == '/hil/heartbeat':
        return qos.command()
    return qos.stream(False)


def _child(name: str, variant: str, domain: int) -> None:
    import rclpy
    from rclpy.experimental import EventsExecutor
    from hil_nodes.runtime import rt_setup
    from hil_nodes.recorder.polled_readers import PolledReaders
    rt_setup.fine_timer_slack()
    context = rclpy.Context()
    rclpy.init(context=context, domain_id=domain)
    node = rclpy.create_node(f'floor_{name}', context=context)
    executor = EventsExecutor(context=context)
    executor.add_node(node)
    msgs = _messages()
    keep = (lambda t: t not in LEAN) if variant == 'no_tf_no_raw' else (lambda t: True)
    pubs: dict = {}

    def publisher(topic):
        if topic not in pubs:
            pubs[topic] = node.create_publisher(type(msgs[topic]), topic, _qos(topic))
        return pubs[topic]
    if name == 'recorder':
        readers = PolledReaders(context, 'floor_recorder')
        for topic in {t for grid, served in GRAPH.values() for t in [*grid, *sum(served.values(), [])]}:
            if keep(topic):
                readers.add(type(msgs[topic]), topic, _qos(topic), lambda data, t: None)
        node.create_timer(0.02, readers.drain)
    else:
        grid, served = GRAPH[name]
        grid_pubs = [publisher(t) for t in grid if keep(t)]
        if grid_pubs:
            node.create_timer(PERIOD, lambda: [p.publish(msgs[p.topic_name]) for p in grid_pubs])
        for topic, outs in served.items():
            out_pubs = [publisher(t) for t in outs if keep(t)]
            node.create_subscription(type(msgs[topic]), topic,
                                     lambda _m, o=out_pubs: [p.publish(msgs[p.topic_name]) for p in o], _qos(topic))
        if name != 'supervisor':
            beat = publisher('/hil/heartbeat')
            node.create_timer(0.1, lambda: beat.publish(msgs['/hil/heartbeat']))

    def spin(seconds):
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            executor.spin_once(timeout_sec=0.1)
    spin(WARMUP)
    c0, w0 = time.process_time(), time.monotonic()
    spin(SECONDS)
    print(json.dumps({name: (time.process_time() - c0) / (time.monotonic() - w0)}), flush=True)
    for timer in list(node.timers):       # quiet before tearing down (a timer destroyed while
        timer.cancel()                    # its event is queued can hang the EventsExecutor)
    spin(0.2)
    executor.shutdown()
    if name == 'recorder':
        readers.destroy()
    node.destroy_node()
    rclpy.shutdown(context=context)


def _run(variant: str) -> dict[str, float]:
    domain = 150 + os.getpid() % 20
    env = {**os.environ, 'ROS_AUTOMATIC_DISCOVERY_RANGE': 'LOCALHOST'}
    children = [subprocess.Popen([sys.executable, __file__, 'child', name, variant, str(domain)],
                                 stdout=subprocess.PIPE, text=True, env=env)
                for name in [*GRAPH, 'recorder']]
    costs: dict[str, float] = {}
    for child in children:
        costs.update(json.loads(child.stdout.readline()))
    killed = False
    for child in children:
        try:
            child.wait(timeout=10)
        except subprocess.TimeoutExpired:       # a teardown that hangs costs nothing measured
            child.kill()
            child.wait()
            killed = True
            print('isolated_floor: a child hung in its teardown and was killed', file=sys.stderr)
    if killed:                                   # a killed process leaves its Fast DDS segments
        from hil_nodes.cli.processes import clean_dead_shm
        clean_dead_shm()
    return costs


if __name__ == '__main__' and sys.argv[1:2] == ['child']:
    _child(sys.argv[2], sys.argv[3], int(sys.argv[4]))
elif __name__ == '__main__':
    for variant in sys.argv[1:] or ['as_built', 'no_tf_no_raw']:
        costs = _run(variant)
        for name, cost in sorted(costs.items()):
            print(f'isolated_floor.{variant}.{name}: {cost:.3f} cpu_s_per_s', flush=True)
        print(f'isolated_floor.{variant}.total: {sum(costs.values()):.3f} cpu_s_per_s', flush=True)
