"""hil_nodes.runtime.frame_loop: the process's frame and steady-clock deadlines run by its spin
loop, not by rclpy timers (no timer thread, one wake-up a frame).

What is asserted: a deadline fires once its time has come and not before, skips the periods it
missed (as rcl's timers do) and stops when cancelled; the loop's wait never passes the next
deadline; a grid deadline lands on k * period + offset of the system clock; under the loop the
shared frame grid and the steady-clock check groups of real nodes make no rclpy timer and run
their callbacks in the grid's order, a raising callback stopping its own node only; without the
loop (a node spun by another executor) they are rclpy timers as before.

Lazy deadlines (periodic checks with a slack): the loop's wait reaches the end of their slack,
not their deadline, so a frame's wake-up that comes first runs them; they run after the frame
callbacks, one a turn, the most overdue first; a node's plain ``create_timer`` on a clock that
is not simulated time is one, with the slack its period allows, and ends with its node. A
check group on the loop runs its members one a turn (``later``), in join order, each once a
period. ``after_frame`` work runs when the turn's deliveries are done, all of it, a raising one
stopping its own node; without the loop it runs at once.
"""
from __future__ import annotations

import pytest
from rclpy.clock import Clock, ClockType
from rclpy.timer import Timer

from hil_nodes.runtime import frame_loop, grid_timer, timer_group
from hil_nodes.runtime.frame_loop import LOOP, FrameLoop

from bus_nodes import Managed, bus  # noqa: F401 (the fixture)
from dummy_managed import DummyManaged

MS = 1_000_000


@pytest.fixture
def clock(monkeypatch):
    """The loop's monotonic clock, set by the test (ns)."""
    now = [10_000 * MS]
    monkeypatch.setattr(frame_loop, '_monotonic_ns', lambda: now[0])
    return now


def test_a_deadline_fires_when_due_skips_missed_periods_and_stops_when_cancelled(clock):
    loop, calls = FrameLoop(), []
    timer = loop.add(0.0025, lambda: calls.append(clock[0]))
    assert loop.wait_s(0.1) == pytest.approx(0.0025)           # one period from now, as an rcl timer
    clock[0] += 2 * MS
    assert loop.run_due() == 0 and calls == []
    assert loop.wait_s(0.1) == pytest.approx(0.0005)
    assert loop.wait_s(0.0001) == pytest.approx(0.0001)         # never longer than asked
    clock[0] += MS // 2
    assert loop.run_due() == 1 and len(calls) == 1
    clock[0] += 7 * MS + MS // 2                                 # three periods later: once, not three times
    assert loop.run_due() == 1 and len(calls) == 2
    assert timer.next_ns == 10_000 * MS + 12_500_000             # the next instant of its grid
    assert loop.wait_s(0.1) == pytest.approx(0.0025)
    timer.cancel()
    timer.cancel()                                               # harmless twice
    clock[0] += 10 * MS
    assert loop.run_due() == 0 and loop.wait_s(0.1) == 0.1 and timer.is_canceled()


def test_a_grid_deadline_lands_on_the_system_clock_grid_plus_its_offset(clock, monkeypatch):
    monkeypatch.setattr(LOOP, 'timers', [])
    system_now = 1_700_000_000_001_300_000
    timer = grid_timer.loop_grid_timer(2_500_000, lambda: None, grid_timer.DRIVES_OFFSET_NS, system_now_ns=system_now)
    first_system = system_now + (timer.next_ns - clock[0])
    assert (first_system - grid_timer.DRIVES_OFFSET_NS) % 2_500_000 == 0
    assert 0 <= timer.next_ns - clock[0] < 2_500_000
    timer.cancel()


def test_a_period_must_be_positive():
    with pytest.raises(ValueError, match='positive period'):
        FrameLoop().add(0.0, lambda: None)


def _rcl_timers(node) -> list:
    return [t for t in node.timers if isinstance(t, Timer)]


