"""Dynamics of the hybrid robot: the controller's simplified model (seed 003 eq. 21-27) and the
simulated plant it is tested against.

Controller model (eq. 22-25): decoupled legs, ``M(l,x) lddot + G(l,x) = F`` with M diagonal.
The reduced masses come from the kinetostatic analysis at the current pose: with
j_i = column i of J^-1 (platform motion per unit motion of leg i, the others still),
    M_ii = j_i^T M_x j_i = m_s + m_p |j_i|^2 + J_r (|j_i|^2 - 1) / l_i^2 + sum_{k != i} J_r |j_i|^2 / l_k^2
(own runner, platform, own guide turning, the other guides turning: the terms of eq. 23), and
the gravity forces solve W G = [0, 0, m_g g] (eq. 24) with W = J^T, i.e. G_i = m_g g j_i,z.
Table (eq. 27): M = diag(J44, J55), G = (m4 r4 g sin theta4, 0).

Plant (what the controller does not know): the full coupled rigid-body model in the platform
coordinates p, from T = 1/2 v^T M_x(p) v with
    M_x = m_p I + sum_i [ m_s u_i u_i^T + (J_r / l_i^2)(I - u_i u_i^T) ]
(runner mass along the leg, guide inertia J_r turning about its pivot), Coriolis/centrifugal
terms from Lagrange's equation, gravity V = g [(m_p + 3 m_s) z + q_g sum z / l_i], Coulomb
(smoothed) + viscous friction in every joint, and its own masses (plant != model).

The plant's step runs compiled (``dynamics_kernel``, numba; :func:`warm_up` compiles or loads
it) unless ``compiled=False``; the Python ``Plant.accelerations`` is its oracle, so there is no
``dynamics_numpy`` twin.
"""
from __future__ import annotations

import math

import numpy as np

from hil_core.maths.jit import timed_warm_up

from . import dynamics_kernel
from . import kinematics as kin
from .params import G0, Hybrid5Params


# --- controller model (eq. 22-27) --------------------------------------------------------------------
def leg_model_scalar(x, y, z, R, m_p, m_s, J_r, m_g):
    """Eq. 23-24 unrolled per leg (floats, numpy scalars or arrays; the per-cycle form).

    Returns (M1, M2, M3, G1, G2, G3). Column i of J^-1 is (u_j x u_k) / det with (i, j, k)
    cyclic and det = u_1 . (u_2 x u_3); with d_i = p - b_i it is (l_i / det') (d_j x d_k),
    det' = d_1 . (d_2 x d_3), which saves the normalisation of u."""
    c = kin.const(kin.SQRT3_2, R) * R
    half = R / 2
    d = ((x, y - R, z), (x - c, y + half, z), (x + c, y + half, z))
    l2 = [dx * dx + dy * dy + dz * dz for dx, dy, dz in d]
    inv_l2 = [1 / q for q in l2]
    s_inv = inv_l2[0] + inv_l2[1] + inv_l2[2]
    cols = []
    for j, k in ((1, 2), (2, 0), (0, 1)):
        (ax, ay, az), (bx, by, bz) = d[j], d[k]
        cols.append((ay * bz - az * by, az * bx - ax * bz, ax * by - ay * bx))
    det = d[0][0] * cols[0][0] + d[0][1] * cols[0][1] + d[0][2] * cols[0][2]
    mg = m_g * kin.const(G0, R)
    M, G = [], []
    for i in range(3):
        s = l2[i] ** 0.5 / det                        # j_i = s * (d_j x d_k)
        cx, cy, cz = cols[i]
        jj = s * s * (cx * cx + cy * cy + cz * cz)
        M.append(m_s + m_p * jj + J_r * (jj * s_inv - inv_l2[i]))
        G.append(mg * s * cz)
    return (*M, *G)


def leg_model(p: np.ndarray, R: float, m_p, m_s, J_r, m_g):
    """Diagonal reduced masses M_ii (eq. 23) and gravity forces G_i (eq. 24) at pose p (..., 3)."""
    p = np.asarray(p)
    f = p.dtype.type
    r = leg_model_scalar(p[..., 0], p[..., 1], p[..., 2], f(R), f(m_p), f(m_s), f(J_r), f(m_g))
    return np.stack(r[:3], axis=-1), np.stack(r[3:], axis=-1)


def table_model(theta: np.ndarray, J44, J55, m4r4):
    """(M diag, G) of the tilt-rotary table, eq. 27."""
    theta = np.asarray(theta)
    M = np.stack([np.full_like(theta[..., 0], J44), np.full_like(theta[..., 0], J55)], axis=-1)
    G = np.stack([(m4r4 * G0) * np.sin(theta[..., 0]), np.zeros_like(theta[..., 0])], axis=-1)
    return M, G


