"""Satellite-manipulator model (seed 002, "Dynamics" and eq. 5-8) built with pinocchio.

The satellite is the root body of a free-flyer joint; its frame is at its centre of mass (CoM),
so pinocchio's base twist ``nu = [v_s, w_s]`` (expressed in satellite axes) is the seed's
satellite velocity up to the rotation R_s. The iiwa base ``iiwa_link_0`` is fixed to the
satellite at the mounting point ``r_q`` with orientation ``R_q``. Gravity is zero.

With the mass matrix M of the whole system (crba), the seed's momentum matrices are
``H2 = M[:6, :6]`` and ``H3 = M[:6, 6:]`` (the base rows of M are the total spatial momentum
about the satellite frame). Zero initial momentum gives eq. 7: ``nu = -H2^-1 H3 qdot_m``.

This pinocchio model is also the oracle of the compiled kinematics and momentum map in
``space.model_kernel`` (what ``plant.SpacePlant`` runs per frame), so there is no separate
numpy twin of it.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pinocchio as pin

from hil_core.iiwa.kinematics import EE_FRAME, JOINT_NAMES, default_urdf
from hil_core.maths.rotations import rpy_to_matrix


@dataclass
class SatelliteParams:
    """Satellite body and arm mounting. Defaults: seed 002 section 4.1 (100 kg, principal
    inertias 2.83 / 6.08 / 7.42 kg m^2) drawn as a 1 m cube with the arm on its +x face, arm
    axis along +x (R_q = Ry(90 deg): with it the seed's initial joint angles put the
    end-effector at the seed's initial inertial orientation within a few degrees)."""
    mass: float = 100.0
    inertia: tuple = (2.83, 6.08, 7.42, 0.0, 0.0, 0.0)    # Ixx Iyy Izz Ixy Ixz Iyz about the CoM
    mount_xyz: tuple = (0.5, 0.0, 0.0)                    # r_q, satellite frame (m)
    mount_rpy: tuple = (0.0, np.pi / 2, 0.0)              # R_q = Rz(y) Ry(p) Rx(r) (rad)

    def validate(self) -> None:
        vals = [self.mass, *self.inertia, *self.mount_xyz, *self.mount_rpy]
        if len(self.inertia) != 6 or len(self.mount_xyz) != 3 or len(self.mount_rpy) != 3:
            raise ValueError('satellite inertia needs 6 values, mount_xyz and mount_rpy 3 each')
        if not np.all(np.isfinite(vals)):
            raise ValueError('satellite parameters must be finite')
        if self.mass <= 0:
            raise ValueError(f'satellite mass must be positive, got {self.mass}')
        if np.any(np.linalg.eigvalsh(self.inertia_matrix()) <= 0):
            raise ValueError('satellite inertia must be positive definite')

    def inertia_matrix(self) -> np.ndarray:
        ixx, iyy, izz, ixy, ixz, iyz = self.inertia
        return np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]], dtype=float)

    def mount(self) -> pin.SE3:
        return pin.SE3(rpy_to_matrix(self.mount_rpy), np.asarray(self.mount_xyz, dtype=float))


