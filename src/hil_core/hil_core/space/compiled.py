"""Compiled (numba) HIL frame of the space manipulator: free-floating kinematics and momentum
map of the satellite + 7-joint arm, the Dynamic-Jacobian controller and the limiter.

Profile (cProfile and per-call timing, bench/space_plant.py, 2000 frames): about 110-270 us
per frame, of which the pinocchio algorithms themselves are small (crba 1.4 us, frame
Jacobian 1.0 us, forward kinematics 0.5 us); the rest is Python around them: ~120 numpy
calls per frame (``np.linalg.solve`` 20 us and ``eigh`` 20 us with their argument checks,
``damped_pinv``, ``clip``, copies, Euler conversions, ``PlantOutput``). So pinocchio is not
called per frame here: the fixed structure (free flyer + a chain of revolute joints) is read
from the pinocchio model once (``ChainModel``) and the frame is one compiled call:

* joint placements in the satellite frame (forward kinematics of the chain);
* H2 = M[:6, :6] and H3 = M[:6, 6:] (seed 002 eq. 6) as composite spatial inertias expressed
  at the satellite origin: H2 = sum of all body inertias, column j of H3 = (inertia of the
  bodies after joint j) applied to joint j's unit twist; G = -H2^-1 H3 (eq. 7);
* the satellite pose update with pinocchio's exp6 (same Taylor thresholds) and SE3 product;
* EE pose and frame Jacobian (LOCAL_WORLD_ALIGNED) with the satellite's rotation taken, as
  the oracle does, through its quaternion (SE3ToXYZQUAT then the free flyer's matrix);
* eq. 8, 10-11 with the PI/PID terms, damped pseudo-inverse (eigh), the joint limiter.

``plant.SpacePlant`` (pinocchio and numpy) is the oracle; the kinematics and momentum map are
checked against pinocchio (crba, computeFrameJacobian) to 1e-12 in
test/unit/test_space_compiled.py.
"""
from __future__ import annotations

import math

import numpy as np
import pinocchio as pin
from numba import njit

EPS = float(np.finfo(float).eps)
TAYLOR3 = float(EPS ** 0.25)          # pinocchio TaylorSeriesExpansion<double>::precision<3>()
AXIS_TYPES = {'JointModelRX': 0, 'JointModelRY': 1, 'JointModelRZ': 2}
# controller constants (``ChainModel.control_array``)
C_KP, C_KI, C_KD, C_DCUT, C_ILIM, C_ROTVEC, C_STHR, C_LMAX, C_VCUT = 0, 6, 12, 13, 14, 15, 16, 17, 18
N_CTL = 19
# output buffer layout (PlantOutput fields)
O_CMD, O_RAW, O_SAT, O_NU, O_EE, O_E, O_DAMP, O_SMIN, O_LIMITED, O_QD = 0, 7, 14, 21, 27, 34, 40, 41, 42, 43
N_OUT = 50


