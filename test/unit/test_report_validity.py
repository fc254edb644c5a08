"""Validity of the figures of `hil report`: coherence only from >= 2 segments, a figure below
its thresholds is "not measurable" with the reason (never a number), gaps are found and the
segments they touch are left out, the designed delays come from the run's parameters."""
import numpy as np
import pytest

from hil_core.transparency.frf import find_impulses, segment_starts
from hil_core.ft.signal_chain import ChainConfig, SignalChain
from hil_core.timebase import TimeBaseConfig
from hil_core.transparency.design import design_from_configs
from hil_core.transparency.pairs import amplitude_ratio, compare
from hil_core.transparency.series import complete_segments, find_gaps, uniform_grid, usable
from hil_core.transparency.validity import MIN_CORRELATION_PEAK, Figure
from hil_core.transparency.verdict import NOT_MEASURABLE, NOT_TRANSPARENT, TRANSPARENT, decide

FS = 400.0
SEG = 1875                      # 4.6875 s at 400 Hz (seed 000 segment length)


def oscillator_record(n_impulses: int, delay_s: float = 0.0, gain: float = 1.0):
    """Impulse responses of a 3 Hz, zeta 0.2 oscillator (closed form), output delayed/scaled."""
    n = n_impulses * SEG + 400
    t = np.arange(n) / FS
    wn, z = 2 * np.pi * 3.0, 0.2
    wd = wn * np.sqrt(1 - z * z)

    def h(tt):
        return np.where(tt >= 0, np.exp(-z * wn * tt) * np.sin(wd * np.maximum(tt, 0)) / wd, 0.0)
    force, x, y = np.zeros(n), np.zeros(n), np.zeros(n)
    for i in range(n_impulses):
        k = 100 + i * SEG
        force[k] = 1.0
        x += h(t - t[k])
        y += gain * h(t - t[k] - delay_s)
    starts = segment_starts(find_impulses(force, 0.5, SEG // 2), n, SEG, pre=20)
    return t, x, y, starts


def test_a_single_segment_gives_no_coherence_figure():
    _, x, y, starts = oscillator_record(1, delay_s=0.0123)
    r = compare(x, y, np.ones(x.size, bool), FS, starts, SEG)
    assert r.n_segments == 1
    for band in r.bands.values():
        assert not band.coherence_min.valid and band.coherence_min.value is None
        assert 'segment' in band.coherence_min.reason
        assert band.coherence_min.text().startswith('not measurable: 1 segment')
        assert band.delay.valid                   # the delay itself is still measured (correlation, residual)
    assert r.widest.delay.value == pytest.approx(0.0123, abs=5e-5)


def test_pure_delay_and_gain_are_recovered_with_their_evidence():
    _, x, y, starts = oscillator_record(3, delay_s=0.0137, gain=0.5)
    r = compare(x, y, np.ones(x.size, bool), FS, starts, SEG)
    assert r.n_segments == 3
    assert r.correlation_peak > 0.999 and r.relative_residual < 1e-3
    for band in r.bands.values():
        assert band.validity.ok
        assert band.coherence_min.valid and band.coherence_min.value > 0.999
        assert band.delay.value == pytest.approx(0.0137, abs=5e-5)
        assert band.gain_db.value == pytest.approx(20 * np.log10(0.5), abs=0.05)


def test_an_output_that_does_not_follow_gives_no_number():
    _, x, _, starts = oscillator_record(3)
    noise = np.random.default_rng(1).normal(scale=1e-3, size=x.size)
    r = compare(x, noise, np.ones(x.size, bool), FS, starts, SEG)
    assert r.correlation_peak < MIN_CORRELATION_PEAK
    for band in r.bands.values():
        for fig in (band.delay, band.gain_db, band.gain_dev_db, band.phase_rmse_deg):
            assert fig.value is None and not fig.valid
            assert 'correlation peak' in fig.reason
            assert fig.text().startswith('not measurable: correlation peak')


def test_gaps_found_and_the_segments_they_touch_left_out():
    t = np.arange(0, 10.0, 0.0025)
    kept = np.delete(t, np.r_[100:104, 2000:2001])       # 4 missing, then 1 missing
    gaps = find_gaps(kept, 0.0025)
    assert gaps.count == 2
    assert gaps.largest == pytest.approx(5 * 0.0025)
    assert gaps.missing_samples == 5
    assert find_gaps(t[::2], 0.005).count == 0 and find_gaps(t[::2], 0.0025).count == len(t[::2]) - 1
    grid = uniform_grid(0.0, 9.99, 0.0025)
    ok = usable(kept, grid, gaps)
    assert int((~ok).sum()) == 5                        # exactly the missing grid points
    ok_settle = usable(kept, grid, gaps, settle=0.1)
    assert int((~ok_settle).sum()) == 5 + 2 * 40        # + 0.1 s after each gap
    assert complete_segments([0, 150, 500, 1995], 300, ok).tolist() == [150, 500]


def test_amplitude_ratio_survives_a_gappy_output():
    grid = np.arange(0, 8.0, 0.0025)
    x = np.sin(2 * np.pi * 1.3 * grid) * np.exp(-0.2 * grid)
    ty = grid[::4][:-1] + 0.0004                        # a quarter of the samples, off the grid
    y = 0.14 * np.interp(ty - 0.01, grid, x)
    fig = amplitude_ratio(grid, x, np.ones(grid.size, bool), ty, y, shift_s=0.01)
    assert fig.valid and fig.value == pytest.approx(0.14, rel=1e-3)
    bad = amplitude_ratio(grid, x, np.ones(grid.size, bool), ty, np.cos(2 * np.pi * 7.1 * ty), 0.01)
    assert not bad.valid and 'correlation' in bad.reason


def test_designed_delays_from_the_run_parameters():
    d = design_from_configs(ChainConfig(), TimeBaseConfig())
    assert d.filter_delay_s == pytest.approx(SignalChain(ChainConfig()).delay_estimate(7.0), rel=1e-12)
    assert 0.0055 < d.filter_delay_s < 0.0058          # seed 000: about 6 ms at 40 Hz
    assert d.buffer_delay_s == pytest.approx(2 * 0.0025 + 1.5 * 0.0025 + 0.00125)   # D T + 1.5 T + h = 10 ms
    d3 = design_from_configs(ChainConfig(cutoff_hz=20.0), TimeBaseConfig(default_distance=3, max_gap_fill=3))
    assert d3.buffer_delay_s == pytest.approx(0.0125)
    assert d3.filter_delay_s > 1.9 * d.filter_delay_s  # half the cut-off, about twice the delay
    assert d.delay_between('raw_force', 'tcp_pose') == pytest.approx(d.total_delay_s)
    assert d.delay_between('admittance_reference', 'safe_reference') == 0.0


def test_verdict_sentences():
    design = design_from_configs(ChainConfig(), TimeBaseConfig())
    _, x, y, starts = oscillator_record(2, delay_s=design.total_delay_s + 0.0001)
    good = compare(x, y, np.ones(x.size, bool), FS, starts, SEG)
    v = decide(good, design)
    assert v.status == TRANSPARENT
    assert v.text == (f'transparent: {design.total_delay_s * 1e3 + 0.1:.1f} ms constant delay as designed, '
                      'gain within 0.0 dB to 7 Hz')
    late = compare(x, np.roll(y, 8), np.ones(x.size, bool), FS, starts, SEG)   # 20 ms more
    v = decide(late, design)
    assert v.status == NOT_TRANSPARENT and 'constant delay' in v.text and 'designed' in v.text
    v = decide(None, design, 'no complete segment of 4.69 s')
    assert v.status == NOT_MEASURABLE and v.text == 'not measurable: no complete segment of 4.69 s'
    v = decide(good, design, incomplete=['filtered force /ft_sensor/wrench: 701 of 2201 samples'],
               findings={'first_incomplete': 'filtered force (/ft_sensor/wrench)'})
    assert v.status == NOT_TRANSPARENT and 'messages missing' in v.text
    assert 'loss begins at filtered force' in v.text
    assert Figure(None, 'ms', 'why').text() == 'not measurable: why'
