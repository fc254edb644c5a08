"""Pose offset about the home pose: the model's coordinates <-> pose, twist, acceleration.

The admittance models integrate a 6-vector offset ``q = [dx, dy, dz, theta_x, theta_y, theta_z]``
about the home pose, expressed in the control frame C:

* translation: ``p = p_home + q[:3]``;
* orientation: ``R = exp([theta]x) @ R_home``: ``theta`` is the **rotation vector** (exponential
  coordinates) of the orientation offset, a *spatial* (left) perturbation about the C axes.

Why the rotation vector: the model stays exactly linear in ``theta`` (so zero-order-hold
discretisation is exact and the ideal-response tools are exact), the pose is obtained with the
exponential map, which is exact at any angle (no small-angle approximation, no Euler-angle
gimbal lock), and the coordinates are unique and smooth for ``|theta| < 2 pi``. For small angles
``theta`` equals the roll/pitch/yaw offsets to first order, i.e. the classic decoupled model.

The angular velocity is *not* ``theta_dot``: ``omega = J_l(theta) theta_dot`` where ``J_l`` is the
left Jacobian of SO(3); the angular acceleration is ``J_l theta_ddot + (d/dt J_l) theta_dot``.
These are what the node publishes, so a downstream consumer differentiating the published
orientation sees exactly the published twist, at any angle.
"""
from __future__ import annotations

import math

import numpy as np

from hil_core.maths.rotations import (quat_multiply, quat_normalize, quat_to_matrix, quat_to_rotvec,
                                rotvec_to_quat)

_SMALL = 1e-4  # below this angle the series are exact to double precision (error ~ phi^4/7!)


def _coefficients(phi):
    """a = (1-cos)/phi^2, b = (phi-sin)/phi^3 and their derivatives divided by phi."""
    phi = np.asarray(phi, dtype=float)
    small = phi < _SMALL
    ps = np.where(small, 1.0, phi)
    p2 = phi * phi
    s, c = np.sin(ps), np.cos(ps)
    a = np.where(small, 0.5 - p2 / 24.0, (1.0 - c) / ps ** 2)
    b = np.where(small, 1.0 / 6.0 - p2 / 120.0, (ps - s) / ps ** 3)
    da = np.where(small, -1.0 / 12.0 + p2 / 180.0, (ps * s - 2.0 * (1.0 - c)) / ps ** 4)
    db = np.where(small, -1.0 / 60.0 + p2 / 1260.0, ((1.0 - c) * ps - 3.0 * (ps - s)) / ps ** 5)
    return a, b, da, db


def _cross(a, b):
    # np.cross costs ~40 us per call on small arrays here; components are much cheaper.
    a0, a1, a2 = a[..., 0], a[..., 1], a[..., 2]
    b0, b1, b2 = b[..., 0], b[..., 1], b[..., 2]
    return np.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], axis=-1)


def _coefficients_scalar(phi):
    if phi < _SMALL:
        p2 = phi * phi
        return 0.5 - p2 / 24.0, 1.0 / 6.0 - p2 / 120.0, -1.0 / 12.0 + p2 / 180.0, -1.0 / 60.0 + p2 / 1260.0
    s, c = math.sin(phi), math.cos(phi)
    return ((1.0 - c) / phi ** 2, (phi - s) / phi ** 3, (phi * s - 2.0 * (1.0 - c)) / phi ** 4,
            ((1.0 - c) * phi - 3.0 * (phi - s)) / phi ** 5)


def _pcross(a, b):
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


def _jl_scalar(t, v):
    """J_l(t) v with Python floats (the per-cycle path: numpy calls cost microseconds each)."""
    a, b, _, _ = _coefficients_scalar(math.sqrt(t[0] * t[0] + t[1] * t[1] + t[2] * t[2]))
    tv = _pcross(t, v)
    ttv = _pcross(t, tv)
    return [v[i] + a * tv[i] + b * ttv[i] for i in range(3)]


def _jl_rate_scalar(t, w):
    _, b, da, db = _coefficients_scalar(math.sqrt(t[0] * t[0] + t[1] * t[1] + t[2] * t[2]))
    dot = t[0] * w[0] + t[1] * w[1] + t[2] * w[2]
    tw = _pcross(t, w)
    ttw = _pcross(t, tw)
    wtw = _pcross(w, tw)
    return [da * dot * tw[i] + db * dot * ttw[i] + b * wtw[i] for i in range(3)]


def left_jacobian_apply(theta, v):
    """``J_l(theta) @ v`` for rotation vectors theta (..., 3) and vectors v (..., 3)."""
    theta = np.asarray(theta, dtype=float)
    v = np.asarray(v, dtype=float)
    if theta.ndim == 1 and v.ndim == 1:
        return np.array(_jl_scalar(theta.tolist(), v.tolist()))
    a, b, _, _ = _coefficients(np.linalg.norm(theta, axis=-1))
    tv = _cross(theta, v)
    return v + a[..., None] * tv + b[..., None] * _cross(theta, tv)


def left_jacobian_rate_apply(theta, theta_dot):
    """``(d/dt J_l(theta)) @ theta_dot`` (the velocity-product term of the angular acceleration)."""
    theta = np.asarray(theta, dtype=float)
    w = np.asarray(theta_dot, dtype=float)
    if theta.ndim == 1 and w.ndim == 1:
        return np.array(_jl_rate_scalar(theta.tolist(), w.tolist()))
    dot = np.sum(theta * w, axis=-1)  # phi * phi_dot
    tw = _cross(theta, w)
    _, b, da, db = _coefficients(np.linalg.norm(theta, axis=-1))
    return ((da * dot)[..., None] * tw + (db * dot)[..., None] * _cross(theta, tw)
            + b[..., None] * _cross(w, tw))


