"""Homing and return-home plans (seed 001 section 3.4), bounded in length and evaluated one frame
at a time: nothing is precomputed, so the cycle that starts a plan costs about what any other does
(the old plan was a growing search over whole sample arrays: 54-132 s plans computed in 24-67 ms
within one 2.5 ms cycle).

From rest (homing, or after a brake) the plan is the rest-to-rest ramp
y = home + (1 - s(t / T)) (x_0 - home); T is the shortest duration whose closed-form peaks
(``ramps.PEAK_RATE``, ``PEAK_CURVATURE``) keep every DOF within its limits. Sampled first and
second differences are averages of y' and y'' over a frame, so those peaks bound the samples
sent: no check needed. A straight line towards home: it stays in the (convex) roll/pitch/yaw box.

While moving (a stop request, or back inside after a recovery), the seed's blend: the undisturbed
motion X(t) = x_0 + v_0 t filtered by c = 1 - s(t / T), y = c X + (1 - c) home (velocity continuous,
zero at home). Its velocity and acceleration are linear in d_0 = x_0 - home and v_0 with
coefficients that depend only on tau = t / T:

    y'  = -s'(tau) d_0 / T + v_0 (1 - s - tau s')
    y'' = -s''(tau) d_0 / T^2 - v_0 (2 s' + tau s'') / T

so a fixed table of the ramp over tau screens each candidate duration in a few microseconds
(``CANDIDATES`` durations from the rest-to-rest one, growing by ``GROWTH``); the first that passes
is used. The table samples tau, so each blend sample is still checked against the envelope
(``Envelope.admits``: limits, and the box with its stopping distance) as it is produced; one that
would leave it, or no candidate at all, switches the plan to brake-then-ramp: the controlled stop
of ``envelope.brake_step`` from the last sample (admissible, so the stop is too), then the ramp.
The blend cannot always be made feasible: moving towards home at v_max, its speed exceeds v_0 for
every finite T (by 2.5 |d_0|^3 / (v_0^2 T^3) for the quintic).

Lengths: the ramp is bounded by the distance to home over v_max (and min_duration), the blend by
``GROWTH ** (CANDIDATES - 1)`` (4.8x) the ramp's duration, the brake by v / a.
"""
from __future__ import annotations

import functools

import numpy as np

from hil_core.planner.envelope import Envelope, brake_step
from hil_core.planner.ramps import PEAK_CURVATURE, PEAK_RATE, check_shape, ramp, ramp_curvature, ramp_rate

CANDIDATES = 8
GROWTH = 1.25
RAMP_MARGIN = 1e-6            # rounding only: the ramp's closed-form peaks are exact bounds
_TAU = np.linspace(0.0, 1.0, 65)


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


def blend_frames(d0, v0, dt, a_lim, v_lim, shape, min_duration):
    """Frames of the shortest candidate blend whose tabulated peaks are within the limits, or None."""
    s1, s2, g, h = _table(shape)
    # the velocity g v0 - s1 d0 u is linear in u = 1 / T: each table entry allows an interval of u
    # (1e-12: v0 is recomputed from the last two outputs, with rounding, and may sit on v_lim)
    a, b, vm = s1 * d0, g * v0, v_lim * (1 + 1e-12)
    if np.any((a == 0.0) & (np.abs(b) > vm)):
        return None
    safe = np.where(a == 0.0, 1.0, a)
    with np.errstate(over='ignore'):               # a tiny coefficient: an unbounded side, correctly
        lo = np.where(a > 0.0, (b - vm) / safe, np.where(a < 0.0, (b + vm) / safe, -np.inf))
        hi = np.where(a > 0.0, (b + vm) / safe, np.where(a < 0.0, (b - vm) / safe, np.inf))
    u_lo, u_hi = float(lo.max()), float(hi.min())
    t0 = max(min_duration, rest_duration(d0, a_lim, v_lim, shape), dt)
    for j in range(CANDIDATES):
        n = _frames(t0 * GROWTH ** j, dt)
        u = 1.0 / (n * dt)
        if u_lo <= u <= u_hi and np.all(np.abs(s2 * d0 * (u * u) + h * v0 * u) <= a_lim):
            return n
    return None


