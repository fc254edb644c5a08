"""One compiled HIL frame of the space plant (seed 002 section 4.1, steps 2-6): the kernel
behind ``SpacePlant.step``. Kinematics and momentum map: ``space.compiled``; the control
law and limiter follow ``space.control`` term by term (see that module for the equations).
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from hil_core.space.compiled import (C_DCUT, C_ILIM, C_KD, C_KI, C_KP, C_LMAX, C_ROTVEC, C_STHR, C_VCUT,
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
    R = R_des @ R_act.T
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
def _pose(R, p, out, off):
    """pose_of: [x y z qx qy qz qw] with qw >= 0."""
    out[off], out[off + 1], out[off + 2] = p[0], p[1], p[2]
    quat_of(R, out, off + 3)
    if out[off + 6] < 0:
        for c in range(4):
            out[off + 3 + c] = -out[off + 3 + c]


@njit(cache=True)
def frame_kernel(q, dt, qd_meas, has_qd, control, jp, jtype, axis, inert, ee, ctl, lim, sat_R, sat_p,
                 q_prev, G_prev, qd_filt, integral, d_filt, prev_err, flags, last, r_des, R_des, out):
    """SpacePlant.step for one frame, state updated in place, outputs into out (N_OUT)."""
    n = q.shape[0]
    secant = (q - q_prev) / dt
    # step 2: joint rates for the controller
    if has_qd:
        qd = qd_meas.copy()
    else:
        a = np.exp(-dt * 2 * np.pi * ctl[C_VCUT])
        for i in range(n):
            qd_filt[i] = a * qd_filt[i] + (1 - a) * secant[i]
        qd = qd_filt.copy()
    # step 3: satellite pose by eq. 7 with the trapezoidal momentum map
    G = np.empty((6, n))
    Rl = np.empty((n + 1, 3, 3))
    pl = np.empty((n + 1, 3))
    momentum_map_into(q, jp, jtype, axis, inert, G, Rl, pl)
    nu_dt = np.empty(6)
    nu = np.empty(6)
    for r in range(6):
        acc = 0.0
        acc_nu = 0.0
        for c in range(n):
            acc += (0.5 * (G[r, c] + G_prev[r, c])) * secant[c]
            acc_nu += G[r, c] * qd[c]
        nu_dt[r] = acc * dt
        nu[r] = acc_nu
    E_R, E_p = exp6(nu_dt)
    R0 = sat_R.copy()
    for r in range(3):                                  # sat <- sat * exp6(nu_step dt)
        sat_p[r] = sat_p[r] + (R0[r, 0] * E_p[0] + R0[r, 1] * E_p[1] + R0[r, 2] * E_p[2])
        for c in range(3):
            sat_R[r, c] = R0[r, 0] * E_R[0, c] + R0[r, 1] * E_R[1, c] + R0[r, 2] * E_R[2, c]
    q_prev[:] = q
    G_prev[:, :] = G
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
        r_des[:] = p_ee
        R_des[:, :] = R_ee
        flags[F_HAS_SETPOINT] = 1
    e = np.empty(6)
    for i in range(3):
        e[i] = r_des[i] - p_ee[i]
    _orientation_error(R_des, R_ee, ctl[C_ROTVEC] != 0, e)
    raw = np.zeros(n)
    a_max = lim[L_AMAX]
    if not control:                                     # JointLimiter.brake
        step = -last
        s = np.max(np.abs(step) / (a_max * dt)) if n else 0.0
        if s > 1.0:
            step = step / s
        last[:] = last + step
        cmd = last.copy()
        damping, smin = 0.0, np.nan
        flags[F_LIMITED] = 0
    else:
        # step 5: eq. 11 with the PI/PID terms (DynamicJacobianController.step)
        u = ctl[C_KP:C_KP + 6] * e
        ki = ctl[C_KI:C_KI + 6]
        if np.any(ki > 0):
            if not flags[F_LIMITED]:
                ilim = ctl[C_ILIM]
                for i in range(6):
                    integral[i] = min(max(integral[i] + e[i] * dt, -ilim), ilim)
            u = u + ki * integral
        if ctl[C_KD] > 0:
            if flags[F_HAS_PREV_ERROR]:
                a = np.exp(-dt * 2 * np.pi * ctl[C_DCUT])
                for i in range(6):
                    d_filt[i] = a * d_filt[i] + (1 - a) * (e[i] - prev_err[i]) / dt
            u = u + ctl[C_KD] * d_filt
        prev_err[:] = e
        flags[F_HAS_PREV_ERROR] = 1
        JJt = np.empty((6, 6))                          # control.damped_pinv
        for r in range(6):
            for c in range(6):
                acc = 0.0
                for k in range(n):
                    acc += Jd[r, k] * Jd[c, k]
                JJt[r, c] = acc
        w, V = np.linalg.eigh(JJt)
        smin = math.sqrt(max(w[0], 0.0))
        lam2 = 0.0
        thr = ctl[C_STHR]
        if smin < thr:
            lam2 = ctl[C_LMAX] ** 2 * (1.0 - (smin / thr) ** 2)
        # raw = J^T V diag(1 / (w + lam2)) V^T u
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
        damping = math.sqrt(lam2)
        # step 6: JointLimiter.step
        qd_cmd = raw.copy()
        scale = 1.0
        for i in range(n):
            room_up = math.sqrt(2 * a_max[i] * max(lim[L_UPPER, i] - q[i], 0.0))
            room_dn = -math.sqrt(2 * a_max[i] * max(q[i] - lim[L_LOWER, i], 0.0))
            hi = min(lim[L_VMAX, i], room_up)
            lo = max(-lim[L_VMAX, i], room_dn)
            if qd_cmd[i] > hi:
                ratio = max(hi, 0.0) / qd_cmd[i]
            elif qd_cmd[i] < lo:
                ratio = min(lo, 0.0) / qd_cmd[i]
            else:
                ratio = 1.0
            scale = min(scale, ratio)
        qd_cmd *= scale
        step = qd_cmd - last
        s2 = np.max(np.abs(step) / (a_max * dt))
        if s2 > 1.0:
            step /= s2
        last[:] = last + step
        cmd = last.copy()
        flags[F_LIMITED] = 1 if (scale < 1.0 or s2 > 1.0) else 0
    out[O_CMD:O_CMD + n] = cmd
    out[O_RAW:O_RAW + n] = raw
    _pose(sat_R, sat_p, out, O_SAT)
    out[O_NU:O_NU + 6] = nu
    _pose(R_ee, p_ee, out, O_EE)
    out[O_E:O_E + 6] = e
    out[O_DAMP] = damping
    out[O_SMIN] = smin
    out[O_LIMITED] = flags[F_LIMITED]
    out[O_QD:O_QD + n] = qd
