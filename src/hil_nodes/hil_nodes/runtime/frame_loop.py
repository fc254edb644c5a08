"""The process's own periodic deadlines, run by its spin loop between two executor turns, as
ros2_control's controller manager runs its update loop: no rclpy timer, no timer thread.

ros2_control (controller_manager/src/ros2_control_node.cpp) runs read, update and write in a
thread of its own that sleeps until the next period (``sleep_until(next_iteration_time)``),
apart from the executor that serves topics, services and parameters. Here the frame callbacks
already run from one shared timer (``grid_timer.SharedGrid``), but an rclpy timer in the
EventsExecutor lives on the executor's timers thread: every expiry woke that thread, which
queued an event and woke the spinning thread, and after the callback the thread was woken again
to re-arm. In the one-process graph at pace 1 it woke about 1 270 times a second (three times a
frame) and preempted the spinning thread about 1 420 times a second, pinned to one core
(``/proc/<pid>/task/*/status``, 2026-11-27).

With the loop on (``runner.spin_nodes``: every node process, the container and a node alone in
its process alike), a wall-clock or steady-clock deadline registered here is the timeout of the
executor's own wait: ``spin_once`` returns when an event comes or when the next deadline is due,
and the loop runs what is due before it delivers what those callbacks published (``BUS.drain``,
with the intra-process bus on). One thread, one wake-up a frame. (A part's drives alone in their
process, on rclpy's timer, skipped 2-3 frames in 1 of 6 real-time runs over two emulated hosts;
on the loop, none in 3 of 3: docs/lab.md.)

Deadlines are kept on the monotonic clock; a grid (frames at k * period + offset of the system
clock) is aligned once from the system clock by ``grid_timer``, as an rcl steady timer started on
the grid was. Missed periods are skipped, as rcl's timers skip them (the callbacks read the time
and count what they missed). A deadline on a simulated clock is never one of these: simulated
time has its own ticks (``process_clock``, ``timer_group``).

**Lazy deadlines** (a slack, as the kernel's timer slack coalesces wake-ups): a periodic check
(a status, a heartbeat group, a watch, the frame gate's tick) may run up to its ``slack`` late,
so it runs in the wake-up of a frame instead of one of its own, and after the frame's
deliveries (``run_lazy``, one per turn while their slack lasts: nine statuses built back to
back would outlast a frame; those whose slack has run out all run).
A wake-up is what costs here: a thread that sleeps 2 ms and wakes costs 41-75 us of its CPU
(``time.sleep``; an EventsExecutor ``spin_once`` that waits 76-84 us), against the frame's own
work of about 1 ms (2026-11-29, calibration 0.66-0.95 s). In the one-process Hexafloat graph at
pace 1 the loop woke about 1.75 times a frame before: 400 frames, ~140 rcl timer events of
checks made before the loop existed (the nodes' constructors) and ~140 deadlines of the check
groups a second, each wake at its own phase. ``slack_for(period)`` gives the slack: none below
10 ms (frames, a fallback frame tick), else an eighth of the period, at most 5 ms.
"""
from __future__ import annotations

import time
from collections import deque

_monotonic_ns = time.monotonic_ns
LAZY_FROM_NS = 10_000_000          # periods below this are frames: no slack
MAX_SLACK_NS = 5_000_000


