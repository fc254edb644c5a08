"""hil_nodes.runtime.intra_process: delivery inside the one-process container, with real rclpy nodes.

What is asserted: a subscription of a topic published in the process is served by the bus (no
DDS reader) in publish order, deferred until the publishing callback returned; it switches to a
DDS reader and back as the producer in the process comes and goes; a raw subscription gets the
bytes of the message as published; a transient-local subscription served late gets the latched
message; DDS carries a message out only to a reader that matched (never twice to a subscription
of the process); a transient-local stream (the lockstep QoS) writes nothing into DDS until a
reader outside matches, which then gets the last ``REPLAY`` messages first if it is transient
local, and nothing is lost when the topic goes back to DDS; an inactive lifecycle publisher
delivers nothing; publishing one object twice in a row is refused; a publisher outside the
process of a served topic is heard too.
"""
from __future__ import annotations

import time

import pytest
import rclpy
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from rclpy.serialization import deserialize_message, serialize_message
from std_msgs.msg import Header, String

from hil_nodes.runtime import intra_publisher
from hil_nodes.runtime.intra_process import BUS, IntraProcessBus
from hil_nodes.runtime.intra_publisher import REPLAY, IntraPublisher, reader_count

from bus_nodes import Managed, Plain, bus  # noqa: F401 (bus: the fixture)

VOLATILE = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.VOLATILE)
LATCHED = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL)
STREAM = QoSProfile(depth=50, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL)


def header(sec: int) -> Header:
    h = Header(frame_id=f'm{sec}')
    h.stamp.sec = sec
    return h


def test_served_in_publish_order_after_the_publishing_callback_returned(ros, bus):
    p, s, r = bus(name='p'), bus(name='s'), bus(name='r')
    events = []
    relay = s.create_publisher(Header, '/relayed', VOLATILE)

    def on_header(msg):
        events.append(('s start', msg.stamp.sec))
        relay.publish(header(100 + msg.stamp.sec))
        events.append(('s end', msg.stamp.sec))

    sub = s.create_subscription(Header, '/chain', on_header, VOLATILE)
    r.create_subscription(Header, '/relayed', lambda m: events.append(('r', m.stamp.sec)), VOLATILE)
    pub = p.create_publisher(Header, '/chain', VOLATILE)
    assert isinstance(pub, IntraPublisher) and sub.served and sub.inner is None   # no DDS reader

    sent = [header(k) for k in (1, 2, 3)]
    for msg in sent:
        pub.publish(msg)
    assert events == []                                  # deferred: nothing runs inside publish()
    assert BUS.drain() == 6                              # 3 on /chain, then the 3 relayed
    # every callback ran to completion before the next began, in publish order
    assert events == [('s start', 1), ('s end', 1), ('s start', 2), ('s end', 2), ('s start', 3),
                      ('s end', 3), ('r', 101), ('r', 102), ('r', 103)]


def test_a_subscription_switches_between_dds_and_the_bus_as_the_producer_comes_and_goes(ros, bus):
    s = bus(name='s')
    got = []
    sub = s.create_subscription(String, '/switch', lambda m: got.append(m.data), VOLATILE)
    assert not sub.served and sub.inner is not None      # no producer in the process: DDS
    outside = ros.node.create_publisher(String, '/switch', VOLATILE)   # not a bus publisher
    ros.spin_until(lambda: outside.get_subscription_count() >= 1, what='the DDS reader of /switch')
    outside.publish(String(data='over dds'))
    ros.spin_until(lambda: got == ['over dds'], what='the DDS message')

    p = bus(name='p')
    pub = p.create_publisher(String, '/switch', VOLATILE)
    assert sub.served and sub.inner is None
    ros.spin_until(lambda: p.count_publishers('/switch') >= 2, what='both publishers in the graph')
    # the outside publisher is still heard: the topic goes back to DDS inside the process too
    assert BUS.fall_back_to_dds(p) == [('/switch', 1)] and not sub.served and sub.inner is not None
    assert BUS.fall_back_to_dds(p) == []                     # once
    ros.spin_until(lambda: pub.get_subscription_count() >= 1, what='the process publisher matched the reader')
    pub.publish(String(data='in process'))
    outside.publish(String(data='outside'))
    assert BUS.drain() == 0                                  # nothing by the bus any more
    ros.spin_until(lambda: 'outside' in got and 'in process' in got, what='both messages over DDS')
    ros.spin_for(0.3)                                        # (none of them twice)
    assert sorted(got) == sorted(['over dds', 'in process', 'outside'])
    p.destroy_publisher(pub)
    assert not sub.served and sub.inner is not None
    ros.spin_until(lambda: outside.get_subscription_count() >= 1, what='the DDS reader again')
    outside.publish(String(data='dds again'))
    ros.spin_until(lambda: got[-1] == 'dds again', what='the DDS message after the switch back')