class ChainModel:
    """Constant arrays of a FreeFloatingModel for the kernels: free flyer (joint 1) carrying a
    chain of 1-DOF revolute joints 2..n (each the child of the previous), EE frame on the last.
    Raises ValueError for any other structure (the caller then keeps the pinocchio path)."""

    def __init__(self, ffm):
        m = ffm.model
        if m.joints[1].shortname() != 'JointModelFreeFlyer':
            raise ValueError('joint 1 is not a free flyer')
        n = m.njoints - 2
        self.n = n
        self.jp = np.zeros((n, 12))                 # joint placements: R (row-major), p
        self.jtype = np.zeros(n, dtype=np.int64)
        self.axis = np.zeros((n, 3))
        data = m.createData()
        pin.forwardKinematics(m, data, pin.neutral(m))
        for j in range(n):
            i = j + 2
            name = m.joints[i].shortname()
            if m.parents[i] != i - 1 or m.joints[i].nq != 1 or m.joints[i].nv != 1:
                raise ValueError(f'joint {m.names[i]} is not a 1-DOF child of the previous joint')
            S = np.asarray(data.joints[i].S).reshape(6)
            if name in AXIS_TYPES:
                self.jtype[j] = AXIS_TYPES[name]
            elif name == 'JointModelRevoluteUnaligned':
                self.jtype[j] = 3
            else:
                raise ValueError(f'joint {m.names[i]} ({name}) is not revolute')
            if np.any(S[:3] != 0.0):
                raise ValueError(f'joint {m.names[i]} has a linear motion subspace')
            self.axis[j] = S[3:]
            P = m.jointPlacements[i]
            self.jp[j, :9] = np.asarray(P.rotation).reshape(9)
            self.jp[j, 9:] = P.translation
        self.inert = np.zeros((n + 1, 13))          # bodies 1..n+1: mass, lever, inertia at CoM
        for b in range(n + 1):
            Y = m.inertias[b + 1]
            self.inert[b, 0] = Y.mass
            self.inert[b, 1:4] = Y.lever
            self.inert[b, 4:] = np.asarray(Y.inertia).reshape(9)
        f = m.frames[ffm.ee_id]
        if f.parentJoint != m.njoints - 1:
            raise ValueError('the EE frame is not on the last joint')
        self.ee = np.concatenate([np.asarray(f.placement.rotation).reshape(9), f.placement.translation])


@njit(cache=True)
def _mat(a, off):
    """3x3 matrix of the row-major 9 values a[off:off+9]."""
    R = np.empty((3, 3))
    for r in range(3):
        for c in range(3):
            R[r, c] = a[off + 3 * r + c]
    return R


@njit(cache=True)
def _mm(A, B):
    C = np.empty((3, 3))
    for i in range(3):
        for j in range(3):
            C[i, j] = A[i, 0] * B[0, j] + A[i, 1] * B[1, j] + A[i, 2] * B[2, j]
    return C


@njit(cache=True)
def _mv(A, v):
    out = np.empty(3)
    for i in range(3):
        out[i] = A[i, 0] * v[0] + A[i, 1] * v[1] + A[i, 2] * v[2]
    return out


@njit(cache=True)
def _cross(a, b):
    out = np.empty(3)
    out[0] = a[1] * b[2] - a[2] * b[1]
    out[1] = a[2] * b[0] - a[0] * b[2]
    out[2] = a[0] * b[1] - a[1] * b[0]
    return out


@njit(cache=True)
def _joint_rotation(jtype, axis, q):
    c, s = math.cos(q), math.sin(q)
    R = np.zeros((3, 3))
    if jtype == 0:
        R[0, 0], R[1, 1], R[1, 2], R[2, 1], R[2, 2] = 1.0, c, -s, s, c
    elif jtype == 1:
        R[0, 0], R[0, 2], R[1, 1], R[2, 0], R[2, 2] = c, s, 1.0, -s, c
    elif jtype == 2:
        R[0, 0], R[0, 1], R[1, 0], R[1, 1], R[2, 2] = c, -s, s, c, 1.0
    else:                                       # Rodrigues about a unit axis
        for i in range(3):
            for j in range(3):
                R[i, j] = (1.0 - c) * axis[i] * axis[j] + (c if i == j else 0.0)
        R[0, 1] -= s * axis[2]
        R[1, 0] += s * axis[2]
        R[0, 2] += s * axis[1]
        R[2, 0] -= s * axis[1]
        R[1, 2] -= s * axis[0]
        R[2, 1] += s * axis[0]
    return R


@njit(cache=True)
def chain_placements(q, jp, jtype, axis, Rl, pl):
    """Placements of bodies 0..n (0 = satellite) in the satellite frame: Rl (n+1, 3, 3), pl."""
    n = jp.shape[0]
    for r in range(3):
        for c in range(3):
            Rl[0, r, c] = 1.0 if r == c else 0.0
        pl[0, r] = 0.0
    for j in range(n):
        Rli = _mm(_mat(jp[j], 0), _joint_rotation(jtype[j], axis[j], q[j]))
        Rl[j + 1] = _mm(Rl[j], Rli)
        pl[j + 1] = pl[j] + _mv(Rl[j], jp[j, 9:12])


