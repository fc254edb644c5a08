"""Default rates and periods of the Hexafloat control architecture (seed 000, section 5), and
the cycle-health accumulator every node feeds on its hot path.

High-level algorithms run at 0.4 kHz (move time 2.5 ms), the segmentation move time is
1.25 ms and the servo interrupt 1.6 kHz (0.625 ms). Every node takes these as parameters;
these constants are only the defaults.

``CycleHealth`` (ros2_control's controller-manager statistics, plus a verdict per cycle): a
node calls ``t0 = h.begin(stamp_ns)`` when a cycle starts and ``h.end(t0)`` when its output is
out. Per cycle it keeps execution time (``time.perf_counter``), the thread's CPU time
(``time.thread_time``), the period between begins and, for wall-clock stamps, the latency
from the input stamp. Samples go to a bounded ring; percentiles are computed only when a
report is asked for, so a cycle costs about a microsecond (no numpy, no allocation but floats).
The rings are ``array('d')``: numpy reads one without a copy, and ``ring_percentiles`` takes a
report's two order statistics by one partition (9 us for 1024 samples here) instead of a sort
of the ring (51-58 us); a write costs ~22 ns more than into a list.

A cycle is **late** when it overran or missed its deadline:

* overrun: the cycle took more than ``budget_fraction`` of its period. In lockstep (simulated
  time) the judge is the thread's CPU time: wall time there includes whatever the machine gave
  other processes, while CPU time says whether the node's own work fits its period. In real
  time the judge is the execution (wall) time: what matters is when the output is out.
* deadline miss (real time only): the output came more than ``deadline`` (default one period)
  after the input's stamp when stamps are wall time (the lab), else more than one period plus
  ``deadline`` after the previous cycle began (a whole frame was missed).

``skipped(n)`` counts cycles a node had to drop (a frame it never computed).
"""
from __future__ import annotations

import math
import time
from array import array

import numpy as np

HIGH_LEVEL_PERIOD = 0.0025      # s, one move / one lockstep frame
SEGMENTATION_PERIOD = 0.00125   # s
SERVO_PERIOD = 0.000625         # s, 1.6 kHz
SERVO_POINTS_PER_MOVE = round(HIGH_LEVEL_PERIOD / SERVO_PERIOD)  # 4

_perf = time.perf_counter
_cpu = time.thread_time
_wall_ns = time.time_ns


def _positive(name: str, value: float) -> float:
    value = float(value)
    if not math.isfinite(value) or value <= 0.0:
        raise ValueError(f'{name} must be a positive finite number, got {value}')
    return value


def _rank(n: int, q: float) -> int:
    """The index of the nearest-rank percentile ``q`` (numpy's 'inverted_cdf') among ``n`` sorted values."""
    return min(n - 1, max(0, math.ceil(q * n) - 1))


def ring(capacity: int) -> array:
    """A ring of ``capacity`` float samples, zeros (the module docstring says why an array)."""
    return array('d', bytes(8 * capacity))


def ring_percentiles(samples: array, n: int, qs: tuple[float, ...]) -> list[float]:
    """The nearest-rank percentiles (numpy's 'inverted_cdf') of the first ``n`` samples at each of
    ``qs``, without sorting them: the order statistics from one partition of a copy (NaN each if
    ``n`` is 0)."""
    if n == 0:
        return [math.nan] * len(qs)
    ranks = [_rank(n, q) for q in qs]
    part = np.partition(np.frombuffer(samples, dtype=np.float64, count=n), ranks)
    return [float(part[k]) for k in ranks]


