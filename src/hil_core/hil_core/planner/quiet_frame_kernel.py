"""numba kernel of the planner's quiet RUNNING and SYNCHRONIZING frames (``hil_core.planner.quiet_frame``).

One call decides whether a frame is *quiet* (valid measured pose inside the hard limit, a valid
reference with an acceptable stamp, no clamp, the ASC passing it through, inside the soft
limit, the guard content) and, if so, computes what the plain path would: the same IEEE
operations in the same order as ``inputs.check_pose``, ``dof.pose_to_dof_1``,
``ellipsoid.ModifiedEllipsoid.level_point``, ``envelope.Envelope.admits``,
``envelope.within_limits`` and ``dof.base_twist``. Anything else returns ``ok = False`` and
the plain path runs from the untouched state. The one comparison whose arithmetic differs
(Python's three-argument ``math.hypot``) is taken with a margin, so a pose near that bound
goes to the plain path too.

Packed configuration (``cfg``, float64): centre 0-2, soft half-axes 3-8 (x+, x-, y+, y-, z+,
z-), exponent 9, hard expansion k 10, orientation half-ranges 11-13, has_half 14, a_lim 15-20,
v_lim 21-26, lower 27-32, upper 33-38, position bound 39, quaternion tolerance 40, dt 41.
``icfg`` (int64): max age, max lead (ns).
"""
from __future__ import annotations

import math

import numpy as np
from numba import types

from hil_core.maths.jit import FrozenKernels, njit_cached

UNIT = 1e-12            # inputs.UNIT: a quaternion this close to unit norm is kept as it is
HYPOT_MARGIN = 1e-9     # relative: the bound test differs from math.hypot's rounding by far less
N_CFG = 42


@njit_cached
def _pose_check(p, cfg, out):
    """0 invalid, 1 valid as it is, 2 valid once normalised (into ``out``)."""
    x, y, z, qx, qy, qz, qw = p[0], p[1], p[2], p[3], p[4], p[5], p[6]
    for value in (x, y, z, qx, qy, qz, qw):
        if not math.isfinite(value):
            return 0
    dx, dy, dz = x - cfg[0], y - cfg[1], z - cfg[2]
    bound = cfg[39]
    off = max(abs(dx), abs(dy), abs(dz))
    if off > bound or math.sqrt(dx * dx + dy * dy + dz * dz) > bound * (1.0 - HYPOT_MARGIN):
        return 0
    if max(abs(qx), abs(qy), abs(qz), abs(qw)) > 2.0:
        return 0
    n = math.sqrt(qx * qx + qy * qy + qz * qz + qw * qw)
    if abs(n - 1.0) > cfg[40]:
        return 0
    if abs(n - 1.0) > UNIT:
        for i in range(7):
            out[i] = p[i]
        for i in range(3, 7):
            out[i] = out[i] / n
        return 2
    return 1


@njit_cached
def _level(x, y, z, cfg):
    """ModifiedEllipsoid.level_point of (x, y, z) - centre."""
    x, y, z = x - cfg[0], y - cfg[1], z - cfg[2]
    sx = abs(x) / (cfg[3] if x >= 0.0 else cfg[4])
    sy = abs(y) / (cfg[5] if y >= 0.0 else cfg[6])
    sz = abs(z) / (cfg[7] if z >= 0.0 else cfg[8])
    m = max(sx, sy, sz)
    if not m > 0.0:
        return 0.0 if m == 0.0 else np.nan
    n = cfg[9]
    return m * ((sx / m) ** n + (sy / m) ** n + (sz / m) ** n) ** (1.0 / n)


@njit_cached
def _to_dof(p, out):
    """dof.pose_to_dof_1 into ``out`` (6)."""
    qx, qy, qz, qw = p[3], p[4], p[5], p[6]
    n = math.sqrt(qx * qx + qy * qy + qz * qz + qw * qw)
    qx, qy, qz, qw = qx / n, qy / n, qz / n, qw / n
    out[0], out[1], out[2] = p[0], p[1], p[2]
    out[3] = math.atan2(2.0 * (qw * qx + qy * qz), 1.0 - 2.0 * (qx * qx + qy * qy))
    out[4] = math.asin(max(-1.0, min(1.0, 2.0 * (qw * qy - qz * qx))))
    out[5] = math.atan2(2.0 * (qw * qz + qx * qy), 1.0 - 2.0 * (qy * qy + qz * qz))