# --- plant ---------------------------------------------------------------------------------------------
def task_mass(p: np.ndarray, R: float, m_p: float, m_s: float, J_r: float) -> np.ndarray:
    """M_x(p) of the plant (3, 3)."""
    d = kin.leg_vectors(p, R)
    l2 = np.sum(d * d, axis=-1)
    u = d / np.sqrt(l2)[:, None]
    uu = u[:, :, None] * u[:, None, :]
    eye = np.eye(3)
    return m_p * eye + np.einsum('i,ijk->jk', np.full(3, m_s), uu) \
        + np.einsum('i,ijk->jk', J_r / l2, eye - uu)


def task_bias(p: np.ndarray, v: np.ndarray, R: float, m_s: float, J_r: float) -> np.ndarray:
    """Mdot v - 1/2 grad(v^T M_x v): the velocity terms of Lagrange's equation (3,)."""
    d = kin.leg_vectors(p, R)
    l = np.sqrt(np.sum(d * d, axis=-1))
    u = d / l[:, None]
    s = u @ v                                       # ldot
    w = (v[None, :] - s[:, None] * u) / l[:, None]   # udot = (I - u u^T) v / l
    wv = w @ v                                      # udot . v = (|v|^2 - s^2) / l
    vv = v @ v
    # d/dt M_x applied to v
    mdot_v = m_s * (w * s[:, None] + u * wv[:, None]) \
        - (J_r / l**2)[:, None] * (w * s[:, None] + u * wv[:, None]) \
        - (2 * J_r * s / l**3)[:, None] * (v[None, :] - s[:, None] * u)
    # gradient of v^T M_x v
    grad = 2 * m_s * s[:, None] * w \
        - (2 * J_r * (vv - s * s) / l**3)[:, None] * u - (2 * J_r * s / l**2)[:, None] * w
    return np.sum(mdot_v, axis=0) - 0.5 * np.sum(grad, axis=0)


def potential(p: np.ndarray, R: float, m_p: float, m_s: float, q_g: float) -> float:
    l = kin.inverse(p, R)
    return G0 * ((m_p + 3 * m_s) * p[2] + q_g * np.sum(p[2] / l))


def gravity_task(p: np.ndarray, R: float, m_p: float, m_s: float, q_g: float) -> np.ndarray:
    d = kin.leg_vectors(p, R)
    l = np.sqrt(np.sum(d * d, axis=-1))
    ez = np.array([0.0, 0.0, 1.0])
    return G0 * ((m_p + 3 * m_s) * ez + q_g * np.sum(ez[None, :] / l[:, None]
                                                      - (p[2] / l**3)[:, None] * d, axis=0))


def _solve3(M, b):
    """Solve the 3x3 system M a = b by Cramer's rule (M symmetric positive definite)."""
    (a11, a12, a13), (a21, a22, a23), (a31, a32, a33) = M
    c11, c12, c13 = a22 * a33 - a23 * a32, a23 * a31 - a21 * a33, a21 * a32 - a22 * a31
    det = a11 * c11 + a12 * c12 + a13 * c13
    x = (b[0] * c11 + b[1] * (a13 * a32 - a12 * a33) + b[2] * (a12 * a23 - a13 * a22)) / det
    y = (b[0] * c12 + b[1] * (a11 * a33 - a13 * a31) + b[2] * (a13 * a21 - a11 * a23)) / det
    z = (b[0] * c13 + b[1] * (a12 * a31 - a11 * a32) + b[2] * (a11 * a22 - a12 * a21)) / det
    return x, y, z