class CycleHealth:
    """Counters and bounded samples of one periodic cycle (see the module docstring)."""

    def __init__(self, period: float, budget_fraction: float = 1.0, lockstep: bool = False,
                 wall_stamps: bool = False, deadline: float | None = None, capacity: int = 1024,
                 inject_delay: float = 0.0):
        self.period = _positive('period', period)
        self.budget = self.period * _positive('budget_fraction', budget_fraction)
        self.deadline = self.period if deadline is None else _positive('deadline', deadline)
        if capacity < 1 or capacity & (capacity - 1):
            raise ValueError(f'capacity must be a power of two, got {capacity}')
        self.lockstep = bool(lockstep)
        self.wall_stamps = bool(wall_stamps)
        self.inject_delay = float(inject_delay)
        self._mask = capacity - 1
        self._exec = ring(capacity)
        self._cpu_ring = ring(capacity)
        self._lat = ring(capacity)
        self._i = self._n = self._li = self._ln = 0
        self.cycles = self.skipped_cycles = self.overruns = self.deadline_misses = self.late = 0
        self.cpu_s = self.exec_max = self.cpu_max = 0.0
        self.intervals = 0
        self._isum = self._isq = self.interval_max = 0.0
        self._last_begin: float | None = None
        self._prev_begin: float | None = None
        self._cpu0 = 0.0
        self._stamp: int | None = None

    # --- hot path --------------------------------------------------------------------------
    def begin(self, stamp_ns: int | None = None) -> float:
        """Start a cycle; ``stamp_ns`` = the input's stamp (ns). Returns the token for ``end``."""
        t0 = _perf()
        self._cpu0 = cpu0 = _cpu()
        self._stamp = stamp_ns
        last = self._prev_begin = self._last_begin
        if last is not None:
            dt = t0 - last
            self.intervals += 1
            self._isum += dt
            self._isq += dt * dt
            if dt > self.interval_max:
                self.interval_max = dt
        self._last_begin = t0
        if self.inject_delay > 0.0:
            # emulated work (a test parameter): CPU, not sleep, so that the cycle is slow in
            # every judge: execution and CPU time alike, whatever the machine's load
            while _cpu() - cpu0 < self.inject_delay:
                pass
        return t0

    def end(self, t0: float) -> None:
        """End the cycle started by ``begin`` (which returned ``t0``)."""
        t1 = _perf()
        cpu = _cpu() - self._cpu0
        exe = t1 - t0
        i = self._i
        self._exec[i] = exe
        self._cpu_ring[i] = cpu
        self._i = (i + 1) & self._mask
        if self._n <= self._mask:
            self._n += 1
        self.cycles += 1
        self.cpu_s += cpu
        if exe > self.exec_max:
            self.exec_max = exe
        if cpu > self.cpu_max:
            self.cpu_max = cpu
        late = False
        if (cpu if self.lockstep else exe) > self.budget:
            self.overruns += 1
            late = True
        if not self.lockstep:
            stamp = self._stamp
            if stamp is not None and self.wall_stamps:
                lat = (_wall_ns() - stamp) * 1e-9
                j = self._li
                self._lat[j] = lat
                self._li = (j + 1) & self._mask
                if self._ln <= self._mask:
                    self._ln += 1
                missed = lat > self.deadline
            else:
                prev = self._prev_begin
                missed = prev is not None and t1 - prev > self.period + self.deadline
            if missed:
                self.deadline_misses += 1
                late = True
        if late:
            self.late += 1

    def skipped(self, n: int = 1) -> None:
        """Count ``n`` cycles the node had to drop."""
        if n > 0:
            self.skipped_cycles += int(n)

    # --- reports (not on the hot path) ----------------------------------------------------
    def snapshot(self) -> dict[str, float]:
        """Figures for a status: counters since the start, percentiles over the last samples
        (up to ``capacity`` cycles), times in us (latency in ms)."""
        ex50, ex99 = ring_percentiles(self._exec, self._n, (0.5, 0.99))
        (cp50,) = ring_percentiles(self._cpu_ring, self._n, (0.5,))
        lat50, lat99 = ring_percentiles(self._lat, self._ln, (0.5, 0.99))
        k = self.intervals
        mean = self._isum / k if k else math.nan
        var = max(0.0, self._isq / k - mean * mean) if k else math.nan
        return {
            'cycles': self.cycles, 'skipped': self.skipped_cycles, 'late': self.late,
            'overruns': self.overruns, 'deadline_misses': self.deadline_misses,
            'exec_p50_us': ex50 * 1e6, 'exec_p99_us': ex99 * 1e6,
            'exec_max_us': self.exec_max * 1e6 if self.cycles else math.nan,
            'cpu_p50_us': cp50 * 1e6, 'cpu_max_us': self.cpu_max * 1e6 if self.cycles else math.nan,
            'cpu_s': self.cpu_s,
            'period_mean_us': mean * 1e6, 'period_std_us': math.sqrt(var) * 1e6,
            'period_max_us': self.interval_max * 1e6 if k else math.nan,
            'latency_p50_ms': lat50 * 1e3, 'latency_p99_ms': lat99 * 1e3,
            'budget_us': self.budget * 1e6,
        }
