"""Kinematics of the hybrid robot (seed 003 eq. 1-20), vectorised over leading axes.

Parallel manipulator: leg i runs from the base point (xp_i, yp_i, 0) on radius R at
90, 330, 210 deg (eq. 4-6) to the platform centre (x, y, z):
    l_i = sqrt((x - xp_i)^2 + (y - yp_i)^2 + z^2)                        (eq. 3, 7)
Velocity and acceleration (eq. 8-11) are written with d_i = p - b_i:
    v_i = d_i . v / l_i,   a_i = (|v|^2 + d_i . a - v_i^2) / l_i
which is eq. 9-11 after cancelling the factors 2 and 1/4. Forward kinematics in closed form
(eq. 12-15): differences of the squared lengths are linear in x, y; z from eq. 12 (z > 0
branch). Tilt-rotary table (eq. 17-20): theta4 = alpha (tilt about X), theta5 = gamma.

Every function accepts any float dtype and keeps it (the float32 study of table 3 runs the
same code in float32).
"""
from __future__ import annotations

import numpy as np

SQRT3 = np.sqrt(3.0)
SQRT3_2 = float(np.sqrt(3.0) / 2)


def const(value: float, like):
    """``value`` in the number type of ``like`` (float, numpy scalar/array dtype, or a counting
    number type): keeps float32 arithmetic in float32 without promoting to float64."""
    if isinstance(like, (np.generic, np.ndarray)):
        return like.dtype.type(value)
    return type(like)(value)


def base_points(R: float, dtype=np.float64) -> np.ndarray:
    """(3, 2) base points (xp_i, yp_i), eq. 4-6."""
    return np.array([[0.0, R], [SQRT3 / 2 * R, -R / 2], [-SQRT3 / 2 * R, -R / 2]], dtype=dtype)


def leg_vectors(p: np.ndarray, R: float) -> np.ndarray:
    """d_i = p - b_i, shape (..., 3 legs, 3)."""
    p = np.asarray(p)
    b = base_points(R, p.dtype)
    d = np.repeat(p[..., None, :], 3, axis=-2)
    d[..., :2] -= b
    return d


def inverse(p: np.ndarray, R: float) -> np.ndarray:
    """Leg lengths l (..., 3) of platform position p (..., 3): eq. 7."""
    p = np.asarray(p)
    return np.stack(ik_scalar(p[..., 0], p[..., 1], p[..., 2], p.dtype.type(R)), axis=-1)


def ik_scalar(x, y, z, R):
    """Eq. 7 written out per leg: works on floats, numpy scalars of any dtype and arrays."""
    c = const(SQRT3_2, R) * R
    zz = z * z
    yh = y + R / 2
    return ((x * x + (y - R) ** 2 + zz) ** 0.5, ((x - c) ** 2 + yh * yh + zz) ** 0.5,
            ((x + c) ** 2 + yh * yh + zz) ** 0.5)


def ik_derivatives_scalar(x, y, z, vx, vy, vz, ax, ay, az, R):
    """Eq. 7-11 per leg, unrolled (the per-cycle form a controller runs; the operations
    counted by bench/hybrid5.py): returns (l1, l2, l3, v1, v2, v3, a1, a2, a3)."""
    c = const(SQRT3_2, R) * R
    half = R / 2
    vv = vx * vx + vy * vy + vz * vz
    zv, za = z * vz, z * az
    out_l, out_v, out_a = [], [], []
    for dx, dy in ((x, y - R), (x - c, y + half), (x + c, y + half)):
        l = (dx * dx + dy * dy + z * z) ** 0.5
        ld = (dx * vx + dy * vy + zv) / l                       # eq. 8
        out_l.append(l)
        out_v.append(ld)
        out_a.append((vv + dx * ax + dy * ay + za - ld * ld) / l)  # eq. 9-11
    return (*out_l, *out_v, *out_a)


def inverse_derivatives(p, v, a, R: float):
    """(l, ldot, lddot) (..., 3) of p, v, a (..., 3): eq. 7-11."""
    p, v, a = np.asarray(p), np.asarray(v), np.asarray(a)
    r = ik_derivatives_scalar(*(q[..., k] for q in (p, v, a) for k in range(3)), p.dtype.type(R))
    return tuple(np.stack(r[3 * i:3 * i + 3], axis=-1) for i in range(3))