class Plant:
    """Simulated hybrid robot, fixed-step semi-implicit Euler (float64).

    State: platform p, v (m, m/s) and table theta, omega (rad, rad/s). ``step(F, tau)``
    applies leg forces F (N) and table torques tau (N m) for one step dt."""

    def __init__(self, params: Hybrid5Params, p0, theta0=(0.0, 0.0), dt: float | None = None,
                 substeps: int = 1, compiled: bool = True):
        self.prm = params
        self.pl = params.plant
        self.dt = float(params.Ts if dt is None else dt) / substeps
        self.substeps = int(substeps)
        self.p = np.array(p0, dtype=float)
        self.v = np.zeros(3)
        self.theta = np.array(theta0, dtype=float)
        self.omega = np.zeros(2)
        # the compiled step (hybrid5.dynamics_kernel) unless compiled=False: accelerations()
        # below is its oracle
        self._constants = None
        if compiled:
            self._constants = dynamics_kernel.plant_constants(params)
            self._kernel = dynamics_kernel.step

    def accelerations(self, F, tau):
        """(platform acceleration (3,), table accelerations (2,)) for leg forces F, torques tau.

        The same equations as task_mass / task_bias / gravity_task, unrolled on floats
        (about 10x faster than numpy on 3-vectors; the tests check they agree)."""
        pl, R = self.pl, self.prm.R
        m_p, m_s, J_r, q_g = pl.m_p, pl.m_s, pl.J_r, pl.q_g
        x, y, z = self.p.tolist()
        vx, vy, vz = self.v.tolist()
        vv = vx * vx + vy * vy + vz * vz
        c, h = kin.SQRT3_2 * R, R / 2
        M = [[m_p, 0.0, 0.0], [0.0, m_p, 0.0], [0.0, 0.0, m_p]]
        Q = [0.0, 0.0, -G0 * (m_p + 3 * m_s)]
        for i, (dx, dy) in enumerate(((x, y - R), (x - c, y + h), (x + c, y + h))):
            l = math.sqrt(dx * dx + dy * dy + z * z)
            u = (dx / l, dy / l, z / l)
            s = u[0] * vx + u[1] * vy + u[2] * vz                      # ldot_i
            fi = F[i] - (pl.fc_leg * math.tanh(s / pl.v_stribeck) + pl.b_leg * s)
            b = J_r / (l * l)
            w = ((vx - s * u[0]) / l, (vy - s * u[1]) / l, (vz - s * u[2]) / l)
            wv = (vv - s * s) / l
            k1 = m_s - b                      # coefficient of (w s + u wv) in Mdot v
            k2 = -2 * J_r * s / (l * l * l)   # coefficient of (v - s u) = l w in Mdot v
            g1 = m_s * s - b * s              # 1/2 grad: s w (m_s - b) - J_r (vv - s^2)/l^3 u
            g2 = -J_r * (vv - s * s) / (l * l * l)
            gz = G0 * q_g * (1 / l)           # gravity of the guide: q_g g (e_z / l - z d / l^3)
            for r in range(3):
                for col in range(3):
                    M[r][col] += (m_s - b) * u[r] * u[col]
                M[r][r] += b
                bias = k1 * (w[r] * s + u[r] * wv) + k2 * l * w[r] - (g1 * w[r] + g2 * u[r])
                Q[r] += fi * u[r] - bias + G0 * q_g * z * u[r] / (l * l)
            Q[2] -= gz
        a = _solve3(M, Q)
        t4 = tau[0] - (pl.fc_table[0] * math.tanh(self.omega[0] / 1e-3) + pl.b_table[0] * self.omega[0])
        t5 = tau[1] - (pl.fc_table[1] * math.tanh(self.omega[1] / 1e-3) + pl.b_table[1] * self.omega[1])
        eps = ((t4 - pl.m4r4 * G0 * math.sin(self.theta[0])) / pl.J44, t5 / pl.J55)
        return np.array(a), np.array(eps)

    def step(self, F, tau) -> None:
        if self._constants is not None:
            self._kernel(self._constants, self.p, self.v, self.theta, self.omega,
                         np.asarray(F, dtype=np.float64), np.asarray(tau, dtype=np.float64), self.dt, self.substeps)
            return
        for _ in range(self.substeps):
            a, eps = self.accelerations(F, tau)
            self.v += a * self.dt
            self.p += self.v * self.dt
            self.omega += eps * self.dt
            self.theta += self.omega * self.dt

    def encoder_positions(self) -> list[float]:
        """``measure()`` as one list, legs then table, on Python floats (``round`` rounds half
        to even as ``np.round``: the same numbers, test_hybrid5_compiled_plant.py): the mock
        drives' loop reads it at every step, 10000 times a second in real time."""
        ql, qt = self.pl.encoder_leg, self.pl.encoder_table
        legs = kin.ik_scalar(*self.p.tolist(), self.prm.R)
        table = self.theta.tolist()
        out = [round(x / ql) * ql for x in legs] if ql > 0 else list(legs)
        return out + ([round(x / qt) * qt for x in table] if qt > 0 else table)

    def measure(self) -> tuple[np.ndarray, np.ndarray]:
        """Encoder readings: leg lengths and table angles quantised to the encoder resolution."""
        l = np.array(kin.ik_scalar(*self.p.tolist(), self.prm.R))
        ql, qt = self.pl.encoder_leg, self.pl.encoder_table
        l = np.round(l / ql) * ql if ql > 0 else l
        th = np.round(self.theta / qt) * qt if qt > 0 else self.theta.copy()
        return l, th


def warm_up() -> float:
    """Compile (or load from the cache) the plant's step kernels for float64 arrays
    (hil_core.warmup); seconds taken."""
    def run():
        c = np.ones(15)
        p, v, th, om = np.array([0.0, 0.0, 0.8]), np.zeros(3), np.zeros(2), np.zeros(2)
        dynamics_kernel.step(c, p, v, th, om, np.zeros(3), np.zeros(2), 1e-4, 1)
    return timed_warm_up(run)
