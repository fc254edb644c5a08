"""The light periodic checks of the nodes of one process that share a period and a clock, run by
one rclpy timer (as ``grid_timer.SharedGrid`` runs the frame callbacks): heartbeats, the watches
for missing input, the supervisor's liveness check.

Why: every timer event of rclpy's EventsExecutor wakes the process (its clock manager's thread,
then the executor) and costs 45-63 us of CPU before the callback does anything here. In the
one-process Hexafloat graph nine nodes each beat on two clocks and published a cycle status, and
the planner and the time base each watched for references at 100 Hz: about 560 events per
simulated second besides the frames, a tenth of the container's CPU. Grouped, one event a period
and clock runs all of them, in the order they joined. Only light checks: nine cycle statuses
built and published in one go (0.1-0.2 ms each) outlasted a frame at twice the pace and made
frames late; statuses keep timers of their own.

A group is made per (clock, period) in a process whose intra-process bus is on (several nodes);
a node alone in its process makes a plain timer. Clocks: every steady clock reads the same time,
and so does every ROS clock without simulated time (the system time); a ROS clock on simulated
time is the process's shared one (``process_clock``). A callback that raises stops its own node in
place (``liveness.fail_in_place``), not the group; a stopped node's callbacks are skipped. The
handle is a ``GroupEntry``, which ``node.destroy_timer`` takes (``IntraProcessNode``) or
``leave_grid()`` ends; it cannot be cancelled or reset (use a plain timer for that).

A group on the process's simulated clock has no rcl timer: the ``/clock`` subscription that sets
the clock (``process_clock``) runs it when a period has passed. An rcl timer on a simulated clock
makes the EventsExecutor register a jump callback on it, so every ``/clock`` tick queued a jump
event for the executor and woke its clock manager's thread (800 times a second at twice the
pace); with no timer left on that clock neither happens. A group on a steady or system clock is a
lazy deadline of the process's spin loop when it runs them (``frame_loop``: it runs in a frame's
wake-up, after the frame), no rcl timer either. A node whose simulated time stops still
stops beating on it, which is what its simulated-time heartbeat is for.

**Members run one a turn.** On the loop a group's first member runs in its deadline's turn and
each of the others in a coming turn (``LOOP.later``: one lazy call a turn, after that turn's
frame); on simulated time one a ``/clock`` tick, after the tick's delivery (deterministic in
lockstep: the n-th member runs n - 1 ticks after the deadline). Run back to back, the
simulated-time groups of the Hexafloat graph at twice the pace took 1.0-1.9 ms in one go, longer
than a frame of 1.25 ms (each callback timed in the running graph, calibration 0.68-0.89 s,
2026-11-29); one member takes 0.1-0.2 ms. A member still waiting when its next period comes runs
once. A group on an rcl timer (the loop not running: a node spun by a test's executor) runs
them all at once.
"""
from __future__ import annotations

from collections import deque

from rclpy.clock import ClockType

from hil_nodes.runtime.frame_loop import LOOP, run_in_place, runs_on_loop, slack_for
from hil_nodes.runtime.intra_process import BUS, NODE_DESTROYED
from hil_nodes.runtime.process_clock import PROCESS_CLOCKS


class GroupEntry:
    """One node's callback in a group (the handle ``group_timer`` returns)."""

    def __init__(self, group: 'TimerGroup', node, callback):
        self.group, self.node, self.callback = group, node, callback

    def leave_grid(self) -> None:
        self.group.remove(self)


