"""Message accounting of a run, the evidence behind the transparency report: per topic, what
should have been published, what was published, what the recorder received and wrote, and the
largest gap between receive times.

``account`` builds the per-topic table for the run summary, ``hil_run.yaml`` and the report:

* expected = rate x duration + 1 (a stream of rate r over [0, D] holds r D + 1 samples), for
  topics with a designed rate; event and latched topics have none;
* ``skipped``: the producer published fewer than expected by more than the slack (start/stop
  alignment), or reported skipped cycles: the node did not produce every cycle;
* ``lost``: fewer recorded than published (or fewer written than received): messages the
  transport or the recorder dropped;
* ``missing``: fewer recorded than expected and the producer's count is unknown: skipped or
  lost, the producer's count would tell which;
* ``no_latched``: a latched topic (a transient-local publisher: the robot description, the
  static frames, the mode) with no message in the bag: a replay would lack it;
* ``gap``: samples missing in a row, whether skipped or lost: the largest gap between the
  *stamps* of consecutive messages exceeds ``GAP_FACTOR`` periods. The stamps are the header
  stamps where a message has one (the recorder reads them from the serialized bytes); for other
  types, and bags recorded before, the receive times stand in. A gap of receive times alone
  is not a missing sample: on the wall clock it is the delivery running late (a stalled process
  catching up delivers every sample, later), which the real-time health figures judge; it stays
  in the table as ``largest_gap_s``.

A run with any flag is not a clean run: ``clean`` is False and ``summary_lines`` say why.
Pure functions, no ROS: the recorder, ``hil run`` and ``hil report`` call them.
"""
from __future__ import annotations

import math
import struct
from dataclasses import asdict, dataclass

import numpy as np

from hil_core.transparency.validity import GAP_FACTOR

COUNT_SLACK_MESSAGES = 2        # a stream may start or stop one frame either side of the window
COUNT_SLACK_FRACTION = 0.005    # and the duration itself is known to about 0.5 %


@dataclass(frozen=True)
class TopicCount:
    """What the recorder saw of one topic (receive times in the bag's clock, seconds)."""
    received: int
    written: int
    largest_gap_s: float | None = None
    first_s: float | None = None
    last_s: float | None = None
    largest_stamp_gap_s: float | None = None     # between header stamps (None: no stamps)
    latched: bool = False                        # a latched state (transient-local publisher)


@dataclass(frozen=True)
class AccountRow:
    topic: str
    rate_hz: float | None
    expected: int | None
    published: int | None
    received: int | None
    recorded: int
    largest_gap_s: float | None
    skipped: int                 # messages the producer did not produce
    lost: int                    # messages produced (or received) but not recorded
    missing: int                 # expected but not recorded, cause unknown (no producer count)
    flags: tuple[str, ...]       # subset of ('skipped', 'lost', 'missing', 'gap', 'no_latched')
    largest_stamp_gap_s: float | None = None

    def as_dict(self) -> dict:
        out = asdict(self)
        out['flags'] = list(self.flags)
        return out


def topic_counts(data: dict | None) -> dict[str, TopicCount]:
    """TopicCount per topic from the recorder's ``accounting.yaml`` (its ``topics`` mapping)."""
    out = {}
    for topic, d in ((data or {}).get('topics') or {}).items():
        out[topic] = TopicCount(received=int(d.get('received', 0)), written=int(d.get('written', 0)),
                                largest_gap_s=d.get('largest_gap_s'), first_s=d.get('first_s'),
                                last_s=d.get('last_s'), largest_stamp_gap_s=d.get('largest_stamp_gap_s'),
                                latched=bool(d.get('latched', False)))
    return out


class Tally:
    """Running count of one topic as messages arrive (the recorder's side of the accounting).
    Times are the receive times in the bag's clock (integer ns); ``stamp_ns`` the message's
    header stamp where it has one (None: no stamp)."""

    __slots__ = ('received', 'written', 'first_ns', 'last_ns', 'largest_gap_ns', 'last_stamp_ns',
                 'largest_stamp_gap_ns', 'stamps')

    def __init__(self):
        self.received = 0
        self.written = 0
        self.first_ns: int | None = None
        self.last_ns: int | None = None
        self.largest_gap_ns = 0
        self.last_stamp_ns: int | None = None
        self.largest_stamp_gap_ns = 0
        self.stamps = 0                      # messages whose stamp was read

    def receive(self, now_ns: int, stamp_ns: int | None = None) -> None:
        self.received += 1
        if self.last_ns is None:
            self.first_ns = now_ns
        elif now_ns - self.last_ns > self.largest_gap_ns:
            self.largest_gap_ns = now_ns - self.last_ns
        self.last_ns = now_ns
        if stamp_ns is not None:
            self.stamps += 1
            # (a stamp going back is not a gap: out-of-order stamps are judged by their consumers)
            if self.last_stamp_ns is not None and stamp_ns - self.last_stamp_ns > self.largest_stamp_gap_ns:
                self.largest_stamp_gap_ns = stamp_ns - self.last_stamp_ns
            self.last_stamp_ns = stamp_ns

    def count(self) -> TopicCount:
        return TopicCount(received=self.received, written=self.written,
                          largest_gap_s=self.largest_gap_ns * 1e-9 if self.received >= 2 else None,
                          first_s=None if self.first_ns is None else self.first_ns * 1e-9,
                          last_s=None if self.last_ns is None else self.last_ns * 1e-9,
                          largest_stamp_gap_s=(self.largest_stamp_gap_ns * 1e-9
                                               if self.stamps >= 2 and self.stamps == self.received else None))


