"""Cycle health (hil_core.supervision.timing.CycleHealth): verdicts per cycle against hand-driven clocks
(overrun by CPU time in lockstep and by execution time in real time, deadlines from wall
stamps or from the previous cycle), statistics against numpy, the ring's bound, the injected
delay; the seed-000 rate constants are unchanged."""
import math
from array import array

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hil_core.supervision.timing as timing
from hil_core.supervision.timing import CycleHealth, ring, ring_percentiles


class FakeClocks:
    """perf_counter, thread_time and time_ns driven by the test."""

    def __init__(self, monkeypatch):
        self.perf = 100.0
        self.cpu = 5.0
        self.wall_ns = 1_000_000_000_000
        monkeypatch.setattr(timing, '_perf', lambda: self.perf)
        monkeypatch.setattr(timing, '_cpu', lambda: self.cpu)
        monkeypatch.setattr(timing, '_wall_ns', lambda: self.wall_ns)

    def cycle(self, h, exe, cpu, gap=0.0, stamp_age=None):
        """One cycle: ``gap`` s idle before it, then ``exe`` s of wall time of which ``cpu`` s CPU."""
        self.perf += gap
        self.wall_ns += int(round(gap * 1e9))
        stamp = None if stamp_age is None else self.wall_ns - int(round(stamp_age * 1e9))
        t0 = h.begin(stamp)
        self.perf += exe
        self.cpu += cpu
        self.wall_ns += int(round(exe * 1e9))
        h.end(t0)


@pytest.fixture
def clocks(monkeypatch):
    return FakeClocks(monkeypatch)


def test_seed_000_rates_unchanged():
    assert timing.HIGH_LEVEL_PERIOD == 0.0025 and timing.SEGMENTATION_PERIOD == 0.00125
    assert timing.SERVO_PERIOD == 0.000625 and timing.SERVO_POINTS_PER_MOVE == 4


def test_lockstep_overrun_is_judged_on_cpu_time(clocks):
    h = CycleHealth(0.0025, budget_fraction=0.5, lockstep=True)       # budget 1.25 ms of CPU
    clocks.cycle(h, exe=0.010, cpu=0.001)     # preempted for 9 ms: not this node's fault
    clocks.cycle(h, exe=0.0014, cpu=0.0013)   # its own work exceeds the budget
    clocks.cycle(h, exe=0.001, cpu=0.001, gap=1.0)   # a long idle gap: no deadline in lockstep
    assert (h.cycles, h.overruns, h.deadline_misses, h.late) == (3, 1, 0, 1)
    assert h.cpu_s == pytest.approx(0.0033)


def test_realtime_overrun_is_judged_on_execution_time(clocks):
    h = CycleHealth(0.0025, lockstep=False)
    clocks.cycle(h, exe=0.003, cpu=0.0005)          # output late although little CPU
    clocks.cycle(h, exe=0.001, cpu=0.001, gap=0.0005)  # ends 4.5 ms after the previous began: in time
    assert (h.overruns, h.deadline_misses, h.late) == (1, 0, 1)


def test_realtime_deadline_without_stamps_is_a_missed_frame(clocks):
    h = CycleHealth(0.0025)
    clocks.cycle(h, exe=0.001, cpu=0.001)
    clocks.cycle(h, exe=0.001, cpu=0.001, gap=0.0015)   # ends 3.5 ms after the previous began: ok
    clocks.cycle(h, exe=0.001, cpu=0.001, gap=0.0041)   # ends 5.1 ms after: a frame was missed
    assert (h.overruns, h.deadline_misses, h.late) == (0, 1, 1)


def test_wall_stamps_give_latency_and_deadlines(clocks):
    h = CycleHealth(0.0025, wall_stamps=True, deadline=0.004)
    ages = [0.0005, 0.001, 0.0035, 0.002, 0.010]        # input age at begin (s)
    for age in ages:
        clocks.cycle(h, exe=0.0005, cpu=0.0005, gap=0.0025, stamp_age=age)
    lat = sorted(a + 0.0005 for a in ages)              # latency measured when the output is out
    snap = h.snapshot()
    assert h.deadline_misses == 1                       # only 10.5 ms > 4 ms (3.5 + 0.5 = 4.0 is not late)
    assert snap['latency_p50_ms'] == pytest.approx(np.percentile(lat, 50, method='inverted_cdf') * 1e3)
    assert snap['latency_p99_ms'] == pytest.approx(lat[-1] * 1e3)


