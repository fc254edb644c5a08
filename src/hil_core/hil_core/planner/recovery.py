"""Compliant recovery between the soft and the hard limit (seed 001 section 3.4) and the
velocity-continuous blends that bring the TCP home.

Outside the soft limit the planner stops following the model and integrates the TCP as a unit
mass in a force field: a spring-damper along the outward normal n_e of the surface (relaxed
position on the surface) and a damper along the tangent plane::

    a_n = -(c_n v_n + k_n dr_n) n_e,   a_t = -c_t v_t,   P_{k+1} = P_k + v_k dt + a dt^2 / 2

with ``dr_n = (P - (1 - inset) r_e u) . n_e``: the seed relaxes the spring on the surface; a
well-damped spring would then only creep up to it and never re-enter, so its rest position is a
small ``inset`` inside (default 3 % of r_e). Per-DOF acceleration limits are applied to the total
acceleration by uniform scaling (the direction is kept). A brake overrides the field when the
clearance to the hard limit, at least ``(k - h(P)) * min(a)`` for the convex gauge ``h``, gets
close to the braking distance ``|v|^2 / (2 a_min)``: the hard limit cannot be crossed as long as
the planner's configuration check holds (gap > braking distance at the velocity limit).
Orientation: the seed keeps it at the exit value; an exit with the platform still rotating
would then be a velocity jump, so the rotation is brought to rest at the acceleration limit
(a few ms) and then held.

Back inside, the seed's return home: the undisturbed motion X(t) = x_0 + v_0 t (re-entry velocity
kept) is filtered by a ramp c going 1 -> 0, y = c X + (1 - c) x_home; c' = 0 at both ends keeps the
velocity continuous at re-entry and zero at home. The duration grows until every sampled
second difference is within the per-DOF limits (checked on the exact samples sent).
"""
from __future__ import annotations

import math

import numpy as np

from hil_core.planner.ellipsoid import ModifiedEllipsoid
from hil_core.planner.ramps import check_shape, ramp


def scale_to_limits(a, a_max):
    """Uniformly scale a so that |a_i| <= a_max_i (direction kept)."""
    a = np.asarray(a, dtype=float)
    ratio = np.max(np.abs(a) / a_max)
    return a / ratio if ratio > 1.0 else a


def brake_step(x, v, a_max, dt):
    """One cycle of the controlled stop: each DOF decelerates at most at its limit to zero
    velocity (no reversal), semi-implicit so the output second difference is the acceleration."""
    a = np.clip(-v / dt, -a_max, a_max)
    v = v + a * dt
    return x + v * dt, v


