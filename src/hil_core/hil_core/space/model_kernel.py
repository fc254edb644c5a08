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
* eq. 8, 10-11 with the PI/PID terms, the damped pseudo-inverse (eigen-decomposition of
  J_d J_d^T by cyclic Jacobi), the joint limiter (``plant_kernel``).

Written with explicit loops and few allocations: in numba each small array a helper returns
costs ~50 ns, array expressions and tuples indexed in loops compile slowly (the first
version took 18 us per frame and 36 s to compile cold; this one ~10 us and ~20 s).

Naming: this is the kernel module of ``space.model``, whose pinocchio ``FreeFloatingModel`` is
itself the oracle (no ``model_numpy``): the kinematics and momentum map here are checked
against it (crba, computeFrameJacobian) to 1e-12, and the whole frame against
``plant_numpy.SpacePlantNumpy``, in test/unit/test_space_compiled.py.
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
def _joint_rotation(jtype, axis, q, R):
    """Rotation of a revolute joint by q into R (3, 3)."""
    c, s = math.cos(q), math.sin(q)
    for i in range(3):
        for j in range(3):
            R[i, j] = 0.0
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


@njit(cache=True)
def chain_placements(q, jp, jtype, axis, Rl, pl):
    """Placements of bodies 0..n (0 = satellite) in the satellite frame: Rl (n+1, 3, 3), pl.
    Allocation-free except two 3x3 scratch matrices (small allocations cost ~50 ns each in
    numba: a per-joint helper returning arrays made this 7x slower than pinocchio)."""
    n = jp.shape[0]
    Rq = np.empty((3, 3))
    Rli = np.empty((3, 3))
    for r in range(3):
        for c in range(3):
            Rl[0, r, c] = 1.0 if r == c else 0.0
        pl[0, r] = 0.0
    for j in range(n):
        _joint_rotation(jtype[j], axis[j], q[j], Rq)
        P = jp[j]
        for r in range(3):                      # liMi = jointPlacement * joint motion
            for c in range(3):
                Rli[r, c] = P[3 * r] * Rq[0, c] + P[3 * r + 1] * Rq[1, c] + P[3 * r + 2] * Rq[2, c]
        A = Rl[j]
        for r in range(3):                      # oMi = oMparent * liMi
            pl[j + 1, r] = pl[j, r] + (A[r, 0] * P[9] + A[r, 1] * P[10] + A[r, 2] * P[11])
            for c in range(3):
                Rl[j + 1, r, c] = A[r, 0] * Rli[0, c] + A[r, 1] * Rli[1, c] + A[r, 2] * Rli[2, c]


