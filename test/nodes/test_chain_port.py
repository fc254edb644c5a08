"""hil_nodes.runtime.chain_port: a chain stage's arrays to the next stage in the process, the
topic for the outside, with real rclpy nodes.

What is asserted: in one process a subscription with a ``chain_input`` gets the payload itself
(no message), one without gets a message with the same content, the recorder's raw subscription
gets the bytes rclpy would write for that message, all queued in publish order as the bus queues
messages; DDS gets a message only for a reader outside the process, which then receives the
payload's content; a chain input is never called twice for one payload when the topic has gone
back to DDS (a publisher outside the process) — it then gets messages through its message
callback; an inactive lifecycle publisher sends nothing; alone in its process a port publishes
messages that the consumer's message callback turns into the same payload.
"""
from __future__ import annotations

import numpy as np
from geometry_msgs.msg import PoseStamped
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from rclpy.serialization import deserialize_message

from hil_nodes.msgs.cdr_encode import serialize_exact
from hil_nodes.runtime.chain_port import ChainPort, pose_from_message, pose_port
from hil_nodes.runtime.intra_process import BUS, IntraProcessBus
from hil_nodes.runtime.intra_publisher import IntraPublisher

from bus_nodes import Managed, Plain, bus  # noqa: F401 (bus: the fixture)

STREAM = QoSProfile(depth=10, reliability=ReliabilityPolicy.BEST_EFFORT, durability=DurabilityPolicy.VOLATILE)
POSES = [(1_000_000_000 + 2_500_000 * k, np.array([0.1 * k, -0.2, 0.3, 0.0, 0.0, np.sin(0.1 * k), np.cos(0.1 * k)]))
         for k in range(3)]


def consumer(node, topic: str, events: list, tag: str, chained: bool = True):
    """A stage that takes (stamp, pose): by its chain input, or from messages."""
    def take(payload):
        events.append((tag, 'payload', payload[0], payload[1]))

    def on_msg(msg):
        stamp, pose = pose_from_message(msg)
        events.append((tag, 'message', stamp, pose))
    return node.create_subscription(PoseStamped, topic, on_msg, STREAM, chain_input=take if chained else None)


def test_a_chained_input_gets_the_payload_a_plain_one_a_message_the_recorder_the_bytes(ros, bus):
    p, a, b, r = bus(name='p'), bus(name='a'), bus(name='b'), bus(name='r')
    events, raw = [], []
    consumer(a, '/ref', events, 'chained')
    consumer(b, '/ref', events, 'plain', chained=False)
    r.create_subscription(PoseStamped, '/ref', raw.append, STREAM, raw=True)
    port = pose_port(p.create_publisher(PoseStamped, '/ref', STREAM), 'base')
    assert isinstance(port.publisher, IntraPublisher)
    for payload in POSES:
        port.send(payload)
    assert events == []                                   # deferred, as every bus delivery
    BUS.drain()
    assert [e[:3] for e in events] == [(tag, kind, s) for s, _ in POSES
                                       for tag, kind in (('chained', 'payload'), ('plain', 'message'))]
    for (tag, kind, stamp, pose), (s, sent) in zip(events, [x for x in POSES for _ in (0, 1)]):
        if kind == 'payload':
            assert pose is sent                           # the arrays themselves: nothing converted
        else:
            np.testing.assert_array_equal(pose, sent)
    # the recorder's bytes are rclpy's for the same message (an independent encoder)
    for data, (stamp, pose) in zip(raw, POSES):
        msg = PoseStamped()
        msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(stamp, 1_000_000_000)
        msg.header.frame_id = 'base'
        (msg.pose.position.x, msg.pose.position.y, msg.pose.position.z, msg.pose.orientation.x,
         msg.pose.orientation.y, msg.pose.orientation.z, msg.pose.orientation.w) = map(float, pose)
        assert data == serialize_exact(msg)
        assert deserialize_message(data, PoseStamped) == msg


