"""view_throttle: the streams the HMI draws, at most its view rate, newest values, every /tf frame.

What is asserted:
* alone in its process (polled DDS readers, as with --isolated), fed over DDS by the test at a
  400 Hz pace: on each ``hmi/...`` copy at most one message per tick of the node, the ticks no
  more than ``rate`` per second of the test's own duration, far fewer messages than the test sent;
  every message one the test sent, in order; after the last one the copy carries it (the newest);
  the /tf copy carries every child frame the test sent (the platform at every sample, the legs at
  every 8th, one frame once), each frame at most once per message, ending with its newest value;
* in the container (the intra-process bus), fed by chain ports as the graph's nodes feed it: no
  DDS reader of a full-rate stream is left (every subscription served by the bus), and one tick
  after 20 samples of each stream sends exactly one message per copy, the 20th, with /tf merged
  from every frame; a tick with nothing new sends nothing.
"""
from __future__ import annotations

import time

import numpy as np
import pytest
from geometry_msgs.msg import PoseStamped, TransformStamped, WrenchStamped
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
from tf2_msgs.msg import TFMessage

from hil_nodes import topics
from hil_nodes.msgs import convert
from hil_nodes.runtime import chain_port
from hil_nodes.runtime.intra_process import BUS
from hil_nodes.view_throttle.node import STREAM_TYPES, ViewThrottleNode
from rig import build

from bus_nodes import Plain, bus  # noqa: F401 (bus: the fixture)

RATE = 20.0                       # the node's rate in these tests (Hz)
PACE = 0.0025                     # the test's streams: 400 Hz
JOINTS = [f'slider_{i}' for i in range(1, 7)]
LEGS = [f'leg_{i}' for i in range(1, 7)]
PUB_QOS = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.VOLATILE)
SUB_QOS = QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.VOLATILE)


def _stamp_ns(msg) -> int:
    return convert.stamp_to_ns(msg.header.stamp)


def _transform(k: int, parent: str, child: str) -> TransformStamped:
    return convert.transform_stamped(convert.ns_to_stamp(k), parent, child, [0.001 * k, len(child), 0.0],
                                     [0.0, 0.0, 0.0, 1.0])


def _samples(k: int) -> dict[str, object]:
    """Sample k of every stream, stamped k ns, its values from k (checkable on the way out)."""
    js = JointState(name=list(JOINTS), position=[0.001 * k + i for i in range(6)])
    js.header.stamp = convert.ns_to_stamp(k)
    wrench = WrenchStamped()
    wrench.header.stamp, wrench.header.frame_id = convert.ns_to_stamp(k), 'ft_sensor'
    wrench.wrench.force.z = float(k)
    poses = {}
    for topic in (topics.PLANNER_SAFE_REFERENCE, topics.KINEMATICS_TCP_POSE, topics.SPACE_EE_POSE):
        pose = PoseStamped()
        pose.header.stamp, pose.header.frame_id = convert.ns_to_stamp(k), 'hexapod_base'
        pose.pose.position.x, pose.pose.orientation.w = 0.001 * k, 1.0
        poses[topic] = pose
    tf = [_transform(k, 'hexapod_base', 'platform')]
    if k % 8 == 0:                                    # the display frames at 50 Hz of samples
        tf += [_transform(k, 'hexapod_base', leg) for leg in LEGS]
    if k == 3:
        tf.append(_transform(k, 'platform', 'heard_once'))
    return {topics.JOINT_STATES: js, topics.FT_WRENCH: wrench, **poses, topics.TF: TFMessage(transforms=tf)}


def _copies(ros) -> dict[str, list]:
    return {topic: ros.collect(kind, topics.VIEW_STREAMS[topic], SUB_QOS) for topic, kind in STREAM_TYPES.items()}


def test_alone_the_copies_carry_the_newest_samples_at_most_at_its_rate(ros):
    node = ros.add_node(build(ros, ViewThrottleNode, rate=RATE))
    got = _copies(ros)
    pubs = {topic: ros.node.create_publisher(kind, topic, PUB_QOS) for topic, kind in STREAM_TYPES.items()}
    ros.spin_until(lambda: all(p.get_subscription_count() >= 1 for p in pubs.values())
                   and all(node.count_subscribers(c) >= 1 for c in topics.VIEW_STREAMS.values()), 20, 'matched')

    sent: dict[str, list] = {topic: [] for topic in pubs}
    frames_sent: dict[str, TransformStamped] = {}
    k, ticks0, start = 0, node.ticks, time.monotonic()
    next_at = start
    while time.monotonic() - start < 2.0:             # 2 s of samples at a 400 Hz pace
        if time.monotonic() >= next_at:
            k += 1
            next_at += PACE
            for topic, msg in _samples(k).items():
                pubs[topic].publish(msg)
                sent[topic].append(msg)
            frames_sent.update({t.child_frame_id: t for t in sent[topics.TF][-1].transforms})
        ros.executor.spin_once(timeout_sec=0.0)
    duration, ticks = time.monotonic() - start, node.ticks - ticks0
    last = k
    # the newest: once the samples stop, the next tick carries the last one of every stream
    ros.spin_until(lambda: all(got[t] and _stamp_ns(got[t][-1]) == last for t in pubs if t != topics.TF)
                   and all(got[topics.TF]) and frames_sent.keys() <= _heard_frames(got[topics.TF]).keys()
                   and _heard_frames(got[topics.TF])['platform'].header.stamp == convert.ns_to_stamp(last),
                   10, 'the last samples on the copies')

    # at most the rate: a tick sends at most one message a stream, and the ticks kept the rate
    # (a timer never fires faster than its period: +1 for a tick at each end of the window)
    assert ticks <= RATE * duration + 1, (ticks, duration)
    assert len(sent[topics.JOINT_STATES]) >= 4 * RATE * duration        # the test's pace, at least 4x the rate
    for topic, msgs in got.items():
        assert len(msgs) <= node.sent[topic] <= node.ticks, topic
        if topic == topics.TF:
            continue
        stamps = [_stamp_ns(m) for m in msgs]
        assert stamps == sorted(set(stamps)) and set(stamps) <= set(range(1, last + 1)), topic
        for m in msgs:                                 # every one carries the values of its sample
            assert m == sent[topic][_stamp_ns(m) - 1], topic
    # /tf: every child frame sent comes through, each at most once a message, the newest last
    for msg in got[topics.TF]:
        children = [t.child_frame_id for t in msg.transforms]
        assert len(children) == len(set(children))
    heard = _heard_frames(got[topics.TF])
    assert heard.keys() == frames_sent.keys() == {'platform', 'heard_once', *LEGS}
    for child, t in frames_sent.items():
        assert heard[child] == t, child