def test_raw_bytes_end_where_the_message_ends(ros, bus):
    """rclpy's serialize_message pads a JointState with empty fields past its end (the rmw's
    size estimate); the recorder's bytes must be the message's, which rosbags reads strictly."""
    from sensor_msgs.msg import JointState
    from hil_nodes.recorder.bag import typestore
    p, s = bus(name='p'), bus(name='s')
    raw = []
    s.create_subscription(JointState, '/js', raw.append, VOLATILE, raw=True)
    pub = p.create_publisher(JointState, '/js', VOLATILE)
    pub.publish(JointState(name=['a', 'b'], position=[1.0, 2.0], velocity=[], effort=[]))
    BUS.drain()
    assert len(serialize_message(JointState(name=['a', 'b'], position=[1.0, 2.0]))) > len(raw[0])
    got = typestore().deserialize_cdr(raw[0], 'sensor_msgs/msg/JointState')
    assert list(got.name) == ['a', 'b'] and list(got.position) == [1.0, 2.0] and len(got.effort) == 0


def test_a_raw_subscription_comes_after_the_graph_with_the_publish_time(ros, bus):
    """On the wall clock: the recorder's deliveries wait until the graph's own are done (the
    chain F/T -> time base must not wait behind serialization and writes); it gets the
    message's bytes and, as its receipt time, the publish time."""
    p, s = bus(name='p'), bus(name='s')
    order, raw = [], []

    def on_raw(data):
        order.append('raw')
        raw.append((data, BUS.published_ns))

    s.create_subscription(Header, '/raw', on_raw, VOLATILE, raw=True)
    s.create_subscription(Header, '/raw', lambda m: order.append('graph'), VOLATILE)
    s.create_subscription(Header, '/other', lambda m: order.append('graph other'), VOLATILE)
    pub, other = p.create_publisher(Header, '/raw', VOLATILE), p.create_publisher(Header, '/other', VOLATILE)
    before = time.time_ns()
    msg = header(7)
    pub.publish(msg)
    other.publish(header(8))
    after = time.time_ns()
    BUS.drain()
    assert order == ['graph', 'graph other', 'raw']
    assert raw[0][0] == serialize_message(msg) and before <= raw[0][1] <= after
    assert deserialize_message(raw[0][0], Header).frame_id == 'm7'
    assert BUS.published_ns is None                  # outside a raw delivery


def test_on_simulated_time_the_publish_time_is_the_last_clock_published_before(ros, bus):
    """Simulated time (lockstep, or real time at another pace): raw deliveries come after the
    graph's own too, and their receipt time is the /clock published in the process before the
    message, the recorder's clock had it come in publish order; before any /clock, None (the
    recorder then reads its own clock); a /clock of 0 is a time."""
    from builtin_interfaces.msg import Time
    from rosgraph_msgs.msg import Clock
    BUS.sim_clock = True
    p, s = bus(name='p'), bus(name='s')
    got = []
    s.create_subscription(Header, '/raw', lambda d: got.append(BUS.published_ns), VOLATILE, raw=True)
    s.create_subscription(Clock, '/clock', lambda m: None, VOLATILE)
    pub, clock = p.create_publisher(Header, '/raw', VOLATILE), p.create_publisher(Clock, '/clock', VOLATILE)
    pub.publish(header(1))
    for sec, nanosec in ((0, 0), (5, 2_500_000), (5, 5_000_000)):
        clock.publish(Clock(clock=Time(sec=sec, nanosec=nanosec)))
        pub.publish(header(2))
    BUS.drain()
    assert got == [None, 0, 5_002_500_000, 5_005_000_000]