def test_the_recorders_bytes_are_written_after_the_graphs_deliveries_not_in_the_senders_frame(ros, bus):
    """The recorder's bytes of a chain port are written when the recorder's turn comes, after
    every delivery of the graph in the drain (the chain F/T -> drives does not wait behind
    serialization), from the payload the stage sent, in publish order."""
    p, a, r = bus(name='p'), bus(name='a'), bus(name='r')
    order = []
    a.create_subscription(PoseStamped, '/ref', lambda m: None, STREAM,
                          chain_input=lambda payload: order.append(('stage', payload[0])))
    r.create_subscription(PoseStamped, '/ref', lambda data: order.append(('recorder', len(data))), STREAM, raw=True)
    inner = pose_port(p.create_publisher(PoseStamped, '/ref', STREAM), 'base')

    def encode(payload):
        order.append(('written', payload[0]))
        return inner.encode(payload)
    port = ChainPort(inner.publisher, inner.message, encode)
    for payload in POSES:
        port.send(payload)
        assert not any(kind == 'written' for kind, _ in order)       # not in the sender's frame
    BUS.drain()
    stamps = [s for s, _ in POSES]
    size = len(inner.encode(POSES[0]))
    assert order == ([('stage', s) for s in stamps]
                     + [e for s in stamps for e in (('written', s), ('recorder', size))])


def test_dds_gets_a_message_only_for_a_reader_outside(ros, bus, monkeypatch):
    from hil_nodes.runtime import intra_publisher
    written, real = [], intra_publisher._dds_publish
    monkeypatch.setattr(intra_publisher, '_dds_publish', lambda pub, msg: (written.append(msg), real(pub, msg)))
    p, a = bus(name='p'), bus(name='a')
    events = []
    consumer(a, '/out', events, 'chained')
    port = pose_port(p.create_publisher(PoseStamped, '/out', STREAM), 'base')
    port.send(POSES[0])
    BUS.drain()
    assert written == [] and len(events) == 1
    outside = ros.collect(PoseStamped, '/out', STREAM)
    ros.spin_until(lambda: port.publisher.get_subscription_count() >= 1, what='the outside reader')
    port.send(POSES[1])
    BUS.drain()
    ros.spin_until(lambda: outside, what='the pose over DDS')
    assert len(written) == 1 and pose_from_message(outside[0])[0] == POSES[1][0]
    np.testing.assert_array_equal(pose_from_message(outside[0])[1], POSES[1][1])
    assert [e[1] for e in events] == ['payload', 'payload']


def test_a_topic_back_on_dds_delivers_messages_once_never_the_payload_too(ros, bus):
    p, a = bus(name='p'), bus(name='a')
    events = []
    sub = consumer(a, '/shared', events, 'chained')
    port = pose_port(p.create_publisher(PoseStamped, '/shared', STREAM), 'base')
    outside = ros.node.create_publisher(PoseStamped, '/shared', STREAM)
    ros.spin_until(lambda: p.count_publishers('/shared') >= 2, what='both publishers in the graph')
    assert BUS.fall_back_to_dds(p) == [('/shared', 1)] and not sub.served
    ros.spin_until(lambda: port.publisher.get_subscription_count() >= 1, what='the DDS reader of the process')
    port.send(POSES[0])
    assert BUS.drain() == 0
    ros.spin_until(lambda: events, what='the pose over DDS')
    ros.spin_for(0.3)
    assert [(e[0], e[1], e[2]) for e in events] == [('chained', 'message', POSES[0][0])]


def test_an_inactive_lifecycle_port_sends_nothing(ros, bus):
    p, a = bus(Managed, 'p'), bus(name='a')
    events = []
    consumer(a, '/managed', events, 'chained')
    pub = p.create_lifecycle_publisher(PoseStamped, '/managed', STREAM)
    port = pose_port(pub, 'base')
    port.send(POSES[0])
    BUS.drain()
    assert events == []
    pub.on_activate(None)
    port.send(POSES[1])
    BUS.drain()
    assert [e[2] for e in events] == [POSES[1][0]]


def test_alone_in_its_process_a_port_publishes_messages_that_give_the_same_payload(ros):
    IntraProcessBus.__init__(BUS)                         # the bus off: one node per process
    p, a = Plain('alone_p', context=ros.context), Plain('alone_a', context=ros.context)
    ros.add_node(p)
    ros.add_node(a)
    events = []
    consumer(a, '/alone', events, 'chained')
    port = pose_port(p.create_publisher(PoseStamped, '/alone', STREAM), lambda: 'base')
    assert not isinstance(port.publisher, IntraPublisher) and isinstance(port, ChainPort)
    ros.spin_until(lambda: port.publisher.get_subscription_count() >= 1, what='the reader')
    port.send(POSES[2])
    ros.spin_until(lambda: events, what='the message')
    tag, kind, stamp, pose = events[0]
    assert kind == 'message' and stamp == POSES[2][0]
    np.testing.assert_array_equal(pose, POSES[2][1])
