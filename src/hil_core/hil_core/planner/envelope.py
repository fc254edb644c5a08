"""Per-DOF motion envelope: the accelerations a planner output may take in the next cycle, and the
derating of the angle limits that makes them hold for the angular rates the robot sees.

Envelope (one cycle, per DOF, semi-implicit: v' = v + a dt, x' = x + v' dt):

* |a| <= a_lim and |v'| <= v_lim;
* for a DOF with position bounds [lo, hi] (the roll/pitch/yaw box of the total-orientation
  workspace), the new state can still stop inside them braking at a_lim:
  x' + D(v') within [lo, hi], D the discrete stopping distance (bounded in ``_stop_speed``). From such a state the controlled stop of ``brake``
  (decelerate at a_lim, never reverse) stays inside, and a = that stop is always admissible, so
  the set of admissible states is invariant: no phase that keeps to the envelope can leave the box.

A state outside it (a robot that starts tilted beyond the range) gets the action that returns
fastest: the bound it breaks wins over the others.

Rate derating (seed 001 table 3 angles, R = Rz(yaw) Ry(pitch) Rx(roll)): the angular velocity
is w = M(rpy) d(rpy)/dt in the base frame, M = [[cy cp, -sy, 0], [sy cp, cy, 0], [-sp, 0, 1]], and
in the platform frame [[1, 0, -sp], [0, cr, sr cp], [0, -sr, cr cp]]; the angular acceleration
adds dM/dt d(rpy)/dt, products of two angle rates. With |roll| <= R, |pitch| <= P, |yaw| <= Y every
entry of M is bounded by 1 on the diagonal and by sin R, sin P or sin Y off it, so the per-angle
limits a, v are scaled down until, row by row and in both frames,
sum_j |M_ij| v_j <= v_max_i and sum_j |M_ij| a_j + (rate products)_i <= a_max_i.
"""
from __future__ import annotations

import math

import numpy as np

# margin for what the continuous bounds do not cover: the rates computed from sampled
# quaternions differ from the continuous ones by O(dt^2) (measured well below 1e-3)
DISCRETE_MARGIN = 0.99


def _bounds_of_m(half_rpy):
    sr, sp, sy = (math.sin(min(abs(float(h)), 0.5 * math.pi)) for h in half_rpy)
    space = np.array([[1.0, sy, 0.0], [sy, 1.0, 0.0], [sp, 0.0, 1.0]])
    body = np.array([[1.0, 0.0, sp], [0.0, 1.0, sr], [0.0, sr, 1.0]])
    return (sr, sp, sy), space, body


def _rate_products(s, w):
    """Bound per row of |dM/dt d(rpy)/dt| (base frame rows, then platform frame rows) for angle
    rates bounded by w = (w_r, w_p, w_y), from the derivative of each entry of M."""
    sr, sp, sy = s
    wr, wp, wy = w
    space = (sy * wy * wr + sp * wp * wr + wy * wp,
             wy * wr + sy * sp * wp * wr + sy * wy * wp,
             wp * wr)
    body = (wp * wy,
            sr * wr * wp + wr * wy + sr * sp * wp * wy,
            wr * wp + sr * wr * wy + sp * wp * wy)
    return np.array(space), np.array(body)


def rate_limits(a_max, v_max, half_rpy):
    """Per-DOF limits (6) for the planner's [x, y, z, roll, pitch, yaw]: translations unchanged,
    the three angle limits scaled so that the angular velocity and acceleration (base and
    platform frame, per component) stay within the configured rotational ``v_max``, ``a_max``
    for every orientation within ``half_rpy``. Raises ValueError if no positive scaling exists."""
    a_max = np.asarray(a_max, dtype=float)
    v_max = np.asarray(v_max, dtype=float)
    s, space, body = _bounds_of_m(half_rpy)
    ar, vr = a_max[3:], v_max[3:]
    f_v = min(float(np.min(vr / (space @ vr))), float(np.min(vr / (body @ vr)))) * DISCRETE_MARGIN
    w = f_v * vr
    q_space, q_body = _rate_products(s, w)
    f_a = min(float(np.min((ar - q_space) / (space @ ar))), float(np.min((ar - q_body) / (body @ ar))))
    f_a *= DISCRETE_MARGIN
    if not f_a > 0.0:
        raise ValueError(f'rotational a_max {ar.tolist()} rad/s^2 is too small for v_max {vr.tolist()} rad/s '
                         f'over the orientation range {list(half_rpy)}: the rate products alone exceed it')
    return np.r_[a_max[:3], f_a * ar], np.r_[v_max[:3], f_v * vr]