@pytest.fixture
def driven(monkeypatch, bus, clock):
    """The process's loop on, with clean grids and groups."""
    monkeypatch.setattr(LOOP, 'driven', True)
    monkeypatch.setattr(LOOP, 'timers', [])
    monkeypatch.setattr(grid_timer, 'GRIDS', {})
    monkeypatch.setattr(timer_group, 'GROUPS', {})
    yield clock
    LOOP.timers.clear()
    LOOP._rearm()


def test_under_the_loop_the_frame_grid_and_check_groups_make_no_rclpy_timer(ros, driven):
    nodes = [DummyManaged(n, context=ros.context) for n in ('drives', 'ft', 'planner')]
    drives, ft, planner = nodes
    before = {n: len(_rcl_timers(n)) for n in nodes}
    deadlines = len(LOOP.timers)                 # (the nodes' own heartbeat groups are deadlines too)
    calls = []
    steady = Clock(clock_type=ClockType.STEADY_TIME)
    grid_timer.create_grid_timer(ft, 0.0025, lambda: calls.append('ft'))
    grid_timer.create_grid_timer(drives, 0.0025, lambda: calls.append('drives'), clock=steady,
                                 offset_ns=grid_timer.DRIVES_OFFSET_NS)
    planner.create_group_timer(0.0137, lambda: calls.append('watch'), clock=steady)
    paced = drives.create_loop_timer(0.00125, lambda: calls.append('paced'))
    assert {n: len(_rcl_timers(n)) for n in nodes} == before                 # no rclpy timer at all
    assert len(LOOP.timers) == deadlines + 3
    driven[0] += 20 * MS                                                     # every deadline due
    LOOP.run_due()
    assert calls.count('drives') == 1 and calls.index('drives') + 1 == calls.index('ft')   # grid order
    assert calls.count('paced') == 1 and calls.count('watch') == 0          # the check: after the frame
    while LOOP.run_lazy():
        pass
    assert calls.count('watch') == 1
    drives.destroy_timer(paced)                                              # a node's release
    assert len(LOOP.timers) == deadlines + 2
    for n in nodes:
        n.destroy_node()


def test_a_raising_loop_callback_stops_its_own_node_only(ros, driven):
    a, b = DummyManaged('a', context=ros.context), DummyManaged('b', context=ros.context)
    calls = []

    def bad():
        calls.append('a')
        raise RuntimeError('broken tick')
    a.create_loop_timer(0.002, bad)
    b.create_loop_timer(0.002, lambda: calls.append('b'))
    for _ in range(3):
        driven[0] += 2 * MS
        LOOP.run_due()
    assert calls == ['a', 'b', 'b', 'b']                                     # a stopped in place, b goes on
    assert 'broken tick' in a.failure and not b.failure
    for n in (a, b):
        n.destroy_node()


def test_without_the_loop_they_stay_rclpy_timers(ros, bus, monkeypatch):
    monkeypatch.setattr(LOOP, 'driven', False)
    node = DummyManaged('alone', context=ros.context)
    before = len(_rcl_timers(node))
    node.create_loop_timer(0.002, lambda: None)
    assert len(_rcl_timers(node)) == before + 1
    node.destroy_node()


def test_slack_for_a_period():
    assert frame_loop.slack_for(0.0025) == 0.0 and frame_loop.slack_for(0.0099) == 0.0   # frames
    assert frame_loop.slack_for(0.02) == pytest.approx(0.0025)                            # an eighth
    assert frame_loop.slack_for(0.5) == pytest.approx(0.005)                              # at most 5 ms