@njit(cache=True)
def momentum_matrices(q, jp, jtype, axis, inert, H2, H3, Rl, pl):
    """H2 (6, 6), H3 (6, n) of eq. 6 in satellite axes (pinocchio's M[:6, :6], M[:6, 6:]):
    composite spatial inertias [[m I, -m [c]x], [m [c]x, I_c - m [c]x^2]] at the satellite
    origin, accumulated from the last body; column j of H3 = composite after joint j times
    joint j's unit twist [p_j x a_j, a_j]."""
    chain_placements(q, jp, jtype, axis, Rl, pl)
    n = jp.shape[0]
    for r in range(6):
        for k in range(6):
            H2[r, k] = 0.0                      # H2 accumulates the composite inertia
    T = np.empty((3, 3))
    mcx = np.empty((3, 3))                      # m [c]x
    cv = np.empty(3)
    S = np.empty(6)
    # (no tuples indexed by a loop variable here: numba compiles those into switches, which
    # made this function take seconds to compile)
    for b in range(n, -1, -1):
        m = inert[b, 0]
        R = Rl[b]
        I = inert[b]
        for r in range(3):                      # CoM in satellite axes
            cv[r] = pl[b, r] + (R[r, 0] * I[1] + R[r, 1] * I[2] + R[r, 2] * I[3])
        for r in range(3):                      # T = R I_c
            for k in range(3):
                T[r, k] = R[r, 0] * I[4 + k] + R[r, 1] * I[7 + k] + R[r, 2] * I[10 + k]
        cc = cv[0] * cv[0] + cv[1] * cv[1] + cv[2] * cv[2]
        mcx[0, 0], mcx[0, 1], mcx[0, 2] = 0.0, -m * cv[2], m * cv[1]
        mcx[1, 0], mcx[1, 1], mcx[1, 2] = m * cv[2], 0.0, -m * cv[0]
        mcx[2, 0], mcx[2, 1], mcx[2, 2] = -m * cv[1], m * cv[0], 0.0
        for r in range(3):
            H2[r, r] += m
            for k in range(3):
                H2[r, 3 + k] -= mcx[r, k]
                H2[3 + r, k] += mcx[r, k]
                # R I_c R^T - m [c]x^2, with [c]x^2 = c c^T - |c|^2 I
                rir = T[r, 0] * R[k, 0] + T[r, 1] * R[k, 1] + T[r, 2] * R[k, 2]
                H2[3 + r, 3 + k] += rir - m * (cv[r] * cv[k] - (cc if r == k else 0.0))
        if b >= 1:
            ax = axis[b - 1]
            for r in range(3):
                S[3 + r] = R[r, 0] * ax[0] + R[r, 1] * ax[1] + R[r, 2] * ax[2]
            p0, p1, p2 = pl[b, 0], pl[b, 1], pl[b, 2]
            S[0], S[1], S[2] = p1 * S[5] - p2 * S[4], p2 * S[3] - p0 * S[5], p0 * S[4] - p1 * S[3]
            for r in range(6):
                acc = 0.0
                for k in range(6):
                    acc += H2[r, k] * S[k]
                H3[r, b - 1] = acc


@njit(cache=True)
def solve_spd(A, B, X):
    """X = A^-1 B for a symmetric positive definite A (6, 6) by Cholesky (A = L L^T)."""
    m = A.shape[0]
    L = np.zeros((m, m))
    for j in range(m):
        d = A[j, j]
        for k in range(j):
            d -= L[j, k] * L[j, k]
        L[j, j] = math.sqrt(d)
        for i in range(j + 1, m):
            v = A[i, j]
            for k in range(j):
                v -= L[i, k] * L[j, k]
            L[i, j] = v / L[j, j]
    for col in range(B.shape[1]):
        for i in range(m):                      # L y = b
            v = B[i, col]
            for k in range(i):
                v -= L[i, k] * X[k, col]
            X[i, col] = v / L[i, i]
        for i in range(m - 1, -1, -1):          # L^T x = y
            v = X[i, col]
            for k in range(i + 1, m):
                v -= L[k, i] * X[k, col]
            X[i, col] = v / L[i, i]


@njit(cache=True)
def momentum_map_into(q, jp, jtype, axis, inert, G, Rl, pl):
    """G = -H2^-1 H3 (6, n) into G: eq. 7 is nu = G qdot."""
    n = jp.shape[0]
    H2 = np.empty((6, 6))
    H3 = np.empty((6, n))
    momentum_matrices(q, jp, jtype, axis, inert, H2, H3, Rl, pl)
    solve_spd(H2, H3, G)
    for r in range(6):
        for c in range(n):
            G[r, c] = -G[r, c]