class CompliantRecovery:
    """Force-field recovery of seed 001. ``start`` with the first commanded pose outside the soft
    limit (6-DOF, base frame) and its velocity; ``step`` until ``back_inside``."""

    def __init__(self, soft: ModifiedEllipsoid, expansion: float, dt: float, a_max,
                 k_n: float = 400.0, c_n: float = 40.0, c_t: float = 10.0, brake_margin: float = 1.5,
                 max_duration: float = 30.0, inset: float = 0.03):
        if not expansion > 1.0:
            raise ValueError(f'hard-limit expansion must be > 1, got {expansion}')
        for name, value in (('k_n', k_n), ('c_n', c_n), ('c_t', c_t)):
            if not (np.isfinite(value) and value >= 0.0):
                raise ValueError(f'recovery {name} must be finite and >= 0, got {value}')
        if not k_n > 0.0:
            raise ValueError('recovery k_n must be > 0: the spring is what brings the TCP back')
        self.soft = soft
        self.k = float(expansion)
        self.dt = float(dt)
        self.a_max = np.asarray(a_max, dtype=float)
        self.k_n, self.c_n, self.c_t = float(k_n), float(c_n), float(c_t)
        self.brake_margin = float(brake_margin)
        if not 0.0 < inset < 0.5:
            raise ValueError(f'recovery inset must be in (0, 0.5), got {inset}')
        self.inset = float(inset)
        self.max_steps = int(max_duration / dt)
        self.centre = np.asarray(soft.centre, dtype=float)
        self.a_brake = float(np.min(self.a_max[:3]))
        self.x = None
        self.v = None
        self.steps = 0
        self.braking = False
        self.max_level = 0.0

    def start(self, x0, v0) -> None:
        self.x = np.asarray(x0, dtype=float).copy()
        self.v = np.asarray(v0, dtype=float).copy()
        self.steps = 0
        self.max_level = float(self.soft.level(self.x[:3] - self.centre))

    def field_acceleration(self, p_local, v):
        """Seed 001 eq. 9-14: normal spring-damper + tangential damper (before limits).
        Zero velocity needs no special case here (v_t = 0, only the spring acts); the seed's unit
        tangent n_t is never formed, so a vanishing v_t cannot divide by zero."""
        n_e = self.soft.normal_point(p_local)
        r = math.sqrt(float(p_local[0]) ** 2 + float(p_local[1]) ** 2 + float(p_local[2]) ** 2)
        u = p_local / r if r > 0.0 else n_e
        r_e = 1.0 / self.soft.level_point(u)
        dr_n = float(np.dot(p_local - (1.0 - self.inset) * r_e * u, n_e))
        v_n = float(np.dot(v, n_e))
        v_t = v - v_n * n_e
        return -(self.c_n * v_n + self.k_n * dr_n) * n_e - self.c_t * v_t

    def step(self):
        """Advance one cycle. Returns (x, back_inside)."""
        dt = self.dt
        p = self.x[:3] - self.centre
        v = self.v[:3]
        a = self.field_acceleration(p, v)
        speed = float(np.linalg.norm(v))
        h = self.soft.level_point(p)
        clearance = (self.k - h) * self.soft.min_radius
        stopping = speed * speed / (2.0 * self.a_brake) + 2.0 * speed * dt
        outward = float(np.dot(v, self.soft.normal_point(p))) > 0.0
        self.braking = outward and clearance <= self.brake_margin * stopping
        if self.braking:
            a = -v / speed * self.a_brake * np.sqrt(3.0)      # scaled back to the per-DOF limits below
            a = np.where(np.abs(a) * dt > np.abs(v), -v / dt, a)
        a = scale_to_limits(a, self.a_max[:3])
        p_new = self.x[:3] + v * dt + 0.5 * a * dt * dt
        v_new = v + a * dt
        r_new, w_new = brake_step(self.x[3:], self.v[3:], self.a_max[3:], dt)
        self.x = np.concatenate([p_new, r_new])
        self.v = np.concatenate([v_new, w_new])
        self.steps += 1
        level = self.soft.level_point(p_new - self.centre)
        self.max_level = max(self.max_level, level)
        return self.x.copy(), level <= 1.0

    @property
    def timed_out(self) -> bool:
        return self.steps >= self.max_steps


def plan_blend_home(x_prev, x0, home, dt, a_max, v_max=None, shape: str = 'quintic',
                    min_duration: float = 0.5, max_duration: float = 120.0):
    """Samples y_1..y_N (N x 6) of the seed's return-home blend, starting after the two last
    outputs ``x_prev``, ``x0`` (their difference is the re-entry velocity) and ending exactly at
    ``home`` with zero velocity. Also used for homing (x_prev == x0: start at rest)."""
    check_shape(shape)
    x_prev, x0, home = (np.asarray(v, dtype=float) for v in (x_prev, x0, home))
    a_max = np.asarray(a_max, dtype=float)
    v0 = (x0 - x_prev) / dt
    duration = max(min_duration, dt)
    while True:
        n = int(np.ceil(duration / dt))
        t = np.arange(1, n + 1) * dt
        c = 1.0 - ramp(t / (n * dt), shape)
        undisturbed = x0 + v0 * t[:, None]
        y = c[:, None] * undisturbed + (1.0 - c[:, None]) * home
        y[-1] = home
        seq = np.vstack([x_prev, x0, y, home])
        acc = np.abs(np.diff(seq, 2, axis=0)) / (dt * dt)
        ok = np.all(acc <= a_max * (1.0 - 1e-9))
        if ok and v_max is not None:
            vel = np.abs(np.diff(seq, axis=0)) / dt
            ok = np.all(vel <= np.maximum(np.asarray(v_max), np.abs(v0)) * (1.0 + 1e-9))
        if ok or duration >= max_duration:
            return y
        duration *= 1.25
