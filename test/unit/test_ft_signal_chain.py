"""F/T signal chain: filter vs scipy, group delay (seed 000: ~6 ms at 40 Hz), gravity
compensation, bias, decimation and every bad-input case."""
import numpy as np
import pytest
from scipy import signal

from hil_core.maths import rotations
from hil_core.ft import signal_chain as sc
from hil_core.ft.filters import StreamFilter, design_sos, group_delay_s

FS = 1600.0
DT_NS = 625_000


def _signals(n=4000, seed=0):
    rng = np.random.default_rng(seed)
    t = np.arange(n) / FS
    step = np.where(t > 0.3, 1.0, 0.0)[:, None] * np.array([10, -5, 20, 0.5, -0.2, 1.0])
    sine = np.sin(2 * np.pi * np.array([1, 3, 7, 20, 50, 150])[None, :] * t[:, None])
    return step + sine + 0.1 * rng.normal(size=(n, 6))


@pytest.mark.parametrize('order,cutoff,notch', [(2, 40.0, 0.0), (4, 25.0, 0.0), (2, 40.0, 50.0)])
def test_streaming_matches_sosfilt(order, cutoff, notch):
    sos = design_sos(order, cutoff, FS, notch)
    x = _signals()
    ref = signal.sosfilt(sos, x, axis=0)
    per_sample = StreamFilter(sos)
    per_sample.reset()
    y1 = np.array([per_sample.step(row) for row in x])
    blocks = StreamFilter(sos)
    blocks.reset()
    cuts = np.cumsum(np.random.default_rng(3).integers(1, 40, size=300))
    y2 = np.vstack([blocks.block(b) for b in np.split(x, cuts[cuts < len(x)])])
    assert np.max(np.abs(y1 - ref)) < 1e-12
    assert np.max(np.abs(y2 - ref)) < 1e-12


def test_steady_state_start_has_no_transient():
    sos = design_sos(2, 40.0, FS)
    f = StreamFilter(sos)
    x0 = np.array([3.0, -1.0, 20.0, 0.1, 0.2, -0.3])
    f.reset(x0)
    y = f.block(np.tile(x0, (200, 1)))
    assert np.max(np.abs(y - x0)) < 1e-12
    ref = signal.sosfilt(sos, np.tile(x0, (200, 1)), axis=0, zi=signal.sosfilt_zi(sos)[:, :, None] * x0)[0]
    assert np.max(np.abs(y - ref)) < 1e-12


def test_analytic_group_delay_matches_scipy_and_seed():
    sos = design_sos(2, 40.0, FS)
    f = np.linspace(0.5, 100, 50)
    b, a = signal.sos2tf(sos)
    _, gd_samples = signal.group_delay((b, a), w=f, fs=FS)
    assert np.max(np.abs(group_delay_s(sos, f, FS) - gd_samples / FS)) < 1e-9
    # seed 000: a 40 Hz 2nd-order Butterworth gives a constant delay of about 6 ms below 7 Hz
    gd = group_delay_s(sos, np.linspace(0, 7, 8), FS)
    assert np.all((gd > 5.0e-3) & (gd < 6.5e-3))
    assert np.ptp(gd) < 0.3e-3


def _phase(y, t, f):
    m = np.column_stack([np.sin(2 * np.pi * f * t), np.cos(2 * np.pi * f * t)])
    s, c = np.linalg.lstsq(m, y, rcond=None)[0]
    return np.arctan2(c, s)


@pytest.mark.parametrize('f', [1.0, 2.0, 3.5, 5.0, 7.0])
def test_measured_group_delay_within_0p2_ms(f):
    sos = design_sos(2, 40.0, FS)
    t = np.arange(int(12 * FS)) / FS
    tail = t > 4.0                           # well past the start transient
    df = 0.05
    phases = []
    for fi in (f - df, f + df):
        filt = StreamFilter(sos, channels=1)
        filt.reset()
        y = filt.block(np.sin(2 * np.pi * fi * t)[:, None])[:, 0]
        phases.append(_phase(y[tail], t[tail], fi) - _phase(np.sin(2 * np.pi * fi * t[tail]), t[tail], fi))
    dphi = np.angle(np.exp(1j * (phases[1] - phases[0])))
    measured = -dphi / (2 * np.pi * 2 * df)
    analytic = group_delay_s(sos, [f], FS)[0]
    assert abs(measured - analytic) < 0.2e-3


