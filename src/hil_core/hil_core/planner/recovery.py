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

Velocity: the field can turn speed from one axis into another (an x exit at 0.15 m/s became
y/z speed above their 0.1 m/s), so the acceleration is also clipped per DOF to what keeps the
velocity within ``v_max``; the brake only ever reduces speed, so it is unaffected.

Back inside, the seed's return home (``plans.plan_home``): the undisturbed motion filtered by a ramp
from 1 to 0, bounded in length, or brake-then-ramp when that blend cannot stay within the limits.
"""
from __future__ import annotations

import math

import numpy as np

from hil_core.planner.ellipsoid import ModifiedEllipsoid
from hil_core.planner.envelope import brake_step as _brake_step
from hil_core.planner.plans import plan_home


def scale_to_limits(a, a_max):
    """Uniformly scale a so that |a_i| <= a_max_i (direction kept)."""
    a = np.asarray(a, dtype=float)
    ratio = np.max(np.abs(a) / a_max)
    return a / ratio if ratio > 1.0 else a


def brake_step(x, v, a_max, dt):
    """One cycle of the controlled stop: each DOF decelerates at most at its limit to zero
    velocity (no reversal), semi-implicit so the output second difference is the acceleration."""
    return _brake_step(np.asarray(x, dtype=float), np.asarray(v, dtype=float), np.asarray(a_max, dtype=float), dt)


class CompliantRecovery:
    """Force-field recovery of seed 001. ``start`` with the first commanded pose outside the soft
    limit (6-DOF, base frame) and its velocity; ``step`` until ``back_inside``."""

    def __init__(self, soft: ModifiedEllipsoid, expansion: float, dt: float, a_max,
                 k_n: float = 400.0, c_n: float = 40.0, c_t: float = 10.0, brake_margin: float = 1.5,
                 max_duration: float = 30.0, inset: float = 0.03, v_max=None):
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
        self.v_max = np.full(6, np.inf) if v_max is None else np.asarray(v_max, dtype=float)
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
        vm = self.v_max[:3]
        a = np.clip(a, (-vm - v) / dt, (vm - v) / dt)
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
                    min_duration: float = 0.5):
    """Samples y_1..y_N (N x 6) that take the output from its last two samples home at rest
    (``plans.plan_home``: the seed's blend when it fits the limits, else brake then ramp)."""
    v_lim = np.full(6, np.inf) if v_max is None else np.asarray(v_max, dtype=float)
    return plan_home(x_prev, x0, home, dt, np.asarray(a_max, dtype=float), v_lim, shape, min_duration).samples()
