"""Stamped series on a common uniform grid, with the samples a gap makes unusable.

A gap is a stamp interval longer than ``GAP_FACTOR`` nominal periods: samples are missing there
(a node skipped cycles or messages were lost). Values on the grid are linear interpolations of
the stamped samples; a grid point is usable when it lies inside the series' span and not inside
a gap (nor within ``settle`` seconds after one: a quantity integrated from the series, such as
the ideal motion from a force, is wrong until the model has forgotten the missing input).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hil_core.transparency.validity import GAP_FACTOR


@dataclass(frozen=True)
class Gaps:
    """Intervals (start, end) between consecutive stamps longer than factor x nominal period."""
    intervals: np.ndarray     # (K, 2) s
    nominal_period: float

    @property
    def count(self) -> int:
        return int(self.intervals.shape[0])

    @property
    def largest(self) -> float:
        return float(np.max(self.intervals[:, 1] - self.intervals[:, 0])) if self.count else 0.0

    @property
    def missing_samples(self) -> int:
        """Samples that a complete series would have had inside the gaps."""
        if not self.count:
            return 0
        widths = self.intervals[:, 1] - self.intervals[:, 0]
        return int(np.sum(np.maximum(np.round(widths / self.nominal_period) - 1, 0)))


def unique_stamps(times, values) -> tuple[np.ndarray, np.ndarray]:
    """Samples sorted by stamp, one per stamp (the last one received: a re-publication of a
    stamp, as the mock hardware does while it waits for its first command, is not a new sample)."""
    t = np.asarray(times, dtype=float).reshape(-1)
    v = np.asarray(values, dtype=float)
    order = np.argsort(t, kind='stable')
    t, v = t[order], v[order]
    last = np.r_[t[1:] != t[:-1], True]
    return t[last], v[last]


def nominal_period(times, given: float | None = None) -> float:
    """The designed sample period if known, else the median stamp interval."""
    if given is not None and given > 0:
        return float(given)
    t = np.asarray(times, dtype=float)
    if t.size < 2:
        raise ValueError('a series needs two samples for a period')
    return float(np.median(np.diff(t)))


def find_gaps(times, period: float, factor: float = GAP_FACTOR) -> Gaps:
    t = np.asarray(times, dtype=float).reshape(-1)
    if t.size < 2:
        return Gaps(np.zeros((0, 2)), float(period))
    dt = np.diff(t)
    i = np.flatnonzero(dt > factor * period)
    return Gaps(np.column_stack([t[i], t[i + 1]]) if i.size else np.zeros((0, 2)), float(period))


def uniform_grid(start: float, end: float, period: float) -> np.ndarray:
    """Grid times k * period in [start, end] (whole multiples: lockstep stamps fall on it)."""
    k0 = int(np.ceil(start / period - 1e-6))
    k1 = int(np.floor(end / period + 1e-6))
    return np.arange(k0, k1 + 1) * period


def usable(times, grid, gaps: Gaps, settle: float = 0.0, tolerance: float = 1e-9) -> np.ndarray:
    """Grid points inside the series' span and outside its gaps (+ ``settle`` after each)."""
    t = np.asarray(times, dtype=float)
    g = np.asarray(grid, dtype=float)
    if t.size == 0:
        return np.zeros(g.shape, bool)
    ok = (g >= t[0] - tolerance) & (g <= t[-1] + tolerance)
    for a, b in gaps.intervals:
        ok &= ~((g > a + tolerance) & (g < b + settle - tolerance))
    return ok


def resample(times, values, grid) -> np.ndarray:
    """Linear interpolation of (N,) or (N, C) values at the grid times."""
    t = np.asarray(times, dtype=float)
    v = np.asarray(values, dtype=float)
    if v.ndim == 1:
        return np.interp(grid, t, v)
    return np.column_stack([np.interp(grid, t, v[:, c]) for c in range(v.shape[1])])


def complete_segments(starts, segment_len: int, ok: np.ndarray) -> np.ndarray:
    """The segment starts whose samples are all usable."""
    starts = np.asarray(starts, dtype=int)
    if starts.size == 0:
        return starts
    bad = np.concatenate([[0], np.cumsum(~ok)])
    return starts[bad[starts + segment_len] - bad[starts] == 0]