def slack_for(period_s: float) -> float:
    """The slack of a periodic check of ``period_s`` (module docstring): 0 for frames."""
    period_ns = int(round(period_s * 1e9))
    return 0.0 if period_ns < LAZY_FROM_NS else min(period_ns // 8, MAX_SLACK_NS) * 1e-9


def monotonic_ns() -> int:
    """The loop's clock (ns)."""
    return _monotonic_ns()


def run_in_place(node, callback, where: str, named: bool = True) -> None:
    """``callback()`` of ``node``, skipped once the node has stopped in place; one that raises
    stops that node in place (``liveness.fail_in_place``, told as ``where`` and, ``named``, the
    callback's name), not the process or the other nodes of the loop, grid or group that runs
    it. A node that cannot stop in place (a plain rclpy one): the exception goes on."""
    if getattr(node, 'failure', ''):
        return
    try:
        callback()
    except Exception as exc:
        fail = getattr(node, 'fail_in_place', None)
        if fail is None:
            raise
        fail(exc, f'{where} {getattr(callback, "__qualname__", callback)!r}' if named else where)


class LoopTimer:
    """One periodic callback of the loop; ``cancel()`` ends it (idempotent)."""

    __slots__ = ('loop', 'period_ns', 'next_ns', 'callback', 'cancelled', 'slack_ns')

    def __init__(self, loop: 'FrameLoop', period_ns: int, first_ns: int, callback, slack_ns: int = 0):
        self.loop, self.period_ns, self.next_ns, self.callback = loop, period_ns, first_ns, callback
        self.slack_ns = slack_ns       # 0: a frame (run_due); else a lazy check (run_lazy)
        self.cancelled = False

    def cancel(self) -> None:
        if not self.cancelled:
            self.cancelled = True
            self.loop.remove(self)

    def reset(self) -> None:
        """Start again one period from now (rclpy's ``Timer.reset``, a cancelled timer included)."""
        self.next_ns = _monotonic_ns() + self.period_ns
        if self.cancelled:
            self.cancelled = False
            self.loop.timers.append(self)
        self.loop._rearm()

    leave_grid = cancel          # what ``node.destroy_timer`` and ``release`` call on a grid entry

    def is_canceled(self) -> bool:
        return self.cancelled

    @property
    def timer_period_ns(self) -> int:
        return self.period_ns


class FrameLoop:
    """The deadlines of the process's spin loop (module docstring)."""

    def __init__(self):
        self.driven = False          # set by the process that runs them (runner.run, runner.spin_nodes)
        self.timers: list[LoopTimer] = []
        self._next = None            # the earliest frame deadline (ns, monotonic), None: none
        self._next_lazy = None       # the earliest lazy deadline, without its slack
        self._wake = None            # when the loop must be awake: the earliest deadline plus slack
        self._soon: deque = deque()  # (callback, run by ns): one-off lazy calls (``later``)
        self._after: deque = deque()  # (node, callback): after the frame's deliveries (``after_frame``)

    def add(self, period_s: float, callback, first_ns: int | None = None, slack_s: float = 0.0) -> LoopTimer:
        """``callback()`` every ``period_s`` from ``first_ns`` (monotonic ns; default one period
        from now, as an rclpy timer made now); ``slack_s`` > 0: a lazy check (module docstring)."""
        period_ns = int(round(period_s * 1e9))
        if period_ns <= 0:
            raise ValueError(f'a loop timer needs a positive period, got {period_s} s')
        slack_ns = int(round(slack_s * 1e9))
        if not 0 <= slack_ns < period_ns:
            raise ValueError(f'a loop timer\'s slack must be in [0, period), got {slack_s} s for {period_s} s')
        timer = LoopTimer(self, period_ns, _monotonic_ns() + period_ns if first_ns is None else int(first_ns), callback,
                          slack_ns)
        self.timers.append(timer)
        self._rearm()
        return timer

    def remove(self, timer: LoopTimer) -> None:
        if timer in self.timers:
            self.timers.remove(timer)
            self._rearm()

    def after_frame(self, node, callback) -> None:
        """``callback()`` once this turn's deliveries are done: what a frame produces for
        observers only (a ``/tf`` for rviz and the recorder) or prepares for the next frame (the
        simulated sensor's next block of samples), off the chain's path from the F/T sample to
        the drives' command. All of them run, each turn, before any lazy check; one that raises
        stops ``node`` in place. Without a spin loop running this process's deadlines (a node
        spun by a test's executor): at once."""
        if not self.driven:
            callback()
            return
        self._after.append((node, callback))

    def run_after(self) -> int:
        """Run the ``after_frame`` calls queued so far, and those they queue; the number run."""
        after, ran = self._after, 0
        while after:
            node, callback = after.popleft()
            ran += 1
            run_in_place(node, callback, 'its after-frame work')
        return ran

    def later(self, callback) -> None:
        """``callback()`` once, in a coming turn of the loop (one lazy call a turn, after the
        frame's deliveries), at the latest ``MAX_SLACK_NS`` from now: the rest of a check group
        whose members run one a turn (``timer_group``)."""
        self._soon.append((callback, _monotonic_ns() + MAX_SLACK_NS))
        if self._wake is None or self._soon[0][1] < self._wake:
            self._rearm()

    def _rearm(self) -> None:
        nxt = lazy = wake = None
        if self._soon:
            wake = self._soon[0][1]
        for t in self.timers:
            if t.slack_ns:
                if lazy is None or t.next_ns < lazy:
                    lazy = t.next_ns
            elif nxt is None or t.next_ns < nxt:
                nxt = t.next_ns
            w = t.next_ns + t.slack_ns
            if wake is None or w < wake:
                wake = w
        self._next, self._next_lazy, self._wake = nxt, lazy, wake

    def wait_s(self, longest: float) -> float:
        """How long the loop may wait for events: until the next frame deadline or the end of
        a lazy one's slack, at most ``longest``."""
        nxt = self._wake
        if nxt is None:
            return longest
        wait = (nxt - _monotonic_ns()) * 1e-9
        return 0.0 if wait <= 0.0 else (wait if wait < longest else longest)

    def run_due(self) -> int:
        """Run every frame callback whose deadline has come (each once, missed periods skipped);
        the number run."""
        nxt = self._next
        if nxt is None:
            return 0
        now = _monotonic_ns()
        if now < nxt:
            return 0
        ran = 0
        for timer in tuple(self.timers):
            if timer.cancelled or timer.slack_ns or now < timer.next_ns:
                continue
            self._advance(timer, now)
            ran += 1
            timer.callback()
        self._rearm()
        return ran

    def run_lazy(self) -> int:
        """After the frame's deliveries: every lazy call whose slack has run out (no turn came in
        time to spread them: lockstep's long drains, a busy machine), in the order they came due,
        and the one due first of the others (one a turn while there is time to spread them). The
        number run. (One a turn whatever their slack starved the ``later`` calls in lockstep,
        where a turn comes every few milliseconds: a group's later members never ran.)"""
        now = _monotonic_ns()
        soon = self._soon
        lazy = self._next_lazy
        if (lazy is None or now < lazy) and not soon:
            return 0
        ran, waiting = 0, len(soon)                        # (those queued now wait for a coming turn)
        while soon and soon[0][1] <= now:                  # past their slack (FIFO: in order)
            soon.popleft()[0]()
            ran += 1
            waiting -= 1
        if lazy is not None and now >= lazy:
            overdue = sorted((t for t in self.timers if t.slack_ns and t.next_ns + t.slack_ns <= now),
                             key=lambda t: t.next_ns)
            for timer in overdue:
                if not timer.cancelled:
                    self._advance(timer, now)
                    ran += 1
                    timer.callback()
        first = None                                       # and the first due one within its slack
        for timer in self.timers:
            if timer.slack_ns and not timer.cancelled and timer.next_ns <= now and (
                    first is None or timer.next_ns < first.next_ns):
                first = timer
        if waiting > 0 and (first is None or soon[0][1] - MAX_SLACK_NS < first.next_ns):
            callback = soon.popleft()[0]
            self._rearm()
            callback()
            return ran + 1
        if first is not None:
            self._advance(first, now)
            self._rearm()
            first.callback()
            return ran + 1
        self._rearm()
        return ran

    @staticmethod
    def _advance(timer: LoopTimer, now: int) -> None:
        behind = (now - timer.next_ns) // timer.period_ns
        timer.next_ns += timer.period_ns * (behind + 1)


LOOP = FrameLoop()


def runs_on_loop(node, clock) -> bool:
    """A timer of ``node`` on ``clock`` (None: the node's) can be a loop deadline: the process's
    spin loop runs them and the clock is not simulated time."""
    if not LOOP.driven:
        return False
    from rclpy.clock import ClockType
    clock = clock or node.get_clock()
    return not (clock.clock_type == ClockType.ROS_TIME and clock.ros_time_is_active)
