"""Homing and return-home plans (seed 001 section 3.4), bounded in length and cheap to compute.

From rest (homing, or a stop that has already braked) the plan is the rest-to-rest ramp
y = home + (1 - s(t / T)) (x_0 - home); T is the shortest duration whose closed-form peaks
(``ramps.PEAK_RATE``, ``PEAK_CURVATURE``) keep every DOF within its limits, so a straight line
in the box of the roll/pitch/yaw range that never moves away from home.

While moving (a stop request, or back inside after a recovery), the seed's blend: the undisturbed
motion X(t) = x_0 + v_0 t filtered by c = 1 - s(t / T), y = c X + (1 - c) home (velocity continuous,
zero at home). Its velocity and acceleration are linear in d_0 = x_0 - home and v_0 with
coefficients that depend only on tau = t / T:

    y'  = -s'(tau) d_0 / T + v_0 (1 - s - tau s')
    y'' = -s''(tau) d_0 / T^2 - v_0 (2 s' + tau s'') / T

so a fixed table of the ramp over tau bounds them for a whole set of candidate durations at once
(``CANDIDATES`` durations from the rest-to-rest one, growing by ``GROWTH``). The blend cannot
always be made feasible: moving towards home at v_max, its speed exceeds v_0 for every finite T
(by 2.5 |d_0|^3 / (v_0^2 T^3) for the quintic), which made the old growing search run to 120 s
plans computed in one cycle. Then, or when no candidate keeps every DOF inside its envelope, the
plan brakes to rest at a_lim (``envelope.brake_step``) and ramps home from there.

Both plans are bounded: the ramp by the distance to home over v_max (plus min_duration), the
blend by ``GROWTH ** (CANDIDATES - 1)`` (4.8x) that, the brake by v / a. Sampled second and first
differences are averages of y'' and y' over a frame, so the continuous bounds carry over to the
samples sent; the table's grid error is covered by ``TABLE_MARGIN``.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from hil_core.planner.envelope import brake_step
from hil_core.planner.ramps import PEAK_CURVATURE, PEAK_RATE, check_shape, ramp, ramp_curvature, ramp_rate

CANDIDATES = 8
GROWTH = 1.25
TABLE_MARGIN = 1e-3
_TAU = np.linspace(0.0, 1.0, 129)


@dataclass
class HomePlan:
    samples: np.ndarray      # (N, 6): the outputs of the next N frames, the last one home exactly
    kind: str                # 'ramp' (from rest), 'seed_blend', 'brake_then_ramp'
    duration: float          # N dt (s)


@functools.lru_cache(maxsize=None)
def _table(shape: str):
    s, s1, s2 = ramp(_TAU, shape), ramp_rate(_TAU, shape), ramp_curvature(_TAU, shape)
    return (s[None, :, None], s1[None, :, None], s2[None, :, None], (1.0 - s - _TAU * s1)[None, :, None],
            (2.0 * s1 + _TAU * s2)[None, :, None], _TAU[None, :, None])


def rest_duration(d, a_lim, v_lim, shape: str = 'quintic') -> float:
    """Shortest T of a rest-to-rest ramp over the distances d within the per-DOF limits."""
    d = np.abs(np.asarray(d, dtype=float))
    return max(float(np.max(PEAK_RATE[shape] * d / v_lim)), float(np.max(np.sqrt(PEAK_CURVATURE[shape] * d / a_lim))))


def _frames(duration: float, dt: float) -> int:
    return max(1, int(np.ceil(duration / dt - 1e-9)))


def ramp_home(x0, home, dt, a_lim, v_lim, shape='quintic', min_duration=0.0):
    """Samples (N, 6) of the rest-to-rest ramp from x0 to home."""
    d = np.asarray(x0, dtype=float) - home
    n = _frames(max(min_duration, rest_duration(d, a_lim, v_lim, shape) / (1.0 - 2.0 * TABLE_MARGIN)), dt)
    t = np.arange(1, n + 1) / n
    y = home + (1.0 - ramp(t, shape))[:, None] * d
    y[-1] = home
    return y


def _blend_frames(d0, v0, dt, a_lim, v_lim, shape, min_duration, lower, upper):
    """Frames of the shortest feasible candidate duration of the seed blend, or None."""
    t0 = max(min_duration, rest_duration(d0, a_lim, v_lim, shape) / (1.0 - 2.0 * TABLE_MARGIN), dt)
    frames = np.array([_frames(t0 * GROWTH ** j, dt) for j in range(CANDIDATES)])
    T = (frames * dt)[:, None, None]
    s, s1, s2, g, h, tau = _table(shape)
    vel = g * v0 - s1 * d0 / T
    acc = -s2 * d0 / (T * T) - h * v0 / T
    ok = (np.all(np.abs(vel) <= v_lim * (1.0 - TABLE_MARGIN), axis=(1, 2))
          & np.all(np.abs(acc) <= a_lim * (1.0 - TABLE_MARGIN), axis=(1, 2)))
    boxed = np.isfinite(lower) & np.isfinite(upper)
    if boxed.any() and ok.any():
        b = boxed
        pos = (1.0 - s) * (d0[b] + v0[b] * T * tau)             # about home
        stop = pos + vel[..., b] * np.abs(vel[..., b]) / (2.0 * a_lim[b])
        slack = TABLE_MARGIN * (upper[b] - lower[b])
        lo, hi = lower[b] + slack, upper[b] - slack
        ok &= np.all((pos >= lo) & (pos <= hi) & (stop >= lo) & (stop <= hi), axis=(1, 2))
    return int(frames[np.argmax(ok)]) if ok.any() else None


def plan_home(x_prev, x0, home, dt, a_lim, v_lim, shape='quintic', min_duration=0.5, lower=None, upper=None):
    """The plan that takes the output from its last two samples (x_prev, x0) home, at rest, within
    the per-DOF limits and, for bounded DOFs, inside [lower, upper] able to stop there."""
    check_shape(shape)
    x_prev, x0, home = (np.asarray(v, dtype=float) for v in (x_prev, x0, home))
    a_lim, v_lim = np.asarray(a_lim, dtype=float), np.asarray(v_lim, dtype=float)
    lower = np.full(6, -np.inf) if lower is None else np.asarray(lower, dtype=float)
    upper = np.full(6, np.inf) if upper is None else np.asarray(upper, dtype=float)
    v0 = (x0 - x_prev) / dt
    if not np.any(v0):
        y = ramp_home(x0, home, dt, a_lim, v_lim, shape, min_duration)
        return HomePlan(y, 'ramp', len(y) * dt)
    d0 = x0 - home
    n = _blend_frames(d0, v0, dt, a_lim, v_lim, shape, min_duration, lower - home, upper - home)
    if n is not None:
        t = np.arange(1, n + 1) * dt
        y = home + (1.0 - ramp(t / (n * dt), shape))[:, None] * (d0 + v0 * t[:, None])
        y[-1] = home
        return HomePlan(y, 'seed_blend', n * dt)
    x, v, stops = x0, v0, []
    while np.any(v):                     # at most max(|v0| / (a_lim dt)) + 1 steps
        x, v = brake_step(x, v, a_lim, dt)
        stops.append(x)
    y = np.vstack([np.array(stops), ramp_home(x, home, dt, a_lim, v_lim, shape, min_duration)])
    return HomePlan(y, 'brake_then_ramp', len(y) * dt)
