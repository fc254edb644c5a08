"""The link's latency: how old a servo setpoint is when the drives receive it (docs/lab.md, "Two
or three hosts").

In real time a trajectory's header stamp is the frame of the F/T sample whose reference made it
(the F/T driver stamps the sample, the admittance, the planner and the time base carry that stamp
on, and the time base produces a frame when that frame's reference comes in), so the drives'
receipt time minus the stamp is the chain's latency from the F/T sample to the setpoint at the
drives: the sensor chain's computing, every DDS hop, and, with the drives on another host, the
link. Across hosts the receipt is on the drives' clock and the stamp on the chain's: their
measured offset (``clock_offset``) is taken off.

``AgeHistogram`` keeps the ages of a whole run in fixed bins: one index per setpoint, no
allocation, constant memory; percentiles to half a bin. The bins are a numpy array: the
percentiles' pass over its 20 001 bins (at every drives status, twice a second) took 0.52 ms
alone and 1.2 ms in the running graph as a Python ``accumulate`` over a list, a stall of a whole
frame at twice the pace; numpy's ``cumsum`` takes ~20 us. No ROS.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from hil_core.supervision.clock_offset import estimate

BIN_NS = 10_000            # 0.01 ms bins: the percentiles within 0.005 ms
LOW_NS = -20_000_000       # ages below (a clock offset not yet taken off) fall in the first bin
HIGH_NS = 180_000_000      # and above in the last one; both are said as "<=" / ">="


class AgeHistogram:
    """Ages in ns, ``bin_ns`` wide bins from ``low_ns`` to ``high_ns`` (the outer bins catch the
    rest)."""

    def __init__(self, bin_ns: int = BIN_NS, low_ns: int = LOW_NS, high_ns: int = HIGH_NS):
        if bin_ns <= 0 or high_ns <= low_ns:
            raise ValueError(f'need bin_ns > 0 and high_ns > low_ns (got {bin_ns}, {low_ns}, {high_ns})')
        self.bin_ns, self.low_ns = int(bin_ns), int(low_ns)
        self.bins = np.zeros((high_ns - low_ns) // bin_ns + 1, dtype=np.int64)
        self._last = len(self.bins) - 1
        self.count = 0

    def add(self, age_ns: int) -> None:
        i = (age_ns - self.low_ns) // self.bin_ns
        self.bins[0 if i < 0 else self._last if i > self._last else i] += 1
        self.count += 1

    def percentiles(self, *qs: float) -> tuple[float | None, ...]:
        """The ``qs`` percentiles (0-100) in ms, each the middle of its bin (nearest rank); None
        without ages. An outer bin gives its inner edge (the true value is beyond)."""
        if any(not 0.0 <= q <= 100.0 for q in qs):
            raise ValueError(f'percentiles {qs} outside 0-100')
        if not self.count:
            return tuple(None for _ in qs)
        cumulative = np.cumsum(self.bins)
        out = []
        for q in qs:
            rank = max(1, math.ceil(self.count * q / 100.0))        # nearest rank, at least the first
            i = int(np.searchsorted(cumulative, rank, side='left'))   # the first bin that reaches it
            if i == 0:
                edge = self.low_ns + self.bin_ns
            elif i == self._last:
                edge = self.low_ns + i * self.bin_ns
            else:
                edge = self.low_ns + i * self.bin_ns + self.bin_ns / 2
            out.append(edge * 1e-6)
        return tuple(out)


@dataclass(frozen=True)
class Ages:
    """What the drives report of the setpoints' ages (their status values)."""
    clock: str             # 'wall': measured; 'sim': sim time (lockstep, another pace): meaningless
    count: int
    p50_ms: float | None
    p99_ms: float | None

    @classmethod
    def from_status(cls, values: dict) -> 'Ages | None':
        """From a drives status's values (strings, as /diagnostics carries them); None when the
        status has none (no drives heard, or drives that take no stamped command)."""
        clock = values.get('setpoint_age_clock', '')
        if not clock:
            return None
        count = int(float(values.get('setpoint_ages') or 0))

        def ms(key):
            v = values.get(key, '')
            return float(v) if v not in ('', 'None') else None
        return cls(clock, count, ms('setpoint_age_p50_ms'), ms('setpoint_age_p99_ms'))


def link_latency_text(ages: Ages | None, across_hosts: bool, offset_ms: float | None = None) -> str:
    """The run summary's ``link_latency`` (F/T sample -> the drives' receipt of its setpoint).

    ``offset_ms``: the drives' host clock minus the clock of the host that stamps the setpoints
    (the chain's), None if not measured. ``across_hosts``: the drives run on another host than the
    chain; on one host the figure is given beside "not measured", as the one-host reference."""
    if ages is None:
        return 'not measured (no status of drives that take stamped setpoints)'
    if ages.clock != 'wall':
        return 'not measured (sim time: stamps are simulated in lockstep or at another pace than 1)'
    if not ages.count or ages.p50_ms is None or ages.p99_ms is None:
        return 'not measured (no setpoint received)'
    if not across_hosts:
        return (f'not measured (one host); F/T sample -> drives on this host: p50 {ages.p50_ms:.3f} ms, '
                f'p99 {ages.p99_ms:.3f} ms ({ages.count} setpoints)')
    if offset_ms is None:
        return (f'p50 {ages.p50_ms:.3f} ms, p99 {ages.p99_ms:.3f} ms (F/T sample -> drives across hosts, '
                f'{ages.count} setpoints; clock offset not measured: not taken off)')
    return (f'p50 {ages.p50_ms - offset_ms:.3f} ms, p99 {ages.p99_ms - offset_ms:.3f} ms (F/T sample -> drives '
            f'across hosts, {ages.count} setpoints, clock offset {offset_ms:+.3f} ms taken off)')


def drives_minus_chain_ms(samples: list[tuple[int, int, int, int]] | None, drives_here: bool) -> float | None:
    """The drives' host clock minus the chain's (ms) from the ping-pong ``samples`` one part took
    of the other (``clock_offset``: the other host's clock minus this one's): the chain's samples
    of the drives' part (``drives_here`` False) or the drives' part's samples of the chain's.
    None without samples."""
    if not samples:
        return None
    offset_ms = estimate(samples).offset_s * 1e3
    return -offset_ms if drives_here else offset_ms


def summary_line(values: dict | None, parts: bool, samples=None, drives_here: bool = False) -> str:
    """``link_latency`` of a run summary: the drives' status ``values``, whether the run is split
    over hosts (``parts``), the clock samples of the other side (see ``drives_minus_chain_ms``)."""
    ages = Ages.from_status(values or {})
    return link_latency_text(ages, parts, drives_minus_chain_ms(samples, drives_here) if parts else None)
