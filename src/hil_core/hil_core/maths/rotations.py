"""Rotation helpers shared by every area (vectorised over a leading axis).

Quaternions are scalar-last ``[qx, qy, qz, qw]`` like geometry_msgs; roll-pitch-yaw are the
fixed-axis X-Y-Z angles (R = Rz(yaw) Ry(pitch) Rx(roll)), the convention of seed 001 table 3
(roll, pitch, yaw of the platform). Implemented directly in numpy: scipy's Rotation objects
cost tens of microseconds per call, too much inside a 2.5 ms cycle.
"""
from __future__ import annotations

import numpy as np


def quat_normalize(q):
    q = np.asarray(q, dtype=float)
    return q / np.linalg.norm(q, axis=-1, keepdims=True)


def quat_conjugate(q):
    q = np.asarray(q, dtype=float)
    return np.concatenate([-q[..., :3], q[..., 3:]], axis=-1)


def quat_multiply(a, b):
    """Hamilton product a*b (apply b first, then a)."""
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    ax, ay, az, aw = np.moveaxis(a, -1, 0)
    bx, by, bz, bw = np.moveaxis(b, -1, 0)
    return np.stack([aw * bx + ax * bw + ay * bz - az * by,
                     aw * by - ax * bz + ay * bw + az * bx,
                     aw * bz + ax * by - ay * bx + az * bw,
                     aw * bw - ax * bx - ay * by - az * bz], axis=-1)


def quat_to_matrix(q):
    q = quat_normalize(q)
    x, y, z, w = np.moveaxis(q, -1, 0)
    m = np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w),
                  2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w),
                  2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)], axis=-1)
    return m.reshape(q.shape[:-1] + (3, 3))


def matrix_to_quat(m):
    """Shepperd's method, branch-free per element via the largest diagonal term."""
    m = np.asarray(m, dtype=float)
    flat = m.reshape(-1, 3, 3)
    out = np.empty((flat.shape[0], 4))
    tr = np.trace(flat, axis1=1, axis2=2)
    diag = np.stack([flat[:, 0, 0], flat[:, 1, 1], flat[:, 2, 2], tr], axis=1)
    choice = np.argmax(diag, axis=1)
    for i in range(flat.shape[0]):
        r = flat[i]
        c = choice[i]
        if c == 3:
            s = 2.0 * np.sqrt(1.0 + tr[i])
            out[i] = [(r[2, 1] - r[1, 2]) / s, (r[0, 2] - r[2, 0]) / s, (r[1, 0] - r[0, 1]) / s, 0.25 * s]
        elif c == 0:
            s = 2.0 * np.sqrt(1.0 + r[0, 0] - r[1, 1] - r[2, 2])
            out[i] = [0.25 * s, (r[0, 1] + r[1, 0]) / s, (r[0, 2] + r[2, 0]) / s, (r[2, 1] - r[1, 2]) / s]
        elif c == 1:
            s = 2.0 * np.sqrt(1.0 - r[0, 0] + r[1, 1] - r[2, 2])
            out[i] = [(r[0, 1] + r[1, 0]) / s, 0.25 * s, (r[1, 2] + r[2, 1]) / s, (r[0, 2] - r[2, 0]) / s]
        else:
            s = 2.0 * np.sqrt(1.0 - r[0, 0] - r[1, 1] + r[2, 2])
            out[i] = [(r[0, 2] + r[2, 0]) / s, (r[1, 2] + r[2, 1]) / s, 0.25 * s, (r[1, 0] - r[0, 1]) / s]
    out *= np.where(out[:, 3:4] < 0, -1.0, 1.0)  # canonical sign: qw >= 0
    return out.reshape(m.shape[:-2] + (4,))


def rpy_to_matrix(rpy):
    """R = Rz(yaw) @ Ry(pitch) @ Rx(roll), vectorised over leading axes."""
    rpy = np.asarray(rpy, dtype=float)
    r, p, y = np.moveaxis(rpy, -1, 0)
    cr, sr, cp, sp, cy, sy = np.cos(r), np.sin(r), np.cos(p), np.sin(p), np.cos(y), np.sin(y)
    m = np.stack([cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr,
                  sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr,
                  -sp, cp * sr, cp * cr], axis=-1)
    return m.reshape(rpy.shape[:-1] + (3, 3))


def matrix_to_rpy(m):
    m = np.asarray(m, dtype=float)
    pitch = np.arcsin(np.clip(-m[..., 2, 0], -1.0, 1.0))
    roll = np.arctan2(m[..., 2, 1], m[..., 2, 2])
    yaw = np.arctan2(m[..., 1, 0], m[..., 0, 0])
    return np.stack([roll, pitch, yaw], axis=-1)


def rpy_to_quat(rpy):
    rpy = np.asarray(rpy, dtype=float)
    hr, hp, hy = np.moveaxis(rpy * 0.5, -1, 0)
    cr, sr, cp, sp, cy, sy = np.cos(hr), np.sin(hr), np.cos(hp), np.sin(hp), np.cos(hy), np.sin(hy)
    return np.stack([sr * cp * cy - cr * sp * sy, cr * sp * cy + sr * cp * sy,
                     cr * cp * sy - sr * sp * cy, cr * cp * cy + sr * sp * sy], axis=-1)


def quat_to_rpy(q):
    return matrix_to_rpy(quat_to_matrix(q))


def rotvec_to_quat(v):
    """Exponential map: rotation vector (axis * angle) to unit quaternion, exact near zero."""
    v = np.asarray(v, dtype=float)
    angle = np.linalg.norm(v, axis=-1, keepdims=True)
    half = 0.5 * angle
    # sin(half)/angle with its Taylor series near zero (no division by zero, no precision loss)
    k = np.where(angle > 1e-8, np.sin(half) / np.where(angle > 1e-8, angle, 1.0), 0.5 - angle ** 2 / 48.0)
    return np.concatenate([v * k, np.cos(half)], axis=-1)


def quat_to_rotvec(q):
    """Logarithmic map (shortest rotation, angle in [0, pi])."""
    q = quat_normalize(q)
    q = q * np.where(q[..., 3:4] < 0, -1.0, 1.0)
    s = np.linalg.norm(q[..., :3], axis=-1, keepdims=True)
    angle = 2.0 * np.arctan2(s, q[..., 3:4])
    k = np.where(s > 1e-12, angle / np.where(s > 1e-12, s, 1.0), 2.0 + (2.0 / 3.0) * s ** 2)
    return q[..., :3] * k


def rotate(q, v):
    """Rotate vectors v by quaternions q."""
    return np.einsum('...ij,...j->...i', quat_to_matrix(q), np.asarray(v, dtype=float))