def test_sim_stamps_give_no_latency(clocks):
    h = CycleHealth(0.0025, wall_stamps=False)
    clocks.cycle(h, exe=0.001, cpu=0.001, stamp_age=5.0)
    assert math.isnan(h.snapshot()['latency_p50_ms']) and h.deadline_misses == 0


def test_skipped_cycles_are_counted_apart(clocks):
    h = CycleHealth(0.0025)
    h.skipped(3)
    h.skipped(0)
    clocks.cycle(h, exe=0.001, cpu=0.001)
    snap = h.snapshot()
    assert (snap['cycles'], snap['skipped'], snap['late']) == (1, 3, 0)


def test_statistics_match_numpy_and_the_ring_keeps_the_last_samples(clocks):
    rng = np.random.default_rng(3)
    h = CycleHealth(0.0025, capacity=64)
    exes = rng.uniform(1e-4, 2e-3, 200)
    cpus = exes * rng.uniform(0.5, 1.0, 200)
    gaps = rng.uniform(0.0, 2e-3, 200)
    for e, c, g in zip(exes, cpus, gaps):
        clocks.cycle(h, exe=e, cpu=c, gap=g)
    snap = h.snapshot()
    last = exes[-64:]
    assert snap['exec_p50_us'] == pytest.approx(np.percentile(last, 50, method='inverted_cdf') * 1e6)
    assert snap['exec_p99_us'] == pytest.approx(np.percentile(last, 99, method='inverted_cdf') * 1e6)
    assert snap['cpu_p50_us'] == pytest.approx(np.percentile(cpus[-64:], 50, method='inverted_cdf') * 1e6)
    assert snap['exec_max_us'] == pytest.approx(exes.max() * 1e6)       # max over the whole run
    intervals = exes[:-1] + gaps[1:]                                     # begin to next begin
    assert snap['period_mean_us'] == pytest.approx(intervals.mean() * 1e6)
    assert snap['period_std_us'] == pytest.approx(intervals.std() * 1e6, rel=1e-6)
    assert snap['period_max_us'] == pytest.approx(intervals.max() * 1e6)
    assert snap['cpu_s'] == pytest.approx(cpus.sum())
    assert snap['budget_us'] == pytest.approx(2500.0)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(-1e6, 1e6), min_size=1, max_size=300), st.floats(0.0, 1.0))
def test_percentile_is_numpys_inverted_cdf(values, q):
    samples = ring(300)
    samples[:len(values)] = array('d', values)
    expected = np.percentile(values, q * 100.0, method='inverted_cdf')
    assert ring_percentiles(samples, len(values), (q,))[0] == pytest.approx(expected, abs=1e-9)


def _nearest_rank(sorted_values, q):
    """The oracle: the nearest-rank percentile of an ascending list (NaN if empty)."""
    n = len(sorted_values)
    return math.nan if n == 0 else sorted_values[min(n - 1, max(0, math.ceil(q * n) - 1))]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(-1e6, 1e6), min_size=0, max_size=300), st.integers(0, 300),
       st.lists(st.floats(0.0, 1.0), min_size=1, max_size=3))
def test_ring_percentiles_are_the_sorted_ones(values, n, qs):
    """A report's percentiles by one partition of the ring's first ``n`` samples: exactly what
    the nearest rank gives on them sorted (NaN when there are none)."""
    samples = ring(300)
    samples[:len(values)] = array('d', values)
    n = min(n, len(values))
    got = ring_percentiles(samples, n, tuple(qs))
    want = [_nearest_rank(sorted(values[:n]), q) for q in qs]
    assert got == want or (n == 0 and all(math.isnan(v) for v in got))


def test_injected_delay_is_cpu_work():
    """The test parameter emulates a slow node: every monitored cycle takes at least the delay
    of the thread's CPU (a lower bound by construction, whatever the machine's load)."""
    h = CycleHealth(0.0025, lockstep=True, inject_delay=0.003)
    for _ in range(3):
        h.end(h.begin())
    assert h.cpu_max >= 0.003 and h.overruns == 3 and h.late == 3


@pytest.mark.parametrize('kwargs', [dict(period=0.0), dict(period=math.nan), dict(period=1e-3, budget_fraction=-1),
                                    dict(period=1e-3, capacity=1000), dict(period=1e-3, deadline=0.0)])
def test_bad_construction_is_refused(kwargs):
    with pytest.raises(ValueError):
        CycleHealth(**kwargs)


def test_empty_snapshot_has_no_fake_figures():
    snap = CycleHealth(0.0025).snapshot()
    assert snap['cycles'] == 0 and math.isnan(snap['exec_p50_us']) and math.isnan(snap['period_mean_us'])
