"""Lockstep helpers (seed 004: the model advances only once the controller's command is in).

``FrameSync`` pairs per-frame messages of several streams by their stamp and releases a frame
only when every stream has delivered it. A node that must compute frame k from inputs that
arrive on different topics (for example a reference and the supervisor's frame gate) uses it
so that its output depends on message *content*, never on arrival order: this is what makes a
lockstep run deterministic whatever the process layout or machine load.
"""
from __future__ import annotations

from collections import OrderedDict
from typing import Any, Hashable


def stamp_key(sec: int, nanosec: int) -> int:
    """Integer nanoseconds: an exact, hashable frame key (no float rounding)."""
    return int(sec) * 1_000_000_000 + int(nanosec)


class FrameSync:
    """Collect ``(stream, stamp) -> value`` and release complete frames in stamp order.

    Frames older than a released frame are dropped (and counted) so a late duplicate can
    never be processed twice; at most ``max_pending`` incomplete frames are kept.
    """

    def __init__(self, streams: tuple[Hashable, ...], max_pending: int = 64):
        if not streams:
            raise ValueError('FrameSync needs at least one stream')
        self.streams = tuple(streams)
        self.max_pending = int(max_pending)
        self._pending: OrderedDict[int, dict[Hashable, Any]] = OrderedDict()
        self.last_released: int | None = None
        self.dropped_stale = 0
        self.dropped_overflow = 0

    def put(self, stream: Hashable, key: int, value: Any) -> list[tuple[int, dict[Hashable, Any]]]:
        """Add one message; return the frames (key, {stream: value}) that became complete."""
        if stream not in self.streams:
            raise KeyError(f'unknown stream {stream!r}; expected one of {self.streams}')
        if self.last_released is not None and key <= self.last_released:
            self.dropped_stale += 1
            return []
        frame = self._pending.setdefault(key, {})
        frame[stream] = value
        if len(self._pending) > self.max_pending:
            self._pending.popitem(last=False)
            self.dropped_overflow += 1
        ready = []
        for k in sorted(self._pending):
            if len(self._pending[k]) == len(self.streams):
                ready.append(k)
        out = []
        for k in ready:
            if self.last_released is not None and k <= self.last_released:
                continue
            # Frames older than a complete one can never complete in order: drop them.
            for older in [o for o in self._pending if o < k]:
                del self._pending[older]
                self.dropped_stale += 1
            out.append((k, self._pending.pop(k)))
            self.last_released = k
        return out


class OwnPause:
    """Tells a lockstep wait timed on the wall clock when its own process was paused.

    A node that waits a bounded wall time for a frame's message (the drives for a command, the
    planner for a reference) checks on a steady timer. If the whole process stops (a frozen
    shared-memory peer blocks a publish for Fast DDS's 1 s port health check with the GIL held,
    docs/fault_matrix.md; a descheduled or suspended VM), the first check after it finds the
    wait long over while the message it waits for may sit in its own queue, unread. A check
    that comes more than ``limit`` wall s after the previous one is that pause: the wait
    restarts from now (nothing moved meanwhile: sim time stood still with the process), and a
    message that never comes is still late one timeout later. The supervisor judges its own
    stalls the same way (``hil_core.supervision.liveness``).
    """

    def __init__(self, limit: float):
        if not limit > 0.0:
            raise ValueError(f'OwnPause limit must be > 0, got {limit!r}')
        self.limit = float(limit)
        self._last: float | None = None
        self.pauses = 0                  # checks that found this process paused
        self.longest = 0.0               # the longest of them (wall s between two checks)

    def alive(self, now: float) -> None:
        """This process ran at ``now`` (steady wall s) outside the checks: a frame published, a
        message taken. A first check has no previous one; it measures from here."""
        self._last = now if self._last is None else max(self._last, now)

    def paused(self, now: float) -> bool:
        """Record a check at ``now`` (steady wall s); True when this process was paused since
        the previous check or sign of life."""
        last, self._last = self._last, now
        if last is None or now - last <= self.limit:
            return False
        self.pauses += 1
        self.longest = max(self.longest, now - last)
        return True

