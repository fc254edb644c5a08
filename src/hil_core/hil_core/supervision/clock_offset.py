"""Clock offset and round-trip time between two hosts from ping-pong samples (docs/lab.md,
"Two or three hosts": the parts of a run measure them at start and print them).

One sample is NTP's four timestamps (RFC 5905, section 8): ``t0`` the request leaves A (A's
clock), ``t1`` it reaches B and ``t2`` the answer leaves B (B's clock), ``t3`` the answer reaches
A (A's clock). With B's clock ahead of A's by ``theta`` and one-way delays ``d_out``, ``d_back``:

    offset = ((t1 - t0) + (t2 - t3)) / 2 = theta + (d_out - d_back) / 2
    rtt    = (t3 - t0) - (t2 - t1)       = d_out + d_back

so a sample's offset is exact for symmetric delays and off by half the asymmetry otherwise, never
by more than half its round trip. Several samples, the median of each (robust to the first
samples of a fresh DDS connection, which are slow).
"""
from __future__ import annotations

import statistics
from dataclasses import dataclass

NS = 1e-9


@dataclass(frozen=True)
class OffsetEstimate:
    offset_s: float        # the other clock minus this one, median over the samples
    rtt_s: float           # round trip without the other side's own time, median
    samples: int
    offset_spread_s: float  # max - min of the samples' offsets (what the median smoothed)
    rtt_max_s: float        # the longest round trip: no sample's offset is off by more than half of it

    def describe(self) -> str:
        return (f'offset {self.offset_s * 1e3:+.3f} ms, rtt {self.rtt_s * 1e3:.3f} ms (median of {self.samples}; '
                f'offsets within {self.offset_spread_s * 1e3:.3f} ms, rtt at most {self.rtt_max_s * 1e3:.3f} ms)')


def sample(t0: int, t1: int, t2: int, t3: int) -> tuple[float, float]:
    """(offset s, rtt s) of one ping-pong, timestamps in integer ns (see the module docstring).
    ValueError for timestamps no ping-pong can give (an answer before its request, on one clock)."""
    if t3 < t0 or t2 < t1:
        raise ValueError(f'not a ping-pong: t0={t0} t1={t1} t2={t2} t3={t3} (t3 < t0 or t2 < t1)')
    return ((t1 - t0) + (t2 - t3)) / 2 * NS, ((t3 - t0) - (t2 - t1)) * NS


def estimate(samples: list[tuple[int, int, int, int]]) -> OffsetEstimate:
    """The median offset and round trip of ``samples`` (t0, t1, t2, t3 each, ns); ValueError
    without any."""
    if not samples:
        raise ValueError('no ping-pong sample')
    offsets, rtts = zip(*(sample(*s) for s in samples))
    return OffsetEstimate(statistics.median(offsets), statistics.median(rtts), len(samples),
                          max(offsets) - min(offsets), max(rtts))
