"""Acceleration Saturation Control (seed 000 section 4.1.3) and its ruckig alternative.

ASC: per-DOF acceleration limits on the 6-DOF pose vector (``hil_core.planner.dof``). Each cycle
the acceleration the new reference demands of the last output is computed; within the limits
the reference is passed through untouched (the planner then forwards the very same pose array:
bit-identical, no delay). Otherwise the acceleration is saturated and the next pose recomputed
from it; a PID position loop (with the reference acceleration as feed-forward) restores the
alignment with the reference whenever acceleration margin is available, and a back-calculation
anti-windup keeps its integrator from winding up while the output is saturated. A per-DOF
velocity limit is part of the saturation: it bounds the braking distance the workspace
recovery must have between the soft and the hard limit. Both limits, and per-DOF position
bounds where there are some (the roll/pitch/yaw box), come from one ``Envelope``: the
pass-through test and the saturation use the same admissible interval, so the output never
overshoots a bound it can no longer stop before (the position loop's overshoot used to carry
yaw to twice its range).

Discretisation: v_k = v_{k-1} + a_k dt, x_k = x_{k-1} + v_k dt, so the second difference of the
output is exactly a_k dt^2 and every output step obeys |a| <= a_max per DOF.
"""
from __future__ import annotations

import numpy as np

from hil_core.planner.envelope import Envelope


def _limits(values, name: str) -> np.ndarray:
    v = np.asarray(values, dtype=float).reshape(-1)
    if v.shape != (6,) or not np.all(np.isfinite(v)) or np.any(v <= 0):
        raise ValueError(f'{name} must be 6 positive finite values, got {values}')
    return v


class AccelerationSaturationControl:
    """The ASC of seed 000. ``step(ref)`` returns ``(x, passthrough)``."""

    def __init__(self, dt: float, a_max, v_max, bandwidth_hz: float = 1.5, rejoin_tolerance: float = 0.5,
                 lower=None, upper=None):
        if not (np.isfinite(dt) and dt > 0):
            raise ValueError(f'dt must be > 0, got {dt}')
        if not (np.isfinite(bandwidth_hz) and 0 < bandwidth_hz < 0.25 / dt):
            raise ValueError(f'asc bandwidth must be in (0, {0.25 / dt}) Hz, got {bandwidth_hz}')
        self.dt = float(dt)
        self.a_max = _limits(a_max, 'a_max')
        self.v_max = _limits(v_max, 'v_max')
        self.envelope = Envelope(self.dt, self.a_max, self.v_max, lower, upper)
        w = 2.0 * np.pi * bandwidth_hz
        # triple pole at -w of s^3 + Kd s^2 + Kp s + Ki (critically damped position loop)
        self.kp, self.kd, self.ki = 3.0 * w * w, 3.0 * w, w ** 3
        self.tt = 1.0 / w                     # back-calculation tracking time constant
        self.rejoin_tolerance = float(rejoin_tolerance)
        self.x = None
        self.v = np.zeros(6)
        self.integrator = np.zeros(6)
        self.saturated = False
        self.saturated_cycles = 0
        self.scale = 1.0     # fraction of a_max for a rejoin (sync)
        self._r1 = None      # previous reference
        self._r2 = None      # the one before

    def reset(self, x, v=None) -> None:
        """Start from output state x (and velocity v, default rest); the reference history is the state."""
        self.x = np.asarray(x, dtype=float).copy()
        self.v = np.zeros(6) if v is None else np.asarray(v, dtype=float).copy()
        self.integrator = np.zeros(6)
        self.saturated = False
        self._r1 = self.x.copy()
        self._r2 = self.x - self.v * self.dt

    def sync(self, x, v, scale: float = 1.0) -> None:
        """Continue from an output the planner had to change (its guard, a dropout): state only, loop
        kept. ``scale`` < 1: rejoin the reference at that fraction of a_max (after a dropout the
        planner's stop, not a model's motion, made the gap), wherever the envelope allows it."""
        self.x = np.asarray(x, dtype=float).copy()
        self.v = np.asarray(v, dtype=float).copy()
        self.saturated = True
        self.scale = float(scale)

    def step(self, ref):
        """One cycle: ``ref`` the 6-DOF reference (finite; the planner replaces bad ones by the last
        good reference, i.e. a hold). Returns (x_out, passthrough)."""
        if self.x is None:
            raise RuntimeError('ASC.step before reset()')
        r = np.asarray(ref, dtype=float)
        dt = self.dt
        v_pass = (r - self.x) / dt
        a_pass = (v_pass - self.v) / dt
        within = self.envelope.admits(self.x, self.v, a_pass)
        if within and self.scale < 1.0:       # a rejoin: its last step keeps to the scaled limit too
            within = bool(np.all(np.abs(a_pass) <= self.scale * self.a_max))
        if within and self.saturated:
            # rejoin only when the output is aligned with the reference in position *and* velocity
            v_ref = (r - self._r1) / dt
            within = bool((np.abs(v_pass - v_ref) <= self.rejoin_tolerance * self.a_max * dt).all())
        if within:
            self.saturated = False
            self.scale = 1.0
            self.integrator[:] = 0.0
            self.v = v_pass
            self.x = r.copy()
            self._r2, self._r1 = self._r1, r.copy()
            return r, True
        if not self.saturated:
            self.integrator[:] = 0.0
        self.saturated = True
        self.saturated_cycles += 1
        a_ff = np.clip((r - 2.0 * self._r1 + self._r2) / (dt * dt), -self.a_max, self.a_max)
        v_ref = np.clip((r - self._r1) / dt, -self.v_max, self.v_max)
        e = r - self.x
        u = a_ff + self.kp * e + self.kd * (v_ref - self.v) + self.integrator
        a = self.saturate(u)
        self.integrator += dt * (self.ki * e + (a - u) / self.tt)
        self.v = self.v + a * dt
        self.x = self.x + self.v * dt
        self._r2, self._r1 = self._r1, r.copy()
        return self.x.copy(), False

    def saturate(self, u):
        """Clip an acceleration to the envelope: per-DOF limit, |v| <= v_max next cycle, and the
        position bounds (able to stop before them). A state outside it (only after a reset with a
        fast state) brakes as hard as allowed. A rejoin (``scale`` < 1) keeps to the scaled limit
        where that interval is not empty (the box's stop may need the full one)."""
        if self.scale < 1.0:
            lo, hi = self.envelope.bounds(self.x, self.v)
            lo, hi = np.maximum(lo, -self.scale * self.a_max), np.minimum(hi, self.scale * self.a_max)
            if np.all(lo <= hi):
                return np.minimum(np.maximum(u, lo), hi)
        return self.envelope.clip(self.x, self.v, u)


