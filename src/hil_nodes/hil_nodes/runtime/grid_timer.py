"""Real-time timers on the frame grid: callbacks just after each instant k * period of the wall
clock, whatever the phase of activation.

An rclpy timer keeps the phase of its creation. Created at a random phase, a timer that reads or
integrates "the frame that just ended" does so up to a whole period late: the F/T source's sample
of instant t then reached the time base after it had moved on to t + T (every reference a frame
late), and the mock drives published the joint state of t_k up to a frame after t_k, so the
kinematics node judged 93 % of its cycles late (its deadline is one frame from the stamp) and the
supervisor stopped the run two seconds in. Both now start on the grid plus a small offset.
"""
from __future__ import annotations

import time

from hil_nodes.runtime import frame_loop
from hil_nodes.runtime.frame_loop import LOOP, run_in_place, runs_on_loop
from hil_nodes.runtime.intra_process import BUS, NODE_DESTROYED

# just after the grid instant: a sensor's transport (the F/T source reads then)
GRID_OFFSET_NS = 200_000
# the drives publish the state of the grid instant before the sensor chain runs: in one process
# the kinematics node then has it long before its deadline, and the chain is not held up later
DRIVES_OFFSET_NS = 50_000


def delay_to_grid(now_ns: int, period_ns: int, offset_ns: int = GRID_OFFSET_NS) -> int:
    """Nanoseconds from ``now_ns`` to the next instant k * period_ns + offset_ns (0 included)."""
    return (offset_ns - now_ns) % period_ns


def create_grid_timer(node, period_s: float, callback, clock=None, offset_ns: int = GRID_OFFSET_NS,
                      shared: bool | None = None):
    """``node.create_timer`` started on the grid of the node's clock (the wall clock in real time)
    plus ``offset_ns``: it sleeps up to one period first (at activation, never in a frame).

    ``shared`` (default: the intra-process bus is on, i.e. several nodes in one process): the
    grid timers of the process with this period run from one timer, in the order of their
    offsets (``SharedGrid``); the handle is then a ``GridEntry``, which ``node.destroy_timer``
    takes (``IntraProcessNode``) or ``leave_grid()`` ends."""
    period_ns = int(round(period_s * 1e9))
    # a node alone in its process (a part's drives, --own-process, --isolated) takes the grid too
    # when the spin loop runs it: one thread, no timer thread to wake, as in the container
    if (BUS.enabled or runs_on_loop(node, clock)) if shared is None else shared:
        grid = GRIDS.get(period_ns)
        if grid is None:
            grid = GRIDS[period_ns] = SharedGrid(period_ns)
        return grid.add(node, callback, clock, offset_ns)
    return _plain_grid_timer(node, period_ns, callback, clock, offset_ns)


def _plain_grid_timer(node, period_ns: int, callback, clock, offset_ns: int, shared: bool = False):
    time.sleep(delay_to_grid(node.get_clock().now().nanoseconds, period_ns, offset_ns) * 1e-9)
    # the shared grid's timer serves every node on it: not stopped with its host node (each
    # entry is, in _fire); a node's own grid timer is one of its callbacks
    create = getattr(node, 'create_shared_timer', node.create_timer) if shared else node.create_timer
    return create(period_ns * 1e-9, callback, clock=clock)     # None: the node's clock


def loop_grid_timer(period_ns: int, callback, offset_ns: int, system_now_ns: int | None = None):
    """``callback()`` just after each instant k * period + ``offset_ns`` of the system clock, as a
    deadline of the process's spin loop (``frame_loop``): aligned once now from the system clock,
    kept on the monotonic clock, as an rcl steady timer started on the grid."""
    now_sys = time.time_ns() if system_now_ns is None else system_now_ns
    first = frame_loop.monotonic_ns() + delay_to_grid(now_sys, period_ns, offset_ns)
    return LOOP.add(period_ns * 1e-9, callback, first_ns=first)


class GridEntry:
    """One callback on a shared grid (the handle ``create_grid_timer`` returns)."""

    def __init__(self, grid: 'SharedGrid', node, callback, clock, offset_ns: int):
        self.grid, self.node, self.callback, self.clock, self.offset_ns = grid, node, callback, clock, offset_ns

    def leave_grid(self) -> None:
        self.grid.remove(self)


class SharedGrid:
    """The grid callbacks of one process with one period, run by one rclpy timer, in the order of
    their offsets: one executor wake-up a frame instead of one per callback. In the one-process
    real-time graph the drives (50 us) and the F/T source (200 us) were two timers at 400 Hz,
    and each executor event costs tens of us of CPU there. The F/T source then reads right after
    the drives' frame, its samples of the grid instant being due already. The timer lives on the
    node of the earliest offset, with that entry's clock; it is made again when that entry leaves
    or an earlier one joins (at activation, where sleeping up to a period is allowed). Under the
    process's spin loop (``frame_loop``) the grid is one of its deadlines instead of a timer."""

    def __init__(self, period_ns: int):
        self.period_ns = period_ns
        self.entries: list[GridEntry] = []
        self.timer = None
        self.host = None

    def add(self, node, callback, clock, offset_ns: int) -> GridEntry:
        entry = GridEntry(self, node, callback, clock, offset_ns)
        self.entries.append(entry)
        self.entries.sort(key=lambda e: e.offset_ns)
        if self.entries[0] is entry:
            self._restart()
        return entry

    def remove(self, entry: GridEntry) -> None:
        if entry not in self.entries:
            return
        first = self.entries[0] is entry
        self.entries.remove(entry)
        if first or not self.entries:
            self._restart()

    def _restart(self) -> None:
        if self.timer is not None:
            self.host.destroy_timer(self.timer)
        self.timer = self.host = None
        if self.entries:
            first = self.entries[0]
            self.host = first.node
            if runs_on_loop(first.node, first.clock):     # the process's spin loop runs the frame
                self.timer = loop_grid_timer(self.period_ns, self._fire, first.offset_ns)
                return
            self.timer = _plain_grid_timer(first.node, self.period_ns, self._fire, first.clock, first.offset_ns,
                                           shared=True)

    def drop_node(self, node) -> None:
        for entry in [e for e in self.entries if e.node is node]:
            self.remove(entry)

    def _fire(self) -> None:
        for entry in tuple(self.entries):               # a raising one stops its node, not the grid
            run_in_place(entry.node, entry.callback, 'its frame-grid callback', named=False)


GRIDS: dict[int, SharedGrid] = {}     # period (ns) -> the process's shared grid
# a node destroyed with its grid callbacks still on (a test's teardown) takes them along
NODE_DESTROYED.append(lambda node: [grid.drop_node(node) for grid in GRIDS.values()])
