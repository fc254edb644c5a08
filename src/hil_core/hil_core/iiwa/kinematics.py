"""KUKA LBR iiwa 14 R820 kinematics with pinocchio (seed 002, table 1 DH parameters).

``IiwaKinematics`` loads ``urdf/iiwa14.urdf`` (generated from the seed's DH table by
``urdf/make_iiwa14_urdf.py``) and gives forward kinematics of the flange frame
``iiwa_link_ee`` as a pose ``[x, y, z, qx, qy, qz, qw]`` in the arm base frame
``iiwa_link_0``, frame Jacobians, and the joint limits from the URDF. ``dh_forward`` is an
independent hand-written classic-DH implementation used to cross-check the URDF.
"""
from __future__ import annotations

import pathlib

import numpy as np
import pinocchio as pin

from hil_core.data_paths import urdf_file
from hil_core.maths.rotations import matrix_to_quat

JOINT_NAMES = tuple(f'iiwa_joint_{i}' for i in range(1, 8))
EE_FRAME = 'iiwa_link_ee'
# Seed 002 table 1: alpha_i (deg), d_i (m), theta offset (deg); a_i = 0 for every joint.
DH_ALPHA_DEG = np.array([90.0, -90.0, -90.0, 90.0, 90.0, -90.0, 0.0])
DH_D = np.array([0.36, 0.0, 0.42, 0.0, 0.40, 0.0, 0.126])
DH_THETA_OFFSET_DEG = np.array([0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 180.0])


def default_urdf() -> pathlib.Path:
    """``urdf/iiwa14.urdf`` of the data tree (source checkout or share/hil_core)."""
    return urdf_file('iiwa14.urdf')


def dh_forward(q) -> np.ndarray:
    """Flange transform(s) 4x4 by the classic DH product T = prod Rz(theta) Tz(d) Rx(alpha).

    Vectorised over a leading axis of ``q`` (..., 7); written without pinocchio on purpose.
    """
    q = np.asarray(q, dtype=float)
    theta = q + np.radians(DH_THETA_OFFSET_DEG)
    alpha = np.radians(DH_ALPHA_DEG)
    shape = q.shape[:-1]
    T = np.broadcast_to(np.eye(4), shape + (4, 4)).copy()
    for i in range(7):
        ct, st = np.cos(theta[..., i]), np.sin(theta[..., i])
        ca, sa = np.cos(alpha[i]), np.sin(alpha[i])
        A = np.zeros(shape + (4, 4))
        A[..., 0, 0], A[..., 0, 1], A[..., 0, 2] = ct, -st * ca, st * sa
        A[..., 1, 0], A[..., 1, 1], A[..., 1, 2] = st, ct * ca, -ct * sa
        A[..., 2, 1], A[..., 2, 2], A[..., 2, 3] = sa, ca, DH_D[i]
        A[..., 3, 3] = 1.0
        T = T @ A
    return T


class IiwaKinematics:
    """Forward kinematics and Jacobians of the iiwa 14 (fixed base) from its URDF."""

    def __init__(self, model: pin.Model, ee_frame: str = EE_FRAME):
        names = tuple(model.names[1:])
        if names != JOINT_NAMES:
            raise ValueError(f'iiwa URDF joints {names} differ from {JOINT_NAMES}')
        self.model = model
        self.data = model.createData()
        self.ee_frame = ee_frame
        self.ee_id = model.getFrameId(ee_frame)
        if self.ee_id >= model.nframes:
            raise ValueError(f'frame {ee_frame!r} not in the iiwa URDF')
        self.joint_names = list(JOINT_NAMES)
        self.lower = np.array(model.lowerPositionLimit)
        self.upper = np.array(model.upperPositionLimit)
        self.velocity_limit = np.array(model.velocityLimit)
        self.effort_limit = np.array(model.effortLimit)

    @classmethod
    def from_urdf(cls, path: str | pathlib.Path | None = None, ee_frame: str = EE_FRAME) -> 'IiwaKinematics':
        path = pathlib.Path(path) if path is not None else default_urdf()
        if not path.is_file():
            raise ValueError(f'iiwa URDF not found: {path}')
        return cls(pin.buildModelFromUrdf(str(path)), ee_frame)

    def _q(self, q) -> np.ndarray:
        q = np.asarray(q, dtype=float).reshape(-1)
        if q.shape != (7,) or not np.all(np.isfinite(q)):
            raise ValueError(f'iiwa joint vector must be 7 finite values, got {q}')
        return q

    def fk_transform(self, q) -> pin.SE3:
        pin.forwardKinematics(self.model, self.data, self._q(q))
        return pin.updateFramePlacement(self.model, self.data, self.ee_id)

    def fk(self, q) -> np.ndarray:
        """Flange pose ``[x, y, z, qx, qy, qz, qw]`` in the base frame ``iiwa_link_0``."""
        M = self.fk_transform(q)
        return np.concatenate([M.translation, matrix_to_quat(M.rotation)])

    def jacobian(self, q, reference: str = 'world_aligned') -> np.ndarray:
        """6x7 flange Jacobian [v; w]: ``world_aligned`` = origin velocity in base axes
        (pinocchio LOCAL_WORLD_ALIGNED), ``local`` = in flange axes."""
        rf = {'world_aligned': pin.LOCAL_WORLD_ALIGNED, 'local': pin.LOCAL}[reference]
        return pin.computeFrameJacobian(self.model, self.data, self._q(q), self.ee_id, rf)

    def within_limits(self, q) -> bool:
        q = self._q(q)
        return bool(np.all(q >= self.lower) and np.all(q <= self.upper))