def _heard_frames(msgs) -> dict[str, TransformStamped]:
    out = {}
    for msg in msgs:
        out.update({t.child_frame_id: t for t in msg.transforms})
    return out


def test_in_the_container_it_reads_the_bus_and_sends_one_merged_tick(ros, bus):
    producer = bus(name='graph')
    ports = {topics.JOINT_STATES: chain_port.joint_state_port(
                 producer.create_publisher(JointState, topics.JOINT_STATES, PUB_QOS), JOINTS),
             topics.TF: chain_port.tf_port(producer.create_publisher(TFMessage, topics.TF, PUB_QOS)),
             topics.FT_WRENCH: chain_port.wrench_port(
                 producer.create_publisher(WrenchStamped, topics.FT_WRENCH, PUB_QOS), 'ft_sensor')}
    for topic in (topics.PLANNER_SAFE_REFERENCE, topics.KINEMATICS_TCP_POSE, topics.SPACE_EE_POSE):
        ports[topic] = chain_port.pose_port(producer.create_publisher(PoseStamped, topic, PUB_QOS), 'hexapod_base')
    node = build(ros, ViewThrottleNode, rate=1.0)      # ticked by the test below
    ros.add_node(node)
    # every stream from the bus: no DDS reader of a full-rate stream anywhere
    assert all(sub.served and sub.inner is None for sub in node._subs)
    got = _copies(ros)
    ros.spin_until(lambda: all(node.count_subscribers(c) >= 1 for c in topics.VIEW_STREAMS.values()), 20,
                   'the test on the copies')
    assert all(ros.node.count_subscribers(t) == 0 for t in STREAM_TYPES)

    payloads = {}
    for k in range(1, 21):
        payloads = {
            topics.JOINT_STATES: (k, tuple(JOINTS), np.arange(6) + 0.001 * k, np.zeros(6), None),
            topics.FT_WRENCH: (k, np.array([0.0, 0.0, float(k), 0.0, 0.0, 0.0])),
            **{t: (k, np.array([0.001 * k, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0]))
               for t in (topics.PLANNER_SAFE_REFERENCE, topics.KINEMATICS_TCP_POSE, topics.SPACE_EE_POSE)},
            topics.TF: (k, [('hexapod_base', 'platform', np.array([0.001 * k, 0.0, 0.0]), np.array([0.0, 0, 0, 1]))]
                        + ([('hexapod_base', leg, np.array([float(k), 0.0, 0.0]), np.array([0.0, 0, 0, 1]))
                            for leg in LEGS] if k % 8 == 0 else []))}
        for topic, payload in payloads.items():
            ports[topic].send(payload)
        BUS.drain()
    node.tick()
    ros.spin_until(lambda: all(got.values()), 10, 'one message on every copy')
    ros.spin_for(0.3)
    assert {t: len(m) for t, m in got.items()} == {t: 1 for t in STREAM_TYPES}
    js = got[topics.JOINT_STATES][0]
    assert (_stamp_ns(js), list(js.name)) == (20, JOINTS)
    np.testing.assert_array_equal(js.position, np.arange(6) + 0.020)
    wrench = got[topics.FT_WRENCH][0]
    assert (_stamp_ns(wrench), wrench.header.frame_id, wrench.wrench.force.z) == (20, 'ft_sensor', 20.0)
    for topic in (topics.PLANNER_SAFE_REFERENCE, topics.KINEMATICS_TCP_POSE, topics.SPACE_EE_POSE):
        pose = got[topic][0]
        assert (_stamp_ns(pose), pose.header.frame_id, pose.pose.position.x) == (20, 'hexapod_base', 0.020)
    frames = {t.child_frame_id: t for t in got[topics.TF][0].transforms}
    assert frames.keys() == {'platform', *LEGS}
    assert convert.stamp_to_ns(frames['platform'].header.stamp) == 20
    assert frames['platform'].transform.translation.x == pytest.approx(0.020)
    for leg in LEGS:                                 # the legs' newest: sample 16
        assert (convert.stamp_to_ns(frames[leg].header.stamp), frames[leg].transform.translation.x) == (16, 16.0)
    assert node.tick() is None and BUS.drain() == 0
    ros.spin_for(0.3)
    assert {t: len(m) for t, m in got.items()} == {t: 1 for t in STREAM_TYPES}     # nothing new: nothing sent
