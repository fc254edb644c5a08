"""When a transparency figure means something: the validity rules of ``hil report``.

A fitted figure (constant delay, gain deviation, phase RMSE) is printed as a number only when
the data behind it say that a delayed, scaled copy of the input explains the output:

* the normalised cross-correlation of input and output peaks at >= ``MIN_CORRELATION_PEAK``
  (a pure delay gives 1; the real-time bag these rules were set on gave 0.60);
* after shifting the input by the fitted delay and scaling it by its best gain, the residual
  is <= ``MAX_RELATIVE_RESIDUAL`` of the output (what is left is not a delay);
* the coherence of the averaged frequency response is >= ``MIN_COHERENCE`` on every bin of the
  band, and it is only a measurement when >= ``MIN_SEGMENTS_FOR_COHERENCE`` segments were
  averaged: with one segment |Sxy|^2 = Sxx Syy holds by construction and coherence is 1 whatever
  the data.

Below a threshold the figure is "not measurable: <reason>", never a number in the verdict.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

MIN_SEGMENTS_FOR_COHERENCE = 2
MIN_COHERENCE = 0.9
MIN_CORRELATION_PEAK = 0.9
MAX_RELATIVE_RESIDUAL = 0.1
GAP_FACTOR = 1.5                 # a stamp interval > 1.5 nominal periods is a gap (missing samples)

# Design tolerances of the verdict (a figure is "as designed" within these)
DELAY_TOLERANCE_S = 0.5e-3       # about one servo period (0.625 ms)
GAIN_TOLERANCE_DB = 1.0          # seed 000: the +-1 dB band of the transparency figures
MAX_PHASE_RMSE_DEG = 5.0         # a linear phase (constant delay) leaves a small residual
VERDICT_BAND_HZ = 7.0            # seed 000: the band of interest of the floater
AMPLITUDE_TOLERANCE = 0.1        # time-domain amplitude ratio within 10 % of the design (~0.9 dB)


@dataclass(frozen=True)
class Figure:
    """A number with its unit, or the reason it cannot be measured (``value`` is then None)."""
    value: float | None
    unit: str = ''
    reason: str = ''

    @property
    def valid(self) -> bool:
        return self.value is not None and not self.reason and math.isfinite(self.value)

    def text(self, fmt: str = '.3g') -> str:
        if not self.valid:
            return f'not measurable: {self.reason or "no value"}'
        unit = f' {self.unit}' if self.unit else ''
        return f'{self.value:{fmt}}{unit}'

    def as_dict(self) -> dict:
        return {'value': self.value if self.valid else None, 'unit': self.unit,
                'valid': self.valid, 'reason': '' if self.valid else (self.reason or 'no value')}


def not_measurable(reason: str, unit: str = '') -> Figure:
    return Figure(None, unit, reason)


@dataclass(frozen=True)
class Validity:
    """The evidence behind the fitted figures of one input/output pair."""
    n_segments: int
    correlation_peak: float | None
    relative_residual: float | None
    coherence_min: dict = field(default_factory=dict)   # band (Hz) -> Figure
    problems: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return not self.problems

    def reason(self) -> str:
        return '; '.join(self.problems)

    def as_dict(self) -> dict:
        return {'segments': self.n_segments, 'correlation_peak': self.correlation_peak,
                'relative_residual': self.relative_residual,
                'coherence_min': {f'{b:g}hz': f.as_dict() for b, f in self.coherence_min.items()},
                'valid': self.ok, 'problems': list(self.problems)}


def coherence_figure(n_segments: int, coherence_min: float) -> Figure:
    """Minimum coherence of a band, or not measurable with fewer than two averaged segments."""
    if n_segments < MIN_SEGMENTS_FOR_COHERENCE:
        return not_measurable(f'{n_segments} segment averaged (coherence needs >= '
                              f'{MIN_SEGMENTS_FOR_COHERENCE}; with one it is 1 by construction)')
    return Figure(float(coherence_min))


def assess(n_segments: int, correlation_peak: float | None, relative_residual: float | None,
           coherence_min: dict, band_hz: float) -> Validity:
    """Validity of the figures of a pair; ``band_hz`` is the band whose coherence must hold."""
    problems = []
    if n_segments < 1:
        problems.append('no complete segment')
    if correlation_peak is None or not math.isfinite(correlation_peak):
        problems.append('no correlation (a signal does not move)')
    elif correlation_peak < MIN_CORRELATION_PEAK:
        problems.append(f'correlation peak {correlation_peak:.2f} < {MIN_CORRELATION_PEAK:.2f}')
    if relative_residual is None or not math.isfinite(relative_residual):
        if correlation_peak is not None and math.isfinite(correlation_peak):
            problems.append('no residual (a signal does not move)')
    elif relative_residual > MAX_RELATIVE_RESIDUAL:
        problems.append(f'residual after shifting {relative_residual:.2f} > {MAX_RELATIVE_RESIDUAL:.2f} '
                        'of the signal')
    coh = coherence_min.get(band_hz)
    if coh is not None and coh.valid and coh.value < MIN_COHERENCE:
        problems.append(f'coherence {coh.value:.2f} < {MIN_COHERENCE:.2f} in 0-{band_hz:g} Hz')
    return Validity(n_segments, correlation_peak, relative_residual, dict(coherence_min), tuple(problems))
