"""Simulated KUKA iiwa 14 joints for the mock hardware (seed 004 joint realism, seed 002 robot).

One fixed step h (1 ms, the FRI rate) of:
* joint velocity controllers like the KUKA ones: PI on the velocity error with feedforward of
  gravity (model-based, as the robot's own gravity compensation) and of the commanded
  acceleration times the joint inertia; torque saturated at the URDF effort limits with
  conditional-integration anti-windup;
* optional motor torque ripple (seed 004: current-sensor bias and back-emf harmonics make a
  torque pulsation periodic in the motor angle): amplitude_i * sin(periods_i * q_i);
* arm forward dynamics in gravity by pinocchio ABA (fixed base, motor rotor inertia as
  ``armature``), then joint friction (``hil_core.drives.joint_friction``: LuGre, closed form,
  implicit in the joint's own velocity using the apparent inertia 1 / (M^-1)_ii; the
  cross-coupling of the friction torques through M^-1 is explicit);
* semi-implicit Euler for the positions; hard stops at the URDF position limits.
The measured torque is what the iiwa's joint torque sensors see: motor torque minus friction.

Optional torsional flexibility (``flexible``, seed 004 harmonic drive): a two-mass joint, motor
(rotor inertia J = armature, angle theta on the link side of the gear, friction on this side)
and link coupled by a spring-damper tau_s = k (theta - q) + d (thetadot - qdot). With the
iiwa's stiffness and the small wrist rotor inertias the motor-link mode is far above what an
explicit 1 ms step carries, so the step is implicit per joint: with the link's apparent inertia
1 / (M^-1)_ii the link velocity is affine in the motor velocity, the spring torque too, and the
motor equation becomes the same monotone scalar equation as the rigid case (solved with the
friction). The velocity loop then uses the motor velocity (collocated, as the drives do); the
torque sensor reads tau_s; the published position and velocity are the link's.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pinocchio as pin

from hil_core.iiwa.kinematics import IiwaKinematics
from hil_core.drives.joint_friction import FrictionParams, JointFriction

N = 7


@dataclass
class ArmSimParams:
    armature: tuple = (0.4, 0.4, 0.25, 0.25, 0.1, 0.05, 0.05)    # reflected rotor inertia (kg m^2)
    velocity_bandwidth_hz: float = 20.0                          # PI crossover of each joint loop
    integral_ratio: float = 0.25                                 # PI zero at ratio * bandwidth
    fc: tuple = (2.0, 2.0, 1.5, 1.5, 1.0, 0.5, 0.5)              # Coulomb friction (N m)
    fs_ratio: float = 1.3                                        # F_s / F_c
    vs: float = 0.02                                             # Stribeck velocity (rad/s)
    sigma0: float = 1.0e4                                        # bristle stiffness (N m/rad)
    sigma1: float = 30.0                                         # bristle damping (N m s/rad)
    viscous: tuple = (3.0, 3.0, 2.0, 2.0, 1.0, 0.5, 0.5)         # sigma2 (N m s/rad)
    ripple_amplitude: tuple = (0.0,) * N                         # N m (0 = off)
    ripple_periods: tuple = (800.0,) * N                         # per joint revolution
    gravity: tuple = (0.0, 0.0, -9.81)
    friction: bool = True
    flexible: bool = False
    stiffness: tuple = (1.5e4, 1.5e4, 1.0e4, 1.0e4, 5.0e3, 5.0e3, 5.0e3)   # N m/rad (assumption)
    joint_damping: tuple = (20.0, 20.0, 15.0, 15.0, 5.0, 3.0, 3.0)        # N m s/rad (assumption)

    def validate(self) -> None:
        for name in ('armature', 'fc', 'viscous', 'ripple_amplitude', 'ripple_periods', 'stiffness',
                     'joint_damping'):
            v = np.asarray(getattr(self, name), float)
            if v.shape != (N,) or not np.all(np.isfinite(v)) or np.any(v < 0):
                raise ValueError(f'{name} needs {N} finite non-negative values')
        if np.any(np.asarray(self.armature) <= 0) or np.any(np.asarray(self.stiffness) <= 0):
            raise ValueError('armature (rotor inertia) and stiffness must be positive')
        if not self.velocity_bandwidth_hz > 0 or not 0 <= self.integral_ratio <= 1:
            raise ValueError('velocity_bandwidth_hz > 0 and 0 <= integral_ratio <= 1 required')


@dataclass
class ArmSim:
    params: ArmSimParams = field(default_factory=ArmSimParams)
    urdf: str | None = None

    def __post_init__(self):
        self.params.validate()
        p = self.params
        self.kin = IiwaKinematics.from_urdf(self.urdf)
        self.model = self.kin.model.copy()
        # rigid: the rotor inertia adds to the joint; flexible: it sits behind the spring
        self.model.armature = np.zeros(N) if p.flexible else np.asarray(p.armature, float)
        self.model.gravity.linear = np.asarray(p.gravity, float)
        self.data = self.model.createData()
        self.tau_max = self.kin.effort_limit.copy()
        self.friction = JointFriction(FrictionParams.make(
            N, np.asarray(p.fc), np.asarray(p.fc) * p.fs_ratio, p.vs, p.sigma0, p.sigma1, np.asarray(p.viscous)))
        # the per-step constants as arrays once (params are read here: a 1 kHz step converting
        # tuples and symmetrising with two triu calls spent more than the friction kernel)
        self._armature = np.asarray(p.armature, float)
        self._ripple = np.any(np.asarray(p.ripple_amplitude, float) != 0.0)
        self._ripple_amplitude = np.asarray(p.ripple_amplitude, float)
        self._ripple_periods = np.asarray(p.ripple_periods, float)
        self._lower = np.tril_indices(N, -1)
        self.reset(np.zeros(N))

    def reset(self, q0) -> None:
        q0 = np.asarray(q0, float)
        if q0.shape != (N,) or not np.all(np.isfinite(q0)):
            raise ValueError('initial joint positions need 7 finite values')
        if not self.kin.within_limits(q0):
            raise ValueError('initial joint positions beyond the URDF limits')
        self.q = q0.copy()
        self.v = np.zeros(N)
        self.integral = np.zeros(N)
        self.v_cmd_prev = np.zeros(N)
        self.friction.reset()
        # at rest the brakes are released with the gravity load held by the motors
        self.tau_motor = pin.computeGeneralizedGravity(self.model, self.data, self.q).copy()
        self.tau_measured = self.tau_motor.copy()
        # flexible: motor angle with the spring already deflected by the gravity load
        self.theta = self.q + self.tau_motor / np.asarray(self.params.stiffness)
        self.theta_dot = np.zeros(N)
        M = pin.crba(self.model, self.data, self.q)
        if self.params.flexible:
            M[np.diag_indices(N)] += np.asarray(self.params.armature)
        w = 2 * np.pi * self.params.velocity_bandwidth_hz
        self.kp = w * np.diag(M).copy()           # crossover at the bandwidth for the home inertia
        self.ki = self.kp * w * self.params.integral_ratio

    def step(self, v_cmd, h: float) -> None:
        p = self.params
        v_cmd = np.asarray(v_cmd, float)
        a_ff = (v_cmd - self.v_cmd_prev) / h
        self.v_cmd_prev = v_cmd.copy()
        err = v_cmd - (self.theta_dot if p.flexible else self.v)
        gravity = pin.computeGeneralizedGravity(self.model, self.data, self.q)
        M = pin.crba(self.model, self.data, self.q)
        inertia = np.diag(M) + self._armature if p.flexible else np.diag(M)
        tau = gravity + inertia * a_ff + self.kp * err + self.ki * (self.integral + err * h)
        saturated = np.abs(tau) > self.tau_max
        self.integral = np.where(saturated, self.integral, self.integral + err * h)
        tau = np.clip(tau, -self.tau_max, self.tau_max)
        self.tau_motor = tau
        angle = self.theta if p.flexible else self.q
        tau_total = tau + self._ripple_amplitude * np.sin(self._ripple_periods * angle) if self._ripple else tau
        if p.flexible:
            self._flexible_step(tau_total, h)
            return
        a_free = pin.aba(self.model, self.data, self.q, self.v, tau_total)
        if p.friction:
            Minv = self._symmetric_minverse()
            m_eff = 1.0 / np.diag(Minv)
            _, f = self.friction.step(self.v, m_eff * a_free, m_eff, h)
            self.v = self.v + h * (a_free - Minv @ f)
        else:
            f = np.zeros(N)
            self.v = self.v + h * a_free
        self.q = self.q + h * self.v
        hit = (self.q < self.kin.lower) | (self.q > self.kin.upper)
        if np.any(hit):      # hard stop: the joint stops at the limit
            self.q = np.clip(self.q, self.kin.lower, self.kin.upper)
            self.v = np.where(hit, 0.0, self.v)
        self.tau_measured = tau_total - f

    def _symmetric_minverse(self) -> np.ndarray:
        """M^-1 at the current q: pinocchio fills the upper triangle; the lower one is copied from it."""
        Minv = np.array(pin.computeMinverse(self.model, self.data, self.q))
        Minv[self._lower] = Minv.T[self._lower]
        return Minv

    def _flexible_step(self, tau_m, h: float) -> None:
        """Implicit two-mass joint step (module docstring)."""
        p = self.params
        k, d, J = (np.asarray(x, float) for x in (p.stiffness, p.joint_damping, p.armature))
        Minv = self._symmetric_minverse()
        mi = np.diag(Minv)
        a0 = pin.aba(self.model, self.data, self.q, self.v, np.zeros(N))
        tau_s = k * (self.theta - self.q) + d * (self.theta_dot - self.v)
        a0p = a0 + Minv @ tau_s - mi * tau_s          # coupling through M^-1: explicit
        A, B = k * (self.theta - self.q), k * h + d
        den = 1.0 + h * mi * B
        c0 = (self.v + h * a0p + h * mi * A) / den    # link velocity = c0 + c1 * motor velocity
        c1 = h * mi * B / den
        tau_s0, S = A - B * c0, B / den               # spring torque = tau_s0 + S * motor velocity
        m = J + h * S
        rhs = tau_m - tau_s0 - S * self.theta_dot
        if p.friction:
            w, _ = self.friction.step(self.theta_dot, rhs, m, h)
        else:
            w = self.theta_dot + h * rhs / m
        self.theta_dot = w
        self.theta = self.theta + h * w
        self.v = c0 + c1 * w
        self.q = self.q + h * self.v
        hit = (self.q < self.kin.lower) | (self.q > self.kin.upper)
        if np.any(hit):
            self.q = np.clip(self.q, self.kin.lower, self.kin.upper)
            self.v = np.where(hit, 0.0, self.v)
        self.tau_measured = tau_s0 + S * w
