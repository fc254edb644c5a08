"""Sample stamps of a Net F/T stream: uniform at the configured period from
the record positions, following the arrival clock within a bounded slew; a rate anomaly (a
burst at 10x the configured rate, a slow box) is diagnosed and its records refused, never
hidden by clamping stamps."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hil_core.ft.netft_clock import SampleClock

RATE = 1600.0
DT = 1e9 / RATE


def simulate(clock, send_times, rng, latency=(0.0002, 0.004), max_burst=40, late=(0.0, 0.0)):
    """Records sent at ``send_times`` (s, one per position); the receiver wakes at random and
    takes what has arrived; with probability late[0] it reads its clock late[1] s late (another
    thread held the GIL). Returns (positions, ClockResult, arrival) per burst."""
    arrive = send_times + rng.uniform(*latency, send_times.size)
    arrive = np.maximum.accumulate(arrive)                        # UDP on loopback keeps order
    out, i = [], 0
    while i < send_times.size:
        n = int(rng.integers(1, max_burst))
        j = min(i + n, send_times.size)
        wake = arrive[j - 1] + rng.uniform(0, 0.001) + (late[1] if rng.random() < late[0] else 0.0)
        pos = np.arange(i, j)
        res = clock.stamp(pos, int(wake * 1e9))
        out.append((pos, res, wake))
        i = j
    return out


def accepted(out):
    pos = np.concatenate([p for p, r, _ in out if r.stamps is not None])
    st = np.concatenate([r.stamps for _, r, _ in out if r.stamps is not None])
    return pos, st


@pytest.mark.parametrize('ppm, late', [(-200.0, 0.0), (0.0, 0.0), (200.0, 0.0), (100.0, 0.03)])
def test_regular_stream_with_jitter_and_drift(ppm, late):
    """Latency jitter, clock drift, and (last case) 2 % of the bursts read 30 ms late."""
    rng = np.random.default_rng(1)
    clock = SampleClock(RATE)
    t = 10.0 + np.arange(int(10 * RATE)) / (RATE * (1 + ppm * 1e-6))     # a box crystal off by ppm
    out = simulate(clock, t, rng, late=(0.02, late))
    pos, st = accepted(out)
    assert pos.size == t.size and clock.anomaly is None and clock.refused == 0
    spacing = np.diff(st) / np.diff(pos)
    assert spacing.min() >= DT * (1 - clock.slew) - 1 and spacing.max() <= DT * (1 + clock.slew) + 1
    err = st * 1e-9 - t[pos]                                      # stamp - send time
    assert np.ptp(err[t.size // 2:]) < 0.01                      # follows the box, within latency jitter
    assert np.all(np.abs(err) < 0.05)


def test_burst_at_ten_times_the_rate_is_refused_and_diagnosed():
    rng = np.random.default_rng(2)
    clock = SampleClock(RATE)
    normal1 = 20.0 + np.arange(int(2 * RATE)) / RATE
    burst = normal1[-1] + np.arange(1, int(0.3 * 10 * RATE) + 1) / (10 * RATE)     # 0.3 s at 16 kHz
    normal2 = burst[-1] + np.arange(1, int(5 * RATE)) / RATE
    out = simulate(clock, np.concatenate([normal1, burst, normal2]), rng)
    anomalies = [r.anomaly for _, r, _ in out if r.anomaly]
    assert anomalies and 'Hz' in anomalies[0] and clock.anomalies == 1
    pos, st = accepted(out)
    # never compressed: accepted samples at least (1 - slew) periods apart, and exactly as far as
    # their positions within a stretch (the refused records took positions, not time)
    assert np.all(np.diff(st) >= DT * (1 - clock.slew) - 1)
    step = np.diff(pos) == 1
    assert np.all(np.abs(np.diff(st)[step] - DT) <= DT * clock.slew + 1)
    in_burst = (pos >= normal1.size) & (pos < normal1.size + burst.size)
    # at most what fits in the tolerance before the lead is seen (0.9 dt ahead per record)
    assert in_burst.sum() <= clock.tolerance_ns / (0.9 * DT) + 40
    assert clock.refused >= burst.size - in_burst.sum()
    tail = pos >= normal1.size + burst.size + int(2.5 * RATE)   # normal again after the window
    assert tail.sum() >= normal2.size - int(2.5 * RATE) - 40 and clock.anomaly is None
    # samples after the burst are stamped near their send time again, not where clamping put them
    t_all = np.concatenate([normal1, burst, normal2])
    assert np.all(np.abs(st[tail] * 1e-9 - t_all[pos[tail]]) < 0.05)


def test_a_box_streaming_at_ten_times_the_configured_rate_is_never_used():
    rng = np.random.default_rng(3)
    clock = SampleClock(RATE / 10)                                 # told 160 Hz, gets 1600 Hz
    t = 5.0 + np.arange(int(3 * RATE)) / RATE
    out = simulate(clock, t, rng)
    pos, _ = accepted(out)
    assert pos.size < 100 and clock.anomaly is not None
    assert clock.measured_rate == pytest.approx(RATE, rel=0.02)
    assert 'configured sample_rate 160 Hz' in clock.anomaly
    assert f'arrive at {clock.measured_rate:.0f} Hz' in clock.anomaly


def test_a_slow_box_is_diagnosed():
    rng = np.random.default_rng(4)
    clock = SampleClock(RATE)
    t = 5.0 + np.arange(int(4 * RATE / 2)) / (RATE / 2)          # 800 Hz while 1600 Hz is configured
    out = simulate(clock, t, rng)
    assert clock.anomaly is not None and clock.measured_rate == pytest.approx(RATE / 2, rel=0.02)
    pos, st = accepted(out)
    assert np.all(np.diff(st) > 0)


def test_receiver_stall_is_no_anomaly():
    """The receiving thread stops for 1 s (the records queue in the socket): the queued records
    arrive together; their positions, not their arrival, give their stamps."""
    clock = SampleClock(RATE)
    t = 1.0 + np.arange(int(4 * RATE)) / RATE
    res = []
    for k in range(0, t.size, 16):
        if int(1.5 * RATE) <= k < int(2.5 * RATE):
            continue                                             # asleep
        pos = np.arange(max(0, k - int(RATE)) if k == int(2.5 * RATE) else k, min(k + 16, t.size))
        res.append((pos, clock.stamp(pos, int((t[pos[-1]] + 0.0005) * 1e9))))
    pos = np.concatenate([p for p, _ in res])
    st = np.concatenate([r.stamps for _, r in res])
    assert clock.anomaly is None and clock.refused == 0 and clock.jumps == 0
    assert np.all(np.abs(st * 1e-9 - t[pos]) < 0.002)


def test_restart_anchors_the_new_stream_after_the_old_one():
    clock = SampleClock(RATE)
    a = clock.stamp(np.arange(100), int(1e9))
    b = clock.stamp(np.arange(101, 110), int(1.2e9), continuous=False)     # new numbering
    assert b.stamps[0] > a.stamps[-1] and b.stamps[-1] == int(1.2e9)
    assert np.all(np.diff(b.stamps) == round(DT))


def test_epoch_stamps_keep_nanosecond_resolution():
    """Real-time stamps are ~1.8e18 ns: a float64 there is 256 ns coarse. Offsets are computed
    in float, stamps added in int64, so a period of 3.333 ms stays within its slew bounds."""
    clock = SampleClock(300.0)
    t0 = 1_795_464_164_700_346_368
    st = []
    for k in range(0, 3000, 7):
        pos = np.arange(k, k + 7)
        st.append(clock.stamp(pos, t0 + int((k + 6) * 1e9 / 300.0) + (k * 7919) % 900_000).stamps)
    d = np.diff(np.concatenate(st))
    assert d.min() >= 1e9 / 300.0 * (1 - clock.slew) - 1 and d.max() <= 1e9 / 300.0 * (1 + clock.slew) + 1


@settings(max_examples=100, deadline=None)
@given(seed=st.integers(0, 2 ** 31), factors=st.lists(st.sampled_from([0.5, 1.0, 1.0, 1.0, 3.0, 10.0]), min_size=1,
                                                      max_size=6),
       late=st.floats(0.0, 0.08), resets=st.integers(0, 3))
def test_property_stamps_never_squeezed_never_far_ahead(seed, factors, late, resets):
    """Whatever the rate (pieces at 0.5x to 10x), the read delays and new streams: accepted
    stamps rise by at least (1 - slew) periods each, and the newest stamp of an accepted
    burst is never more than ``tolerance`` ahead of its arrival."""
    rng = np.random.default_rng(seed)
    clock = SampleClock(RATE)
    t, pos, reset_at = 1.0, 0, set(rng.integers(1, 60, resets).tolist())
    last = None
    for k in range(60):
        rate = RATE * factors[k * len(factors) // 60]
        n = int(rng.integers(1, 30))
        t += n / rate
        arrival = int((t + rng.uniform(0, 0.002) + (late if rng.random() < 0.05 else 0.0)) * 1e9)
        p = np.arange(pos, pos + n)
        pos += n
        res = clock.stamp(p, arrival, continuous=k not in reset_at)
        if res.stamps is None:
            continue
        d = np.diff(np.concatenate([[last], res.stamps]) if last is not None else res.stamps)
        assert np.all(d >= DT * (1 - clock.slew) - 1)
        assert res.stamps[-1] - arrival <= clock.tolerance_ns
        last = res.stamps[-1]
