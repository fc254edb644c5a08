"""Transparency analysis (seed 000 sections 5.1-5.2, figs 12-13, 18-19).

The seed excites the robot with impulse loads, isolates each impulse response in a segment of
N samples (7500 samples at 0.625 ms: 800 Hz bandwidth, 0.2133 Hz resolution), computes the
frequency response of the real and of the simulated system per segment and averages to reduce
noise. The transfer function *achieved / ideal* measures transparency: unity gain and a phase
lag linear in frequency mean "the modelled dynamics, shifted by a constant delay". A linear
regression of the phase gives that delay and its RMSE (figs 18-19, bands 0-7 Hz and 0-11 Hz).

Functions:
* ``find_impulses``: onsets of impulses in a force history;
* ``segment_starts``: segment start indices that fit in the record;
* ``frf_h1``: averaged-spectra H1 estimate with coherence over segments;
* ``fit_linear_phase``: constant delay, intercept and RMSE of the unwrapped phase in a band;
* ``transparency``: the whole seed-000 analysis of achieved vs ideal motion in one call;
* ``identify_modal``: natural frequency and damping ratio from a free decay (log decrement).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.signal

SEED_SEGMENT_SAMPLES = 7500   # seed 000 section 5.1
SEED_SAMPLE_TIME = 0.000625   # s (1.6 kHz servo rate)


@dataclass(frozen=True)
class FrequencyResponse:
    """H1 estimate H = Sxy / Sxx over averaged segments."""
    freqs: np.ndarray       # Hz, 0 .. fs/2 in steps fs / segment_len
    H: np.ndarray           # complex output/input
    coherence: np.ndarray   # |Sxy|^2 / (Sxx Syy), 1 for a noise-free linear relation
    n_segments: int
    fs: float

    @property
    def gain(self) -> np.ndarray:
        return np.abs(self.H)

    @property
    def gain_db(self) -> np.ndarray:
        return 20.0 * np.log10(np.maximum(np.abs(self.H), 1e-300))

    @property
    def phase_deg(self) -> np.ndarray:
        """Phase unwrapped from DC upwards (degrees)."""
        return np.degrees(np.unwrap(np.angle(self.H)))


@dataclass(frozen=True)
class PhaseFit:
    """Linear fit phase(f) = intercept - 360 f delay over [f_min, f_max] (figs 18-19)."""
    delay_s: float
    intercept_deg: float
    rmse_deg: float
    f_min: float
    f_max: float
    freqs: np.ndarray       # bins used
    phase_deg: np.ndarray   # measured (unwrapped) phase on those bins
    fitted_deg: np.ndarray  # the line


@dataclass(frozen=True)
class Transparency:
    """Achieved-vs-ideal FRF with its phase fits per band (keys: f_max in Hz)."""
    frf: FrequencyResponse
    fits: dict


def find_impulses(force, threshold: float, min_separation: int) -> np.ndarray:
    """Indices where |force| first exceeds ``threshold``, at least ``min_separation`` apart."""
    f = np.abs(np.asarray(force, dtype=float))
    above = np.flatnonzero(f > threshold)
    onsets = []
    for i in above:
        if not onsets or i - onsets[-1] >= min_separation:
            onsets.append(int(i))
    return np.asarray(onsets, dtype=int)


def segment_starts(onsets, n_samples: int, segment_len: int = SEED_SEGMENT_SAMPLES, pre: int = 0) -> np.ndarray:
    """Start indices ``onset - pre`` of the segments that lie entirely inside the record."""
    s = np.asarray(onsets, dtype=int) - int(pre)
    return s[(s >= 0) & (s + segment_len <= n_samples)]


def frf_h1(x, y, fs: float, starts, segment_len: int = SEED_SEGMENT_SAMPLES,
           baseline_samples: int = 1) -> FrequencyResponse:
    """Averaged-spectra H1 estimate of y/x over segments ``[s, s + segment_len)``.

    Each segment is an isolated impulse response (rectangular window, as in the seed): its
    initial level (mean of the first ``baseline_samples``, 0 = none) is removed from x and y so
    a response that starts and ends at rest has no leakage.
    """
    x = np.asarray(x, dtype=float).reshape(-1)
    y = np.asarray(y, dtype=float).reshape(-1)
    if x.shape != y.shape:
        raise ValueError(f'x and y need the same length, got {x.size} and {y.size}')
    starts = np.asarray(starts, dtype=int).reshape(-1)
    if starts.size == 0:
        raise ValueError('no segment: need at least one start index')
    if np.any(starts < 0) or np.any(starts + segment_len > x.size):
        raise ValueError(f'segments of {segment_len} samples must lie inside the {x.size}-sample record')
    idx = starts[:, None] + np.arange(segment_len)[None, :]
    xs, ys = x[idx], y[idx]
    if not (np.all(np.isfinite(xs)) and np.all(np.isfinite(ys))):
        raise ValueError('segments contain NaN/inf samples')
    if baseline_samples > 0:
        xs = xs - xs[:, :baseline_samples].mean(axis=1, keepdims=True)
        ys = ys - ys[:, :baseline_samples].mean(axis=1, keepdims=True)
    X = np.fft.rfft(xs, axis=1)
    Y = np.fft.rfft(ys, axis=1)
    sxx = np.mean(np.abs(X) ** 2, axis=0)
    syy = np.mean(np.abs(Y) ** 2, axis=0)
    sxy = np.mean(np.conj(X) * Y, axis=0)
    tiny = np.finfo(float).tiny
    H = sxy / np.maximum(sxx, tiny)
    coh = np.abs(sxy) ** 2 / np.maximum(sxx * syy, tiny)
    return FrequencyResponse(freqs=np.fft.rfftfreq(segment_len, 1.0 / fs), H=H, coherence=coh,
                             n_segments=int(starts.size), fs=float(fs))


def fit_linear_phase(frf: FrequencyResponse, f_max: float, f_min: float | None = None,
                     fit_intercept: bool = False, min_coherence: float = 0.0) -> PhaseFit:
    """Least-squares line through the unwrapped phase on [f_min, f_max] (DC excluded).

    Without intercept the line is the pure-delay model phase = -360 f delay (seed: "a constant
    delay"); with intercept a constant phase offset is fitted too. Bins with coherence below
    ``min_coherence`` are left out. RMSE is of the residual in degrees (seed figs 18b, 19b).
    """
    f_min = frf.freqs[1] if f_min is None else f_min
    phase = frf.phase_deg
    sel = (frf.freqs >= f_min) & (frf.freqs <= f_max) & (frf.freqs > 0) & (frf.coherence >= min_coherence)
    f, ph = frf.freqs[sel], phase[sel]
    if f.size < 2:
        raise ValueError(f'fewer than 2 usable bins in [{f_min}, {f_max}] Hz')
    if fit_intercept:
        slope, intercept = np.polyfit(f, ph, 1)
    else:
        slope, intercept = float(np.dot(f, ph) / np.dot(f, f)), 0.0
    fitted = intercept + slope * f
    rmse = float(np.sqrt(np.mean((ph - fitted) ** 2)))
    return PhaseFit(delay_s=float(-slope / 360.0), intercept_deg=float(intercept), rmse_deg=rmse,
                    f_min=float(f_min), f_max=float(f_max), freqs=f, phase_deg=ph, fitted_deg=fitted)


def transparency(ideal, achieved, fs: float, starts, segment_len: int = SEED_SEGMENT_SAMPLES,
                 bands=(7.0, 11.0), fit_intercept: bool = False, baseline_samples: int = 1) -> Transparency:
    """Seed-000 transparency of achieved vs ideal motion (one DOF, same sample times).

    ``starts`` are segment starts (see ``find_impulses`` / ``segment_starts`` on the force
    history). Returns the averaged FRF achieved/ideal and a linear phase fit per band.
    """
    frf = frf_h1(ideal, achieved, fs, starts, segment_len, baseline_samples)
    fits = {float(b): fit_linear_phase(frf, b, fit_intercept=fit_intercept) for b in bands}
    return Transparency(frf=frf, fits=fits)


def identify_modal(t, y) -> tuple[float, float]:
    """(natural frequency Hz, damping ratio) of a free decay by logarithmic decrement.

    Maxima of ``A exp(-zeta wn t) sin(wd t + phi)`` are exactly one damped period apart and
    shrink by ``exp(-zeta wn Td)``; peaks are refined by a parabola through 3 samples and both
    quantities are least-squares fits over all peaks above 1e-3 of the first.
    """
    t = np.asarray(t, dtype=float)
    y = np.asarray(y, dtype=float)
    start = int(np.argmax(np.abs(y)))
    y = y * np.sign(y[start])
    peaks, _ = scipy.signal.find_peaks(y)
    peaks = peaks[peaks >= start]
    ym, y0, yp = y[peaks - 1], y[peaks], y[peaks + 1]
    denom = ym - 2 * y0 + yp
    delta = 0.5 * (ym - yp) / denom
    tp = t[peaks] + delta * (t[peaks + 1] - t[peaks])
    vp = y0 - 0.25 * (ym - yp) * delta
    keep = vp > 1e-3 * vp[0]
    tp, vp = tp[keep], vp[keep]
    if tp.size < 3:
        raise ValueError('need at least 3 decaying peaks to identify a mode')
    k = np.arange(tp.size)
    td = np.polyfit(k, tp, 1)[0]
    log_dec = -np.polyfit(k, np.log(vp), 1)[0]
    zeta = log_dec / np.sqrt(4 * np.pi ** 2 + log_dec ** 2)
    fn = 1.0 / (td * np.sqrt(1 - zeta ** 2))
    return float(fn), float(zeta)
