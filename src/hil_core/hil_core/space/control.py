"""Dynamic-Jacobian control law (seed 002, eq. 9-11) with the PI/PID variant the seed's
discussion asks for, a damped pseudo-inverse, and smooth joint limits.

* Eq. 10 (P): v_des = K_v (r_des - r_act), w_des = K_w E(Theta_act) (Theta_des - Theta_act),
  Theta = Euler ZYX, E(Theta) the seed's T_Theta^-1. ``orientation_error='rotvec'`` replaces the
  Euler difference by the rotation vector log(R_des R_act^T) (no wrap-around, no gimbal lock);
  both agree to first order for small errors.
* PI/PID: + K_i * integral(error) (clamped: anti-windup, frozen while the output is limited)
  + K_d * d(error)/dt (first-order filtered). The seed reports its P law too slow to converge
  within 20 s.
* Eq. 11 with the damped pseudo-inverse J_d^T (J_d J_d^T + lambda^2 I)^-1: lambda^2 grows from
  0 as the smallest singular value sigma_min drops below ``sigma_threshold`` (Maciejewski-Klein
  / Nakamura), lambda^2 = lambda_max^2 (1 - (sigma_min / sigma_threshold)^2). The damping used
  is returned so the node can report it.
* ``JointLimiter``: velocity limits (whole vector scaled, so the EE direction is kept),
  acceleration limits (the change of the vector scaled), and braking-distance position limits
  (qdot toward a limit <= sqrt(2 a_max distance)). Limiting never produces a step.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hil_core.space.model import euler_rate_matrix, euler_zyx


def damped_pinv(J: np.ndarray, sigma_threshold: float, lambda_max: float) -> tuple[np.ndarray, float, float]:
    """(J#, lambda, sigma_min) with singular-value-dependent damping, for a wide J (6x7).

    Through the 6x6 eigen-decomposition of J J^T (sigma^2 = its eigenvalues): a third of the
    cost of an SVD here. J# = J^T V diag(1 / (sigma^2 + lambda^2)) V^T.
    """
    w, V = np.linalg.eigh(J @ J.T)
    smin = float(np.sqrt(max(w[0], 0.0)))
    lam2 = 0.0
    if smin < sigma_threshold:
        lam2 = lambda_max ** 2 * (1.0 - (smin / sigma_threshold) ** 2)
    return J.T @ ((V / (np.maximum(w, 0.0) + lam2 + 1e-300)) @ V.T), float(np.sqrt(lam2)), smin


def wrap_angle(a):
    return (np.asarray(a) + np.pi) % (2 * np.pi) - np.pi


def rotation_error(R_des: np.ndarray, R_act: np.ndarray) -> np.ndarray:
    """Rotation vector of R_des R_act^T (inertial axes)."""
    R = R_des @ R_act.T
    c = np.clip((np.trace(R) - 1.0) * 0.5, -1.0, 1.0)
    angle = np.arccos(c)
    w = np.array([R[2, 1] - R[1, 2], R[0, 2] - R[2, 0], R[1, 0] - R[0, 1]])
    if angle < 1e-9:
        return 0.5 * w
    if np.pi - angle < 1e-6:   # near pi: axis from the symmetric part
        axis = np.sqrt(np.clip((np.diag(R) + 1.0) * 0.5, 0.0, None))
        k = int(np.argmax(axis))
        axis = (R[:, k] + R[k, :]) * 0.5 / max(axis[k], 1e-12)
        axis /= np.linalg.norm(axis)
        return angle * axis
    return angle / (2.0 * np.sin(angle)) * w


@dataclass
class ControlGains:
    kv: tuple = (1.0, 1.0, 1.0)           # K_v (1/s), seed: identity
    kw: tuple = (1.0, 1.0, 1.0)           # K_w (1/s), seed: identity
    ki_v: tuple = (0.0, 0.0, 0.0)         # integral gains (1/s^2); zero = the seed's P law
    ki_w: tuple = (0.0, 0.0, 0.0)
    kd: float = 0.0                       # derivative gain (s), same on all six axes
    derivative_cutoff_hz: float = 20.0
    integral_limit: float = 0.5           # |integral| per axis (m s / rad s)
    orientation_error: str = 'euler_zyx'  # eq. 10 as in the seed, or 'rotvec'
    sigma_threshold: float = 0.05         # damping starts below this sigma_min of J_d
    lambda_max: float = 0.05

    def validate(self) -> None:
        arrays = [self.kv, self.kw, self.ki_v, self.ki_w]
        if any(len(a) != 3 for a in arrays):
            raise ValueError('kv, kw, ki_v, ki_w need 3 values each')
        vals = np.concatenate([np.ravel(a) for a in arrays]
                              + [[self.kd, self.derivative_cutoff_hz, self.integral_limit,
                                  self.sigma_threshold, self.lambda_max]])
        if not np.all(np.isfinite(vals)) or np.any(vals < 0):
            raise ValueError('control gains must be finite and non-negative')
        if self.orientation_error not in ('euler_zyx', 'rotvec'):
            raise ValueError(f"orientation_error must be 'euler_zyx' or 'rotvec', got {self.orientation_error!r}")


class DynamicJacobianController:
    """Eq. 10-11 (+ I, D terms). ``step`` returns the desired joint rates and a report."""

    def __init__(self, gains: ControlGains):
        gains.validate()
        self.g = gains
        self.kp = np.concatenate([gains.kv, gains.kw]).astype(float)
        self.ki = np.concatenate([gains.ki_v, gains.ki_w]).astype(float)
        self.reset()

    def reset(self) -> None:
        self.integral = np.zeros(6)
        self.prev_error = None
        self.d_filtered = np.zeros(6)

    def error(self, r_des, R_des, r_act, R_act) -> np.ndarray:
        """6-vector [position error; angular-velocity-space orientation error] (inertial)."""
        e = np.empty(6)
        e[:3] = np.asarray(r_des) - np.asarray(r_act)
        if self.g.orientation_error == 'euler_zyx':
            th_act = euler_zyx(R_act)
            e[3:] = euler_rate_matrix(th_act) @ wrap_angle(euler_zyx(R_des) - th_act)
        else:
            e[3:] = rotation_error(R_des, R_act)
        return e

    def step(self, Jd: np.ndarray, e: np.ndarray, dt: float, saturated: bool = False):
        """Desired joint rates (eq. 11) for error ``e``; ``saturated`` (the limiter cut the last
        command) freezes the integral (conditional integration anti-windup)."""
        u = self.kp * e
        if np.any(self.ki > 0):
            if not saturated:
                lim = self.g.integral_limit
                self.integral = np.clip(self.integral + e * dt, -lim, lim)
            u = u + self.ki * self.integral
        if self.g.kd > 0:
            if self.prev_error is not None:
                a = np.exp(-dt * 2 * np.pi * self.g.derivative_cutoff_hz)
                self.d_filtered = a * self.d_filtered + (1 - a) * (e - self.prev_error) / dt
            u = u + self.g.kd * self.d_filtered
        self.prev_error = e.copy()
        Jpinv, lam, smin = damped_pinv(Jd, self.g.sigma_threshold, self.g.lambda_max)
        return Jpinv @ u, {'damping': lam, 'sigma_min': smin, 'ee_twist_des': u}


class JointLimiter:
    """Smooth joint velocity / acceleration / position limiting of a velocity command."""

    def __init__(self, lower, upper, v_max, a_max, margin: float = 0.02):
        self.lower = np.asarray(lower, float) + margin
        self.upper = np.asarray(upper, float) - margin
        self.v_max = np.asarray(v_max, float)
        self.a_max = np.asarray(a_max, float)
        if np.any(self.v_max <= 0) or np.any(self.a_max <= 0) or np.any(self.upper <= self.lower):
            raise ValueError('joint limits must be positive and upper > lower + 2 margin')
        self.last = np.zeros(self.v_max.shape)

    def reset(self, qd=None) -> None:
        self.last = np.zeros(self.v_max.shape) if qd is None else np.asarray(qd, float).copy()

    def step(self, qd_des, q, dt: float) -> tuple[np.ndarray, bool]:
        """Limited command and whether anything was cut."""
        qd = np.asarray(qd_des, float).copy()
        # braking-distance position limit: the joint can still stop before the (margin) limit
        room_up = np.sqrt(2 * self.a_max * np.clip(self.upper - q, 0.0, None))
        room_dn = -np.sqrt(2 * self.a_max * np.clip(q - self.lower, 0.0, None))
        hi = np.minimum(self.v_max, room_up)
        lo = np.maximum(-self.v_max, room_dn)
        # one common factor keeps the EE direction
        with np.errstate(divide='ignore', invalid='ignore'):
            ratio = np.where(qd > hi, np.maximum(hi, 0.0) / qd, np.where(qd < lo, np.minimum(lo, 0.0) / qd, 1.0))
        scale = float(min(1.0, ratio.min()))
        qd *= scale
        step = qd - self.last
        s2 = np.max(np.abs(step) / (self.a_max * dt))
        if s2 > 1.0:
            step /= s2
        out = self.last + step
        self.last = out
        return out, bool(scale < 1.0 or s2 > 1.0)

    def brake(self, dt: float) -> np.ndarray:
        """One step of the deceleration ramp to zero velocity (faults, stop): at most a_max."""
        step = -self.last
        s = np.max(np.abs(step) / (self.a_max * dt)) if step.size else 0.0
        if s > 1.0:
            step = step / s
        self.last = self.last + step
        return self.last.copy()
