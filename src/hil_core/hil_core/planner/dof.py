"""Pose <-> 6-DOF vector used by the limiters: ``x = [p_x, p_y, p_z, r_x, r_y, r_z]`` with ``r`` the
rotation vector (log map) of the orientation. The Hexafloat orientation range is a few degrees
(seed 001 table 3), where rotation-vector components are the roll/pitch/yaw rates to first order,
so per-DOF acceleration limits on ``x`` are the seed's per-DOF limits."""
from __future__ import annotations

import math

import numpy as np

from hil_core.rotations import quat_to_rotvec, rotvec_to_quat

HOME_ORIENTATION = np.array([0.0, 0.0, 0.0, 1.0])


def pose_to_dof(pose):
    pose = np.asarray(pose, dtype=float)
    return np.concatenate([pose[..., :3], quat_to_rotvec(pose[..., 3:7])], axis=-1)


def pose_to_dof_1(pose) -> np.ndarray:
    """``pose_to_dof`` of a single pose in float arithmetic (the per-cycle path; same formulas)."""
    x, y, z, qx, qy, qz, qw = (float(v) for v in pose)
    n = math.sqrt(qx * qx + qy * qy + qz * qz + qw * qw)
    if qw < 0.0:
        n = -n
    qx, qy, qz, qw = qx / n, qy / n, qz / n, qw / n
    s = math.sqrt(qx * qx + qy * qy + qz * qz)
    k = 2.0 * math.atan2(s, qw) / s if s > 1e-12 else 2.0 + (2.0 / 3.0) * s * s
    return np.array([x, y, z, qx * k, qy * k, qz * k])


def dof_to_pose_1(x) -> np.ndarray:
    """``dof_to_pose`` of a single vector in float arithmetic (same exponential map)."""
    rx, ry, rz = float(x[3]), float(x[4]), float(x[5])
    angle = math.sqrt(rx * rx + ry * ry + rz * rz)
    k = math.sin(0.5 * angle) / angle if angle > 1e-8 else 0.5 - angle * angle / 48.0
    return np.array([float(x[0]), float(x[1]), float(x[2]), rx * k, ry * k, rz * k, math.cos(0.5 * angle)])


def dof_to_pose(x):
    x = np.asarray(x, dtype=float)
    return np.concatenate([x[..., :3], rotvec_to_quat(x[..., 3:6])], axis=-1)


def valid_pose(pose) -> bool:
    """7 finite numbers with a quaternion norm not near zero (it gets normalised downstream)."""
    try:
        p = np.asarray(pose, dtype=float)
    except (TypeError, ValueError):
        return False
    if p.shape != (7,) or not np.isfinite(p).all():
        return False
    n2 = float(p[3] * p[3] + p[4] * p[4] + p[5] * p[5] + p[6] * p[6])
    return 0.25 < n2 < 4.0


def clamp_orientation(pose, half_range):
    """Clamp roll/pitch/yaw (R = Rz(yaw) Ry(pitch) Rx(roll), hil_core.rotations) of a pose to
    +-half_range. Returns (pose, clamped); an orientation inside is returned as the same object."""
    qx, qy, qz, qw = (float(v) for v in pose[3:7])
    n = math.sqrt(qx * qx + qy * qy + qz * qz + qw * qw)
    qx, qy, qz, qw = qx / n, qy / n, qz / n, qw / n
    roll = math.atan2(2.0 * (qw * qx + qy * qz), 1.0 - 2.0 * (qx * qx + qy * qy))
    pitch = math.asin(max(-1.0, min(1.0, 2.0 * (qw * qy - qz * qx))))
    yaw = math.atan2(2.0 * (qw * qz + qx * qy), 1.0 - 2.0 * (qy * qy + qz * qz))
    rpy = (roll, pitch, yaw)
    lim = [max(-h, min(h, a)) for a, h in zip(rpy, half_range)]
    if lim == list(rpy):
        return pose, False
    hr, hp, hy = (0.5 * a for a in lim)
    cr, sr, cp, sp, cy, sy = math.cos(hr), math.sin(hr), math.cos(hp), math.sin(hp), math.cos(hy), math.sin(hy)
    q = [sr * cp * cy - cr * sp * sy, cr * sp * cy + sr * cp * sy, cr * cp * sy - sr * sp * cy,
         cr * cp * cy + sr * sp * sy]
    return np.array([float(pose[0]), float(pose[1]), float(pose[2]), *q]), True
