"""Low level, last stage (seed 000 section 4.3): cubic B-spline from segment points to servo rate.

The segment points f[j] (joint space, one every segmentation time h) become control points
c[j] of a uniform cubic B-spline that the servo samples every servo period. Between knots j and
j+1 (local t in [0, 1]) the spline is

    B(t) = ((1-t)^3 c[j-1] + (3t^3 - 6t^2 + 4) c[j] + (-3t^3 + 3t^2 + 3t + 1) c[j+1] + t^3 c[j+2]) / 6.

With c = f (``prefilter='none'``, the plain approximating B-spline) the spline is exact for
straight lines only: it smooths a curve by h^2 f''/6. ``prefilter='exact'`` first maps the
segment points to control points ``c[j] = f[j] - h^2 f''[j] / 6`` with f'' extrapolated from
the two previous second differences, i.e.

    c[j] = (4 f[j] + 5 f[j-1] - 4 f[j-2] + f[j-3]) / 6,

which makes the spline reproduce every cubic polynomial exactly while staying causal: it needs
no segment point beyond what the plain B-spline needs, so the servo delay is the same (one
segmentation time) and the paper's total of four poses holds.
"""
from __future__ import annotations

import numpy as np

PREFILTERS = ('exact', 'none')

# rows: weights of f[j], f[j-1], f[j-2], f[j-3]
_PREFILTER = {'exact': np.array([4.0, 5.0, -4.0, 1.0]) / 6.0,
              'none': np.array([1.0, 0.0, 0.0, 0.0])}


def prefilter_weights(kind: str) -> np.ndarray:
    if kind not in _PREFILTER:
        raise ValueError(f'unknown B-spline prefilter {kind!r}; expected one of {PREFILTERS}')
    return _PREFILTER[kind]


def control_points(f, kind: str = 'exact'):
    """Control points of a whole sequence of segment points (K, C); the first three rows are
    extended backwards with f[0] (a trajectory at rest before it starts)."""
    f = np.asarray(f, dtype=float)
    w = prefilter_weights(kind)
    padded = np.concatenate([np.repeat(f[:1], 3, axis=0), f], axis=0)
    return sum(w[i] * padded[3 - i:len(padded) - i] for i in range(4))


def basis(t):
    """Position and derivative weights (K, 4) of c[j-1..j+2] at local t in [0, 1]."""
    t = np.asarray(t, dtype=float)[:, None]
    t2, t3 = t * t, t * t * t
    pos = np.concatenate([(1 - t) ** 3, 3 * t3 - 6 * t2 + 4, -3 * t3 + 3 * t2 + 3 * t + 1, t3], axis=1) / 6.0
    vel = np.concatenate([-3 * (1 - t) ** 2, 9 * t2 - 12 * t, -9 * t2 + 6 * t + 3, 3 * t2], axis=1) / 6.0
    return pos, vel


def evaluate(c, v):
    """Spline of a whole control-point sequence ``c`` (K, C) at knot positions ``v`` (M,).

    ``v`` in (1, K-2]: knot j is control point j; a position on a knot is evaluated at the end
    of the interval before it (so it needs c up to ceil(v)+1, like the streaming engine).
    Returns positions (M, C) and derivatives per knot unit (M, C).
    """
    c = np.asarray(c, dtype=float)
    v = np.asarray(v, dtype=float)
    j = np.ceil(v).astype(int) - 1
    wp, wv = basis(v - j)
    idx = j[:, None] + np.arange(-1, 3)[None, :]
    rows = c[idx]                                         # (M, 4, C)
    return np.einsum('mk,mkc->mc', wp, rows), np.einsum('mk,mkc->mc', wv, rows)
