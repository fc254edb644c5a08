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
