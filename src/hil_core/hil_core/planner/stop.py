"""The planner's controlled stop (FAULT, IDLE while moving, a reference dropout, homing asked for
while moving): how its output comes to rest.

Two stops, one cycle at a time (semi-implicit like every planner output: v' = v + a dt,
x' = x + v' dt):

* ``brake_step`` (hil_core.planner.envelope): every DOF at its full limit a_lim, each on its own.
  The shortest stop: the envelope's invariance and the hard-limit margin of the configuration
  (``PlannerConfig.braking_problem``) are built on it. At the sliders it shows up to 30 % above
  a_max (the axes brake at a_max each, so their sum is up to sqrt(3) a_max, and the time base and
  the servo loops add their share; docs/fault_matrix.md).
* ``synchronized_step``: all DOFs decelerate together, direction kept, at ``fraction`` of their
  limits, the translational deceleration bounded in norm by ``fraction`` times the smallest
  translational limit; they reach rest together after ``stop_time``. Its path is the straight
  segment from x to ``stop_point`` = x + v T / 2 (the discrete path is a right Riemann sum of the
  continuous one, so it ends on the segment, never beyond).

``controlled_stop`` takes the gentle one whenever its whole path is inside: the segment's ends
inside the hard limit and the orientation box (both convex, so the segment is too); otherwise that
cycle brakes at the full limits. Each gentle step keeps its stop point, so a stop that started
gentle stays gentle, and one that started hard turns gentle once it has room. Either way the state
stays admissible for the full brake, so nothing the hard-limit guarantee rests on changes.
"""
from __future__ import annotations

import math

import numpy as np

from hil_core.planner.envelope import brake_step


def stop_time(v, a_stop) -> float:
    """T of the synchronized stop from velocity v: the slowest DOF at its deceleration a_stop, and
    the translational speed at the smallest translational a_stop (a bound on the norm)."""
    v = np.asarray(v, dtype=float)
    per_dof = float(np.max(np.abs(v) / a_stop))
    return max(per_dof, math.sqrt(float(v[:3] @ v[:3])) / float(np.min(a_stop[:3])))


def stop_point(x, v, a_stop):
    """Where the synchronized stop from (x, v) ends at most (continuous: x + v T / 2)."""
    return np.asarray(x, dtype=float) + np.asarray(v, dtype=float) * (0.5 * stop_time(v, a_stop))


def synchronized_step(x, v, a_stop, dt):
    """One cycle of the synchronized stop: v scaled by (1 - dt / T), rest in the last cycle."""
    x = np.asarray(x, dtype=float)
    v = np.asarray(v, dtype=float)
    t = stop_time(v, a_stop)
    v_next = np.zeros_like(v) if t <= dt else v * (1.0 - dt / t)
    return x + v_next * dt, v_next


def controlled_stop(x, v, a_lim, fraction: float, dt: float, inside):
    """One cycle of the planner's stop: (x', v', gentle). ``inside(point)`` says whether a point of
    the 6-DOF space is within the hard limit and the orientation box; ``fraction`` = 1 is the full
    brake always."""
    a_lim = np.asarray(a_lim, dtype=float)
    if fraction < 1.0 and np.any(v):
        a_stop = fraction * a_lim
        if inside(x) and inside(stop_point(x, v, a_stop)):
            x_next, v_next = synchronized_step(x, v, a_stop, dt)
            return x_next, v_next, True
    x_next, v_next = brake_step(np.asarray(x, dtype=float), np.asarray(v, dtype=float), a_lim, dt)
    return x_next, v_next, False