@njit(cache=True)
def momentum_matrices(q, jp, jtype, axis, inert, H2, H3, Rl, pl):
    """H2 (6, 6), H3 (6, n) of eq. 6 in satellite axes (pinocchio's M[:6, :6], M[:6, 6:])."""
    chain_placements(q, jp, jtype, axis, Rl, pl)
    n = jp.shape[0]
    Yc = np.zeros((6, 6))
    for b in range(n, -1, -1):
        m = inert[b, 0]
        R = Rl[b]
        c = pl[b] + _mv(R, inert[b, 1:4])                    # CoM in satellite axes
        Ic = _mm(_mm(R, _mat(inert[b], 4)), R.T)              # rotational inertia at the CoM
        cx = np.zeros((3, 3))
        cx[0, 1], cx[0, 2], cx[1, 0], cx[1, 2], cx[2, 0], cx[2, 1] = -c[2], c[1], c[2], -c[0], -c[1], c[0]
        cxcx = _mm(cx, cx)
        for r in range(3):
            Yc[r, r] += m
            for k in range(3):
                Yc[r, 3 + k] -= m * cx[r, k]
                Yc[3 + r, k] += m * cx[r, k]
                Yc[3 + r, 3 + k] += Ic[r, k] - m * cxcx[r, k]
        if b >= 1:
            a = _mv(R, axis[b - 1])
            S = np.empty(6)
            S[0:3] = _cross(pl[b], a)
            S[3:6] = a
            for r in range(6):
                acc = 0.0
                for k in range(6):
                    acc += Yc[r, k] * S[k]
                H3[r, b - 1] = acc
    for r in range(6):
        for k in range(6):
            H2[r, k] = Yc[r, k]


@njit(cache=True)
def momentum_map(q, jp, jtype, axis, inert):
    """G = -H2^-1 H3 (6, n): eq. 7 is nu = G qdot."""
    n = jp.shape[0]
    H2 = np.empty((6, 6))
    H3 = np.empty((6, n))
    Rl = np.empty((n + 1, 3, 3))
    pl = np.empty((n + 1, 3))
    momentum_matrices(q, jp, jtype, axis, inert, H2, H3, Rl, pl)
    return -np.linalg.solve(H2, H3)


@njit(cache=True)
def quat_of(R, out, off):
    """Eigen's Quaternion(Matrix3) (pinocchio SE3ToXYZQUAT) into out[off:off+4] = x, y, z, w."""
    t = R[0, 0] + R[1, 1] + R[2, 2]
    q = np.empty(4)
    if t > 0:
        t = math.sqrt(t + 1.0)
        q[3] = 0.5 * t
        t = 0.5 / t
        q[0] = (R[2, 1] - R[1, 2]) * t
        q[1] = (R[0, 2] - R[2, 0]) * t
        q[2] = (R[1, 0] - R[0, 1]) * t
    else:
        i = 0
        if R[1, 1] > R[0, 0]:
            i = 1
        if R[2, 2] > R[i, i]:
            i = 2
        j = (i + 1) % 3
        k = (j + 1) % 3
        t = math.sqrt(R[i, i] - R[j, j] - R[k, k] + 1.0)
        q[i] = 0.5 * t
        t = 0.5 / t
        q[3] = (R[k, j] - R[j, k]) * t
        q[j] = (R[j, i] + R[i, j]) * t
        q[k] = (R[k, i] + R[i, k]) * t
    for c in range(4):
        out[off + c] = q[c]