class TimerGroup:
    def __init__(self, key, period_ns: int, clock):
        self.key = key
        self.period_ns = period_ns
        self.clock = clock
        self.entries: list[GroupEntry] = []
        self.timer = None
        self.host = None
        # on the process's simulated clock: run from its /clock ticks, no rcl timer (module doc)
        self.on_ticks = clock is PROCESS_CLOCKS.sim and clock is not None
        self.next_ns = None
        self._pending: deque[GroupEntry] = deque()   # members still to run this period, one a turn

    def add(self, node, callback) -> GroupEntry:
        entry = GroupEntry(self, node, callback)
        self.entries.append(entry)
        if self.host is None:            # (a group on ticks has no timer: its host says it runs)
            self._start(node)
        return entry

    def remove(self, entry: GroupEntry) -> None:
        if entry not in self.entries:
            return
        self.entries.remove(entry)
        if not self.entries:                 # gone: a later member makes a new one, with its clock
            self._stop()
            if GROUPS.get(self.key) is self:
                del GROUPS[self.key]
        elif entry.node is self.host and not any(e.node is self.host for e in self.entries):
            self._stop()
            # a process shutting down destroys its nodes after rclpy's context is gone: nothing is
            # hosted again (an rcl timer cannot be made then; it printed a traceback at every exit)
            if self.entries[0].node.context.ok():
                self._start(self.entries[0].node)

    def drop_node(self, node) -> None:
        for entry in [e for e in self.entries if e.node is node]:
            self.remove(entry)

    def _start(self, node) -> None:
        self.host = node
        if self.on_ticks:
            # one period from now, as an rcl timer made now (from the first tick, before any)
            self.next_ns = PROCESS_CLOCKS.sim_ns + self.period_ns if PROCESS_CLOCKS.sim_ns else None
            PROCESS_CLOCKS.tickers.append(self._on_tick)
            return
        if runs_on_loop(node, self.clock):            # a lazy deadline of the process's spin loop
            self.timer = LOOP.add(self.period_ns * 1e-9, self._fire_spread, slack_s=slack_for(self.period_ns * 1e-9))
            return
        # hosted by a member, not stopped with it when it stops in place (each entry is, in _fire)
        self.timer = node.create_shared_timer(self.period_ns * 1e-9, self._fire, clock=self.clock)

    def _stop(self) -> None:
        self._pending.clear()
        if self.on_ticks:
            if self._on_tick in PROCESS_CLOCKS.tickers:
                PROCESS_CLOCKS.tickers.remove(self._on_tick)
        elif self.timer is not None:
            self.host.destroy_timer(self.timer)
        self.timer = self.host = None

    def _on_tick(self, now_ns: int) -> None:
        """A /clock tick: due when a period has passed since the last call (the first one period
        after the group was made); missed periods are skipped, as rcl's timers skip them."""
        if self.next_ns is None:
            self.next_ns = now_ns + self.period_ns
        elif now_ns >= self.next_ns:
            self.next_ns += self.period_ns * ((now_ns - self.next_ns) // self.period_ns + 1)
            self._due()
        if self._pending:                              # one member a tick, after the tick's delivery
            BUS.defer(self._next_deferred, None)

    def _due(self) -> None:
        """Every member runs once this period (a member still waiting from the last one: once)."""
        self._pending.extend(e for e in self.entries if e not in self._pending)

    def _next_deferred(self, _) -> None:
        self._run_next()

    def _fire_spread(self) -> None:
        """The loop's deadline came: the members run one a turn of the loop (module docstring)."""
        self._due()
        self._run_next()

    def _run_next(self) -> None:
        if self._pending:
            self._run(self._pending.popleft())
        if self._pending and not self.on_ticks:
            LOOP.later(self._run_next)

    def _fire(self) -> None:
        """An rcl timer's tick: every member at once."""
        for entry in tuple(self.entries):
            self._run(entry)

    def _run(self, entry: GroupEntry) -> None:
        if entry.group is not self or entry not in self.entries:      # left since it was queued
            return
        run_in_place(entry.node, entry.callback, 'its timer callback')     # not the group's other members


GROUPS: dict[tuple, TimerGroup] = {}
NODE_DESTROYED.append(lambda node: [group.drop_node(node) for group in list(GROUPS.values())])


def _clock_key(clock):
    if clock.clock_type == ClockType.ROS_TIME and clock.ros_time_is_active:
        return ('sim', id(clock))                   # simulated time: that clock (the process's)
    return (int(clock.clock_type),)                 # steady, system, ROS on the system time


def group_timer(node, period_s: float, callback, clock=None):
    """``node.create_timer(period_s, callback, clock=clock)``, in the process's group for that
    period and clock when several nodes share the process (module docstring)."""
    if not BUS.enabled or not hasattr(node, 'create_shared_timer'):
        return node.create_timer(period_s, callback, clock=clock)
    clock = clock or node.get_clock()
    period_ns = int(round(period_s * 1e9))
    key = (_clock_key(clock), period_ns)
    group = GROUPS.get(key)
    if group is None:
        group = GROUPS[key] = TimerGroup(key, period_ns, clock)
    return group.add(node, callback)