def fk_scalar(l1, l2, l3, R):
    """Eq. 12-15 per component (floats, numpy scalars or arrays): returns (x, y, z^2, z).

    Differences of the squared lengths are linear in x and y (eq. 13-14); z from eq. 12 on
    the z > 0 branch (z = nan when the lengths do not assemble, z^2 <= 0)."""
    q1, q2, q3 = l1 * l1, l2 * l2, l3 * l3
    x = (q3 - q2) / (const(2 * np.sqrt(3.0), R) * R)
    y = (q2 + q3 - const(2.0, R) * q1) / (const(6.0, R) * R)
    yr = y - R
    z2 = q1 - x * x - yr * yr
    return x, y, z2, (z2 ** 0.5 if z2 > 0 else z2 * const(np.nan, R)) if np.ndim(z2) == 0 else \
        np.sqrt(np.where(z2 > 0, z2, np.nan))


def forward(l: np.ndarray, R: float) -> np.ndarray:
    """Platform position (..., 3) of leg lengths l (..., 3): eq. 12-15, z > 0 branch.

    Raises ValueError when the lengths have no real solution (legs cannot meet)."""
    l = np.asarray(l)
    x, y, z2, z = fk_scalar(l[..., 0], l[..., 1], l[..., 2], l.dtype.type(R))
    if np.any(~(np.asarray(z2) > 0)):
        raise ValueError('leg lengths have no assembly (z^2 <= 0 or not finite)')
    return np.stack([x, y, z], axis=-1)


def jacobian(p: np.ndarray, R: float) -> np.ndarray:
    """J (..., 3, 3) with ldot = J v: rows u_i = d_i / l_i (eq. 8)."""
    d = leg_vectors(p, R)
    return d / np.sqrt(np.sum(d * d, axis=-1))[..., None]


def inverse_jacobian(p: np.ndarray, R: float) -> np.ndarray:
    """J^-1 (..., 3, 3) in closed form: column i = (u_j x u_k) / (u_i . (u_j x u_k)), (i,j,k) cyclic.

    Column i is the platform velocity per unit ldot_i with the other legs still (the
    kinetostatic direction used for the reduced masses and gravity forces, eq. 23-24)."""
    u = jacobian(p, R)
    c = np.stack([np.cross(u[..., 1, :], u[..., 2, :]), np.cross(u[..., 2, :], u[..., 0, :]),
                  np.cross(u[..., 0, :], u[..., 1, :])], axis=-1)
    det = np.sum(u[..., 0, :] * c[..., :, 0], axis=-1)
    return c / det[..., None, None]


def forward_derivatives(l, ld, ldd, R: float):
    """(p, v, a) from joint (l, ldot, lddot): FK then v = J^-1 ldot, a = J^-1 (lddot - Jdot v)."""
    p = forward(l, R)
    Jinv = inverse_jacobian(p, R)
    v = np.einsum('...ij,...j->...i', Jinv, ld)
    # lddot = J a + (|v|^2 - ldot^2) / l   (from eq. 9-11), solved for a
    vv = np.sum(v * v, axis=-1)[..., None]
    a = np.einsum('...ij,...j->...i', Jinv, ldd - (vv - ld * ld) / l)
    return p, v, a


# --- tilt-rotary table ---------------------------------------------------------------------------
def table_forward(theta, omega, eps, h: float):
    """Table surface centre and its orientation: eq. 17 with first and second derivatives.

    theta = (theta4 tilt, theta5 rotary). Returns (pos (...,3), vel, acc, (alpha, gamma))."""
    theta, omega, eps = np.asarray(theta), np.asarray(omega), np.asarray(eps)
    t4, w4, e4 = theta[..., 0], omega[..., 0], eps[..., 0]
    s, c = np.sin(t4), np.cos(t4)
    zero = np.zeros_like(t4)
    pos = np.stack([zero, -h * s, h * c], axis=-1)
    vel = np.stack([zero, -h * c * w4, -h * s * w4], axis=-1)
    acc = np.stack([zero, -h * (c * e4 - s * w4 * w4), -h * (s * e4 + c * w4 * w4)], axis=-1)
    return pos, vel, acc, theta.copy()


def table_inverse(alpha_gamma, rates, accels):
    """Joint (theta, omega, eps) of the table from global (alpha, gamma) and derivatives: eq. 18-20."""
    return np.array(alpha_gamma, copy=True), np.array(rates, copy=True), np.array(accels, copy=True)