@njit_cached
def _stop_speed(room, a, dt):
    if room >= 0.5 * a * dt * dt:
        return math.sqrt(2.0 * a * room) - 0.5 * a * dt
    return room / dt


@njit_cached
def _slerp(q0, q1, c, out):
    """sync_ramp.slerp of (q0, q1, c) into ``out[3:7]``: its float operations in its order."""
    ax, ay, az, aw = q0[0], q0[1], q0[2], q0[3]
    n = math.sqrt(ax * ax + ay * ay + az * az + aw * aw)
    ax, ay, az, aw = ax / n, ay / n, az / n, aw / n
    bx, by, bz, bw = q1[0], q1[1], q1[2], q1[3]
    n = math.sqrt(bx * bx + by * by + bz * bz + bw * bw)
    bx, by, bz, bw = bx / n, by / n, bz / n, bw / n
    rx = aw * bx - ax * bw - ay * bz + az * by
    ry = aw * by + ax * bz - ay * bw - az * bx
    rz = aw * bz - ax * by + ay * bx - az * bw
    rw = aw * bw + ax * bx + ay * by + az * bz
    n = math.sqrt(rx * rx + ry * ry + rz * rz + rw * rw)
    rx, ry, rz, rw = rx / n, ry / n, rz / n, rw / n
    if rw < 0:
        rx, ry, rz, rw = -rx, -ry, -rz, -rw
    s = math.sqrt(rx * rx + ry * ry + rz * rz)
    k = 2.0 * math.atan2(s, rw) / s if s > 1e-12 else 2.0 + (2.0 / 3.0) * (s * s)
    vx, vy, vz = rx * k * c, ry * k * c, rz * k * c
    angle = math.sqrt(vx * vx + vy * vy + vz * vz)
    half = 0.5 * angle
    k = math.sin(half) / angle if angle > 1e-8 else 0.5 - (angle * angle) / 48.0
    dx, dy, dz, dw = vx * k, vy * k, vz * k, math.cos(half)
    out[3] = aw * dx + ax * dw + ay * dz - az * dy
    out[4] = aw * dy - ax * dz + ay * dw + az * dx
    out[5] = aw * dz + ax * dy - ay * dx + az * dw
    out[6] = aw * dw - ax * dx - ay * dy - az * dz


