"""One compiled HIL frame of the space plant (seed 002 section 4.1, steps 2-6): the kernel
behind ``SpacePlant.step``. Kinematics and momentum map: ``space.model_kernel``; the control
law and limiter follow ``space.control`` term by term (see that module for the equations).
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from hil_core.space.model_kernel import (C_DCUT, C_ILIM, C_KD, C_KI, C_KP, C_LMAX, C_ROTVEC, C_STHR, C_VCUT,
                                     O_CMD, O_DAMP, O_E, O_EE, O_LIMITED, O_NU, O_QD, O_RAW, O_SAT, O_SMIN,
                                     ee_and_jacobian, exp6, momentum_map_into, quat_of)

# integer flags shared with the Python side
F_HAS_PREV_ERROR, F_LIMITED, F_HAS_SETPOINT = 0, 1, 2
L_LOWER, L_UPPER, L_VMAX, L_AMAX = 0, 1, 2, 3


@njit(cache=True)
def _euler_zyx(R):
    return (math.atan2(R[1, 0], R[0, 0]), math.asin(min(1.0, max(-1.0, -R[2, 0]))), math.atan2(R[2, 1], R[2, 2]))


@njit(cache=True)
def _orientation_error(R_des, R_act, rotvec, e):
    """e[3:6]: E(Theta_act) wrap(Theta_des - Theta_act) (eq. 10) or the rotation vector of
    R_des R_act^T (control.rotation_error)."""
    if not rotvec:
        z, y, x = _euler_zyx(R_act)
        zd, yd, xd = _euler_zyx(R_des)
        two_pi = 2 * np.pi
        d0 = (zd - z + np.pi) % two_pi - np.pi
        d1 = (yd - y + np.pi) % two_pi - np.pi
        d2 = (xd - x + np.pi) % two_pi - np.pi
        cz, sz, cy, sy = math.cos(z), math.sin(z), math.cos(y), math.sin(y)
        e[3] = 0.0 * d0 + -sz * d1 + cy * cz * d2
        e[4] = 0.0 * d0 + cz * d1 + cy * sz * d2
        e[5] = 1.0 * d0 + 0.0 * d1 + -sy * d2
        return
    R = np.empty((3, 3))
    for i in range(3):
        for j in range(3):
            R[i, j] = R_des[i, 0] * R_act[j, 0] + R_des[i, 1] * R_act[j, 1] + R_des[i, 2] * R_act[j, 2]
    c = min(1.0, max(-1.0, (R[0, 0] + R[1, 1] + R[2, 2] - 1.0) * 0.5))
    angle = math.acos(c)
    w0, w1, w2 = R[2, 1] - R[1, 2], R[0, 2] - R[2, 0], R[1, 0] - R[0, 1]
    if angle < 1e-9:
        e[3], e[4], e[5] = 0.5 * w0, 0.5 * w1, 0.5 * w2
    elif np.pi - angle < 1e-6:                          # near pi: axis from the symmetric part
        ax = np.empty(3)
        for i in range(3):
            ax[i] = math.sqrt(max((R[i, i] + 1.0) * 0.5, 0.0))
        k = 0
        for i in range(1, 3):
            if ax[i] > ax[k]:
                k = i
        den = max(ax[k], 1e-12)
        for i in range(3):
            ax[i] = (R[i, k] + R[k, i]) * 0.5 / den
        nrm = math.sqrt(ax[0] * ax[0] + ax[1] * ax[1] + ax[2] * ax[2])
        for i in range(3):
            e[3 + i] = angle * (ax[i] / nrm)
    else:
        k = angle / (2.0 * math.sin(angle))
        e[3], e[4], e[5] = k * w0, k * w1, k * w2


@njit(cache=True)
def jacobi_eigh(A, w, V):
    """Eigenvalues (ascending, into w) and eigenvectors (columns of V) of a symmetric A by
    cyclic Jacobi rotations. For the 6x6 J_d J_d^T it is ~2 us faster than LAPACK through
    numba (argument copies, workspace queries) and compiles in a fraction of the time; its
    eigenvalues have the same absolute accuracy, eps ||A||."""
    m = A.shape[0]
    a = A.copy()
    for i in range(m):
        for j in range(m):
            V[i, j] = 1.0 if i == j else 0.0
    for sweep in range(40):
        off = 0.0
        diag = 0.0
        for p in range(m):
            diag += a[p, p] * a[p, p]
            for q in range(p + 1, m):
                off += a[p, q] * a[p, q]
        if off <= 1e-34 * diag:                       # off-diagonal below rounding of the diagonal
            break
        for p in range(m - 1):
            for q in range(p + 1, m):
                apq = a[p, q]
                if apq == 0.0:
                    continue
                theta = (a[q, q] - a[p, p]) / (2.0 * apq)
                t = (1.0 if theta >= 0 else -1.0) / (abs(theta) + math.sqrt(theta * theta + 1.0))
                c = 1.0 / math.sqrt(t * t + 1.0)
                s = t * c
                for k in range(m):
                    akp, akq = a[k, p], a[k, q]
                    a[k, p] = c * akp - s * akq
                    a[k, q] = s * akp + c * akq
                for k in range(m):
                    apk, aqk = a[p, k], a[q, k]
                    a[p, k] = c * apk - s * aqk
                    a[q, k] = s * apk + c * aqk
                for k in range(m):
                    vkp, vkq = V[k, p], V[k, q]
                    V[k, p] = c * vkp - s * vkq
                    V[k, q] = s * vkp + c * vkq
    for i in range(m):
        w[i] = a[i, i]
    for i in range(m):                                 # ascending, as numpy's eigh
        k = i
        for j in range(i + 1, m):
            if w[j] < w[k]:
                k = j
        if k != i:
            w[i], w[k] = w[k], w[i]
            for r in range(m):
                V[r, i], V[r, k] = V[r, k], V[r, i]


@njit(cache=True)
def _pose(R, p, out, off):
    """pose_of: [x y z qx qy qz qw] with qw >= 0."""
    out[off], out[off + 1], out[off + 2] = p[0], p[1], p[2]
    quat_of(R, out, off + 3)
    if out[off + 6] < 0:
        for c in range(4):
            out[off + 3 + c] = -out[off + 3 + c]


@njit(cache=True)
def _damped_raw(Jd, u, thr, lmax, raw):
    """control.damped_pinv applied to u: raw = J^T V diag(1 / (w + lambda^2)) V^T u;
    returns (lambda, sigma_min)."""
    n = Jd.shape[1]
    JJt = np.empty((6, 6))
    for r in range(6):
        for c in range(6):
            acc = 0.0
            for k in range(n):
                acc += Jd[r, k] * Jd[c, k]
            JJt[r, c] = acc
    w = np.empty(6)
    V = np.empty((6, 6))
    jacobi_eigh(JJt, w, V)
    smin = math.sqrt(max(w[0], 0.0))
    lam2 = 0.0
    if smin < thr:
        lam2 = lmax ** 2 * (1.0 - (smin / thr) ** 2)
    y = np.empty(6)
    for k in range(6):
        acc = 0.0
        for r in range(6):
            acc += V[r, k] * u[r]
        y[k] = acc / (max(w[k], 0.0) + lam2 + 1e-300)
    z = np.empty(6)
    for r in range(6):
        acc = 0.0
        for k in range(6):
            acc += V[r, k] * y[k]
        z[r] = acc
    for c in range(n):
        acc = 0.0
        for r in range(6):
            acc += Jd[r, c] * z[r]
        raw[c] = acc
    return math.sqrt(lam2), smin


@njit(cache=True)
def frame_kernel(q, dt, qd_meas, has_qd, control, jp, jtype, axis, inert, ee, ctl, lim, sat_R, sat_p,
                 q_prev, G_prev, qd_filt, integral, d_filt, prev_err, flags, last, r_des, R_des, out):
    """SpacePlant.step for one frame, state updated in place, outputs into out (N_OUT).
    Written with explicit loops (numba compiles array expressions into much more code)."""
    n = q.shape[0]
    secant = np.empty(n)
    qd = np.empty(n)
    a_vel = math.exp(-dt * 2 * np.pi * ctl[C_VCUT])
    for i in range(n):
        secant[i] = (q[i] - q_prev[i]) / dt
        if has_qd:                                      # step 2: measured rates,
            qd[i] = qd_meas[i]
        else:                                           # else the filtered secant
            qd_filt[i] = a_vel * qd_filt[i] + (1 - a_vel) * secant[i]
            qd[i] = qd_filt[i]
    # step 3: satellite pose by eq. 7 with the trapezoidal momentum map
    G = np.empty((6, n))
    Rl = np.empty((n + 1, 3, 3))
    pl = np.empty((n + 1, 3))
    momentum_map_into(q, jp, jtype, axis, inert, G, Rl, pl)
    nu_dt = np.empty(6)
    for r in range(6):
        acc = 0.0
        acc_nu = 0.0
        for c in range(n):
            acc += (0.5 * (G[r, c] + G_prev[r, c])) * secant[c]
            acc_nu += G[r, c] * qd[c]
        nu_dt[r] = acc * dt
        out[O_NU + r] = acc_nu                          # eq. 7 with the controller's rates
    E_R, E_p = exp6(nu_dt)
    R0 = sat_R.copy()
    for r in range(3):                                  # sat <- sat * exp6(nu_step dt)
        sat_p[r] = sat_p[r] + (R0[r, 0] * E_p[0] + R0[r, 1] * E_p[1] + R0[r, 2] * E_p[2])
        for c in range(3):
            sat_R[r, c] = R0[r, 0] * E_R[0, c] + R0[r, 1] * E_R[1, c] + R0[r, 2] * E_R[2, c]
    for i in range(n):
        q_prev[i] = q[i]
        for r in range(6):
            G_prev[r, i] = G[r, i]
    # step 4: inertial EE pose (eq. 12) and Dynamic Jacobian (eq. 8)
    J = np.empty((6, 6 + n))
    R_ee = np.empty((3, 3))
    p_ee = np.empty(3)
    ee_and_jacobian(q, sat_R, sat_p, jp, jtype, axis, ee, Rl, pl, J, R_ee, p_ee, True)
    Jd = np.empty((6, n))                               # J_m + J_s G
    for r in range(6):
        for c in range(n):
            acc = 0.0
            for k in range(6):
                acc += J[r, k] * G[k, c]
            Jd[r, c] = J[r, 6 + c] + acc
    if not flags[F_HAS_SETPOINT]:                       # no set-point yet: hold the current pose
        for r in range(3):
            r_des[r] = p_ee[r]
            for c in range(3):
                R_des[r, c] = R_ee[r, c]
        flags[F_HAS_SETPOINT] = 1
    e = np.empty(6)
    for i in range(3):
        e[i] = r_des[i] - p_ee[i]
    _orientation_error(R_des, R_ee, ctl[C_ROTVEC] != 0, e)
    raw = np.zeros(n)
    step = np.empty(n)
    if not control:                                     # JointLimiter.brake
        s = 0.0
        for i in range(n):
            step[i] = -last[i]
            s = max(s, abs(step[i]) / (lim[L_AMAX, i] * dt))
        damping, smin = 0.0, np.nan
        flags[F_LIMITED] = 0
    else:
        # step 5: eq. 11 with the PI/PID terms (DynamicJacobianController.step)
        u = np.empty(6)
        any_ki = False
        for i in range(6):
            u[i] = ctl[C_KP + i] * e[i]
            any_ki = any_ki or ctl[C_KI + i] > 0
        if any_ki:
            ilim = ctl[C_ILIM]
            for i in range(6):
                if not flags[F_LIMITED]:                # conditional integration (anti-windup)
                    integral[i] = min(max(integral[i] + e[i] * dt, -ilim), ilim)
                u[i] = u[i] + ctl[C_KI + i] * integral[i]
        if ctl[C_KD] > 0:
            a_d = math.exp(-dt * 2 * np.pi * ctl[C_DCUT])
            for i in range(6):
                if flags[F_HAS_PREV_ERROR]:
                    d_filt[i] = a_d * d_filt[i] + (1 - a_d) * (e[i] - prev_err[i]) / dt
                u[i] = u[i] + ctl[C_KD] * d_filt[i]
        for i in range(6):
            prev_err[i] = e[i]
        flags[F_HAS_PREV_ERROR] = 1
        damping, smin = _damped_raw(Jd, u, ctl[C_STHR], ctl[C_LMAX], raw)
        # step 6: JointLimiter.step: one common factor (keeps the EE direction), then the
        # acceleration limit on the change
        scale = 1.0
        for i in range(n):
            room_up = math.sqrt(2 * lim[L_AMAX, i] * max(lim[L_UPPER, i] - q[i], 0.0))
            room_dn = -math.sqrt(2 * lim[L_AMAX, i] * max(q[i] - lim[L_LOWER, i], 0.0))
            hi = min(lim[L_VMAX, i], room_up)
            lo = max(-lim[L_VMAX, i], room_dn)
            if raw[i] > hi:
                ratio = max(hi, 0.0) / raw[i]
            elif raw[i] < lo:
                ratio = min(lo, 0.0) / raw[i]
            else:
                ratio = 1.0
            scale = min(scale, ratio)
        s = 0.0
        for i in range(n):
            step[i] = raw[i] * scale - last[i]
            s = max(s, abs(step[i]) / (lim[L_AMAX, i] * dt))
        flags[F_LIMITED] = 1 if (scale < 1.0 or s > 1.0) else 0
    for i in range(n):
        if s > 1.0:
            step[i] = step[i] / s
        last[i] = last[i] + step[i]
        out[O_CMD + i] = last[i]
        out[O_RAW + i] = raw[i]
        out[O_QD + i] = qd[i]
    _pose(sat_R, sat_p, out, O_SAT)
    _pose(R_ee, p_ee, out, O_EE)
    for i in range(6):
        out[O_E + i] = e[i]
    out[O_DAMP] = damping
    out[O_SMIN] = smin
    out[O_LIMITED] = flags[F_LIMITED]
