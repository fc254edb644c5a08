"""The plain-numpy braking tail (``hil_core.space.command_stream``): the oracle the compiled
kernel (``command_stream_kernel``) is tested against, with whole-array operations.

What it computes, and why, is in ``hil_core.space.command_stream``.
"""
from __future__ import annotations

import numpy as np

GRID_NS = 10_000_000          # 10 ms: stop times rounded up to this grid
MIN_SPAN_NS = 50_000_000      # 50 ms: the space plant's default max_gap; the shortest message


def braking_tail(q_next, v, a_max, period_ns: int, grid_ns: int = GRID_NS,
                 min_span_ns: int = MIN_SPAN_NS) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(times_ns, positions, velocities)``: the point ``(q_next, v)`` at ``period_ns``, then one
    point per distinct stop time of the moving joints, the last at rest no earlier than
    ``min_span_ns``. ``a_max`` > 0 per joint (or one value); ValueError otherwise."""
    q_next = np.asarray(q_next, dtype=float)
    v = np.asarray(v, dtype=float)
    a = np.broadcast_to(np.asarray(a_max, dtype=float), v.shape)
    if not (np.all(a > 0) and np.all(np.isfinite(a))) or period_ns <= 0 or grid_ns <= 0:
        raise ValueError('a_max, period_ns and grid_ns must be positive and finite')
    moving = v != 0.0
    # stop time of each moving joint, rounded up to the grid (never 0: a moving joint needs one)
    steps = np.where(moving, np.ceil(np.abs(v) / a * 1e9 / grid_ns - 1e-9), 0.0)
    stop_ns = np.maximum(steps, moving).astype(np.int64) * grid_ns
    knots = np.unique(stop_ns[moving])
    end = max(int(knots[-1]) if knots.size else 0, int(min_span_ns) - int(period_ns))
    if not knots.size or end > knots[-1]:
        knots = np.append(knots, end) if end > 0 else knots
    tau = np.concatenate(([0], knots)).astype(np.int64)            # after the first point
    # per joint: v_i (1 - tau/T_i) until T_i, then 0; positions its integral
    T = np.where(moving, stop_ns, 1) * 1e-9
    s = np.minimum(tau[:, None] * 1e-9, T[None, :])
    vel = np.where(moving, v * (1.0 - s / T), 0.0)
    pos = q_next + np.where(moving, v * s - 0.5 * v / T * s * s, 0.0)
    return tau + int(period_ns), pos, vel