@njit_cached
def quiet_running(cfg, icfg, meas, has_meas, ref, stamp, now, last_stamp, has_last, x, v, asc_x, asc_v,
                  blend, start, c):
    """(ok, meas_kind, meas_normed, ref_kind, ref_normed, r, v_pass, v_new, twist, blended): ``ok``
    False when the frame is not quiet (nothing else is meaningful then). *_kind: 1 the pose as
    given, 2 its normalised copy (*_normed). ``r``: the 6-DOF output, ``v_pass`` the ASC's new
    velocity, ``v_new`` the planner's, ``twist`` its base twist. With ``blend`` (a synchronizing
    frame, seed 000 4.1.1) the output follows ``blended``, the pose ``start`` blended into the
    reference with the coefficient ``c`` (``SyncRamp.step``: its arithmetic in its order), and
    the checks of the reference's input (validity, stamp) stay the reference's."""
    meas_normed = np.empty(7)
    ref_normed = np.empty(7)
    r = np.empty(6)
    v_pass = np.empty(6)
    v_new = np.empty(6)
    twist = np.empty(6)
    blended = np.empty(7)
    fail = (False, 0, meas_normed, 0, ref_normed, r, v_pass, v_new, twist, blended)
    dt = cfg[41]
    k = cfg[10]
    has_half = cfg[14] != 0.0
    dof = np.empty(6)
    # the measured pose: valid, inside the hard limit, its angles within k x the half-ranges
    meas_kind = 0
    if has_meas:
        meas_kind = _pose_check(meas, cfg, meas_normed)
        if meas_kind == 0:
            return fail
        m = meas if meas_kind == 1 else meas_normed
        lvl = _level(m[0], m[1], m[2], cfg)
        if not lvl <= k:
            return fail
        if has_half:
            _to_dof(m, dof)
            for i in range(3):
                if abs(dof[3 + i]) > k * cfg[11 + i]:
                    return fail
    # the reference and its stamp (inputs.check_stamp with a frame clock)
    ref_kind = _pose_check(ref, cfg, ref_normed)
    if ref_kind == 0:
        return fail
    if stamp > now + icfg[1] or stamp < now - icfg[0] or (has_last and stamp <= last_stamp):
        return fail
    rp = ref if ref_kind == 1 else ref_normed
    if blend:
        for i in range(3):
            blended[i] = (1.0 - c) * start[i] + c * rp[i]
        _slerp(start[3:], rp[3:], c, blended)
        rp = blended
    _to_dof(rp, r)
    for i in range(6):                            # not clamped to the orientation box
        if r[i] < cfg[27 + i] or r[i] > cfg[33 + i]:
            return fail
    # ASC: the reference passes through (Envelope.admits of the limiter's state)
    a_pass = np.empty(6)
    for i in range(6):
        v_pass[i] = (r[i] - asc_x[i]) / dt
        a_pass[i] = (v_pass[i] - asc_v[i]) / dt
    for i in range(6):
        am, vm, lower, upper = cfg[15 + i], cfg[21 + i], cfg[27 + i], cfg[33 + i]
        ai, vi, xi = a_pass[i], asc_v[i], asc_x[i]
        if ai > am or ai < -am or vi + ai * dt > vm or vi + ai * dt < -vm:
            return fail
        if math.isfinite(lower) and math.isfinite(upper):
            vn = vi + ai * dt
            if vn > _stop_speed(upper - xi, am, dt) or -vn > _stop_speed(xi - lower, am, dt):
                return fail
    if _level(r[0], r[1], r[2], cfg) > 1.0:      # leaves the soft limit: the recovery's business
        return fail
    # the guard (_emit): limits valid at the last output's angles, then within_limits
    if has_half:
        for i in range(3):
            if not abs(x[3 + i]) <= cfg[11 + i]:
                return fail
    for i in range(6):
        v_new[i] = (r[i] - x[i]) / dt
        acc = (v_new[i] - v[i]) / dt
        if abs(acc) > cfg[15 + i] * (1 + 1e-9) or abs(v_new[i]) > cfg[21 + i] * (1 + 1e-9):
            return fail
    if has_half:
        for i in range(3):
            new, old = abs(r[3 + i]), abs(x[3 + i])
            if new > cfg[11 + i] + 1e-12 and new > old:
                return fail
    if _level(r[0], r[1], r[2], cfg) > k:
        return fail
    # dof.base_twist
    p, y = r[4], r[5]
    dr, dp, dy = v_new[3], v_new[4], v_new[5]
    cp, sp, cy, sy = math.cos(p), math.sin(p), math.cos(y), math.sin(y)
    twist[0], twist[1], twist[2] = v_new[0], v_new[1], v_new[2]
    twist[3] = cy * cp * dr - sy * dp
    twist[4] = sy * cp * dr + cy * dp
    twist[5] = -sp * dr + dy
    return (True, meas_kind, meas_normed, ref_kind, ref_normed, r, v_pass, v_new, twist, blended)


_A = types.float64[::1]
# the one signature the planner calls with (quiet_frame checks its arguments against it first):
# frozen after the warm-up, so a frame can never compile
KERNELS = FrozenKernels({quiet_running: [(_A, types.int64[::1], _A, types.boolean, _A, types.int64, types.int64,
                                          types.int64, types.boolean, _A, _A, _A, _A, types.boolean, _A,
                                          types.float64)]})
