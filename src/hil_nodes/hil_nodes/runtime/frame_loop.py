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
"""
from __future__ import annotations

import time

_monotonic_ns = time.monotonic_ns


def monotonic_ns() -> int:
    """The loop's clock (ns)."""
    return _monotonic_ns()


class LoopTimer:
    """One periodic callback of the loop; ``cancel()`` ends it (idempotent)."""

    __slots__ = ('loop', 'period_ns', 'next_ns', 'callback', 'cancelled')

    def __init__(self, loop: 'FrameLoop', period_ns: int, first_ns: int, callback):
        self.loop, self.period_ns, self.next_ns, self.callback = loop, period_ns, first_ns, callback
        self.cancelled = False

    def cancel(self) -> None:
        if not self.cancelled:
            self.cancelled = True
            self.loop.remove(self)

    leave_grid = cancel          # what ``node.destroy_timer`` and ``release`` call on a grid entry

    def is_canceled(self) -> bool:
        return self.cancelled

    @property
    def timer_period_ns(self) -> int:
        return self.period_ns


class FrameLoop:
    """The deadlines of the process's spin loop (module docstring)."""

    def __init__(self):
        self.driven = False          # set by the spin loop that runs them (runner.spin_nodes)
        self.timers: list[LoopTimer] = []
        self._next = None            # the earliest deadline (ns, monotonic), None: none

    def add(self, period_s: float, callback, first_ns: int | None = None) -> LoopTimer:
        """``callback()`` every ``period_s`` from ``first_ns`` (monotonic ns; default one period
        from now, as an rclpy timer made now)."""
        period_ns = int(round(period_s * 1e9))
        if period_ns <= 0:
            raise ValueError(f'a loop timer needs a positive period, got {period_s} s')
        timer = LoopTimer(self, period_ns, _monotonic_ns() + period_ns if first_ns is None else int(first_ns), callback)
        self.timers.append(timer)
        self._rearm()
        return timer

    def remove(self, timer: LoopTimer) -> None:
        if timer in self.timers:
            self.timers.remove(timer)
            self._rearm()

    def _rearm(self) -> None:
        self._next = min((t.next_ns for t in self.timers), default=None)

    def wait_s(self, longest: float) -> float:
        """How long the loop may wait for events: until the next deadline, at most ``longest``."""
        nxt = self._next
        if nxt is None:
            return longest
        wait = (nxt - _monotonic_ns()) * 1e-9
        return 0.0 if wait <= 0.0 else (wait if wait < longest else longest)

    def run_due(self) -> int:
        """Run every callback whose deadline has come (each once, missed periods skipped); the
        number run."""
        nxt = self._next
        if nxt is None:
            return 0
        now = _monotonic_ns()
        if now < nxt:
            return 0
        ran = 0
        for timer in tuple(self.timers):
            if timer.cancelled or now < timer.next_ns:
                continue
            behind = (now - timer.next_ns) // timer.period_ns
            timer.next_ns += timer.period_ns * (behind + 1)
            ran += 1
            timer.callback()
        self._rearm()
        return ran


LOOP = FrameLoop()


def runs_on_loop(node, clock) -> bool:
    """A timer of ``node`` on ``clock`` (None: the node's) can be a loop deadline: the process's
    spin loop runs them and the clock is not simulated time."""
    if not LOOP.driven:
        return False
    from rclpy.clock import ClockType
    clock = clock or node.get_clock()
    return not (clock.clock_type == ClockType.ROS_TIME and clock.ros_time_is_active)