def _random_quats(n, seed):
    q = np.random.default_rng(seed).normal(size=(n, 4))
    return q / np.linalg.norm(q, axis=1, keepdims=True)


def test_gravity_compensation_50_orientations():
    mass, cog, g = 2.3, np.array([0.01, -0.02, 0.05]), np.array([0.0, 0.0, -9.81])
    q = _random_quats(50, 11)
    # independent model of the reading: weight rotated into the sensor frame by the inverse quaternion
    f_sensor = rotations.rotate(rotations.quat_conjugate(q), np.tile(mass * g, (50, 1)))
    reading = np.hstack([f_sensor, np.cross(cog, f_sensor)])
    chain = sc.SignalChain(sc.ChainConfig(payload_mass=mass, payload_cog=tuple(cog), spike_factor=0.0))
    out = chain.process(np.arange(1, 51) * DT_NS, reading, R=rotations.quat_to_matrix(q))
    assert np.all(out.valid)
    assert np.max(np.linalg.norm(out.raw[:, :3], axis=1)) < 1e-9
    assert np.max(np.linalg.norm(out.raw[:, 3:], axis=1)) < 1e-9


def test_bias_tare_and_its_interplay_with_gravity():
    offset = np.array([1.5, -2.0, 3.0, 0.1, -0.05, 0.2])
    cfg = sc.ChainConfig(bias_samples=100, payload_mass=1.0, payload_cog=(0, 0, 0.1))
    chain = sc.SignalChain(cfg)
    ok, why = chain.tare()
    assert not ok and '100' in why
    noise = 0.01 * np.random.default_rng(0).normal(size=(400, 6))
    up = sc.gravity_wrench(np.eye(3), 1.0, (0, 0, 0.1))
    chain.process(np.arange(1, 401) * DT_NS, offset + up + noise)
    ok, why = chain.tare()
    assert ok, why
    assert np.allclose(chain.bias, offset + noise[-100:].mean(axis=0), atol=1e-12)
    # tilt the sensor by 90 degrees: the payload weight is compensated, the offset is tared
    R = rotations.rpy_to_matrix([np.pi / 2, 0, 0])
    tilted = offset + sc.gravity_wrench(R, 1.0, (0, 0, 0.1))
    out = chain.process(np.arange(401, 1001) * DT_NS, np.tile(tilted, (600, 1)), R=R)
    assert np.all(out.valid)
    assert np.max(np.abs(out.raw[-1])) < 0.01


def test_grid_decimation_publishes_frame_samples():
    chain = sc.SignalChain(sc.ChainConfig())
    t = np.arange(1, 41) * DT_NS
    out = chain.process(t, np.ones((40, 6)))
    assert (t[out.publish] % 2_500_000 == 0).all() and out.publish.sum() == 10
    count = sc.SignalChain(sc.ChainConfig(decimation='count', sample_rate=7000, publish_rate=1000))
    assert count.process(np.arange(1, 71) * 1000, np.ones((70, 6))).publish.sum() == 10


def _bad_stream():
    n = 800
    x = np.tile([5.0, 3.0, -30.0, 0.1, 0.0, 0.2], (n, 1)) + 0.05 * np.random.default_rng(2).normal(size=(n, 6))
    t = np.arange(1, n + 1) * DT_NS
    flagged = np.zeros(n, dtype=bool)
    x[100, 2] = np.nan
    x[200, 4] = np.inf
    x[300, 0] = 600.0                      # beyond the mini45 580 N range
    x[400, :3] *= 10.0                     # 10x spike of the force
    x[450, 1] = 10.0 * 25.0                # 10x spike of the running scale on one axis
    flagged[500] = True                    # status word error
    t[600] = t[599]                        # repeated stamp (out of order)
    return t, x, flagged


