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

so a fixed table of the ramp over tau screens each candidate duration cheaply (``CANDIDATES``
durations from the rest-to-rest one, growing by ``GROWTH``); the first one that passes is then
checked exactly on the samples that will be sent (first and second differences, and for the
angles the box with the envelope's stopping distance). The blend cannot always be made feasible:
moving towards home at v_max, its speed exceeds v_0 for every finite T (by 2.5 |d_0|^3 /
(v_0^2 T^3) for the quintic), which made the old growing search run to 120 s plans computed in
one cycle. Then, or when no candidate passes, the plan brakes to rest at a_lim (the controlled
stop of ``envelope.brake_step``, in closed form) and ramps home from there.

Both plans are bounded: the ramp by the distance to home over v_max (plus min_duration), the
blend by ``GROWTH ** (CANDIDATES - 1)`` (4.8x) that, the brake by v / a. The ramp needs no check:
sampled first and second differences are averages of y' and y'' over a frame, so its closed-form
peaks bound the samples sent.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from hil_core.planner.ramps import PEAK_CURVATURE, PEAK_RATE, check_shape, ramp, ramp_curvature, ramp_rate

CANDIDATES = 8
GROWTH = 1.25
RAMP_MARGIN = 1e-6            # rounding only: the ramp's closed-form peaks are exact bounds
_TAU = np.linspace(0.0, 1.0, 129)


@dataclass
class HomePlan:
    samples: np.ndarray      # (N, 6): the outputs of the next N frames, the last one home exactly
    kind: str                # 'ramp' (from rest), 'seed_blend', 'brake_then_ramp'
    duration: float          # N dt (s)


@functools.lru_cache(maxsize=None)
def _table(shape: str):
    s, s1, s2 = ramp(_TAU, shape), ramp_rate(_TAU, shape), ramp_curvature(_TAU, shape)
    return s1[:, None], s2[:, None], (1.0 - s - _TAU * s1)[:, None], (2.0 * s1 + _TAU * s2)[:, None]


def rest_duration(d, a_lim, v_lim, shape: str = 'quintic') -> float:
    """Shortest T of a rest-to-rest ramp over the distances d within the per-DOF limits."""
    d = np.abs(np.asarray(d, dtype=float))
    return max(float(np.max(PEAK_RATE[shape] * d / v_lim)), float(np.max(np.sqrt(PEAK_CURVATURE[shape] * d / a_lim))))


def _frames(duration: float, dt: float) -> int:
    return max(1, int(np.ceil(duration / dt - 1e-9)))


def ramp_home(x0, home, dt, a_lim, v_lim, shape='quintic', min_duration=0.0):
    """Samples (N, 6) of the rest-to-rest ramp from x0 to home."""
    d = np.asarray(x0, dtype=float) - home
    n = _frames(max(min_duration, rest_duration(d, a_lim, v_lim, shape) / (1.0 - RAMP_MARGIN)), dt)
    t = np.arange(1, n + 1) / n
    y = home + (1.0 - ramp(t, shape))[:, None] * d
    y[-1] = home
    return y


def fits(seq, dt, a_lim, v_lim, lower, upper) -> bool:
    """Exact check of a sample sequence (the last two outputs, the plan, home once more): first and
    second differences within the limits, bounded DOFs inside [lower, upper] and able to stop there
    (the envelope's stopping distance max(|v| - a dt / 2, 0)^2 / (2 a))."""
    vel = np.diff(seq, axis=0) / dt
    # the first velocity is the given state's own; 1e-12 covers the rounding of recomputing it
    if np.any(np.abs(vel[1:]) > v_lim) or np.any(np.abs(np.diff(vel, axis=0)) > a_lim * dt * (1 + 1e-12)):
        return False
    b = np.isfinite(lower) & np.isfinite(upper)
    if not b.any():
        return True
    v, a, lo, hi = vel[:, b], a_lim[b], lower[b], upper[b]
    stop = seq[1:, b] + np.sign(v) * np.maximum(np.abs(v) - 0.5 * a * dt, 0.0) ** 2 / (2.0 * a)
    return bool(np.all((stop >= lo) & (stop <= hi) & (seq[1:, b] >= lo) & (seq[1:, b] <= hi)))


def _seed_blend(x_prev, x0, home, dt, a_lim, v_lim, shape, min_duration, lower, upper):
    """Samples of the shortest candidate seed blend that fits exactly, or None."""
    v0 = (x0 - x_prev) / dt
    d0 = x0 - home
    s1, s2, g, h = _table(shape)
    t0 = max(min_duration, rest_duration(d0, a_lim, v_lim, shape), dt)
    for j in range(CANDIDATES):
        n = _frames(t0 * GROWTH ** j, dt)
        T = n * dt
        # cheap screen on the table: a candidate whose sampled peaks exceed a limit cannot fit
        if (np.any(np.abs(g * v0 - s1 * d0 / T) > v_lim * (1 + 1e-12))
                or np.any(np.abs(s2 * d0 / (T * T) + h * v0 / T) > a_lim)):
            continue
        t = np.arange(1, n + 1) * dt
        y = home + (1.0 - ramp(t / T, shape))[:, None] * (d0 + v0 * t[:, None])
        y[-1] = home
        if fits(np.vstack([x_prev, x0, y, home]), dt, a_lim, v_lim, lower, upper):
            return y
    return None


def brake_samples(x0, v0, dt, a_lim):
    """The controlled stop of ``envelope.brake_step`` from (x0, v0) in closed form: every DOF
    loses a_lim dt of speed per frame until it is at rest (no reversal). (K, 6), K >= 1."""
    steps = int(np.max(np.ceil(np.abs(v0) / (a_lim * dt) - 1e-12)))
    k = np.arange(1, max(steps, 1) + 1)[:, None]
    v = np.sign(v0) * np.maximum(np.abs(v0) - k * a_lim * dt, 0.0)
    return x0 + np.cumsum(v, axis=0) * dt


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
    y = _seed_blend(x_prev, x0, home, dt, a_lim, v_lim, shape, min_duration, lower, upper)
    if y is not None:
        return HomePlan(y, 'seed_blend', len(y) * dt)
    stop = brake_samples(x0, v0, dt, a_lim)
    y = np.vstack([stop, ramp_home(stop[-1], home, dt, a_lim, v_lim, shape, min_duration)])
    return HomePlan(y, 'brake_then_ramp', len(y) * dt)
