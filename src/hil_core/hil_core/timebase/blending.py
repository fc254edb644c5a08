"""Low level, first stage (seed 000 section 4.3): triangular-velocity moves, merged.

Every move connects the last commanded pose with the one just read from the buffer by a
triangular velocity profile of fixed duration: acceleration for one move time T, then
deceleration for T (the PMAC linear move with TA = TM). The deceleration of move m is merged
with the acceleration of move m+1, so move m+1 starts T after move m, exactly when move m
starts to decelerate: "the new target pose is required at the beginning of the deceleration
phase for every movement".

Times here are in move units (u = t / T). Move m starts at u = m and lasts until u = m + 2;
its normalised position profile is :func:`triangle_profile`. On ``u in [m, m + 1]`` only the
moves m-1 (decelerating) and m (accelerating) are in progress, so the curve is

    C(u) = P[m-2] + S(1 + x) (P[m-1] - P[m-2]) + S(x) (P[m] - P[m-1]),   x = u - m,

a C1 piecewise quadratic (a uniform quadratic B-spline of the targets): it passes through the
midpoint of each move with that move's mean velocity (P[m] - P[m-1]) / T and settles exactly
on the last target once no further move is started.
"""
from __future__ import annotations

import numpy as np


def triangle_profile(x):
    """Normalised position of one move at x = (t - start) / T: 0 before, 1 after 2T.

    Its derivative is the triangle (x on [0, 1], 2 - x on [1, 2]): area 1, so a move covers
    exactly its displacement.
    """
    x = np.clip(np.asarray(x, dtype=float), 0.0, 2.0)
    return np.where(x <= 1.0, 0.5 * x * x, 1.0 - 0.5 * (2.0 - x) ** 2)


def blend(targets, x):
    """Merged curve on one move interval.

    ``targets``: (3, C) rows P[m-2], P[m-1], P[m] (any channels: pose components, stamps);
    ``x``: (K,) positions in [0, 1] inside the interval [m, m+1] (move units).
    Returns positions (K, C) and velocities (K, C) per move unit (divide by T for per second).
    """
    targets = np.asarray(targets, dtype=float)
    x = np.asarray(x, dtype=float)[:, None]
    d_prev = targets[1] - targets[0]
    d_new = targets[2] - targets[1]
    pos = targets[0] + (1.0 - 0.5 * (1.0 - x) ** 2) * d_prev + 0.5 * x * x * d_new
    vel = (1.0 - x) * d_prev + x * d_new
    return pos, vel


def blend_history(targets, u):
    """Reference (non-streaming) evaluation of the merged curve for a whole target sequence.

    ``targets``: (M, C) targets of moves 0..M-1, all moves before 0 at ``targets[0]``;
    ``u``: (K,) move-unit times. Sums the individual triangular moves directly, so it is an
    independent check of :func:`blend` (used by the tests).
    """
    targets = np.asarray(targets, dtype=float)
    u = np.asarray(u, dtype=float)
    deltas = np.diff(targets, axis=0, prepend=targets[:1])           # move m: P[m] - P[m-1]
    weights = triangle_profile(u[:, None] - np.arange(len(targets))[None, :])
    return targets[0] + weights @ deltas
