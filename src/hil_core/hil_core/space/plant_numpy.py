"""One iteration of the space-manipulator HIL loop with pinocchio and numpy: ``SpacePlantNumpy``,
the test oracle of the compiled ``plant.SpacePlant`` (same interface; test/unit/test_space_compiled.py),
and ``PlantOutput``, the frame result both return. The six steps are described in ``plant``, the
public module.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from hil_core.space.control import ControlGains, DynamicJacobianController, JointLimiter
from hil_core.space.model import FreeFloatingModel, euler_zyx, pose_of


@dataclass
class PlantOutput:
    command: np.ndarray          # joint velocity command (rad/s), limited
    raw_command: np.ndarray      # eq. 11 output before limiting
    sat_pose: np.ndarray         # [x y z qx qy qz qw] inertial
    sat_twist: np.ndarray        # [v, w] in satellite axes
    ee_pose: np.ndarray          # inertial
    error: np.ndarray            # [position error (m) x3, orientation error (rad) x3]
    damping: float
    sigma_min: float
    limited: bool
    qd: np.ndarray               # joint rates used by the controller


class SpacePlantNumpy:
    """Satellite state + controller + limiter; ``step`` is one HIL frame (pinocchio + numpy)."""

    def __init__(self, model: FreeFloatingModel, gains: ControlGains, v_max, a_max,
                 velocity_cutoff_hz: float = 50.0, position_margin: float = 0.02):
        self.m = model
        self.ctrl = DynamicJacobianController(gains)
        lo = model.model.lowerPositionLimit[7:]
        hi = model.model.upperPositionLimit[7:]
        self.limiter = JointLimiter(lo, hi, v_max, a_max, position_margin)
        if not velocity_cutoff_hz > 0:
            raise ValueError('velocity_cutoff_hz must be positive')
        self.velocity_cutoff_hz = float(velocity_cutoff_hz)
        self.q_prev = None
        self.sat = pin.SE3.Identity()
        self.qd_filt = np.zeros(7)
        self.r_des = None
        self.R_des = None
        self.limited = False

    def reset(self, q0, sat_pose=None) -> None:
        q0 = np.asarray(q0, float)
        self.q_prev = q0.copy()
        self.G_prev = self.m.momentum_map(q0)
        self.sat = pin.SE3.Identity() if sat_pose is None else pin.XYZQUATToSE3(np.asarray(sat_pose, float))
        self.qd_filt = np.zeros(7)
        self.ctrl.reset()
        self.limiter.reset()
        self.limited = False

    def set_setpoint(self, r_des, R_des) -> None:
        """Desired inertial EE position (m) and rotation matrix."""
        self.r_des = np.asarray(r_des, float).copy()
        self.R_des = np.asarray(R_des, float).copy()

    def full_config(self, q) -> np.ndarray:
        return np.concatenate([pin.SE3ToXYZQUAT(self.sat), q])

    def ee_pose(self, q) -> pin.SE3:
        return self.m.ee_pose(self.full_config(np.asarray(q, float)))

    def step(self, q, dt: float, qd_measured=None, control: bool = True) -> PlantOutput:
        """One HIL frame. ``control=False`` (stopped modes, faults) keeps the satellite and EE
        estimation running and ramps the command to zero at the acceleration limits."""
        q = np.asarray(q, float)
        if self.q_prev is None:
            self.reset(q)
        secant = (q - self.q_prev) / dt
        # step 2: joint rates for the controller (measured, else filtered derivative)
        if qd_measured is not None:
            qd = np.asarray(qd_measured, float)
        else:
            a = np.exp(-dt * 2 * np.pi * self.velocity_cutoff_hz)
            self.qd_filt = a * self.qd_filt + (1 - a) * secant
            qd = self.qd_filt
        # step 3: satellite pose, eq. 7 with the trapezoidal momentum map (see module doc)
        G = self.m.momentum_map(q)
        nu_step = 0.5 * (G + self.G_prev) @ secant
        self.sat = self.sat * pin.exp6(pin.Motion(nu_step * dt))
        self.q_prev = q.copy()
        self.G_prev = G
        nu = G @ qd
        # step 4: inertial EE pose (eq. 12) and Dynamic Jacobian (eq. 8)
        qf = self.full_config(q)
        Jd = self.m.dynamic_jacobian(qf, G)      # runs the forward kinematics of qf
        ee = pin.updateFramePlacement(self.m.model, self.m.data, self.m.ee_id)
        if self.r_des is None:   # no set-point yet: hold the current pose
            self.set_setpoint(ee.translation, ee.rotation)
        e = self.ctrl.error(self.r_des, self.R_des, ee.translation, ee.rotation)
        # step 5-6: eq. 11 and smooth limits
        if not control:
            cmd, self.limited = self.limiter.brake(dt), False
            return PlantOutput(cmd, np.zeros(7), pose_of(self.sat), nu, pose_of(ee), e, 0.0, float('nan'),
                               False, qd)
        raw, rep = self.ctrl.step(Jd, e, dt, saturated=self.limited)
        cmd, self.limited = self.limiter.step(raw, q, dt)
        return PlantOutput(cmd, raw, pose_of(self.sat), nu, pose_of(ee), e, rep['damping'],
                           rep['sigma_min'], self.limited, qd)

    def satellite_euler_zyx(self) -> np.ndarray:
        """Published satellite attitude Theta_s = [z, y, x] (rad)."""
        return euler_zyx(self.sat.rotation)
