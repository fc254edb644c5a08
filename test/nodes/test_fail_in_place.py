"""A callback that raises stops its node in place, not the process (hil_nodes.runtime.served,
intra_process, grid_timer; hil_nodes.framework.liveness.fail_in_place), with real rclpy nodes on the
intra-process bus: a bus delivery, an executor timer and a frame-grid callback each raise once;
the node that raised is told once with where, its later executor and grid callbacks are
skipped, and every other node goes on. A node that cannot fail in place (plain rclpy) still ends
the loop with its exception, as on an executor. The full node (its FAULT event, the supervisor's
FAULT and the controlled stop) is test/system/test_stage_exception_fault.py."""
from __future__ import annotations

import pytest
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from std_msgs.msg import Header

from hil_nodes.runtime.grid_timer import GRIDS, create_grid_timer
from hil_nodes.runtime.intra_process import BUS

from bus_nodes import Plain, bus  # noqa: F401 (bus: the fixture)

VOLATILE = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.VOLATILE)


class Failable(Plain):
    """The two members the catch points use (HilLifecycleNode has them), recording the calls."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.failure = ''
        self.told = []

    def fail_in_place(self, exc, where):
        self.told.append((type(exc).__name__, str(exc), where))
        self.failure = f'exception in {where}'


def _header(sec: int) -> Header:
    h = Header()
    h.stamp.sec = sec
    return h


def test_a_delivery_that_raises_stops_its_node_and_the_others_get_theirs(ros, bus):
    p, bad, good = bus(name='p'), bus(Failable, 'bad'), bus(name='good')
    got = []

    def on_bad(msg):
        if msg.stamp.sec == 2:
            raise ValueError('frame 2 cannot be computed')
    bad.create_subscription(Header, '/chain', on_bad, VOLATILE)
    good.create_subscription(Header, '/chain', lambda m: got.append(m.stamp.sec), VOLATILE)
    pub = p.create_publisher(Header, '/chain', VOLATILE)
    for k in (1, 2, 3):
        pub.publish(_header(k))
    assert BUS.drain() == 6                              # no exception out of the drain
    assert got == [1, 2, 3]
    assert bad.told == [('ValueError', 'frame 2 cannot be computed', 'its delivery of /chain')]


def _bad_and_good(bus, exc):
    """A Failable node whose callback raises ``exc`` and a plain one whose callback counts."""
    bad, good = bus(Failable, 'bad'), bus(name='good')
    calls = {'bad': 0, 'good': 0}

    def on_bad():
        calls['bad'] += 1
        raise exc

    def on_good():
        calls['good'] += 1
    return bad, good, calls, on_bad, on_good


def test_a_timer_that_raises_stops_its_node_and_is_skipped_after(ros, bus):
    bad, good, calls, on_bad, on_good = _bad_and_good(bus, RuntimeError('broken'))
    bad.create_timer(0.01, on_bad)
    good.create_timer(0.01, on_good)
    ros.spin_until(lambda: calls['good'] >= 10, what='ten turns of the good timer')
    assert calls['bad'] == 1 and len(bad.told) == 1
    name, text, where = bad.told[0]
    assert (name, text) == ('RuntimeError', 'broken') and 'on_bad' in where


def test_a_grid_callback_that_raises_stops_only_its_node(ros, bus):
    bad, good, calls, on_bad, on_good = _bad_and_good(bus, ZeroDivisionError('division by zero'))
    GRIDS.clear()
    try:
        create_grid_timer(bad, 0.005, on_bad, offset_ns=50_000)       # first: it hosts the shared grid
        create_grid_timer(good, 0.005, on_good, offset_ns=200_000)
        ros.spin_until(lambda: calls['good'] >= 10, what='ten frames of the good node')
    finally:
        GRIDS.clear()
    assert calls['bad'] == 1
    assert bad.told == [('ZeroDivisionError', 'division by zero', 'its frame-grid callback')]


def test_a_node_that_cannot_fail_in_place_still_ends_the_loop(ros, bus):
    p, plain = bus(name='p'), bus(name='plain')

    def on_msg(msg):
        raise KeyError('no such joint')
    plain.create_subscription(Header, '/chain', on_msg, VOLATILE)
    p.create_publisher(Header, '/chain', VOLATILE).publish(_header(1))
    with pytest.raises(KeyError):
        BUS.drain()
    BUS.clear()
