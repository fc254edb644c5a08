"""hil_nodes.runtime.process_clock: the nodes of one process on simulated time share one clock.

What is asserted, with real HilLifecycleNodes on the intra-process bus: the nodes with
``use_sim_time`` share one clock object and the process has one ``/clock`` subscription (the
lender's); the clock owner (wall clock) keeps its own; every node reads the time of the last
``/clock`` delivered, through ``now_ns`` (the integer kept by the lender's subscription) and
through rcl (``get_clock().now()``) alike; a timer a borrower makes runs on simulated time;
``HIL_SHARED_CLOCK=0`` gives every node its own clock and ``/clock`` subscription, with the same
readings.
"""
from __future__ import annotations

import pytest
from rclpy.parameter import Parameter
from rclpy.qos import QoSProfile, ReliabilityPolicy
from rosgraph_msgs.msg import Clock as ClockMsg

from hil_nodes.runtime.intra_process import BUS
from hil_nodes.runtime.process_clock import PROCESS_CLOCKS
from hil_nodes.topics import CLOCK

from bus_nodes import bus  # noqa: F401 (the fixture)
from dummy_managed import DummyManaged


@pytest.fixture
def clocks():
    PROCESS_CLOCKS.enable(True)
    yield PROCESS_CLOCKS
    PROCESS_CLOCKS.enable(False)


def _node(ros, name, sim: bool):
    node = DummyManaged(name, context=ros.context,
                        parameter_overrides=[Parameter('use_sim_time', Parameter.Type.BOOL, sim)])
    ros.add_node(node)
    return node


def _tick(owner_pub, ns: int) -> None:
    msg = ClockMsg()
    msg.clock.sec, msg.clock.nanosec = divmod(ns, 1_000_000_000)
    owner_pub.publish(msg)
    BUS.drain()


def _graph(ros):
    owner = _node(ros, 'owner', sim=False)
    sims = [_node(ros, f'sim{k}', sim=True) for k in range(3)]
    pub = owner.create_publisher(ClockMsg, CLOCK, QoSProfile(depth=1, reliability=ReliabilityPolicy.BEST_EFFORT))
    return owner, sims, pub


def _clock_subscriptions() -> int:
    topic = BUS._topics.get(CLOCK)
    return 0 if topic is None else len(topic.subscriptions)


def test_the_nodes_on_sim_time_share_one_clock_and_one_clock_subscription(ros, bus, clocks):
    owner, sims, pub = _graph(ros)
    assert all(n.get_clock() is sims[0].get_clock() for n in sims)
    assert owner.get_clock() is not sims[0].get_clock()
    assert _clock_subscriptions() == 1
    for ns in (1_000_000_000, 1_002_500_000, 7_123_456_789):
        _tick(pub, ns)
        for n in sims:
            assert n.now_ns() == ns
            assert n.get_clock().now().nanoseconds == ns      # rcl reads the same time
    assert abs(owner.now_ns() - ns) > 10**12                  # the owner is on the wall clock


def test_a_borrowers_timer_runs_on_simulated_time(ros, bus, clocks):
    owner, sims, pub = _graph(ros)
    calls = []
    _tick(pub, 1_000_000_000)
    sims[2].create_timer(0.010, lambda: calls.append(sims[2].now_ns()))
    ros.spin_for(0.2)
    assert calls == []                                        # simulated time stands still
    for k in range(1, 6):
        _tick(pub, 1_000_000_000 + k * 10_000_000)
        ros.spin_until(lambda: len(calls) >= k, timeout=5.0, what=f'timer call {k}')
    assert calls == [1_000_000_000 + k * 10_000_000 for k in range(1, 6)]


def test_with_sharing_off_every_node_keeps_its_own_clock(ros, bus, clocks, monkeypatch):
    monkeypatch.setenv('HIL_SHARED_CLOCK', '0')
    PROCESS_CLOCKS.enable(True)
    owner, sims, pub = _graph(ros)
    assert len({id(n.get_clock()) for n in sims}) == 3
    assert _clock_subscriptions() == 3
    _tick(pub, 2_500_000_000)
    assert [n.now_ns() for n in sims] == [2_500_000_000] * 3


def test_a_group_on_the_process_clock_runs_from_its_ticks_without_an_rcl_timer(ros, bus, clocks):
    from rclpy.timer import Timer
    owner, sims, pub = _graph(ros)
    timers_before = sum(len([t for t in n.timers if isinstance(t, Timer)]) for n in sims)
    calls = []
    _tick(pub, 1_000_000_000)
    entries = [n.create_group_timer(0.010, lambda n=n: calls.append((n.get_name(), n.now_ns())))
               for n in sims[:2]]
    # the group listens to the ticks once, whatever its members (it once did per member)
    assert PROCESS_CLOCKS.tickers.count(entries[0].group._on_tick) == 1
    assert sum(len([t for t in n.timers if isinstance(t, Timer)]) for n in sims) == timers_before
    for k in range(1, 31):                                   # 2.5 ms ticks: due every fourth
        _tick(pub, 1_000_000_000 + k * 2_500_000)
    due = [1_000_000_000 + k * 10_000_000 for k in range(1, 8)]
    # one member a tick (timer_group, "Members run one a turn"): the second a tick after the first
    assert calls == [(name, t + lag) for t in due for name, lag in (('sim0', 0), ('sim1', 2_500_000))]
    _tick(pub, 1_000_000_000 + 200_000_000)                  # a jump: one call, missed periods skipped
    _tick(pub, 1_000_000_000 + 205_000_000)
    assert calls[-2:] == [('sim0', 1_200_000_000), ('sim1', 1_205_000_000)]
