"""RDT sequence numbers: losses, late records, duplicates, stray records and resets.

ATI (Net F/T manual, section 10.1): ``rdt_sequence`` is the position of a record within one
output stream, starts at 1 with every request and rolls over to 0 after 2**32 - 1. So the
receiver works modulo 2**32 with the forward distance ``d = (seq - last) mod 2**32`` read as a
signed 32-bit number, ``last`` being the newest record processed:

* ``1 <= d <= plausible``: in order; ``d - 1`` records lost (remembered, up to ``window``);
  ``plausible`` is ``window`` records, or, given arrival times, what the box can have sent
  since the last record (``max_rate`` x elapsed x 1.5 + ``slack``): a gap beyond that is not
  a loss;
* ``-window <= d <= 0`` and counted as lost: a late record, *recovered* (lost -1,
  out_of_order +1), not processed: older than a sample already in the causal filter;
* anything else is a duplicate (inside the stream already seen) or a stray (a number that
  does not belong to the stream), neither processed nor a loss. ``confirm`` such records in a
  row, each following the previous one, are a new numbering (the box restarted its stream: a
  request, a reboot): a *reset*, reported, not a loss; its first records, counted as strays
  or duplicates while unconfirmed, are moved to the reset.

Every processed record gets a ``position``: a record index that grows by ``d`` in order and
by 1 at a stream start or reset (``continuous`` is then False: the time between the two
streams is unknown). The sample clock stamps records from their positions.
"""
from __future__ import annotations

MASK = 0xFFFFFFFF
START, IN_ORDER, LATE, DUPLICATE, STRAY, RESET = range(6)
KIND_NAMES = ('start', 'in_order', 'late', 'duplicate', 'stray', 'reset')
PROCESSED = (START, IN_ORDER, RESET)


def signed_distance(a: int, b: int) -> int:
    """(a - b) modulo 2**32 as a signed 32-bit number."""
    d = (a - b) & MASK
    return d - 0x100000000 if d >= 0x80000000 else d


class SequenceTracker:
    """Counters: received, lost, out_of_order, duplicates, strays, resets; ``kind`` and
    ``continuous`` describe the last record, ``position`` the newest processed one."""

    def __init__(self, window: int = 4096, confirm: int = 3, max_rate: float | None = None,
                 slack: int = 64):
        if confirm < 2:
            raise ValueError('confirm must be at least 2 (one record alone is a stray)')
        self.window = int(window)
        self.confirm = int(confirm)
        self.max_rate = max_rate
        self.slack = int(slack)
        self.reset()

    def reset(self) -> None:
        self.received = self.lost = self.out_of_order = self.duplicates = self.strays = self.resets = 0
        self.position = -1
        self.kind = START
        self.continuous = False
        self.restart()

    def restart(self) -> None:
        """A new stream was requested: forget the last sequence number, keep the totals."""
        self.last: int | None = None
        self._first = 0
        self._last_time: float | None = None
        self._missing: set[int] = set()
        self._run: list[tuple[int, int]] = []          # unconfirmed new numbering: (seq, kind)

    @property
    def resyncs(self) -> int:                          # the former name of ``resets``
        return self.resets

    def _plausible(self, now: float | None) -> int:
        if now is None or self.max_rate is None or self._last_time is None:
            return self.window
        return int(self.slack + 1.5 * self.max_rate * max(0.0, now - self._last_time))

    def update(self, seq: int, now: float | None = None) -> bool:
        """Register one record (``now``: its arrival time in s, any clock); True = process it."""
        seq = int(seq) & MASK
        self.received += 1
        if self.last is None:
            return self._begin(seq, now, START)
        d = signed_distance(seq, self.last)
        if 1 <= d <= self._plausible(now):
            self._run.clear()                          # the stream goes on: those were strays
            if d > 1:
                self.lost += d - 1
                for k in range(1, min(d, self.window + 1)):
                    self._missing.add((self.last + k) & MASK)
                if len(self._missing) > self.window:
                    self._missing = {s for s in self._missing if signed_distance(seq, s) <= self.window}
            self.last, self._last_time = seq, now
            self.position += d
            self.kind, self.continuous = IN_ORDER, True
            return True
        if -self.window <= d <= 0 and seq in self._missing:
            self._missing.discard(seq)
            self.lost -= 1
            self.out_of_order += 1
            self.kind = LATE
            return False
        # a duplicate or a stray, unless it confirms a new numbering
        if self._run and 1 <= signed_distance(seq, self._run[-1][0]) <= self.slack:
            if len(self._run) + 1 >= self.confirm:
                for _, kind in self._run:
                    if kind == DUPLICATE:
                        self.duplicates -= 1
                    else:
                        self.strays -= 1
                first = self._run[0][0]
                self.lost += signed_distance(seq, first) - len(self._run)
                self.resets += 1
                self._begin(seq, now, RESET)
                self._first = first                    # duplicates are told within the new stream
                return True
        else:
            self._run.clear()
        kind = DUPLICATE if -d <= signed_distance(self.last, self._first) and d <= 0 else STRAY
        if kind == DUPLICATE:
            self.duplicates += 1
        else:
            self.strays += 1
        self._run.append((seq, kind))
        self.kind = kind
        return False

    def _begin(self, seq: int, now: float | None, kind: int) -> bool:
        self.restart()
        self.last = self._first = seq
        self._last_time = now
        self.position += 1
        self.kind, self.continuous = kind, False
        return True