def stop_point(x0, v0, dt, a_lim):
    """Where ``envelope.brake_step`` from (x0, v0) comes to rest, and after how many frames (the
    speed drops by a dt per frame: an arithmetic series per DOF)."""
    dv = a_lim * dt
    m = np.floor(np.abs(v0) / dv)                     # frames with a full decrement still moving
    travel = np.sign(v0) * dt * (m * np.abs(v0) - dv * m * (m + 1) / 2.0)
    return x0 + travel, int(np.max(np.ceil(np.abs(v0) / dv - 1e-12)))


class HomePlan:
    """The outputs of the next frames, home at rest at the end; ``next()`` one frame at a time.
    ``kind``: 'ramp' (from rest), 'seed_blend' or 'brake_then_ramp' as planned; ``duration`` (s)
    and ``frames`` as planned (a blend that has to switch mid-way ends sooner: ``switched``)."""

    def __init__(self, x_prev, x0, home, dt, a_lim, v_lim, shape='quintic', min_duration=0.5,
                 lower=None, upper=None):
        check_shape(shape)
        self.home = np.asarray(home, dtype=float)
        self.dt, self.shape, self.min_duration = float(dt), shape, float(min_duration)
        self.a_lim, self.v_lim = np.asarray(a_lim, dtype=float), np.asarray(v_lim, dtype=float)
        self.envelope = Envelope(dt, self.a_lim, self.v_lim, lower, upper)
        self.x = np.asarray(x0, dtype=float).copy()
        self.v = (self.x - np.asarray(x_prev, dtype=float)) / dt
        self.switched = False
        if not np.any(self.v):
            self.kind = 'ramp'
            self._start_ramp()
            self.frames = self._n
        else:
            d0 = self.x - self.home
            n = blend_frames(d0, self.v, dt, self.a_lim, self.v_lim, shape, min_duration)
            if n is not None:
                self.kind, self.frames = 'seed_blend', n
                self._stage, self._k, self._n, self._d0, self._v0 = 'blend', 0, n, d0, self.v.copy()
            else:
                self.kind = 'brake_then_ramp'
                stop, k = stop_point(self.x, self.v, dt, self.a_lim)
                self.frames = k + _frames(self._ramp_duration(stop), dt)
                self._stage = 'brake'
        self.duration = self.frames * dt

    @property
    def done(self) -> bool:
        return self._stage == 'ramp' and self._k >= self._n

    def _ramp_duration(self, start):
        return max(self.min_duration, rest_duration(start - self.home, self.a_lim, self.v_lim, self.shape)
                   / (1.0 - RAMP_MARGIN))

    def _start_ramp(self):
        self._stage, self._k, self._start = 'ramp', 0, self.x.copy()
        self._n = _frames(self._ramp_duration(self._start), self.dt)

    def next(self) -> np.ndarray:
        dt = self.dt
        if self._stage == 'blend':
            self._k += 1
            t = self._k * dt
            y = self.home if self._k >= self._n else \
                self.home + (1.0 - float(ramp(t / (self._n * dt), self.shape))) * (self._d0 + self._v0 * t)
            v = (y - self.x) / dt
            if self.envelope.admits(self.x, self.v, (v - self.v) / dt):
                self.x, self.v = y.copy(), v
                if self._k >= self._n:
                    self._stage, self._k, self._n = 'ramp', 0, 0          # home, at rest: done
                return y
            self.switched, self._stage = True, 'brake'
        if self._stage == 'brake':
            self.x, self.v = brake_step(self.x, self.v, self.a_lim, dt)
            if not np.any(self.v):
                x = self.x.copy()
                self._start_ramp()
                return x
            return self.x.copy()
        self._k += 1
        y = self.home if self._k >= self._n else \
            self.home + (1.0 - float(ramp(self._k / self._n, self.shape))) * (self._start - self.home)
        self.v, self.x = (y - self.x) / dt, y
        return y

    def samples(self) -> np.ndarray:
        """All the remaining outputs (N, 6), consuming the plan (tests, benchmarks)."""
        out = []
        while not self.done:
            out.append(self.next())
        return np.array(out)


def plan_home(x_prev, x0, home, dt, a_lim, v_lim, shape='quintic', min_duration=0.5, lower=None, upper=None):
    """The plan that takes the output from its last two samples (x_prev, x0) home, at rest, within
    the per-DOF limits and, for bounded DOFs, inside [lower, upper] able to stop there."""
    return HomePlan(x_prev, x0, home, dt, a_lim, v_lim, shape, min_duration, lower, upper)
