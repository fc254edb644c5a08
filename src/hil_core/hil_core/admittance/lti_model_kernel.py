"""Compiled (numba) admittance step and outputs: the per-wrench work of the admittance node.

Profile (cProfile, bench/admittance.py, 3 Hz seed model, 4000 steps): the numpy step cost
about 6 us, step + outputs 22 us, spread over ~70 small Python calls per wrench (pose_offset's
scalar helpers, the q/qd/qdd properties, the 6x6 products, argument checks). Nothing is
heavy; the cost is call overhead. Here the whole update is one compiled call on the model's
own arrays: wrench -> generalized force (frame rotation, TCP moment, scaling, preload) ->
optional quadratic damping (Cummins floater) -> x <- Ad x + Bd u -> pose, twist, accel of
the TCP, written into caller-provided buffers (no allocation per wrench).

The arithmetic follows ``lti_model`` / ``pose_offset`` / ``floater`` term by term; the
products are plain loops instead of BLAS, so results agree with the numpy oracle to rounding
(tests: test/unit/test_admittance_compiled.py).
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

_SMALL = 1e-4   # pose_offset._SMALL: series below this angle


@njit(cache=True)
def _unit_quat_matrix(x, y, z, w, R):
    """The rotation matrix of a unit quaternion (pose_offset.quat_to_matrix after its
    normalisation), written into R."""
    R[0, 0] = 1 - 2 * (y * y + z * z)
    R[0, 1] = 2 * (x * y - z * w)
    R[0, 2] = 2 * (x * z + y * w)
    R[1, 0] = 2 * (x * y + z * w)
    R[1, 1] = 1 - 2 * (x * x + z * z)
    R[1, 2] = 2 * (y * z - x * w)
    R[2, 0] = 2 * (x * z - y * w)
    R[2, 1] = 2 * (y * z + x * w)
    R[2, 2] = 1 - 2 * (x * x + y * y)


@njit(cache=True)
def _rotvec_matrix(tx, ty, tz, R):
    """quat_to_matrix(rotvec_to_quat(t)) (the normalisation included, as the oracle does)."""
    angle = math.sqrt(tx * tx + ty * ty + tz * tz)
    half = 0.5 * angle
    k = math.sin(half) / angle if angle > 1e-8 else 0.5 - angle ** 2 / 48.0
    x, y, z, w = tx * k, ty * k, tz * k, math.cos(half)
    n = math.sqrt(x * x + y * y + z * z + w * w)
    x, y, z, w = x / n, y / n, z / n, w / n
    _unit_quat_matrix(x, y, z, w, R)


@njit(cache=True)
def _coefficients(phi):
    if phi < _SMALL:
        p2 = phi * phi
        return 0.5 - p2 / 24.0, 1.0 / 6.0 - p2 / 120.0, -1.0 / 12.0 + p2 / 180.0, -1.0 / 60.0 + p2 / 1260.0
    s, c = math.sin(phi), math.cos(phi)
    return ((1.0 - c) / phi ** 2, (phi - s) / phi ** 3, (phi * s - 2.0 * (1.0 - c)) / phi ** 4,
            ((1.0 - c) * phi - 3.0 * (phi - s)) / phi ** 5)


@njit(cache=True)
def _cross(a0, a1, a2, b0, b1, b2):
    return a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0


@njit(cache=True)
def _jl(t0, t1, t2, v0, v1, v2):
    """J_l(t) v (pose_offset._jl_scalar)."""
    a, b, _, _ = _coefficients(math.sqrt(t0 * t0 + t1 * t1 + t2 * t2))
    c0, c1, c2 = _cross(t0, t1, t2, v0, v1, v2)
    d0, d1, d2 = _cross(t0, t1, t2, c0, c1, c2)
    return v0 + a * c0 + b * d0, v1 + a * c1 + b * d1, v2 + a * c2 + b * d2


@njit(cache=True)
def _jl_rate(t0, t1, t2, w0, w1, w2):
    """(d/dt J_l) w (pose_offset._jl_rate_scalar)."""
    _, b, da, db = _coefficients(math.sqrt(t0 * t0 + t1 * t1 + t2 * t2))
    dot = t0 * w0 + t1 * w1 + t2 * w2
    c0, c1, c2 = _cross(t0, t1, t2, w0, w1, w2)
    d0, d1, d2 = _cross(t0, t1, t2, c0, c1, c2)
    e0, e1, e2 = _cross(w0, w1, w2, c0, c1, c2)
    return (da * dot * c0 + db * dot * d0 + b * e0, da * dot * c1 + db * dot * d1 + b * e1,
            da * dot * c2 + db * dot * d2 + b * e2)


@njit(cache=True)
def _offset_coordinates(x, u_eff, idx, acc_rows, Mi, q, qd, qdd):
    """Scatter the enabled DOFs of the state into 6-vectors q, qd, qdd (zeros elsewhere)."""
    n = idx.size
    for i in range(6):
        q[i] = 0.0
        qd[i] = 0.0
        qdd[i] = 0.0
    for j in range(n):
        q[idx[j]] = x[j]
        qd[idx[j]] = x[n + j]
        acc = 0.0
        for c in range(x.size):
            acc += acc_rows[j, c] * x[c]
        mu = 0.0
        for c in range(n):
            mu += Mi[j, c] * u_eff[c]
        qdd[idx[j]] = acc + mu


@njit(cache=True)
def step_kernel(Ad, Bd, x, u_eff, w, idx, scale, k_eq, body_frame, has_tcp, home_rot, tcp_rot,
                tcp_pos, acc_rows, Mi, quad, period, work):
    """One ZOH step in place (x, u_eff). Returns False, touching nothing, for a non-finite
    wrench. ``quad`` (6, 6) is the floater's quadratic damping (size 0: none). ``work`` is a
    scratch array of at least 2 * x.size + 24 floats."""
    for i in range(6):
        if not math.isfinite(w[i]):
            return False
    n = idx.size
    ns = x.size
    q = work[0:6]
    qd = work[6:12]
    qdd = work[12:18]
    g = work[18:24]
    u = work[24:24 + n]
    xn = work[24 + n:24 + n + ns]
    for i in range(6):
        g[i] = w[i]
    if body_frame or has_tcp:
        _offset_coordinates(x, u_eff, idx, acc_rows, Mi, q, qd, qdd)
        Rq = np.empty((3, 3))
        _rotvec_matrix(q[3], q[4], q[5], Rq)
        R = _matmul3(Rq, home_rot)                 # body orientation
        f0, f1, f2, t0, t1, t2 = w[0], w[1], w[2], w[3], w[4], w[5]
        if body_frame:
            Rt = _matmul3(R, tcp_rot)
            f0, f1, f2 = _matvec3(Rt, f0, f1, f2)
            t0, t1, t2 = _matvec3(Rt, t0, t1, t2)
        if has_tcp:
            r0, r1, r2 = _matvec3(R, tcp_pos[0], tcp_pos[1], tcp_pos[2])
            c0, c1, c2 = _cross(r0, r1, r2, f0, f1, f2)
            t0, t1, t2 = t0 + c0, t1 + c1, t2 + c2
        g[0], g[1], g[2], g[3], g[4], g[5] = f0, f1, f2, t0, t1, t2
    for j in range(n):
        u[j] = g[idx[j]] * scale[idx[j]] + k_eq[j]
    if quad.shape[0] == 6:
        # floater.extra_force: quadratic damping at the predicted mid-step velocity, held
        _offset_coordinates(x, u_eff, idx, acc_rows, Mi, q, qd, qdd)
        vv = g                                     # reuse: |v_mid| v_mid per DOF
        for i in range(6):
            vm = qd[i] + 0.5 * period * qdd[i]
            vv[i] = abs(vm) * vm
        for j in range(n):
            acc = 0.0
            for c in range(6):
                acc += quad[idx[j], c] * vv[c]
            u[j] = u[j] + (-acc)
    for r in range(ns):
        acc = 0.0
        for c in range(ns):
            acc += Ad[r, c] * x[c]
        bu = 0.0
        for c in range(n):
            bu += Bd[r, c] * u[c]
        xn[r] = acc + bu
    for r in range(ns):
        x[r] = xn[r]
    for j in range(n):
        u_eff[j] = u[j]
    return True


@njit(cache=True)
def _matmul3(A, B):
    C = np.empty((3, 3))
    for i in range(3):
        for j in range(3):
            C[i, j] = A[i, 0] * B[0, j] + A[i, 1] * B[1, j] + A[i, 2] * B[2, j]
    return C


@njit(cache=True)
def _matvec3(A, v0, v1, v2):
    return (A[0, 0] * v0 + A[0, 1] * v1 + A[0, 2] * v2, A[1, 0] * v0 + A[1, 1] * v1 + A[1, 2] * v2,
            A[2, 0] * v0 + A[2, 1] * v1 + A[2, 2] * v2)


@njit(cache=True)
def _quat_mul(ax, ay, az, aw, bx, by, bz, bw):
    return (aw * bx + ax * bw + ay * bz - az * by, aw * by - ax * bz + ay * bw + az * bx,
            aw * bz + ax * by - ay * bx + az * bw, aw * bw - ax * bx - ay * by - az * bz)


@njit(cache=True)
def outputs_kernel(x, u_eff, idx, acc_rows, Mi, home, has_tcp, tcp, out, work):
    """Pose (7), twist (6), accel (6) of the TCP into out[0:7], out[7:13], out[13:19]."""
    q = work[0:6]
    qd = work[6:12]
    qdd = work[12:18]
    _offset_coordinates(x, u_eff, idx, acc_rows, Mi, q, qd, qdd)
    # pose_offset._offset_to_pose_scalar
    tx, ty, tz = q[3], q[4], q[5]
    angle = math.sqrt(tx * tx + ty * ty + tz * tz)
    k = math.sin(0.5 * angle) / angle if angle > 1e-8 else 0.5 - angle * angle / 48.0
    qx, qy, qz, qw = _quat_mul(tx * k, ty * k, tz * k, math.cos(0.5 * angle), home[3], home[4], home[5], home[6])
    if qw < 0:
        qx, qy, qz, qw = -qx, -qy, -qz, -qw
    px, py, pz = home[0] + q[0], home[1] + q[1], home[2] + q[2]
    # twist and acceleration (offset_rate_to_twist, offset_accel_to_accel)
    w0, w1, w2 = _jl(tx, ty, tz, qd[3], qd[4], qd[5])
    a0, a1, a2 = _jl(tx, ty, tz, qdd[3], qdd[4], qdd[5])
    b0, b1, b2 = _jl_rate(tx, ty, tz, qd[3], qd[4], qd[5])
    al0, al1, al2 = a0 + b0, a1 + b1, a2 + b2
    vx, vy, vz = qd[0], qd[1], qd[2]
    ax, ay, az = qdd[0], qdd[1], qdd[2]
    if has_tcp:
        # pose_offset.point_outputs: quat_to_matrix normalises the pose quaternion first
        nq = math.sqrt(qx * qx + qy * qy + qz * qz + qw * qw)
        x_, y_, z_, w_ = qx / nq, qy / nq, qz / nq, qw / nq
        R = np.empty((3, 3))
        _unit_quat_matrix(x_, y_, z_, w_, R)
        r0, r1, r2 = _matvec3(R, tcp[0], tcp[1], tcp[2])
        qx, qy, qz, qw = _quat_mul(qx, qy, qz, qw, tcp[3], tcp[4], tcp[5], tcp[6])
        if qw < 0:
            qx, qy, qz, qw = -qx, -qy, -qz, -qw
        px, py, pz = px + r0, py + r1, pz + r2
        c0, c1, c2 = _cross(w0, w1, w2, r0, r1, r2)
        vx, vy, vz = vx + c0, vy + c1, vz + c2
        d0, d1, d2 = _cross(al0, al1, al2, r0, r1, r2)
        e0, e1, e2 = _cross(w0, w1, w2, c0, c1, c2)
        ax, ay, az = ax + d0 + e0, ay + d1 + e1, az + d2 + e2
    out[0], out[1], out[2], out[3], out[4], out[5], out[6] = px, py, pz, qx, qy, qz, qw
    out[7], out[8], out[9], out[10], out[11], out[12] = vx, vy, vz, w0, w1, w2
    out[13], out[14], out[15], out[16], out[17], out[18] = ax, ay, az, al0, al1, al2


def warm_up() -> float:
    """Compile (or load from the cache) every kernel; returns the seconds it took."""
    import time
    t0 = time.perf_counter()
    n = 6
    x, u = np.zeros(2 * n), np.zeros(n)
    idx = np.arange(n)
    eye = np.eye(3)
    A = np.zeros((2 * n, 2 * n))
    B = np.zeros((2 * n, n))
    work = np.zeros(2 * 2 * n + 24)
    for quad in (np.zeros((0, 0)), np.zeros((6, 6))):
        step_kernel(A, B, x, u, np.zeros(6), idx, np.ones(6), np.zeros(n), True, True, eye, eye,
                    np.zeros(3), B.T.copy(), np.zeros((n, n)), quad, 0.0025, work)
    outputs_kernel(x, u, idx, B.T.copy(), np.zeros((n, n)), np.array([0, 0, 0, 0, 0, 0, 1.0]), True,
                   np.array([0, 0, 0, 0, 0, 0, 1.0]), np.zeros(19), work)
    return time.perf_counter() - t0