def test_a_lazy_check_waits_for_a_frame_wake_up_and_runs_after_the_frame(clock):
    loop, calls = FrameLoop(), []
    loop.add(0.0025, lambda: calls.append('frame'), first_ns=clock[0] + 2 * MS)
    loop.add(0.1, lambda: calls.append('check'), first_ns=clock[0] + MS, slack_s=0.005)
    assert loop.wait_s(0.1) == pytest.approx(0.002)        # the frame's deadline, not the check's
    clock[0] += MS                                         # the check's deadline: no wake-up for it
    assert loop.run_due() == 0 and loop.run_lazy() == 1 and calls == ['check']   # (awake anyway: runs)
    clock[0] += MS                                         # the frame
    assert loop.run_due() == 1 and loop.run_lazy() == 0 and calls == ['check', 'frame']
    clock[0] += 100 * MS                                   # the check due again (at +101 ms), a frame too
    assert loop.run_due() == 1 and calls[-1] == 'frame'    # the frame first,
    assert loop.run_lazy() == 1 and calls[-1] == 'check'   # then the check, in the same wake-up


def test_lazy_checks_run_one_a_turn_the_first_due_first_and_wake_the_loop_at_the_end_of_their_slack(clock):
    loop, calls = FrameLoop(), []
    loop.add(0.5, lambda: calls.append('b'), first_ns=clock[0] + 3 * MS, slack_s=0.005)
    loop.add(0.5, lambda: calls.append('a'), first_ns=clock[0] + 2 * MS, slack_s=0.005)
    assert loop.wait_s(1.0) == pytest.approx(0.007)        # no frame: the first one's slack ends
    clock[0] += 4 * MS                                     # both due, within their slack: one a turn
    assert loop.run_due() == 0
    assert loop.run_lazy() == 1 and calls == ['a']
    assert loop.wait_s(1.0) == pytest.approx(0.004)        # b waits for a frame or its slack's end
    clock[0] += 4 * MS
    assert loop.run_lazy() == 1 and calls == ['a', 'b']
    assert loop.run_lazy() == 0 and loop.wait_s(1.0) == pytest.approx(0.499)   # a's next one, plus its slack


def test_a_slack_must_be_shorter_than_the_period():
    with pytest.raises(ValueError, match='slack'):
        FrameLoop().add(0.01, lambda: None, slack_s=0.01)


def test_reset_starts_a_cancelled_loop_timer_again_one_period_from_now(clock):
    loop, calls = FrameLoop(), []
    timer = loop.add(0.05, lambda: calls.append(1), slack_s=0.005)
    timer.cancel()
    clock[0] += 60 * MS
    assert loop.run_lazy() == 0 and not loop.timers
    timer.reset()
    assert not timer.is_canceled() and timer.next_ns == clock[0] + 50 * MS
    clock[0] += 50 * MS
    assert loop.run_lazy() == 1 and calls == [1]


def test_a_nodes_plain_timer_under_the_loop_is_a_lazy_deadline_that_ends_with_the_node(ros, driven):
    from rclpy.callback_groups import ReentrantCallbackGroup
    node = DummyManaged('checks', context=ros.context)
    before, deadlines = len(_rcl_timers(node)), len(LOOP.timers)
    steady = Clock(clock_type=ClockType.STEADY_TIME)
    status = node.create_timer(0.5, lambda: None, clock=steady)
    tick = node.create_timer(0.0025, lambda: None)                  # a fallback frame tick: no slack
    assert len(_rcl_timers(node)) == before and len(LOOP.timers) == deadlines + 2
    assert status.slack_ns == 5 * MS and tick.slack_ns == 0
    node.create_timer(0.5, lambda info: None)                       # wants rclpy's TimerInfo
    node.create_timer(0.5, lambda: None, callback_group=ReentrantCallbackGroup())
    assert len(_rcl_timers(node)) == before + 2
    node.destroy_timer(tick)
    assert tick.is_canceled() and len(LOOP.timers) == deadlines + 1
    paused = node.create_timer(0.05, lambda: None)                 # cancelled, then reset (the
    paused.cancel()                                                # lifecycle driver's way)
    node.create_timer(0.05, lambda: None).cancel()
    paused.reset()
    assert not paused.is_canceled() and len(LOOP.timers) == deadlines + 2
    node.destroy_node()
    assert paused.is_canceled()                                    # ended with the node all the same
    assert status.is_canceled() and LOOP.timers == []              # its own status and heartbeats too