class Envelope:
    """Admissible accelerations per DOF for one cycle (module docstring). Plain float arithmetic:
    it runs several times per planner cycle on 6-vectors, where numpy's per-call cost dominates."""

    def __init__(self, dt: float, a_lim, v_lim, lower=None, upper=None):
        self.dt = float(dt)
        self.a = np.asarray(a_lim, dtype=float)
        self.v = np.asarray(v_lim, dtype=float)
        n = len(self.a)
        self.lower = np.full(n, -np.inf) if lower is None else np.asarray(lower, dtype=float)
        self.upper = np.full(n, np.inf) if upper is None else np.asarray(upper, dtype=float)
        if not (self.lower < self.upper).all():
            raise ValueError('envelope: every lower bound must be below its upper bound')
        self._dofs = [(a, v, lo, hi, math.isfinite(lo) and math.isfinite(hi))
                      for a, v, lo, hi in zip(self.a.tolist(), self.v.tolist(), self.lower.tolist(), self.upper.tolist())]

    def _stop_speed(self, room: float, a: float) -> float:
        """Largest v' with v' dt + D(v') <= room, D the stopping distance of ``brake_step`` from v'
        bounded above by D(v) = max(v - a dt / 2, 0)^2 / (2 a) (exact stop distance
        dt sum_j max(v - j a dt, 0) = v^2 / (2a) - a dt^2 (n + f^2) / 2 for v = (n + f) a dt).
        Braking keeps x + D(v) constant, so the bound is invariant; and the bound itself is reached
        exactly (v' <= a dt / 2 stops in one step), so a clamped reference at the edge can be joined."""
        dt = self.dt
        if room >= 0.5 * a * dt * dt:
            return math.sqrt(2.0 * a * room) - 0.5 * a * dt
        return room / dt

    def _interval(self, i, x, v):
        a, vm, lower, upper, boxed = self._dofs[i]
        dt = self.dt
        v_hi, v_lo = vm, -vm
        if boxed:
            v_hi = min(v_hi, self._stop_speed(upper - x, a))
            v_lo = max(v_lo, -self._stop_speed(x - lower, a))
        return max(-a, (v_lo - v) / dt), min(a, (v_hi - v) / dt), a, boxed, 0.5 * (lower + upper) if boxed else 0.0

    def bounds(self, x, v):
        """(lo, hi) acceleration interval per DOF; lo > hi where the state is already outside."""
        lo, hi = [], []
        for i in range(len(self._dofs)):
            lo_i, hi_i, *_ = self._interval(i, float(x[i]), float(v[i]))
            lo.append(lo_i)
            hi.append(hi_i)
        return np.array(lo), np.array(hi)

    def clip(self, x, v, a):
        """``a`` moved into the admissible interval; where the interval is empty (a state that is
        already outside: too fast, or beyond a bound) the action that returns fastest: towards the
        inside of the box (against the velocity on an unbounded DOF) as hard as the acceleration
        limit and the other bound allow (lo >= -a_lim, hi <= a_lim always)."""
        out = []
        for i in range(len(self._dofs)):
            xi, vi = float(x[i]), float(v[i])
            lo, hi, _, boxed, mid = self._interval(i, xi, vi)
            if lo <= hi:
                out.append(min(max(float(a[i]), lo), hi))
            else:
                out.append(lo if ((xi > mid) if boxed else (vi > 0.0)) else hi)
        return np.array(out)

    def admits(self, x, v, a) -> bool:
        """Whether ``a`` lies in the interval of every DOF (the limiters' pass-through test; inlined,
        it runs every cycle)."""
        dt = self.dt
        for (am, vm, lower, upper, boxed), xi, vi, ai in zip(self._dofs, x.tolist(), v.tolist(), a.tolist()):
            if ai > am or ai < -am or vi + ai * dt > vm or vi + ai * dt < -vm:
                return False
            if boxed:
                vn = vi + ai * dt
                if vn > self._stop_speed(upper - xi, am) or -vn > self._stop_speed(xi - lower, am):
                    return False
        return True

    def brake(self, x, v):
        """One cycle of the controlled stop (decelerate at a_lim to rest, no reversal)."""
        return brake_step(x, v, self.a, self.dt)


def brake_step(x, v, a_lim, dt):
    """Decelerate each DOF by at most a_lim dt towards rest; the last step lands on exactly zero
    velocity (computing it as v + (-v / dt) dt could leave a rounding residue behind)."""
    dv = a_lim * dt
    v = np.where(np.abs(v) <= dv, 0.0, v - np.sign(v) * dv)
    return x + v * dt, v


def within_limits(x, v, acc, a_lim, v_lim, half, x_prev) -> bool:
    """The planner guard's test of one output (floats: it runs every cycle): acceleration and
    velocity within the limits, and no angle moving further beyond the half ranges ``half``
    (a list, or None for unbounded angles) than it was at ``x_prev``."""
    for i, (ai, vi) in enumerate(zip(acc.tolist(), v.tolist())):
        if abs(ai) > a_lim[i] * (1 + 1e-9) or abs(vi) > v_lim[i] * (1 + 1e-9):
            return False
    if half:
        for h, new, old in zip(half, x[3:].tolist(), x_prev[3:].tolist()):
            if abs(new) > h + 1e-12 and abs(new) > abs(old):
                return False
    return True
