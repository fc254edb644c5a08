"""Input -> output figures of one pair of signals on a common uniform grid (seed 000 sec. 5.2).

``compare`` is the transparency measurement of ``hil report``, used end to end (ideal motion ->
achieved TCP motion) and stage by stage: the averaged-segment H1 frequency response over the
segments where both signals are complete, a linear phase fit per band (constant delay, RMSE),
the gain, and the evidence that makes those figures valid or not (``validity``).

``amplitude_ratio`` is the time-domain figure that survives gaps in the output: the
least-squares gain of the output samples against the input at the same (shifted) times. It
shows where a signal lost amplitude when the frequency analysis has no complete segment.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from hil_core.transparency.frf import FrequencyResponse, PhaseFit, fit_linear_phase, frf_h1
from hil_core.transparency.series import complete_segments
from hil_core.transparency.validity import (MIN_CORRELATION_PEAK, Figure, Validity, assess,
                                            coherence_figure, not_measurable)

MAX_LAG_S = 0.5            # correlation searched over +-0.5 s (delays of a HIL chain: ~10-20 ms)
MIN_AMPLITUDE_SAMPLES = 50  # time-domain ratio: at least this many matched samples


@dataclass(frozen=True)
class BandFigures:
    """The fitted figures of one band (0, f_max] with their validity."""
    f_max: float
    delay: Figure              # s
    gain_db: Figure            # mean gain over the band (dB)
    gain_dev_db: Figure        # largest |gain| deviation from 0 dB over the band
    phase_rmse_deg: Figure
    coherence_min: Figure
    validity: Validity

    def as_dict(self) -> dict:
        return {'delay_ms': _scaled(self.delay, 1e3, 'ms'), 'gain_db': self.gain_db.as_dict(),
                'gain_dev_db': self.gain_dev_db.as_dict(), 'phase_rmse_deg': self.phase_rmse_deg.as_dict(),
                'coherence_min': self.coherence_min.as_dict(), 'validity': self.validity.as_dict()}


def _scaled(fig: Figure, k: float, unit: str) -> dict:
    return Figure(None if fig.value is None else fig.value * k, unit, fig.reason).as_dict()


@dataclass(frozen=True)
class PairResult:
    n_segments: int
    starts: np.ndarray
    frf: FrequencyResponse | None
    fits: dict                              # band -> PhaseFit
    bands: dict                             # band -> BandFigures
    correlation_peak: float | None
    relative_residual: float | None
    fitted_delay_s: float | None            # widest band's fit, whatever its validity (plots)
    reason: str = ''                        # why nothing could be measured
    extra: dict = field(default_factory=dict)

    @property
    def widest(self) -> BandFigures | None:
        return self.bands[max(self.bands)] if self.bands else None

    def band(self, f_max: float) -> BandFigures | None:
        return self.bands.get(float(f_max))

    def as_dict(self) -> dict:
        return {'segments': self.n_segments, 'correlation_peak': self.correlation_peak,
                'relative_residual': self.relative_residual, 'reason': self.reason,
                'bands': {f'{b:g}hz': f.as_dict() for b, f in sorted(self.bands.items())}}


def _segments(sig, starts, seg, baseline=1):
    s = sig[np.asarray(starts)[:, None] + np.arange(seg)[None, :]]
    return s - s[:, :baseline].mean(axis=1, keepdims=True)


def band_limit(rows: np.ndarray, fs: float, f_max: float) -> np.ndarray:
    """Rows (segments at rest at both ends) with every component above f_max removed."""
    spec = np.fft.rfft(rows, axis=1)
    spec[:, np.fft.rfftfreq(rows.shape[1], 1.0 / fs) > f_max] = 0.0
    return np.fft.irfft(spec, rows.shape[1], axis=1)


def correlation_peak(xs: np.ndarray, ys: np.ndarray, max_lag: int) -> float | None:
    """Peak over lags 0..max_lag of the normalised cross-correlation, summed over segments
    (rows). None when a signal has no energy."""
    ex, ey = float(np.sum(xs ** 2)), float(np.sum(ys ** 2))
    if ex <= 0 or ey <= 0:
        return None
    n = xs.shape[1]
    size = 1 << int(np.ceil(np.log2(2 * n)))
    X = np.fft.rfft(xs, size, axis=1)
    Y = np.fft.rfft(ys, size, axis=1)
    c = np.fft.irfft(np.sum(np.conj(X) * Y, axis=0), size)   # c[k] = sum x[i] y[i + k]
    lags = np.r_[c[:max_lag + 1], c[size - max_lag:]] if max_lag > 0 else c[:1]
    return float(np.max(lags) / np.sqrt(ex * ey))


def shifted_residual(xs: np.ndarray, ys: np.ndarray, delay_samples: float) -> float | None:
    """rms(y - g x(t - d)) / rms(g x(t - d)) with g the least-squares gain (segments as rows).

    The shift is a phase ramp (exact for the band-limited, periodic segments of ``compare``;
    an interpolating shift would leave an error at the segment edges)."""
    n = xs.shape[1]
    ramp = np.exp(-2j * np.pi * np.fft.rfftfreq(n) * delay_samples)
    shifted = np.fft.irfft(np.fft.rfft(xs, axis=1) * ramp, n, axis=1)
    den = float(np.sum(shifted ** 2))
    if den <= 0 or not np.any(ys):
        return None
    g = float(np.sum(ys * shifted)) / den
    if g == 0:
        return None
    return float(np.sqrt(np.sum((ys - g * shifted) ** 2) / (g * g * den)))


def compare(x, y, ok, fs: float, starts, segment_len: int, bands=(7.0, 11.0),
            incomplete_reason: str = 'no complete segment') -> PairResult:
    """Figures of y against x (same grid, sample rate fs) over the complete segments; the
    correlation and the residual are those of the signals limited to the widest band."""
    x = np.asarray(x, float)
    y = np.asarray(y, float)
    used = complete_segments(starts, segment_len, np.asarray(ok, bool) & np.isfinite(x) & np.isfinite(y))
    bands = tuple(sorted(float(b) for b in bands))
    if used.size == 0:
        return PairResult(0, used, None, {}, {}, None, None, None, reason=incomplete_reason)
    frf = frf_h1(x, y, fs, used, segment_len)
    # The evidence is taken in the band the figures describe: out-of-band content (sensor
    # noise that the F/T filter is there to remove) is not a failure to follow the input.
    xs = band_limit(_segments(x, used, segment_len), fs, max(bands))
    ys = band_limit(_segments(y, used, segment_len), fs, max(bands))
    corr = correlation_peak(xs, ys, min(int(round(MAX_LAG_S * fs)), segment_len - 1))
    fits = {}
    for b in bands:
        try:
            fits[b] = fit_linear_phase(frf, b)
        except ValueError:
            pass
    delay = fits[max(fits)].delay_s if fits else None
    resid = shifted_residual(xs, ys, delay * fs) if delay is not None else None
    out = {}
    for b in bands:
        sel = (frf.freqs > 0) & (frf.freqs <= b)
        coherence = coherence_figure(used.size, float(np.min(frf.coherence[sel])) if sel.any() else float('nan'))
        validity = assess(int(used.size), corr, resid, {b: coherence}, b)
        fit: PhaseFit | None = fits.get(b)
        if fit is None:
            why = f'fewer than 2 frequency bins in 0-{b:g} Hz (segment too short)'
            out[b] = BandFigures(b, not_measurable(why, 's'), not_measurable(why, 'dB'), not_measurable(why, 'dB'),
                                 not_measurable(why, 'deg'), coherence, validity)
            continue
        gain_db = frf.gain_db[sel]
        if validity.ok:
            figs = (Figure(fit.delay_s, 's'), Figure(float(np.mean(gain_db)), 'dB'),
                    Figure(float(np.max(np.abs(gain_db))), 'dB'), Figure(fit.rmse_deg, 'deg'))
        else:
            why = validity.reason()
            figs = (not_measurable(why, 's'), not_measurable(why, 'dB'), not_measurable(why, 'dB'),
                    not_measurable(why, 'deg'))
        out[b] = BandFigures(b, *figs, coherence, validity)
    return PairResult(int(used.size), used, frf, fits, out, corr, resid, delay)


def amplitude_ratio(grid, x, x_ok, y_times, y_values, shift_s: float = 0.0) -> Figure:
    """Least-squares gain of output samples y(t_i) against the input x(t_i - shift) on the
    grid (linear interpolation between usable neighbours); means removed. Valid when the two
    correlate at >= MIN_CORRELATION_PEAK over >= MIN_AMPLITUDE_SAMPLES matched samples."""
    grid = np.asarray(grid, float)
    x = np.asarray(x, float)
    ok = np.asarray(x_ok, bool) & np.isfinite(x)
    t = np.asarray(y_times, float) - shift_s
    y = np.asarray(y_values, float)
    inside = (t >= grid[0]) & (t <= grid[-1]) & np.isfinite(y)
    t, y = t[inside], y[inside]
    k = np.clip(np.searchsorted(grid, t, side='right') - 1, 0, grid.size - 2)
    both = ok[k] & ok[k + 1]
    if int(both.sum()) < MIN_AMPLITUDE_SAMPLES:
        return not_measurable(f'{int(both.sum())} output samples matched a complete input '
                              f'(need {MIN_AMPLITUDE_SAMPLES})')
    xi = np.interp(t[both], grid, x) - 0.0
    yi = y[both]
    xc, yc = xi - xi.mean(), yi - yi.mean()
    sxx, syy = float(np.dot(xc, xc)), float(np.dot(yc, yc))
    if sxx <= 0 or syy <= 0:
        return not_measurable('a signal does not move')
    rho = float(np.dot(xc, yc)) / np.sqrt(sxx * syy)
    if rho < MIN_CORRELATION_PEAK:
        return not_measurable(f'correlation {rho:.2f} < {MIN_CORRELATION_PEAK:.2f} at matched samples')
    return Figure(float(np.dot(xc, yc)) / sxx)