def test_a_chain_that_feeds_itself_never_starves_the_recorder(ros, bus):
    """Lockstep in one process: drives -> ... -> drives never empties the graph's queue within a
    drain's budget; the raw deliveries queued during the drain still come at its end (they were
    left behind and the system runs recorded 323 of 2000 joint states)."""
    p, s = bus(name='p'), bus(name='s')
    raw = []
    pub = p.create_publisher(Header, '/loop', VOLATILE)
    s.create_subscription(Header, '/loop', lambda m: pub.publish(header(m.stamp.sec + 1)), VOLATILE)
    s.create_subscription(Header, '/loop', raw.append, VOLATILE, raw=True)
    pub.publish(header(0))
    BUS.drain(budget_s=0.002)
    assert BUS.pending() >= 1                                 # the loop goes on in the next drain
    assert [deserialize_message(d, Header).stamp.sec for d in raw] == list(range(len(raw)))
    assert len(raw) >= 16                                      # every message of this drain
    BUS.clear()


def test_in_lockstep_a_frame_recorded_at_the_end_of_the_drain_keeps_each_messages_frame_time(ros, bus):
    """Lockstep: the drives publish /clock, then the frame's joint state; the chain runs on to
    the next frame within the same drain. The recorder gets the frame's messages at the drain's
    end, in publish order, each with the time of the /clock published before it, not the clock
    it reads then (a bag stamped that way once had 9197 of 12531 trajectories ending in the
    past by a JTC's rule)."""
    from builtin_interfaces.msg import Time
    from rosgraph_msgs.msg import Clock
    BUS.sim_clock = True
    p, s = bus(name='p'), bus(name='s')
    order, got = [], []
    clock = p.create_publisher(Clock, '/clock', VOLATILE)
    state = p.create_publisher(Header, '/state', VOLATILE)

    def next_frame(msg):
        order.append(f'graph {msg.stamp.sec}')
        if msg.stamp.sec < 2:                           # the chain closes the loop: the next frame
            clock.publish(Clock(clock=Time(sec=msg.stamp.sec + 1)))
            state.publish(header(msg.stamp.sec + 1))
    s.create_subscription(Clock, '/clock', lambda m: None, VOLATILE)
    s.create_subscription(Header, '/state', next_frame, VOLATILE)
    s.create_subscription(Header, '/state', lambda d: (order.append('raw'), got.append(
        (deserialize_message(d, Header).stamp.sec, BUS.published_ns))), VOLATILE, raw=True)
    clock.publish(Clock(clock=Time(sec=0)))           # the first frame, at sim time 0
    state.publish(header(0))
    BUS.drain()
    assert order == ['graph 0', 'graph 1', 'graph 2', 'raw', 'raw', 'raw']
    assert got == [(0, 0), (1, 1_000_000_000), (2, 2_000_000_000)]


def test_a_late_transient_local_subscription_gets_the_latched_message_a_volatile_one_does_not(ros, bus):
    p, s = bus(name='p'), bus(name='s')
    pub = p.create_publisher(String, '/latched', LATCHED)
    pub.publish(String(data='state'))
    BUS.drain()
    late, late_volatile = [], []
    s.create_subscription(String, '/latched', lambda m: late.append(m.data), LATCHED)
    s.create_subscription(String, '/latched', lambda m: late_volatile.append(m.data), VOLATILE)
    BUS.drain()
    assert late == ['state'] and late_volatile == []


