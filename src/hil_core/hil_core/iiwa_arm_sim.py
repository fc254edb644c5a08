"""Simulated KUKA iiwa 14 joints for the mock hardware (seed 004 joint realism, seed 002 robot).

One fixed step h (1 ms, the FRI rate) of:
* joint velocity controllers like the KUKA ones: PI on the velocity error with feedforward of
  gravity (model-based, as the robot's own gravity compensation) and of the commanded
  acceleration times the joint inertia; torque saturated at the URDF effort limits with
  conditional-integration anti-windup;
* optional motor torque ripple (seed 004: current-sensor bias and back-emf harmonics make a
  torque pulsation periodic in the motor angle): amplitude_i * sin(periods_i * q_i);
* arm forward dynamics in gravity by pinocchio ABA (fixed base, motor rotor inertia as
  ``armature``), then joint friction (``hil_core.joint_friction``: LuGre, closed form,
  implicit in the joint's own velocity using the apparent inertia 1 / (M^-1)_ii; the
  cross-coupling of the friction torques through M^-1 is explicit);
* semi-implicit Euler for the positions; hard stops at the URDF position limits.
The measured torque is what the iiwa's joint torque sensors see: motor torque minus friction.
Torsional joint flexibility is not modelled (see docs/space_iiwa.md).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pinocchio as pin

from hil_core.iiwa import IiwaKinematics
from hil_core.joint_friction import FrictionParams, JointFriction

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

    def validate(self) -> None:
        for name in ('armature', 'fc', 'viscous', 'ripple_amplitude', 'ripple_periods'):
            v = np.asarray(getattr(self, name), float)
            if v.shape != (N,) or not np.all(np.isfinite(v)) or np.any(v < 0):
                raise ValueError(f'{name} needs {N} finite non-negative values')
        if np.any(np.asarray(self.armature) <= 0):
            raise ValueError('armature must be positive (rotor inertia)')
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
        self.model.armature = np.asarray(p.armature, float)
        self.model.gravity.linear = np.asarray(p.gravity, float)
        self.data = self.model.createData()
        self.tau_max = self.kin.effort_limit.copy()
        self.friction = JointFriction(FrictionParams.make(
            N, np.asarray(p.fc), np.asarray(p.fc) * p.fs_ratio, p.vs, p.sigma0, p.sigma1, np.asarray(p.viscous)))
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
        M = pin.crba(self.model, self.data, self.q)
        w = 2 * np.pi * self.params.velocity_bandwidth_hz
        self.kp = w * np.diag(M).copy()           # crossover at the bandwidth for the home inertia
        self.ki = self.kp * w * self.params.integral_ratio

    def step(self, v_cmd, h: float) -> None:
        p = self.params
        v_cmd = np.asarray(v_cmd, float)
        a_ff = (v_cmd - self.v_cmd_prev) / h
        self.v_cmd_prev = v_cmd.copy()
        err = v_cmd - self.v
        gravity = pin.computeGeneralizedGravity(self.model, self.data, self.q)
        M = pin.crba(self.model, self.data, self.q)
        tau = gravity + np.diag(M) * a_ff + self.kp * err + self.ki * (self.integral + err * h)
        saturated = np.abs(tau) > self.tau_max
        self.integral = np.where(saturated, self.integral, self.integral + err * h)
        tau = np.clip(tau, -self.tau_max, self.tau_max)
        self.tau_motor = tau
        tau_total = tau + np.asarray(p.ripple_amplitude) * np.sin(np.asarray(p.ripple_periods) * self.q)
        a_free = pin.aba(self.model, self.data, self.q, self.v, tau_total)
        if p.friction:
            Minv = pin.computeMinverse(self.model, self.data, self.q)
            Minv = np.triu(Minv) + np.triu(Minv, 1).T
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
