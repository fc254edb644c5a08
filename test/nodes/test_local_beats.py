"""hil_nodes.runtime.local_beats: heartbeats inside the one-process container reach the process's
own readers by call and go into DDS only for a reader outside the process.

What is asserted, with real rclpy publishers and subscriptions on /hil/heartbeat: with the bus on
and only the process's registered reader matched, a beat reaches that reader's callback once, at
the bus's next drain, and nothing is written to DDS (its DDS reader hears nothing); once another
reader has matched (here an unregistered one, as a node of another process would be) the beat
goes into DDS as well and that reader gets it; a destroyed reader stops being counted; without
the bus every beat is published.
"""
from __future__ import annotations

from std_msgs.msg import Header

from hil_nodes import topics
from hil_nodes.runtime.intra_process import BUS
from hil_nodes.runtime.local_beats import LOCAL_BEATS

from bus_nodes import bus  # noqa: F401 (the fixture)


def _beat(k: int) -> Header:
    msg = Header(frame_id=f'/node_{k}')
    msg.stamp.sec = k
    return msg


def _reader(ros, node, log, register: bool):
    sub = node.create_subscription(Header, topics.HIL_HEARTBEAT, lambda m: log.append(('dds', m.stamp.sec)), 100)
    if register:
        LOCAL_BEATS.listen(node, lambda m: log.append(('bus', m.stamp.sec)))
    return sub


def test_a_beat_reaches_the_processs_reader_by_call_and_dds_only_for_a_reader_outside(ros, bus):
    LOCAL_BEATS.listeners = []
    source, supervisor, outsider = bus(name='source'), bus(name='supervisor'), bus(name='outsider')
    pub = source.create_publisher(Header, topics.HIL_HEARTBEAT, 10)
    mine, theirs = [], []
    _reader(ros, supervisor, mine, register=True)
    ros.spin_until(lambda: pub.get_subscription_count() == 1, what='the registered reader matched')

    LOCAL_BEATS.publish(pub, _beat(1))
    assert mine == []                                  # deferred to the drain
    BUS.drain()
    ros.spin_for(0.3)
    assert mine == [('bus', 1)]                        # once, by call; nothing came over DDS

    outside = _reader(ros, outsider, theirs, register=False)
    ros.spin_until(lambda: pub.get_subscription_count() == 2, what='a reader outside matched')
    LOCAL_BEATS.publish(pub, _beat(2))
    BUS.drain()
    ros.spin_until(lambda: ('dds', 2) in theirs and ('dds', 2) in mine, what='the beat over DDS')
    assert mine.count(('bus', 2)) == 1                 # and the process's reader hears it twice: harmless

    outsider.destroy_subscription(outside)
    ros.spin_until(lambda: pub.get_subscription_count() == 1, what='the reader outside gone')
    LOCAL_BEATS.publish(pub, _beat(3))
    BUS.drain()
    ros.spin_for(0.3)
    assert [e for e in mine if e[1] == 3] == [('bus', 3)]
    supervisor.destroy_node()
    assert LOCAL_BEATS.listeners == []                 # forgotten with its node


def test_without_the_bus_every_beat_is_published(ros):
    LOCAL_BEATS.listeners = []
    node = ros.node
    got = []
    node.create_subscription(Header, topics.HIL_HEARTBEAT, lambda m: got.append(m.stamp.sec), 100)
    pub = node.create_publisher(Header, topics.HIL_HEARTBEAT, 10)
    ros.spin_until(lambda: pub.get_subscription_count() == 1, what='matched')
    LOCAL_BEATS.publish(pub, _beat(7))
    ros.spin_until(lambda: got == [7], what='the beat over DDS')
