"""hil_core.supervision.clock_offset against the ground truth of simulated hosts: a remote clock
ahead by a known offset, one-way delays drawn at random, the far side's own time in between.
Expected values come from the delays themselves (offset error = half the asymmetry, round trip =
the sum of the two delays), not from the estimator's formula."""
import numpy as np
import pytest

from hil_core.supervision.clock_offset import estimate, sample


def _pings(theta_ns, d_out, d_back, hold, t_start=10**18):
    """(t0, t1, t2, t3) of pings sent 10 ms apart: A's clock is the true time, B's is ahead by
    theta_ns; the request takes d_out, B answers after hold, the answer takes d_back (ns)."""
    out = []
    for i, (a, b, h) in enumerate(zip(d_out, d_back, hold)):
        t0 = t_start + i * 10_000_000
        true_arrival = t0 + a
        t1 = true_arrival + theta_ns
        t2 = t1 + h
        t3 = true_arrival + h + b
        out.append((int(t0), int(t1), int(t2), int(t3)))
    return out


def test_symmetric_delays_give_the_offset_exactly():
    d = np.array([200_000, 350_000, 180_000, 900_000, 220_000])
    est = estimate(_pings(-2_500_000_123, d, d, [30_000] * 5))
    assert est.offset_s == pytest.approx(-2.500000123, abs=1e-12)
    assert est.rtt_s == pytest.approx(np.median(2 * d) * 1e-9, abs=1e-12)
    assert est.samples == 5 and est.offset_spread_s == pytest.approx(0.0, abs=1e-12)


@pytest.mark.parametrize('seed', range(5))
def test_random_delays_median_of_the_true_errors(seed):
    rng = np.random.default_rng(seed)
    n = 9
    d_out = rng.integers(50_000, 2_000_000, n)        # 0.05-2 ms one way
    d_back = rng.integers(50_000, 2_000_000, n)
    hold = rng.integers(1_000, 500_000, n)            # the far side's own time between t1 and t2
    theta = int(rng.integers(-10**9, 10**9))
    est = estimate(_pings(theta, d_out, d_back, hold))
    # ground truth: each sample is off by half its asymmetry; its round trip is the two delays
    assert est.offset_s == pytest.approx((theta + np.median((d_out - d_back) / 2)) * 1e-9, abs=1e-12)
    assert est.rtt_s == pytest.approx(np.median(d_out + d_back) * 1e-9, abs=1e-12)
    assert est.offset_spread_s == pytest.approx(np.ptp((d_out - d_back) / 2) * 1e-9, abs=1e-12)
    assert est.rtt_max_s == pytest.approx(np.max(d_out + d_back) * 1e-9, abs=1e-12)
    assert abs(est.offset_s - theta * 1e-9) <= est.rtt_max_s / 2      # the bound the summary's reader can use


def test_a_slow_first_sample_does_not_move_the_median():
    d = np.array([40_000_000, 300_000, 310_000, 290_000, 305_000])   # 40 ms: a fresh connection
    back = np.array([300_000, 300_000, 310_000, 290_000, 305_000])
    est = estimate(_pings(1_000_000, d, back, [0] * 5))
    assert est.offset_s == pytest.approx(1e-3, abs=1e-12)                 # the four symmetric ones
    assert est.rtt_s == pytest.approx(np.median(d + back) * 1e-9, abs=1e-12)


def test_impossible_samples_and_none_are_refused():
    with pytest.raises(ValueError, match='not a ping-pong'):
        sample(10, 5, 6, 9)
    with pytest.raises(ValueError, match='no ping-pong'):
        estimate([])
    assert sample(0, 1_000, 1_000, 2_000) == pytest.approx((0.0, 2e-6), abs=1e-15)