def test_dds_carries_a_message_only_to_a_reader_that_matched_and_never_twice_in_process(ros, bus):
    p, s = bus(name='p'), bus(name='s')
    inside = []
    s.create_subscription(String, '/out', lambda m: inside.append(m.data), VOLATILE)
    pub = p.create_publisher(String, '/out', VOLATILE)
    assert pub.get_subscription_count() == 0             # the served subscription has no reader
    assert reader_count(pub) == 1                        # ... but it reads (a viewer's message is built)
    outside = ros.collect(String, '/out', VOLATILE)
    ros.spin_until(lambda: pub.get_subscription_count() >= 1, what='the outside reader')
    pub.publish(String(data='a'))
    BUS.drain()
    ros.spin_until(lambda: outside, what='the message over DDS')
    ros.spin_for(0.2)
    BUS.drain()
    assert [m.data for m in outside] == ['a'] and inside == ['a']


def test_an_inactive_lifecycle_publisher_delivers_nothing(ros, bus):
    p, s = bus(Managed, 'p'), bus(name='s')
    got = []
    s.create_subscription(String, '/managed', lambda m: got.append(m.data), VOLATILE)
    pub = p.create_lifecycle_publisher(String, '/managed', VOLATILE)
    pub.publish(String(data='inactive'))
    BUS.drain()
    assert got == []
    pub.on_activate(None)
    pub.publish(String(data='active'))
    BUS.drain()
    assert got == ['active']


def test_publishing_one_object_twice_in_a_row_is_refused(ros, bus):
    p, s = bus(name='p'), bus(name='s')
    s.create_subscription(String, '/twice', lambda m: None, VOLATILE)
    pub = p.create_publisher(String, '/twice', VOLATILE)
    msg = String(data='x')
    pub.publish(msg)
    with pytest.raises(ValueError, match='same message object'):
        pub.publish(msg)


def test_the_bus_is_off_for_a_node_alone_in_its_process(ros):
    IntraProcessBus.__init__(BUS)
    n = Plain('alone', context=ros.context)
    try:
        assert not isinstance(n.create_publisher(String, '/alone', VOLATILE), IntraPublisher)
        sub = n.create_subscription(String, '/alone', lambda m: None, VOLATILE)
        assert isinstance(sub, rclpy.subscription.Subscription)
    finally:
        n.destroy_node()


def test_topics_many_nodes_publish_stay_on_dds(ros, bus):
    """A heartbeat or status from a node in another process must reach the supervisor in the
    container: those topics are never served by the bus."""
    from hil_nodes import topics
    p, s = bus(name='p'), bus(name='s')
    for topic in (topics.HIL_HEARTBEAT, topics.DIAGNOSTICS, topics.HIL_EVENTS):
        assert not isinstance(p.create_publisher(Header, topic, VOLATILE), IntraPublisher)
        assert isinstance(s.create_subscription(Header, topic, lambda m: None, VOLATILE),
                          rclpy.subscription.Subscription)


@pytest.fixture
def dds_writes(monkeypatch):
    """The data of every message the process's bus publishers write into DDS, in order."""
    written, real = [], intra_publisher._dds_publish
    monkeypatch.setattr(intra_publisher, '_dds_publish', lambda pub, msg: (written.append(msg.data), real(pub, msg)))
    return written


