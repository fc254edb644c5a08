"""hil_nodes.runtime.timer_group: the periodic checks of the nodes of one process that share a
period and a clock run from one rclpy timer.

What is asserted, with real HilLifecycleNodes on the intra-process bus: checks of several nodes
with one period on steady clocks (distinct clock objects) form one group, hosted by one rclpy
timer, and every callback runs once per tick in the order the nodes joined; another period is
another group; a callback that raises stops its own node in place (its later calls skipped), the
others go on; when the host leaves, another member hosts the group and its callbacks still run;
a node alone in its process gets a plain rclpy timer.
"""
from __future__ import annotations

from rclpy.clock import Clock, ClockType
from rclpy.timer import Timer

from hil_nodes.runtime.timer_group import GROUPS, GroupEntry

from bus_nodes import bus  # noqa: F401 (the fixture)
from dummy_managed import DummyManaged


def _node(ros, name):
    node = DummyManaged(name, context=ros.context)
    ros.add_node(node)
    return node


def _steady():
    return Clock(clock_type=ClockType.STEADY_TIME)


def _timers(node) -> list:
    return [t for t in node.timers if isinstance(t, Timer)]


def test_checks_of_one_period_run_from_one_timer_in_join_order(ros, bus):
    a, b, c = (_node(ros, n) for n in 'abc')
    before = {n: len(_timers(n)) for n in (a, b, c)}
    calls = []
    entries = [n.create_group_timer(0.02, lambda n=n: calls.append(n.get_name()), clock=_steady())
               for n in (a, b, c)]
    assert all(isinstance(e, GroupEntry) for e in entries)
    assert len({id(e.group) for e in entries}) == 1
    made = {n: len(_timers(n)) - before[n] for n in (a, b, c)}
    assert sum(made.values()) == 1                          # one rclpy timer for the three
    other = a.create_group_timer(0.05, lambda: None, clock=_steady())
    assert other.group is not entries[0].group
    ros.spin_until(lambda: len(calls) >= 9, timeout=5.0, what='three ticks')
    ticks = [calls[k:k + 3] for k in range(0, 9, 3)]
    assert ticks == [['a', 'b', 'c']] * 3                    # each tick: every member, join order


def test_a_raising_check_stops_its_own_node_only(ros, bus):
    a, b = _node(ros, 'a'), _node(ros, 'b')
    calls = []

    def bad():
        calls.append('a')
        raise RuntimeError('broken check')

    a.create_group_timer(0.02, bad, clock=_steady())
    b.create_group_timer(0.02, lambda: calls.append('b'), clock=_steady())
    ros.spin_until(lambda: calls.count('b') >= 4, timeout=5.0, what='four ticks of b')
    assert calls.count('a') == 1                           # stopped in place at its first call
    assert 'broken check' in a.failure and not b.failure


def test_when_the_host_leaves_another_member_hosts_the_group(ros, bus):
    a, b = _node(ros, 'a'), _node(ros, 'b')
    calls = []
    first = a.create_group_timer(0.02, lambda: calls.append('a'), clock=_steady())
    b.create_group_timer(0.02, lambda: calls.append('b'), clock=_steady())
    group = first.group
    assert group.host is a
    hosted = len(_timers(a)), len(_timers(b))
    a.destroy_timer(first)
    assert group.host is b
    assert (len(_timers(a)), len(_timers(b))) == (hosted[0] - 1, hosted[1] + 1)   # the timer moved
    n = len(calls)
    ros.spin_until(lambda: calls[n:].count('b') >= 3, timeout=5.0, what='b after the host left')
    assert 'a' not in calls[n:]
    b.destroy_node()
    assert not [g for g in GROUPS.values() if g is group]   # empty: gone


def test_a_node_alone_in_its_process_gets_a_plain_timer(ros):
    node = _node(ros, 'alone')
    timer = node.create_group_timer(0.02, lambda: None, clock=_steady())
    assert isinstance(timer, Timer)