@njit(cache=True)
def momentum_map(q, jp, jtype, axis, inert):
    """G = -H2^-1 H3 (6, n), allocating its result."""
    n = jp.shape[0]
    G = np.empty((6, n))
    momentum_map_into(q, jp, jtype, axis, inert, G, np.empty((n + 1, 3, 3)), np.empty((n + 1, 3)))
    return G


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
def ee_and_jacobian(q, sat_R, sat_p, jp, jtype, axis, ee, Rl, pl, J, R_ee, p_ee, have_placements=False):
    """EE placement R_ee (3, 3), p_ee (3,) in the inertial frame and its 6 x (6 + n) frame
    Jacobian J (LOCAL_WORLD_ALIGNED), the satellite rotation taken through its quaternion.
    ``have_placements``: Rl, pl already hold chain_placements(q) (the momentum map made them)."""
    if not have_placements:
        chain_placements(q, jp, jtype, axis, Rl, pl)
    qs = np.empty(4)
    quat_of(sat_R, qs, 0)
    Rs = quat_matrix(qs[0], qs[1], qs[2], qs[3])
    n = jp.shape[0]
    A = Rl[n]
    T = np.empty((3, 3))
    pe = np.empty(3)
    for r in range(3):                          # EE in the satellite frame: oMi[n] * placement
        pe[r] = pl[n, r] + (A[r, 0] * ee[9] + A[r, 1] * ee[10] + A[r, 2] * ee[11])
        for c in range(3):
            T[r, c] = A[r, 0] * ee[c] + A[r, 1] * ee[3 + c] + A[r, 2] * ee[6 + c]
    for r in range(3):                          # inertial: satellite * EE
        p_ee[r] = sat_p[r] + (Rs[r, 0] * pe[0] + Rs[r, 1] * pe[1] + Rs[r, 2] * pe[2])
        for c in range(3):
            R_ee[r, c] = Rs[r, 0] * T[0, c] + Rs[r, 1] * T[1, c] + Rs[r, 2] * T[2, c]
    d0, d1, d2 = p_ee[0] - sat_p[0], p_ee[1] - sat_p[1], p_ee[2] - sat_p[2]
    for k in range(3):                          # free flyer: v in satellite axes, w about its origin
        w0, w1, w2 = Rs[0, k], Rs[1, k], Rs[2, k]
        J[0, k], J[1, k], J[2, k] = w0, w1, w2
        J[3, k] = J[4, k] = J[5, k] = 0.0
        J[0, 3 + k], J[1, 3 + k], J[2, 3 + k] = w1 * d2 - w2 * d1, w2 * d0 - w0 * d2, w0 * d1 - w1 * d0
        J[3, 3 + k], J[4, 3 + k], J[5, 3 + k] = w0, w1, w2
    for j in range(n):                          # joints: [a x (p_ee - p_j), a]
        B = Rl[j + 1]
        ax = axis[j]
        l0 = B[0, 0] * ax[0] + B[0, 1] * ax[1] + B[0, 2] * ax[2]
        l1 = B[1, 0] * ax[0] + B[1, 1] * ax[1] + B[1, 2] * ax[2]
        l2 = B[2, 0] * ax[0] + B[2, 1] * ax[1] + B[2, 2] * ax[2]
        a0 = Rs[0, 0] * l0 + Rs[0, 1] * l1 + Rs[0, 2] * l2
        a1 = Rs[1, 0] * l0 + Rs[1, 1] * l1 + Rs[1, 2] * l2
        a2 = Rs[2, 0] * l0 + Rs[2, 1] * l1 + Rs[2, 2] * l2
        pb = pl[j + 1]
        e0 = p_ee[0] - (sat_p[0] + (Rs[0, 0] * pb[0] + Rs[0, 1] * pb[1] + Rs[0, 2] * pb[2]))
        e1 = p_ee[1] - (sat_p[1] + (Rs[1, 0] * pb[0] + Rs[1, 1] * pb[1] + Rs[1, 2] * pb[2]))
        e2 = p_ee[2] - (sat_p[2] + (Rs[2, 0] * pb[0] + Rs[2, 1] * pb[1] + Rs[2, 2] * pb[2]))
        J[0, 6 + j], J[1, 6 + j], J[2, 6 + j] = a1 * e2 - a2 * e1, a2 * e0 - a0 * e2, a0 * e1 - a1 * e0
        J[3, 6 + j], J[4, 6 + j], J[5, 6 + j] = a0, a1, a2