class RuckigLimiter:
    """Jerk-limited alternative (``acceleration_limiter: ruckig``): each cycle ruckig plans from the
    current output state to the reference (target velocity = reference velocity, clipped) and the
    first sample is output, moved into the same ``Envelope`` as the ASC. Never bit-identical (jerk
    limiting smooths every corner).

    ruckig may refuse an input (it raises ``RuckigError``, or returns an error code that its Python
    enum does not even know): that cycle brakes within the envelope instead and ``error`` names the
    reason, which the planner turns into a controlled stop (FAULT) with that diagnostic."""

    def __init__(self, dt: float, a_max, v_max, j_max, lower=None, upper=None):
        from ruckig import InputParameter, OutputParameter, Ruckig
        self.dt = float(dt)
        self.a_max = _limits(a_max, 'a_max')
        self.v_max = _limits(v_max, 'v_max')
        self.j_max = _limits(j_max, 'j_max')
        self.envelope = Envelope(self.dt, self.a_max, self.v_max, lower, upper)
        self._otg = Ruckig(6, self.dt)
        self._inp = InputParameter(6)
        self._out = OutputParameter(6)
        # ruckig bounds the continuous profile; the sampled second difference averages it, so a
        # hair of margin keeps the discrete acceleration strictly inside the limit
        self._inp.max_velocity = list(self.v_max * (1 - 1e-6))
        self._inp.max_acceleration = list(self.a_max * (1 - 1e-6))
        self._inp.max_jerk = list(self.j_max)
        self.x = None
        self.v = np.zeros(6)
        self.a = np.zeros(6)
        self._r1 = None
        self.saturated = True
        self.failures = 0
        self.error = ''

    def reset(self, x, v=None) -> None:
        self.x = np.asarray(x, dtype=float).copy()
        self.v = np.zeros(6) if v is None else np.asarray(v, dtype=float).copy()
        self.a = np.zeros(6)
        self._cv = self.v.copy()          # ruckig's own continuous velocity at the last sample
        self._r1 = self.x.copy()
        self.error = ''

    def sync(self, x, v, scale: float = 1.0) -> None:    # scale: ruckig rejoins at its own limits
        self.x = np.asarray(x, dtype=float).copy()
        self.v = np.asarray(v, dtype=float).copy()
        self._cv, self.a = self.v.copy(), np.zeros(6)

    def _update(self):
        """ruckig's update, its refusals as a reason string ('' when it worked)."""
        from ruckig import Result
        try:
            res = self._otg.update(self._inp, self._out)
            if res not in (Result.Working, Result.Finished):
                return f'ruckig: {getattr(res, "name", res)}'
        except Exception as exc:          # noqa: BLE001 - RuckigError, or ValueError for unknown codes
            first = str(exc).strip().splitlines()
            return f'ruckig: {type(exc).__name__}: {first[0] if first else "no message"}'
        return ''

    def step(self, ref):
        r = np.asarray(ref, dtype=float)
        inp = self._inp
        # ruckig continues from its own continuous state (position = last output); feeding it the
        # discrete (interval-average) velocity instead would halve the acceleration it achieves
        inp.current_position = list(self.x)
        inp.current_velocity = list(np.clip(self._cv, -self.v_max * (1 - 1e-6), self.v_max * (1 - 1e-6)))
        inp.current_acceleration = list(np.clip(self.a, -self.a_max * (1 - 1e-6), self.a_max * (1 - 1e-6)))
        inp.target_position = list(r)
        inp.target_velocity = list(np.clip((r - self._r1) / self.dt, -0.9 * self.v_max, 0.9 * self.v_max))
        inp.target_acceleration = [0.0] * 6
        self._r1 = r.copy()
        self.error = self._update()
        if self.error:
            self.failures += 1
            self.x, self.v = self.envelope.brake(self.x, self.v)
            self._cv, self.a = self.v.copy(), np.zeros(6)
            return self.x.copy(), False
        new_x = np.array(self._out.new_position)
        a = ((new_x - self.x) / self.dt - self.v) / self.dt
        # the discrete second difference is what the robot sees: keep it in the envelope exactly
        a = self.envelope.clip(self.x, self.v, a)
        self.v = self.v + a * self.dt
        self.x = self.x + self.v * self.dt
        self._cv = np.array(self._out.new_velocity)
        self.a = np.array(self._out.new_acceleration)
        return self.x.copy(), False