def offset_to_pose(home, q):
    """Pose(s) ``[x, y, z, qx, qy, qz, qw]`` of offset(s) q (..., 6) about the home pose (7,)."""
    home = np.asarray(home, dtype=float)
    q = np.asarray(q, dtype=float)
    if q.ndim == 1:
        return np.array(_offset_to_pose_scalar(home.tolist(), q.tolist()))
    pos = home[:3] + q[..., :3]
    quat = quat_multiply(rotvec_to_quat(q[..., 3:6]), np.broadcast_to(home[3:7], q.shape[:-1] + (4,)))
    quat = quat * np.where(quat[..., 3:4] < 0, -1.0, 1.0)  # canonical sign, no hemisphere flips in msgs
    return np.concatenate([pos, quat], axis=-1)


def _offset_to_pose_scalar(h, q):
    tx, ty, tz = q[3], q[4], q[5]
    angle = math.sqrt(tx * tx + ty * ty + tz * tz)
    k = math.sin(0.5 * angle) / angle if angle > 1e-8 else 0.5 - angle * angle / 48.0
    ax, ay, az, aw = tx * k, ty * k, tz * k, math.cos(0.5 * angle)
    bx, by, bz, bw = h[3], h[4], h[5], h[6]
    quat = [aw * bx + ax * bw + ay * bz - az * by, aw * by - ax * bz + ay * bw + az * bx,
            aw * bz + ax * by - ay * bx + az * bw, aw * bw - ax * bx - ay * by - az * bz]
    if quat[3] < 0:
        quat = [-c for c in quat]
    return [h[0] + q[0], h[1] + q[1], h[2] + q[2], *quat]


def pose_to_offset(home, pose):
    """Inverse of offset_to_pose (rotation vector of the shortest offset, angle <= pi)."""
    home = np.asarray(home, dtype=float)
    pose = np.asarray(pose, dtype=float)
    hq = quat_normalize(home[3:7])
    inv_home = np.concatenate([-hq[:3], hq[3:]])
    rel = quat_multiply(pose[..., 3:7], np.broadcast_to(inv_home, pose.shape[:-1] + (4,)))
    return np.concatenate([pose[..., :3] - home[:3], quat_to_rotvec(rel)], axis=-1)


def offset_rate_to_twist(q, qd):
    """Twist ``[v, omega]`` (control-frame axes) from offset q and its rate qd (..., 6)."""
    q = np.asarray(q, dtype=float)
    qd = np.asarray(qd, dtype=float)
    if q.ndim == 1 and qd.ndim == 1:
        qd_l = qd.tolist()
        return np.array(qd_l[:3] + _jl_scalar(q[3:6].tolist(), qd_l[3:6]))
    return np.concatenate([qd[..., :3], left_jacobian_apply(q[..., 3:6], qd[..., 3:6])], axis=-1)


def offset_accel_to_accel(q, qd, qdd):
    """Acceleration ``[a, alpha]`` from offset, rate and second derivative (..., 6)."""
    q = np.asarray(q, dtype=float)
    qd = np.asarray(qd, dtype=float)
    qdd = np.asarray(qdd, dtype=float)
    if q.ndim == 1 and qd.ndim == 1 and qdd.ndim == 1:
        t, w, wd = q[3:6].tolist(), qd[3:6].tolist(), qdd[3:6].tolist()
        a1, a2 = _jl_scalar(t, wd), _jl_rate_scalar(t, w)
        return np.array(qdd[:3].tolist() + [a1[i] + a2[i] for i in range(3)])
    alpha = left_jacobian_apply(q[..., 3:6], qdd[..., 3:6]) + left_jacobian_rate_apply(q[..., 3:6], qd[..., 3:6])
    return np.concatenate([qdd[..., :3], alpha], axis=-1)


def point_outputs(pose, twist, accel, offset):
    """Pose, twist and acceleration of a point rigidly attached to the body at ``offset``.

    ``offset`` (7,) is the point's pose in the body frame (e.g. the TCP in the model's reference
    frame). With ``r = R_body p_offset``: p = p_body + r, R = R_body R_offset,
    v = v_body + omega x r, a = a_body + alpha x r + omega x (omega x r); omega, alpha unchanged.
    """
    pose = np.asarray(pose, dtype=float)
    twist = np.asarray(twist, dtype=float)
    accel = np.asarray(accel, dtype=float)
    offset = np.asarray(offset, dtype=float)
    r = np.einsum('...ij,j->...i', quat_to_matrix(pose[..., 3:7]), offset[:3])
    quat = quat_multiply(pose[..., 3:7], np.broadcast_to(offset[3:7], pose.shape[:-1] + (4,)))
    quat = quat * np.where(quat[..., 3:4] < 0, -1.0, 1.0)
    w, alpha = twist[..., 3:6], accel[..., 3:6]
    wr = _cross(w, r)
    return (np.concatenate([pose[..., :3] + r, quat], axis=-1),
            np.concatenate([twist[..., :3] + wr, w], axis=-1),
            np.concatenate([accel[..., :3] + _cross(alpha, r) + _cross(w, wr), alpha], axis=-1))


def check_home_pose(home) -> str | None:
    """Error text for an unusable home pose (wrong size, not finite, not a unit quaternion)."""
    h = np.asarray(home, dtype=float)
    if h.shape != (7,):
        return f'home pose needs 7 values [x, y, z, qx, qy, qz, qw], got {h.size}'
    if not np.all(np.isfinite(h)):
        return 'home pose must be finite'
    n = np.linalg.norm(h[3:])
    if abs(n - 1.0) > 1e-6:
        return f'home orientation must be a unit quaternion (norm {n:.6g})'
    return None
