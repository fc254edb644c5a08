"""Pose <-> 6-DOF vector used by the limiters: ``x = [p_x, p_y, p_z, roll, pitch, yaw]`` with
R = Rz(yaw) Ry(pitch) Rx(roll) (``hil_core.maths.rotations``), the angles of seed 001 table 3.

Why these angles: the total-orientation workspace of seed 001 is the set of orientations whose
roll, pitch and yaw each lie in their table-3 range, and the soft and hard limits only hold there.
In these coordinates that set is a box, so the planner can enforce it per DOF with the same
braking argument as any position limit. The angular velocity the robot sees is M(rpy) d(rpy)/dt
with M close to the identity in that box; ``envelope.rate_limits`` derates the per-angle limits so
that the angular rates computed from the quaternions stay within the configured ones."""
from __future__ import annotations

import math

import numpy as np

HOME_ORIENTATION = np.array([0.0, 0.0, 0.0, 1.0])


def _rpy_of_unit(qx, qy, qz, qw):
    roll = np.arctan2(2.0 * (qw * qx + qy * qz), 1.0 - 2.0 * (qx * qx + qy * qy))
    pitch = np.arcsin(np.clip(2.0 * (qw * qy - qz * qx), -1.0, 1.0))
    yaw = np.arctan2(2.0 * (qw * qz + qx * qy), 1.0 - 2.0 * (qy * qy + qz * qz))
    return roll, pitch, yaw


def pose_to_dof(pose):
    """[position, roll, pitch, yaw] of poses (..., 7); quaternions are normalised first."""
    pose = np.asarray(pose, dtype=float)
    q = pose[..., 3:7] / np.linalg.norm(pose[..., 3:7], axis=-1, keepdims=True)
    rpy = _rpy_of_unit(q[..., 0], q[..., 1], q[..., 2], q[..., 3])
    return np.concatenate([pose[..., :3], np.stack(rpy, axis=-1)], axis=-1)


def pose_to_dof_1(pose) -> np.ndarray:
    """``pose_to_dof`` of a single pose in float arithmetic (the per-cycle path; same formulas)."""
    x, y, z, qx, qy, qz, qw = pose.tolist() if isinstance(pose, np.ndarray) else (float(v) for v in pose)
    n = math.sqrt(qx * qx + qy * qy + qz * qz + qw * qw)
    qx, qy, qz, qw = qx / n, qy / n, qz / n, qw / n
    roll = math.atan2(2.0 * (qw * qx + qy * qz), 1.0 - 2.0 * (qx * qx + qy * qy))
    pitch = math.asin(max(-1.0, min(1.0, 2.0 * (qw * qy - qz * qx))))
    yaw = math.atan2(2.0 * (qw * qz + qx * qy), 1.0 - 2.0 * (qy * qy + qz * qz))
    return np.array([x, y, z, roll, pitch, yaw])


def _quat_of_rpy(roll, pitch, yaw):
    hr, hp, hy = 0.5 * roll, 0.5 * pitch, 0.5 * yaw
    cr, sr, cp, sp, cy, sy = np.cos(hr), np.sin(hr), np.cos(hp), np.sin(hp), np.cos(hy), np.sin(hy)
    return (sr * cp * cy - cr * sp * sy, cr * sp * cy + sr * cp * sy, cr * cp * sy - sr * sp * cy,
            cr * cp * cy + sr * sp * sy)


def dof_to_pose_1(x) -> np.ndarray:
    """``dof_to_pose`` of a single vector in float arithmetic (same formulas)."""
    hr, hp, hy = 0.5 * float(x[3]), 0.5 * float(x[4]), 0.5 * float(x[5])
    cr, sr, cp, sp = math.cos(hr), math.sin(hr), math.cos(hp), math.sin(hp)
    cy, sy = math.cos(hy), math.sin(hy)
    return np.array([float(x[0]), float(x[1]), float(x[2]), sr * cp * cy - cr * sp * sy,
                     cr * sp * cy + sr * cp * sy, cr * cp * sy - sr * sp * cy, cr * cp * cy + sr * sp * sy])


def base_twist(x, v) -> np.ndarray:
    """[linear velocity, angular velocity in the base frame] of the DOF vector x moving at v:
    w = M(rpy) d(rpy)/dt, M = [[cy cp, -sy, 0], [sy cp, cy, 0], [-sp, 0, 1]]."""
    _, _, _, _, p, y = x.tolist()
    vx, vy, vz, dr, dp, dy = v.tolist()
    cp, sp, cy, sy = math.cos(p), math.sin(p), math.cos(y), math.sin(y)
    return np.array([vx, vy, vz, cy * cp * dr - sy * dp, sy * cp * dr + cy * dp, -sp * dr + dy])


def dof_to_pose(x):
    x = np.asarray(x, dtype=float)
    return np.concatenate([x[..., :3], np.stack(_quat_of_rpy(x[..., 3], x[..., 4], x[..., 5]), axis=-1)], axis=-1)


def clamp_orientation(pose, half_range):
    """Clamp roll/pitch/yaw (R = Rz(yaw) Ry(pitch) Rx(roll), hil_core.maths.rotations) of a pose to
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