def test_each_bad_input_rejected_held_and_block_equals_per_sample():
    t, x, flagged = _bad_stream()
    chain = sc.SignalChain(sc.ChainConfig())
    out = chain.process(t, x, flagged=flagged)
    expect = {100: sc.NONFINITE, 200: sc.NONFINITE, 300: sc.SATURATED, 400: sc.SPIKE, 450: sc.SPIKE,
              500: sc.STATUS, 600: sc.OUT_OF_ORDER}
    bad = {int(i): int(out.reason[i]) for i in np.flatnonzero(~out.valid)}
    assert bad == expect
    assert not out.publish[600]
    for i in (100, 200, 300, 400, 450, 500):
        assert np.all(out.raw[i] == out.raw[i - 1])          # held, never the bad value
    live = out.filtered[out.reason != sc.OUT_OF_ORDER]
    assert np.all(np.isfinite(live)) and np.all(np.isnan(out.filtered[600]))
    assert np.max(np.abs(np.diff(live, axis=0))) < 0.1  # no jump on the output
    per = sc.SignalChain(sc.ChainConfig())
    rows = [per.process(t[i:i + 1], x[i], flagged=flagged[i:i + 1]) for i in range(len(t))]
    assert np.array_equal(np.concatenate([r.reason for r in rows]), out.reason)
    assert np.array_equal(np.concatenate([r.publish for r in rows]), out.publish)
    assert np.nanmax(np.abs(np.vstack([r.filtered for r in rows]) - out.filtered)) < 1e-12


def test_stale_stops_publishing_then_resumes():
    cfg = sc.ChainConfig(stale_timeout=0.05)
    chain = sc.SignalChain(cfg)
    n = 600
    x = np.ones((n, 6))
    x[100:300] = np.nan                    # 125 ms of bad data
    t = np.arange(1, n + 1) * DT_NS
    out = chain.process(t, x)
    last_valid_t = t[99]
    pub_t = t[out.publish]
    bad_pub = pub_t[(pub_t > last_valid_t) & (pub_t < t[300])]
    assert bad_pub.size > 0 and bad_pub.max() - last_valid_t <= 50_000_000
    assert not np.any((t > last_valid_t + 50_000_000) & (t < t[300]) & out.publish)
    assert out.publish[300:].sum() > 0 and not chain.is_stale(t[599])


def test_persistent_level_change_is_accepted_after_max_run():
    cfg = sc.ChainConfig(spike_max_run=16)
    chain = sc.SignalChain(cfg)
    x = np.zeros((100, 6))
    x[50:, 2] = 200.0                      # a real 200 N step in one sample
    out = chain.process(np.arange(1, 101) * DT_NS, x)
    assert np.all(out.reason[50:65] == sc.SPIKE) and np.all(out.valid[65:])


def test_wrong_shapes_and_counts():
    chain = sc.SignalChain(sc.ChainConfig())
    with pytest.raises(ValueError):
        chain.process([1, 2], np.zeros((2, 5)))
    with pytest.raises(ValueError):
        chain.process([1], np.zeros((2, 6)))
    si = sc.counts_to_si([1_000_000, -2_000_000, 0, 500_000, 0, -1], 1e6, 1e6)
    assert np.allclose(si, [1, -2, 0, 0.5, 0, -1e-6])
    with pytest.raises(ValueError):
        sc.ChainConfig(publish_rate=2000.0)
    with pytest.raises(ValueError):
        design_sos(2, 900.0, FS)


def test_single_orientation_row_matches_vectorised_gravity():
    cfg = sc.ChainConfig(payload_mass=3.1, payload_cog=(0.02, -0.01, 0.07))
    chain = sc.SignalChain(cfg)
    for q in _random_quats(10, 5):
        R = rotations.quat_to_matrix(q)
        assert np.allclose(chain._gravity_row(R), sc.gravity_wrench(R, 3.1, cfg.payload_cog), atol=1e-12)