@dataclass
class FreeFloatingModel:
    """Pinocchio model of satellite (free flyer, joint 1) + iiwa (joints 2..8)."""
    sat: SatelliteParams = field(default_factory=SatelliteParams)
    urdf: str | None = None

    def __post_init__(self):
        self.sat.validate()
        arm = pin.buildModelFromUrdf(str(self.urdf or default_urdf()))
        base_inertia = arm.inertias[0]               # iiwa_link_0: rigidly part of the satellite
        model = pin.Model()
        model.name = 'satellite_iiwa14'
        jid = model.addJoint(0, pin.JointModelFreeFlyer(), pin.SE3.Identity(), 'satellite')
        sat_inertia = pin.Inertia(self.sat.mass, np.zeros(3), self.sat.inertia_matrix())
        model.appendBodyToJoint(jid, sat_inertia + self.sat.mount().act(base_inertia), pin.SE3.Identity())
        model.addBodyFrame('satellite', jid, pin.SE3.Identity(), 0)
        mount_frame = model.addFrame(pin.Frame('satellite_mount', jid, 0, self.sat.mount(), pin.FrameType.OP_FRAME))
        arm_no_base = arm.copy()
        arm_no_base.inertias[0] = pin.Inertia.Zero()
        self.model = pin.appendModel(model, arm_no_base, mount_frame, pin.SE3.Identity())
        self.model.gravity.linear[:] = 0.0
        self.data = self.model.createData()
        if tuple(self.model.names[2:]) != JOINT_NAMES:
            raise ValueError(f'unexpected joints {list(self.model.names)}')
        self.ee_id = self.model.getFrameId(EE_FRAME)
        self.sat_frame = self.model.getFrameId('satellite')
        self.n = 7
        self._q_ident = np.concatenate([[0, 0, 0, 0, 0, 0, 1.0], np.zeros(7)])
        self._upper6 = np.triu_indices(6, 1)
        self._lower6 = (self._upper6[1], self._upper6[0])
        self.total_mass = sum(self.model.inertias[i].mass for i in range(1, self.model.njoints))

    # --- configuration helpers -----------------------------------------------------------
    @staticmethod
    def config(sat_pose, q) -> np.ndarray:
        """Full configuration from satellite pose [x y z qx qy qz qw] and 7 joint angles."""
        return np.concatenate([np.asarray(sat_pose, dtype=float), np.asarray(q, dtype=float)])

    def mass_matrix(self, q_full) -> np.ndarray:
        M = pin.crba(self.model, self.data, q_full)
        return np.triu(M) + np.triu(M, 1).T   # crba fills the upper triangle only

    def momentum_matrices(self, q_arm) -> tuple[np.ndarray, np.ndarray]:
        """H2 (6x6), H3 (6x7) of eq. 6 in satellite axes; independent of the satellite pose."""
        self._q_ident[7:] = q_arm
        M = pin.crba(self.model, self.data, self._q_ident)
        H2 = M[:6, :6].copy()
        H2[self._lower6] = H2[self._upper6]      # crba fills the upper triangle only
        return H2, M[:6, 6:].copy()

    def momentum_map(self, q_arm) -> np.ndarray:
        """G = -H2^-1 H3 (6x7): eq. 7 is nu = G qdot_m."""
        H2, H3 = self.momentum_matrices(q_arm)
        return -np.linalg.solve(H2, H3)

    def base_twist(self, q_arm, qd_arm) -> np.ndarray:
        """Eq. 7: satellite twist [v_s, w_s] in satellite axes for zero total momentum."""
        H2, H3 = self.momentum_matrices(q_arm)
        return -np.linalg.solve(H2, H3 @ np.asarray(qd_arm, dtype=float))

    def momentum(self, q_full, v_full) -> np.ndarray:
        """Total linear and angular momentum [P, L] in inertial axes about the system CoM
        (pinocchio's centroidal momentum: an independent path from H2/H3)."""
        h = pin.computeCentroidalMomentum(self.model, self.data, q_full, v_full)
        return np.concatenate([h.linear, h.angular])

    # --- kinematics (eq. 5, 8, 12) ------------------------------------------------------------
    def ee_pose(self, q_full) -> pin.SE3:
        """Eq. 12: inertial EE pose = satellite pose * mount * arm FK (one pinocchio pass)."""
        pin.forwardKinematics(self.model, self.data, q_full)
        return pin.updateFramePlacement(self.model, self.data, self.ee_id)

    def jacobians(self, q_full) -> tuple[np.ndarray, np.ndarray]:
        """(J_s 6x6, J_m 6x7) of eq. 5: EE [v; w] in inertial axes from the satellite twist
        (satellite axes, as in the free-flyer velocity) and the joint rates."""
        J = pin.computeFrameJacobian(self.model, self.data, q_full, self.ee_id, pin.LOCAL_WORLD_ALIGNED)
        return J[:, :6], J[:, 6:]

    def dynamic_jacobian(self, q_full, G=None) -> np.ndarray:
        """Eq. 8: J_d = J_m - J_s H2^-1 H3 = J_m + J_s G (6x7); pass G if already computed."""
        Js, Jm = self.jacobians(q_full)
        if G is None:
            G = self.momentum_map(q_full[7:])
        return Jm + Js @ G


def pose_of(M: pin.SE3) -> np.ndarray:
    """SE3 -> [x y z qx qy qz qw] with qw >= 0 (pinocchio's conversion: microseconds)."""
    pose = pin.SE3ToXYZQUAT(M)
    if pose[6] < 0:
        pose[3:] = -pose[3:]
    return pose


def se3_of(pose) -> pin.SE3:
    pose = np.asarray(pose, dtype=float)
    return pin.XYZQUATToSE3(pose)


def euler_zyx(R) -> np.ndarray:
    """Seed 002 attitude Theta = [z, y, x] (rad): R = Rz(z) Ry(y) Rx(x)."""
    R = np.asarray(R, dtype=float)
    if R.ndim == 2:      # the per-frame case: scalar math is ~10x cheaper than numpy here
        return np.array([math.atan2(R[1, 0], R[0, 0]), math.asin(min(1.0, max(-1.0, -R[2, 0]))),
                         math.atan2(R[2, 1], R[2, 2])])
    y = np.arcsin(np.clip(-R[..., 2, 0], -1.0, 1.0))
    return np.stack([np.arctan2(R[..., 1, 0], R[..., 0, 0]), y, np.arctan2(R[..., 2, 1], R[..., 2, 2])], axis=-1)


def euler_zyx_to_matrix(theta) -> np.ndarray:
    z, y, x = np.asarray(theta, dtype=float)
    return rpy_to_matrix([x, y, z])


def euler_rate_matrix(theta) -> np.ndarray:
    """E(Theta) with w = E(Theta) dTheta/dt for Theta = [z, y, x] (the seed's T_Theta^-1)."""
    z, y, _ = theta
    cz, sz, cy, sy = np.cos(z), np.sin(z), np.cos(y), np.sin(y)
    return np.array([[0.0, -sz, cy * cz], [0.0, cz, cy * sz], [1.0, 0.0, -sy]])