@pytest.mark.parametrize('durability', [DurabilityPolicy.TRANSIENT_LOCAL, DurabilityPolicy.VOLATILE])
def test_a_transient_local_stream_writes_into_dds_only_for_a_reader_outside(ros, bus, dds_writes, durability):
    p, s = bus(name='p'), bus(name='s')
    inside = []
    s.create_subscription(String, '/stream', lambda m: inside.append(m.data), STREAM)
    pub = p.create_publisher(String, '/stream', STREAM)
    state = p.create_publisher(String, '/state', LATCHED)
    history = QoSProfile(depth=intra_publisher.STATE_DEPTH, reliability=ReliabilityPolicy.RELIABLE,
                         durability=DurabilityPolicy.TRANSIENT_LOCAL)
    modes = p.create_publisher(String, '/modes', history)
    for i in range(20):
        pub.publish(String(data=str(i)))
    state.publish(String(data='state'))
    modes.publish(String(data='IDLE'))
    BUS.drain()
    assert inside == [str(i) for i in range(20)]
    # latched states (depth 1, a mode history of STATE_DEPTH) are always written, the stream not at all
    assert dds_writes == ['state', 'IDLE']
    reader = QoSProfile(depth=50, reliability=ReliabilityPolicy.RELIABLE, durability=durability)
    outside = ros.collect(String, '/stream', reader)          # a plain rclpy node: outside the bus
    ros.spin_until(lambda: pub.get_subscription_count() >= 1, what='the outside reader')
    pub.publish(String(data='20'))
    pub.publish(String(data='21'))
    BUS.drain()
    history = [str(i) for i in range(20 - REPLAY, 20)] if durability == DurabilityPolicy.TRANSIENT_LOCAL else []
    ros.spin_until(lambda: len(outside) >= len(history) + 2, what='the stream outside')
    ros.spin_for(0.2)
    # a transient-local reader gets the last REPLAY messages first, in order; a volatile one the live ones
    assert [m.data for m in outside] == history + ['20', '21']
    assert dds_writes == ['state', 'IDLE', *history, '20', '21'] and inside == [str(i) for i in range(22)]


def test_a_late_reader_of_a_stream_that_publishes_nothing_more_still_gets_its_last_messages(ros, bus, dds_writes):
    """A lockstep chain through a reader in another process waits for the frame that reader
    missed: the stream publishes nothing until it has it. The spin loop's graph check sends the
    kept messages (replay_to_outside_readers)."""
    p = bus(name='p')
    pub = p.create_publisher(String, '/waiting', STREAM)
    for i in range(3):
        pub.publish(String(data=str(i)))
    BUS.drain()
    outside = ros.collect(String, '/waiting', STREAM)
    ros.spin_until(lambda: pub.get_subscription_count() >= 1, what='the outside reader')
    assert dds_writes == []
    BUS.replay_to_outside_readers()
    ros.spin_until(lambda: len(outside) >= 3, what='the kept messages')
    BUS.replay_to_outside_readers()                          # once
    ros.spin_for(0.2)
    assert [m.data for m in outside] == ['0', '1', '2'] and dds_writes == ['0', '1', '2']


def test_nothing_of_a_stream_is_lost_when_its_topic_goes_back_to_dds(ros, bus, dds_writes):
    """After the switch to DDS readers the process's own messages go into the DDS history
    (transient local) whether or not the new reader has matched yet (in one participant it
    usually has at once): the reader gets each once, none lost, none replayed twice."""
    p, s = bus(name='p'), bus(name='s')
    got = []
    sub = s.create_subscription(String, '/lockstep', lambda m: got.append(m.data), STREAM)
    pub = p.create_publisher(String, '/lockstep', STREAM)
    pub.publish(String(data='by bus'))
    BUS.drain()
    outside = ros.node.create_publisher(String, '/lockstep', STREAM)
    ros.spin_until(lambda: p.count_publishers('/lockstep') >= 2, what='both publishers in the graph')
    assert BUS.fall_back_to_dds(p) == [('/lockstep', 1)] and not sub.served
    pub.publish(String(data='before the match'))
    BUS.drain()
    ros.spin_until(lambda: 'before the match' in got, what='the message written before the match')
    pub.publish(String(data='after'))
    ros.spin_until(lambda: 'after' in got, what='the next one')
    ros.spin_for(0.3)
    assert got == ['by bus', 'before the match', 'after']
    assert dds_writes == ['before the match', 'after']
    p.destroy_publisher(pub)
    ros.node.destroy_publisher(outside)
