"""The link's latency figures (hil_core.supervision.link_latency): the drives' age histogram
against numpy's percentiles of the same ages, the clock offset taken off with the right sign, and
the summary's words where the figure means nothing (one host, sim time, no setpoint)."""
import numpy as np
import pytest

from hil_core.supervision.clock_offset import estimate
from hil_core.supervision.link_latency import (BIN_NS, AgeHistogram, Ages, drives_minus_chain_ms,
                                               link_latency_text, summary_line)


def test_percentiles_match_numpy_within_half_a_bin():
    rng = np.random.default_rng(7)
    ages = (rng.gamma(3.0, 0.6e6, 20_000) + 0.4e6).astype(np.int64)     # ns: 0.4 ms floor, a long tail
    h = AgeHistogram()
    for a in ages.tolist():
        h.add(a)
    p50, p99 = h.percentiles(50.0, 99.0)
    # nearest rank, as numpy's 'inverted_cdf' (the sample at ceil(q n)): the same sample's bin
    for got, q in ((p50, 50), (p99, 99)):
        want = np.percentile(ages, q, method='inverted_cdf') * 1e-6
        assert abs(got - want) <= BIN_NS / 2 * 1e-6 + 1e-12, (q, got, want)
    assert h.count == ages.size


def test_outer_bins_say_their_inner_edge():
    h = AgeHistogram(bin_ns=1_000_000, low_ns=0, high_ns=10_000_000)
    h.add(-5_000_000)                        # before the range: the first bin, its upper edge
    assert h.percentiles(50.0) == (1.0,)
    for _ in range(3):
        h.add(500_000_000)                   # far beyond: the last bin, its lower edge
    assert h.percentiles(99.0) == (10.0,)
    assert h.percentiles(0.0) == (1.0,)


def test_no_ages_no_percentiles_and_bad_input_refused():
    assert AgeHistogram().percentiles(50.0, 99.0) == (None, None)
    with pytest.raises(ValueError):
        AgeHistogram().percentiles(101.0)
    with pytest.raises(ValueError):
        AgeHistogram(bin_ns=0)


def test_offset_sign_from_either_side():
    # the drives' host 3 ms ahead of the chain's, symmetric 0.2 ms one-way delays
    theta, d = 3_000_000, 200_000
    t0 = 1_000_000_000
    chain_pings = [(t0, t0 + d + theta, t0 + d + theta + 10, t0 + 2 * d + 10)]     # chain asks the drives
    drives_pings = [(t0 + theta, t0 + d, t0 + d + 10, t0 + theta + 2 * d + 10)]    # the drives ask the chain
    assert estimate(chain_pings).offset_s == pytest.approx(3e-3)
    assert drives_minus_chain_ms(chain_pings, drives_here=False) == pytest.approx(3.0)
    assert drives_minus_chain_ms(drives_pings, drives_here=True) == pytest.approx(3.0)
    assert drives_minus_chain_ms([], drives_here=True) is None


def test_summary_takes_the_offset_off():
    # raw ages on the drives' clock, which is 3 ms ahead: 4.5 ms raw is 1.5 ms true
    values = {'setpoint_age_clock': 'wall', 'setpoint_ages': '800', 'setpoint_age_p50_ms': '4.5',
              'setpoint_age_p99_ms': '7.25'}
    text = link_latency_text(Ages.from_status(values), True, 3.0)
    assert text.startswith('p50 1.500 ms, p99 4.250 ms (') and '800 setpoints' in text and '+3.000 ms' in text
    assert link_latency_text(Ages.from_status(values), True, None).startswith('p50 4.500 ms, p99 7.250 ms (')


def test_summary_words_where_it_means_nothing():
    wall = {'setpoint_age_clock': 'wall', 'setpoint_ages': '10', 'setpoint_age_p50_ms': '0.8',
            'setpoint_age_p99_ms': '2.1'}
    one = summary_line(wall, parts=False)
    assert one.startswith('not measured (one host)') and 'p50 0.800 ms, p99 2.100 ms' in one
    sim = dict(wall, setpoint_age_clock='sim')
    assert summary_line(sim, parts=True).startswith('not measured (sim time')
    assert summary_line({}, parts=True).startswith('not measured (no status')
    none = {'setpoint_age_clock': 'wall', 'setpoint_ages': '0', 'setpoint_age_p50_ms': '', 'setpoint_age_p99_ms': ''}
    assert summary_line(none, parts=True) == 'not measured (no setpoint received)'
