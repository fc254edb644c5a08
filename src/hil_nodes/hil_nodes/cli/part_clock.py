"""Clock offset and round trip between the parts of a run (docs/lab.md, "Two or three hosts").

Every part's launcher (`hil run --part`) answers pings on ``/hil/clock_ping`` and, from its
start, pings the others every ``PERIOD`` wall s until it has ``SAMPLES`` answers from each other
part of the split; the summary prints, per part, the median offset of that host's clock and the
median round trip (hil_core.supervision.clock_offset: NTP's four timestamps). The clocks are the
hosts' system clocks (``CLOCK_REALTIME``, what chrony or PTP keep in step): a lab sees how far
apart they are and what a message costs between them before it trusts a stamp from the other host.

Messages: sensor_msgs/TimeReference, the standard message for a time reference. A ping: header
stamp = ``t0`` (sent), header frame_id = the pinging part, source = ``part:seq``. A pong: header
stamp = ``t2`` (answer sent), frame_id = the answering part, time_ref = ``t1`` (ping received),
source = the ping's. The launcher's node spins these with the rest of its loop (no thread).
"""
from __future__ import annotations

import time

from builtin_interfaces.msg import Time
from sensor_msgs.msg import TimeReference

from hil_core.supervision.clock_offset import estimate
from hil_nodes import qos, topics

SAMPLES = 9          # answers per other part: the median of an odd count is one sample
PERIOD = 0.1         # wall s between two pings
PENDING_MAX = 200    # pings kept waiting for their answers


def _time(ns: int) -> Time:
    return Time(sec=ns // 1_000_000_000, nanosec=ns % 1_000_000_000)


def _ns(t: Time) -> int:
    return t.sec * 1_000_000_000 + t.nanosec


class PartClock:
    def __init__(self, node, part: str, others: list[str], samples: int = SAMPLES, period: float = PERIOD):
        self.part, self.others, self.wanted = part, list(others), samples
        self.samples: dict[str, list[tuple[int, int, int, int]]] = {p: [] for p in self.others}
        self._pending: dict[int, int] = {}       # seq -> t0
        self._seq = 0
        self._node = node
        self._ping = node.create_publisher(TimeReference, topics.HIL_CLOCK_PING, qos.command(50))
        self._pong = node.create_publisher(TimeReference, topics.HIL_CLOCK_PONG, qos.command(50))
        node.create_subscription(TimeReference, topics.HIL_CLOCK_PING, self._on_ping, qos.command(50))
        node.create_subscription(TimeReference, topics.HIL_CLOCK_PONG, self._on_pong, qos.command(50))
        self._timer = node.create_timer(period, self._tick) if self.others else None

    @property
    def done(self) -> bool:
        return all(len(s) >= self.wanted for s in self.samples.values())

    def _tick(self) -> None:
        if self.done:
            self._node.destroy_timer(self._timer)
            self._timer = None
            return
        self._seq += 1
        if len(self._pending) >= PENDING_MAX:
            self._pending.pop(next(iter(self._pending)))
        t0 = time.time_ns()
        self._pending[self._seq] = t0
        msg = TimeReference(source=f'{self.part}:{self._seq}')
        msg.header.frame_id = self.part
        msg.header.stamp = _time(t0)
        self._ping.publish(msg)

    def _on_ping(self, msg: TimeReference) -> None:
        t1 = time.time_ns()
        if msg.header.frame_id == self.part:
            return
        reply = TimeReference(source=msg.source, time_ref=_time(t1))
        reply.header.frame_id = self.part
        reply.header.stamp = _time(time.time_ns())      # t2: as late as possible before it leaves
        self._pong.publish(reply)

    def _on_pong(self, msg: TimeReference) -> None:
        t3 = time.time_ns()
        part, _, seq = msg.source.rpartition(':')
        if part != self.part or msg.header.frame_id not in self.samples or not seq.isdigit():
            return
        t0 = self._pending.get(int(seq))
        got = self.samples[msg.header.frame_id]
        if t0 is None or len(got) >= self.wanted:
            return
        t1, t2 = _ns(msg.time_ref), _ns(msg.header.stamp)
        if t3 >= t0 and t2 >= t1:        # a system clock stepped in between: not a sample
            got.append((t0, t1, t2, t3))

    def summary(self) -> str:
        """'hardware: offset +0.004 ms, rtt 0.412 ms (median of 9, ...); model: ...' (the other
        host's clock minus this one's)."""
        out = []
        for part, got in self.samples.items():
            try:
                out.append(f'{part}: {estimate(got).describe()}')
            except ValueError:
                out.append(f'{part}: not measured (no answer)')
        return '; '.join(out) or 'no other part'
