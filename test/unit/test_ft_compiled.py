"""Compiled F/T chain (SignalChain, ft.signal_chain_kernel) against the numpy oracle (SignalChainNumpy).

Both get the same seeded streams: realistic wrenches (pushes, noise, mains hum) with every kind
of bad sample injected (NaN, saturation, spikes, persistent steps, status-flagged samples,
out-of-order stamps, gaps beyond stale_timeout), cut into blocks of random sizes, with a tare
in the middle and gravity compensation by one orientation per block or one per sample.
Decisions (reason, publish) must be identical; values agree to 1e-12 of their scale (the
same arithmetic sample by sample; bit-equal in practice, the bound allows for a compiler's
different but exact-to-rounding evaluation).
"""
import numpy as np
import pytest

from hil_core.maths import rotations
from hil_core.ft import signal_chain as sc
from hil_core.ft.load_profiles import LoadProfile

DT_NS = 625_000
RTOL = 1e-12


def stream(n, seed):
    rng = np.random.default_rng(seed)
    x = LoadProfile([{'type': 'pushes', 'rate': 2.0}, {'type': 'noise', 'std': 0.1},
                     {'type': 'mains', 'amplitude': 0.3}], seed=seed).sample(np.arange(n) / 1600.0)
    x = np.array(x, dtype=float)
    stamps = (np.arange(n, dtype=np.int64) + 1) * DT_NS
    flagged = np.zeros(n, dtype=bool)
    for i in rng.choice(np.arange(50, n - 50), size=n // 100, replace=False):
        kind = rng.integers(6)
        if kind == 0:
            x[i, rng.integers(6)] = np.nan
        elif kind == 1:
            x[i, rng.integers(6)] = rng.choice([-1, 1]) * 2000.0          # beyond the mini45 range
        elif kind == 2:
            x[i, :3] += rng.normal(size=3) * 300.0                        # a single spike
        elif kind == 3:
            x[i:, :3] += rng.normal(size=3) * 80.0                        # a persistent step
        elif kind == 4:
            flagged[i] = True
        else:
            stamps[i] = stamps[i - 3]                                     # out of order
    gap = n // 2
    stamps[gap:] += 60_000_000                                            # 60 ms silence: stale
    return stamps, x, flagged


def configs():
    yield 'grid', sc.ChainConfig(payload_mass=1.2, payload_cog=(0.0, 0.01, 0.05), bias_samples=50)
    yield 'count_notch', sc.ChainConfig(decimation='count', notch_hz=50.0, order=4, cutoff_hz=30.0,
                                        bias_samples=30)
    yield 'no_payload_no_spike', sc.ChainConfig(spike_factor=0.0)


def same(out_a, out_b):
    assert np.array_equal(out_a.stamps, out_b.stamps)
    assert np.array_equal(out_a.reason, out_b.reason)
    assert np.array_equal(out_a.publish, out_b.publish)
    assert np.array_equal(np.isnan(out_a.filtered), np.isnan(out_b.filtered))
    for a, b in ((out_a.raw, out_b.raw), (out_a.filtered, out_b.filtered)):
        ok = ~np.isnan(b)
        scale = max(np.max(np.abs(b[ok]), initial=0.0), 1e-300)
        assert np.max(np.abs(a[ok] - b[ok]), initial=0.0) <= RTOL * scale


def same_state(fast, ref):
    assert fast.counters == ref.counters
    assert fast.last_stamp == ref.last_stamp
    assert fast.last_valid_stamp == ref.last_valid_stamp
    assert np.max(np.abs(fast.bias - ref.bias)) <= RTOL * np.max(np.abs(ref.bias), initial=0.0)


@pytest.mark.parametrize('name,cfg', list(configs()))
@pytest.mark.parametrize('gravity', ['one_R_per_block', 'R_per_sample', 'none'])
def test_stream_matches_oracle(name, cfg, gravity):
    fast, ref = sc.SignalChain(cfg), sc.SignalChainNumpy(cfg)
    stamps, x, flagged = stream(3000, seed=len(name))
    rng = np.random.default_rng(5)
    quats = rotations.quat_normalize(rng.normal(size=(len(x), 4)))
    Rs = rotations.quat_to_matrix(quats)
    cuts = np.cumsum(rng.integers(1, 9, size=len(x)))
    cuts = cuts[cuts < len(x)]
    start, tared = 0, False
    for stop in [*cuts, len(x)]:
        sl = slice(start, stop)
        R = None if gravity == 'none' else Rs[start] if gravity == 'one_R_per_block' else Rs[sl]
        use_flags = flagged[sl] if start % 2 else None
        a = fast.process(stamps[sl], x[sl], R=R, flagged=use_flags)
        b = ref.process(stamps[sl], x[sl], R=R, flagged=use_flags)
        same(a, b)
        if not tared and start > len(x) // 3:
            assert fast.tare() == ref.tare()
            tared = True
        start = stop
        same_state(fast, ref)
        now = int(stamps[stop - 1]) + 30_000_000
        assert fast.is_stale(now) == ref.is_stale(now)
    assert tared and np.any(fast.bias != 0)
    c = ref.counters
    assert c['valid'] > 2000 and c['spike'] + c['saturated'] + c['nonfinite'] + c['out_of_order'] > 10
    if cfg.spike_factor > 0:
        assert c['spike'] > 0


def test_single_samples_as_the_lockstep_node_feeds_them():
    cfg = sc.ChainConfig(payload_mass=0.8, payload_cog=(0.01, 0.0, 0.04))
    fast, ref = sc.SignalChain(cfg), sc.SignalChainNumpy(cfg)
    stamps, x, flagged = stream(1500, seed=9)
    R = rotations.quat_to_matrix(rotations.quat_normalize(np.array([0.1, 0.2, -0.1, 0.95])))
    for i in range(len(x)):
        same(fast.process(np.array([stamps[i]]), x[i], R=R, flagged=flagged[i:i + 1]),
             ref.process(np.array([stamps[i]]), x[i], R=R, flagged=flagged[i:i + 1]))
    same_state(fast, ref)
    assert fast.clear_bias() is None and not np.any(fast.bias)


def test_tare_refused_before_enough_samples_and_bad_shapes():
    cfg = sc.ChainConfig(bias_samples=100)
    fast, ref = sc.SignalChain(cfg), sc.SignalChainNumpy(cfg)
    for ch in (fast, ref):
        ch.process(np.arange(1, 11) * DT_NS, np.ones((10, 6)))
    assert fast.tare() == ref.tare() and fast.tare()[0] is False
    with pytest.raises(ValueError):
        fast.process(np.arange(3), np.zeros((2, 6)))
    assert fast.is_stale(0) is False and sc.SignalChain(cfg).is_stale(0) is True


def test_noncontiguous_inputs_give_the_same_numbers():
    cfg = sc.ChainConfig()
    fast, ref = sc.SignalChain(cfg), sc.SignalChainNumpy(cfg)
    stamps, x, _ = stream(400, seed=2)
    xf = np.asfortranarray(x)
    R = np.asfortranarray(np.eye(3))
    same(fast.process(stamps, xf, R=R), ref.process(stamps, x, R=R))


@pytest.mark.parametrize('raw_all', [False, True])
@pytest.mark.parametrize('rotate', [False, True])
def test_published_rows_match_the_numpy_oracle(raw_all, rotate):
    """What the F/T node publishes from each 4-sample frame of a stream with every kind of bad
    sample (``published``, one compiled call) against ``published_numpy``: the same stamps, the
    same rejected count, rows equal to 1e-12 (NaN where the filter had no input)."""
    chain = sc.SignalChain(sc.ChainConfig(payload_mass=0.8, payload_cog=(0.01, 0.0, 0.04)))
    stamps, x, flagged = stream(2000, seed=5)
    rng = np.random.default_rng(5)
    rejected = published_rows = 0
    for i in range(0, len(x), 4):
        R = rotations.quat_to_matrix(rotations.quat_normalize(rng.normal(size=4)))
        out = chain.process(stamps[i:i + 4], x[i:i + 4], R=R, flagged=flagged[i:i + 4])
        got, want = sc.published(out, R, raw_all, rotate), sc.published_numpy(out, R, raw_all, rotate)
        assert got.raw_stamps == want.raw_stamps and got.stamps == want.stamps and got.rejected == want.rejected
        np.testing.assert_allclose(got.raw, want.raw, rtol=0, atol=RTOL * 1e3)
        np.testing.assert_allclose(got.filtered, want.filtered, rtol=0, atol=RTOL * 1e3)
        rejected += got.rejected
        published_rows += len(got.stamps)
    assert rejected > 10 and published_rows > 400      # the stream had both
