"""Transparency tools (seed 000 section 5): averaged-segment H1 FRF, coherence, linear phase fit."""
import numpy as np
import pytest

from hil_core.transparency.frf import find_impulses, fit_linear_phase, frf_h1, segment_starts, transparency

FS = 1600.0          # seed 000: 0.625 ms samples
N_SEG = 7500         # seed 000: 7500-sample segments -> 0.2133 Hz resolution
FN, ZETA = 3.0, 0.2


def impulse_response(t):
    """Closed-form unit-impulse response of the 3 Hz, zeta 0.2 oscillator (0 before t = 0)."""
    wn = 2 * np.pi * FN
    wd = wn * np.sqrt(1 - ZETA ** 2)
    return np.where(t >= 0, np.exp(-ZETA * wn * t) * np.sin(wd * np.maximum(t, 0)) / wd, 0.0)


def impulse_record(delay=0.0, n_impulses=4):
    """Force with impulses + the motion they cause, evaluated exactly at t - delay."""
    n = n_impulses * N_SEG + 2000
    t = np.arange(n) / FS
    force = np.zeros(n)
    motion = np.zeros(n)
    for i, amp in enumerate([1.0, -0.7, 1.3, 0.9][:n_impulses]):
        k = 400 + i * N_SEG
        force[k] = amp
        motion += amp * impulse_response(t - t[k] - delay)
    return t, force, motion


def starts_from_force(force):
    onsets = find_impulses(force, threshold=0.1, min_separation=N_SEG // 2)
    return segment_starts(onsets, force.size, N_SEG, pre=20)


def test_seed_resolution_and_segments():
    t, force, x = impulse_record()
    starts = starts_from_force(force)
    assert starts.size == 4
    frf = frf_h1(x, x, FS, starts, N_SEG)
    assert frf.freqs[1] == pytest.approx(0.2133, abs=1e-4)   # seed: 0.2133 Hz resolution
    assert frf.freqs[-1] == pytest.approx(800.0)             # seed: 800 Hz bandwidth
    assert frf.n_segments == 4


def test_pure_delay_of_16_ms():
    _, force, ideal = impulse_record()
    _, _, achieved = impulse_record(delay=0.016)
    result = transparency(ideal, achieved, FS, starts_from_force(force), N_SEG, bands=(7.0, 11.0))
    frf = result.frf
    band = (frf.freqs > 0) & (frf.freqs <= 11.0)
    assert np.max(np.abs(frf.gain[band] - 1.0)) < 0.01
    assert np.min(frf.coherence[band]) > 0.999
    fit = result.fits[11.0]
    assert fit.delay_s == pytest.approx(0.016, abs=1e-4)
    assert fit.rmse_deg < 0.1
    # the phase itself is the delay's: -360 f tau
    assert np.max(np.abs(fit.phase_deg - (-360.0 * fit.freqs * 0.016))) < 0.1
    assert result.fits[7.0].delay_s == pytest.approx(0.016, abs=1e-4)


def test_fit_with_intercept_and_a_non_linear_phase():
    _, force, ideal = impulse_record()
    # a first-order lag (not a pure delay): its phase is not linear, the RMSE must show it
    from scipy.signal import lfilter
    a = np.exp(-2 * np.pi * 5.0 / FS)
    achieved = lfilter([1 - a], [1, -a], ideal)
    frf = frf_h1(ideal, achieved, FS, starts_from_force(force), N_SEG)
    lin = fit_linear_phase(frf, 11.0, fit_intercept=True)
    assert lin.rmse_deg > 1.0
    # the gain of the lag at 5 Hz is 1/sqrt(2)
    k = np.argmin(np.abs(frf.freqs - 5.0))
    expected = np.abs((1 - a) / (1 - a * np.exp(-2j * np.pi * frf.freqs[k] / FS)))
    assert frf.gain[k] == pytest.approx(expected, rel=1e-3)


def test_noise_lowers_coherence_but_h1_stays_unbiased():
    _, force, ideal = impulse_record()
    rng = np.random.default_rng(0)
    achieved = ideal + rng.normal(scale=2e-4, size=ideal.size)  # noise on the output only
    frf = frf_h1(ideal, achieved, FS, starts_from_force(force), N_SEG)
    low = (frf.freqs > 0.5) & (frf.freqs < 5.0)
    high = (frf.freqs > 100) & (frf.freqs < 200)
    assert np.mean(frf.coherence[high]) < 0.5 < np.mean(frf.coherence[low])
    assert np.mean(np.abs(frf.gain[low] - 1)) < 0.05


def test_bad_inputs():
    _, force, x = impulse_record(n_impulses=2)
    starts = starts_from_force(force)
    with pytest.raises(ValueError, match='same length'):
        frf_h1(x, x[:-1], FS, starts, N_SEG)
    with pytest.raises(ValueError, match='no segment'):
        frf_h1(x, x, FS, [], N_SEG)
    with pytest.raises(ValueError, match='inside'):
        frf_h1(x, x, FS, [x.size - 10], N_SEG)
    y = x.copy()
    y[starts[0] + 5] = np.nan
    with pytest.raises(ValueError, match='NaN'):
        frf_h1(x, y, FS, starts, N_SEG)
    frf = frf_h1(x, x, FS, starts, N_SEG)
    with pytest.raises(ValueError, match='fewer than 2'):
        fit_linear_phase(frf, 0.3)


def test_segment_starts_drop_incomplete_segments():
    assert segment_starts([10, 5000, 9000], 12000, 7500, pre=20).tolist() == []
    assert segment_starts([30, 5000], 12600, 7500, pre=20).tolist() == [10, 4980]
    assert find_impulses([0, 2, 3, 0, 0, 5, 0], 1.0, 3).tolist() == [1, 5]