def header_stamp_ns(data: bytes) -> int | None:
    """The header stamp of a serialized message whose first field is a std_msgs/Header (or a
    Header itself): CDR encapsulation (4 bytes, byte 1 = 1 for little endian), then the stamp's
    int32 sec and uint32 nanosec. None when the bytes are too short."""
    if len(data) < 12:
        return None
    sec, nanosec = struct.unpack_from('<iI' if data[1] == 1 else '>iI', data, 4)
    return sec * 1_000_000_000 + nanosec


def largest_gap(times) -> float | None:
    """Largest interval between consecutive receive times (None with fewer than 2)."""
    t = np.sort(np.asarray(times, dtype=float).reshape(-1))
    return float(np.max(np.diff(t))) if t.size >= 2 else None


def expected_count(rate_hz: float, duration_s: float) -> int:
    return int(math.floor(rate_hz * duration_s + 1e-6)) + 1


def _slack(expected: int) -> int:
    return max(COUNT_SLACK_MESSAGES, int(math.ceil(COUNT_SLACK_FRACTION * expected)))


def account(recorded: dict[str, TopicCount | int], duration_s: float,
            rates: dict[str, float] | None = None, published: dict[str, int] | None = None,
            skipped_cycles: dict[str, int] | None = None,
            durations: dict[str, float] | None = None) -> list[AccountRow]:
    """Per-topic accounting, one row per topic of ``recorded`` (sorted by name).

    ``recorded``: topic -> TopicCount (from the recorder) or the recorded count alone;
    ``duration_s``: the stretch of the run the streams should cover (bag clock, s); ``rates``: designed rate (Hz)
    of the topics that have one; ``published``: the producers' own counts where known;
    ``skipped_cycles``: cycles a producer reported skipping, per topic; ``durations``: a
    topic's own stretch where it differs from ``duration_s`` (a stream that only runs in some
    modes).
    """
    rates, published, skipped_cycles = rates or {}, published or {}, skipped_cycles or {}
    durations = durations or {}
    rows = []
    for topic in sorted(recorded):
        c = recorded[topic]
        if not isinstance(c, TopicCount):
            c = TopicCount(received=int(c), written=int(c))
        rate = rates.get(topic)
        span = durations.get(topic, duration_s)
        expected = expected_count(rate, span) if rate and span > 0 else None
        pub = published.get(topic)
        flags, skipped, lost, missing = [], 0, 0, 0
        if expected is not None and pub is not None and pub < expected - _slack(expected):
            skipped = expected - pub
        if skipped_cycles.get(topic, 0) > 0:
            skipped = max(skipped, int(skipped_cycles[topic]))
        if pub is not None and c.written < pub - _slack(pub):
            lost = pub - c.written
        lost = max(lost, c.received - c.written)
        if expected is not None and pub is None and c.written < expected - _slack(expected):
            missing = expected - c.written - lost
        for name, n in (('skipped', skipped), ('lost', lost), ('missing', missing)):
            if n > 0:
                flags.append(name)
        gap = c.largest_stamp_gap_s if c.largest_stamp_gap_s is not None else c.largest_gap_s
        if rate and gap is not None and gap > GAP_FACTOR / rate:
            flags.append('gap')
        if c.latched and c.written == 0:       # a replay would lack it (the robot, static frames)
            flags.append('no_latched')
        rows.append(AccountRow(topic, rate, expected, pub, c.received, c.written, c.largest_gap_s,
                               skipped, lost, max(missing, 0), tuple(flags), c.largest_stamp_gap_s))
    return rows


def clean(rows: list[AccountRow]) -> bool:
    return not any(r.flags for r in rows)


def summary_lines(rows: list[AccountRow]) -> list[str]:
    """One line per topic, e.g. ``/ft_sensor/wrench: expected 6001, published -, recorded 1561,
    largest gap 20.0 ms: SKIPPED 4440, GAP`` (receive times), plus ``(stamps 20.0 ms)`` where
    the stamps were read: the gap judged."""
    out = []
    for r in rows:
        gap = '-' if r.largest_gap_s is None else f'{r.largest_gap_s * 1e3:.1f} ms'
        if r.largest_stamp_gap_s is not None:
            gap += f' (stamps {r.largest_stamp_gap_s * 1e3:.1f} ms)'
        line = (f'{r.topic}: expected {"-" if r.expected is None else r.expected}, '
                f'published {"-" if r.published is None else r.published}, recorded {r.recorded}, '
                f'largest gap {gap}')
        marks = []
        if r.skipped:
            marks.append(f'SKIPPED {r.skipped}')
        if r.lost:
            marks.append(f'LOST {r.lost}')
        if r.missing:
            marks.append(f'MISSING {r.missing} (skipped or lost)')
        if 'gap' in r.flags:
            marks.append('GAP')
        if 'no_latched' in r.flags:
            marks.append('NO MESSAGE of a latched topic')
        out.append(line + (': ' + ', '.join(marks) if marks else ''))
    return out