def test_later_calls_run_one_a_turn_after_any_due_check_and_bound_the_wait(clock):
    loop, calls = FrameLoop(), []
    loop.later(lambda: calls.append('x'))
    loop.later(lambda: calls.append('y'))
    assert loop.wait_s(1.0) == pytest.approx(frame_loop.MAX_SLACK_NS * 1e-9)   # at the latest then
    assert loop.run_due() == 0 and loop.run_lazy() == 1 and calls == ['x']
    assert loop.run_lazy() == 1 and calls == ['x', 'y'] and loop.run_lazy() == 0
    assert loop.wait_s(1.0) == 1.0


def test_a_check_group_on_the_loop_runs_its_members_one_a_turn_in_join_order(ros, driven):
    nodes = [DummyManaged(n, context=ros.context) for n in ('a', 'b', 'c')]
    calls = []
    steady = Clock(clock_type=ClockType.STEADY_TIME)
    for n in nodes:
        n.create_group_timer(0.05, lambda n=n: calls.append(n.get_name()), clock=steady)
    driven[0] += 60 * MS                                    # due (their own heartbeats are not)
    turns = []
    while LOOP.run_lazy():
        turns.append(list(calls))
    assert turns == [['a'], ['a', 'b'], ['a', 'b', 'c']]     # one member a turn
    driven[0] += 50 * MS
    while LOOP.run_lazy():
        pass
    assert calls == ['a', 'b', 'c'] * 2                     # each once a period
    nodes[1].destroy_node()                                 # a member that leaves while queued
    driven[0] += 50 * MS
    assert LOOP.run_lazy() == 1 and calls[-1] == 'a'
    while LOOP.run_lazy():
        pass
    assert calls[-2:] == ['a', 'c']
    for n in (nodes[0], nodes[2]):
        n.destroy_node()


def test_after_frame_work_runs_after_the_turns_deliveries_all_of_it(ros, driven):
    a, b = DummyManaged('a', context=ros.context), DummyManaged('b', context=ros.context)
    calls = []

    def bad():
        calls.append('bad')
        raise RuntimeError('broken tf')
    LOOP.after_frame(a, lambda: calls.append('a1') or LOOP.after_frame(a, lambda: calls.append('a2')))
    LOOP.after_frame(b, bad)
    LOOP.after_frame(b, lambda: calls.append('b after its failure'))
    assert calls == []                                        # queued, not run
    assert LOOP.run_after() == 4 and calls == ['a1', 'bad', 'a2']   # in order; what they queue too
    assert 'broken tf' in b.failure and not a.failure          # b stopped in place, its next skipped
    assert LOOP.run_after() == 0
    for n in (a, b):
        n.destroy_node()


def test_without_the_loop_after_frame_work_runs_at_once(monkeypatch):
    monkeypatch.setattr(LOOP, 'driven', False)
    calls = []
    LOOP.after_frame(None, lambda: calls.append(1))
    assert calls == [1] and LOOP.run_after() == 0


def test_lazy_calls_past_their_slack_all_run_so_none_starves(clock):
    """Turns far apart (lockstep's drains, a busy machine): a check due at every turn does not
    keep a group's ``later`` members from running (one a turn did: the mock's heartbeat, the
    group's last member, never ran and the supervisor stopped a lockstep run)."""
    loop, calls = FrameLoop(), []
    loop.add(0.01, lambda: calls.append('watch'), slack_s=frame_loop.slack_for(0.01))

    def member(k):
        calls.append(k)
        if k < 3:
            loop.later(lambda: member(k + 1))
    loop.later(lambda: member(1))
    for _ in range(4):
        clock[0] += 10 * MS                            # a turn every 10 ms: everything past its slack
        loop.run_lazy()
    assert calls.count('watch') == 4 and [c for c in calls if c != 'watch'] == [1, 2, 3]