@njit(cache=True)
def quat_matrix(x, y, z, w):
    """Eigen's QuaternionBase::toRotationMatrix (what the free flyer joint uses)."""
    tx, ty, tz = 2 * x, 2 * y, 2 * z
    twx, twy, twz = tx * w, ty * w, tz * w
    txx, txy, txz = tx * x, ty * x, tz * x
    tyy, tyz, tzz = ty * y, tz * y, tz * z
    R = np.empty((3, 3))
    R[0, 0], R[0, 1], R[0, 2] = 1 - (tyy + tzz), txy - twz, txz + twy
    R[1, 0], R[1, 1], R[1, 2] = txy + twz, 1 - (txx + tzz), tyz - twx
    R[2, 0], R[2, 1], R[2, 2] = txz - twy, tyz + twx, 1 - (txx + tyy)
    return R


@njit(cache=True)
def exp6(nu):
    """pinocchio::exp6 of the twist nu = [v, w]: (R, p)."""
    v0, v1, v2, w0, w1, w2 = nu[0], nu[1], nu[2], nu[3], nu[4], nu[5]
    t2 = w0 * w0 + w1 * w1 + w2 * w2 + EPS * EPS
    t = math.sqrt(t2)
    st, ct = math.sin(t), math.cos(t)
    inv_t2 = 1.0 / t2
    if t < TAYLOR3:
        a_wxv, a_v, a_w, diag = 0.5 - t2 / 24, 1.0 - t2 / 6, 1.0 / 6 - t2 / 120, 1.0 - t2 / 2
    else:
        a_wxv, a_v = (1.0 - ct) * inv_t2, st / t
        a_w, diag = (1.0 - a_v) * inv_t2, ct
    wv = w0 * v0 + w1 * v1 + w2 * v2
    p = np.empty(3)
    p[0] = a_v * v0 + (a_w * wv) * w0 + a_wxv * (w1 * v2 - w2 * v1)
    p[1] = a_v * v1 + (a_w * wv) * w1 + a_wxv * (w2 * v0 - w0 * v2)
    p[2] = a_v * v2 + (a_w * wv) * w2 + a_wxv * (w0 * v1 - w1 * v0)
    R = np.empty((3, 3))
    w = (w0, w1, w2)
    for i in range(3):
        for j in range(3):
            R[i, j] = a_wxv * w[i] * w[j]
    R[0, 1] -= a_v * w2
    R[1, 0] += a_v * w2
    R[0, 2] += a_v * w1
    R[2, 0] -= a_v * w1
    R[1, 2] -= a_v * w0
    R[2, 1] += a_v * w0
    for i in range(3):
        R[i, i] += diag
    return R, p


@njit(cache=True)
def ee_and_jacobian(q, sat_R, sat_p, jp, jtype, axis, ee, Rl, pl, J):
    """EE placement (R, p) in the inertial frame and its 6 x (6 + n) frame Jacobian
    (LOCAL_WORLD_ALIGNED) with the satellite rotation taken through its quaternion."""
    chain_placements(q, jp, jtype, axis, Rl, pl)
    qs = np.empty(4)
    quat_of(sat_R, qs, 0)
    Rs = quat_matrix(qs[0], qs[1], qs[2], qs[3])
    n = jp.shape[0]
    R_eel = _mm(Rl[n], _mat(ee, 0))
    p_eel = pl[n] + _mv(Rl[n], ee[9:12])
    R_ee = _mm(Rs, R_eel)
    p_ee = sat_p + _mv(Rs, p_eel)
    r = p_ee - sat_p
    for k in range(3):
        w = Rs[:, k].copy()
        lin = _cross(w, r)
        for i in range(3):
            J[i, k] = Rs[i, k]
            J[3 + i, k] = 0.0
            J[i, 3 + k] = lin[i]
            J[3 + i, 3 + k] = w[i]
    for j in range(n):
        a = _mv(Rs, _mv(Rl[j + 1], axis[j]))
        pj = sat_p + _mv(Rs, pl[j + 1])
        lin = _cross(a, p_ee - pj)
        for i in range(3):
            J[i, 6 + j] = lin[i]
            J[3 + i, 6 + j] = a[i]
    return R_ee, p_ee
