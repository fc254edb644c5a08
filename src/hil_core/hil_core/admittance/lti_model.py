"""Linear time-invariant 6-DOF admittance model (seed 000, sections 3 and 5.1).

Position-based admittance control (PBAC) replaces the robot's dynamics with a modelled one: the
measured wrench drives a 6-DOF model whose output is the reference TCP pose. The seed's test
model is decoupled: a mass (inertia), a spring and a damper per DOF about the TCP,

    M q_ddot + D q_dot + K (q - q_eq) = S * w            (per DOF or with full 6x6 M, D, K)

with translational stiffness 5000 N/m, rotational 200 N m/rad, damping ratio 0.2 and mass and
inertia chosen for a 3 Hz (or 6 Hz) natural frequency. ``q`` is the pose offset about the home
pose (rotation vector for the orientation, see ``pose_offset``), ``q_eq`` the equilibrium
offset (the spring's rest point; ``-K^-1 w0`` cancels a static preload ``w0``), ``S`` the
per-axis force scaling and ``w`` the wrench in the control frame.

Discretisation is exact for a zero-order-hold input: ``[[A, B], [0, 0]] * T`` through
``scipy.linalg.expm`` gives ``x[k+1] = Ad x[k] + Bd u[k]``. Disabled axes are *constrained*
(held at the home offset, zero velocity): the model is reduced to the enabled DOFs, so with a
full coupled M, D, K the constraint forces are implied, exactly as with a physical lock.

An optional linear velocity-driven block (``radiation``: ``z_dot = Ar z + Br q_dot``, force
``-(Cr z + Dr q_dot)``) is part of the same linear state; the Cummins floater uses it.

Bumpless parameter change: ``set_matrices`` rebuilds the discretisation but keeps the physical
state (pose offset, twist, radiation state), so the reference pose never steps.

Per-wrench work (``step``, ``outputs``, ``step_outputs``) runs as one compiled call
(``admittance.lti_model_kernel``, numba; :func:`warm_up` compiles or loads it) by default;
``compiled=False`` selects the plain numpy code below, which stays as the test oracle
(test/unit/test_admittance_compiled.py), so there is no ``lti_model_numpy`` twin.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg

from hil_core.admittance import lti_model_kernel as _ck
from hil_core.admittance import pose_offset
from hil_core.maths.rotations import quat_to_matrix, rotvec_to_quat

# Seed 000 section 5.1: the test model.
SEED_STIFFNESS = (5000.0, 5000.0, 5000.0, 200.0, 200.0, 200.0)  # N/m, N m/rad
SEED_DAMPING_RATIO = 0.2
SEED_FREQUENCY_HZ = 3.0
HOME_IDENTITY = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0)
_NO_QUAD = np.zeros((0, 0))


@dataclass(frozen=True)
class Radiation:
    """Linear state-space block driven by the velocity: z' = A z + B v, force = -(C z + D v)."""
    A: np.ndarray
    B: np.ndarray
    C: np.ndarray
    D: np.ndarray

    @property
    def order(self) -> int:
        return self.A.shape[0]


def _vec6(name, v, positive=False, nonneg=False):
    a = np.asarray(v, dtype=float).reshape(-1)
    if a.size == 1:
        a = np.full(6, a[0])
    if a.shape != (6,):
        raise ValueError(f'{name} needs 6 values (one per DOF), got {a.size}')
    if not np.all(np.isfinite(a)):
        raise ValueError(f'{name} must be finite')
    if positive and np.any(a <= 0):
        raise ValueError(f'{name} must be > 0 in every DOF, got {a.tolist()}')
    if nonneg and np.any(a < 0):
        raise ValueError(f'{name} must be >= 0 in every DOF, got {a.tolist()}')
    return a


def matrices_from_frequency(natural_frequency_hz, damping_ratio, stiffness):
    """Diagonal M, D, K from per-axis natural frequency (Hz), damping ratio and stiffness.

    m = k / (2 pi fn)^2, d = 2 zeta sqrt(k m): the seed's way (mass and inertia from the
    natural frequency of interest, stiffness and damping ratio fixed).
    """
    fn = _vec6('natural_frequency', natural_frequency_hz, positive=True)
    zeta = _vec6('damping_ratio', damping_ratio, nonneg=True)
    k = _vec6('stiffness', stiffness, positive=True)
    m = k / (2.0 * np.pi * fn) ** 2
    d = 2.0 * zeta * np.sqrt(k * m)
    return np.diag(m), np.diag(d), np.diag(k)


def matrices_from_mass(mass, damping, stiffness):
    """Diagonal M, D, K from per-axis mass/inertia, damping coefficient and stiffness."""
    return (np.diag(_vec6('mass', mass, positive=True)), np.diag(_vec6('damping', damping, nonneg=True)),
            np.diag(_vec6('stiffness', stiffness, nonneg=True)))


def check_matrices(M, D, K):
    """Validate full 6x6 M, D, K; return them as arrays or raise ValueError naming the problem."""
    out = []
    for name, X in (('mass matrix', M), ('damping matrix', D), ('stiffness matrix', K)):
        X = np.asarray(X, dtype=float)
        if X.size == 36:
            X = X.reshape(6, 6)
        if X.shape != (6, 6):
            raise ValueError(f'{name} needs 36 values (6x6, row-major), got {X.size}')
        if not np.all(np.isfinite(X)):
            raise ValueError(f'{name} must be finite')
        out.append(X)
    M = out[0]
    if not np.allclose(M, M.T, rtol=1e-9, atol=1e-12):
        raise ValueError('mass matrix must be symmetric')
    if np.min(np.linalg.eigvalsh(0.5 * (M + M.T))) <= 0:
        raise ValueError('mass matrix must be positive definite')
    return tuple(out)


def zoh(A, B, T):
    """Exact zero-order-hold discretisation: (Ad, Bd) of x' = A x + B u over a period T."""
    n, m = B.shape
    big = np.zeros((n + m, n + m))
    big[:n, :n] = A * T
    big[:n, n:] = B * T
    e = scipy.linalg.expm(big)
    return e[:n, :n], e[:n, n:]


class LtiAdmittanceModel:
    """6-DOF linear admittance model, exactly discretised at ``period`` (see module docstring).

    Parameters: ``M, D, K`` (6x6), ``period`` (s), ``home`` pose ``[x,y,z,qx,qy,qz,qw]`` in the
    control frame, ``enabled`` (6 bools), ``force_scale`` (6), ``equilibrium`` offset (6: m and
    rotation vector), ``wrench_frame`` 'control' (wrench already in control-frame axes about the
    reference point) or 'body' (in the axes of the moving TCP: rotated by the current
    orientation), ``tcp_offset`` (7: pose of the TCP, where the wrench acts and the reference is
    commanded, in the model's body frame; identity = the model's reference point is the TCP),
    ``radiation`` (optional ``Radiation``), ``compiled`` (numba per-wrench path; False = the
    numpy oracle).

    With a TCP offset ``r`` (control axes) the wrench at the TCP acts on the model as
    ``f, tau + r x f`` and the outputs are the TCP's pose, twist and acceleration (rigid body).
    """

    def __init__(self, M, D, K, period, home=HOME_IDENTITY, enabled=(True,) * 6,
                 force_scale=(1.0,) * 6, equilibrium=(0.0,) * 6, wrench_frame='control',
                 radiation: Radiation | None = None, tcp_offset=HOME_IDENTITY, compiled: bool = True):
        if not (np.isfinite(period) and period > 0):
            raise ValueError(f'period must be > 0 s, got {period}')
        problem = pose_offset.check_home_pose(home)
        if problem:
            raise ValueError(problem)
        if wrench_frame not in ('control', 'body'):
            raise ValueError(f"wrench_frame must be 'control' or 'body', got {wrench_frame!r}")
        problem = pose_offset.check_home_pose(tcp_offset)
        if problem:
            raise ValueError(problem.replace('home pose', 'tcp offset').replace('home orientation',
                                                                                'tcp offset orientation'))
        self.tcp_offset = np.asarray(tcp_offset, dtype=float)
        self._has_tcp = not np.array_equal(self.tcp_offset, HOME_IDENTITY)
        self._tcp_rot = quat_to_matrix(self.tcp_offset[3:7])
        enabled = np.asarray(enabled, dtype=bool).reshape(-1)
        if enabled.shape != (6,):
            raise ValueError(f'enabled needs 6 flags, got {enabled.size}')
        if not enabled.any():
            raise ValueError('at least one DOF must be enabled')
        self.period = float(period)
        self.home = np.asarray(home, dtype=float)
        self._home_rot = quat_to_matrix(self.home[3:7])
        self.enabled = enabled
        self.idx = np.flatnonzero(enabled)
        self.wrench_frame = wrench_frame
        self.radiation = radiation
        self.n = self.idx.size
        self.nr = 0 if radiation is None else radiation.order
        self.x = np.zeros(2 * self.n + self.nr)
        self._u_eff = np.zeros(self.n)
        self.compiled = bool(compiled)
        self._work = np.zeros(2 * self.x.size + 24)     # kernel scratch: no allocation per wrench
        self._idx64 = self.idx.astype(np.int64)
        self._tcp_pos = np.ascontiguousarray(self.tcp_offset[:3])
        self._quad = None                                # resolved at the first compiled step
        self.set_matrices(M, D, K, force_scale, equilibrium)
        if self.compiled:
            self._warm_kernels()

    # --- parameters ----------------------------------------------------------------------------
    def set_matrices(self, M, D, K, force_scale=None, equilibrium=None):
        """(Re)build the model; the state (pose offset, twist, internal states) is kept: bumpless."""
        M, D, K = check_matrices(M, D, K)
        scale = self.force_scale if force_scale is None else _vec6('force_scale', force_scale)
        eq = self.equilibrium if equilibrium is None else _vec6('equilibrium', equilibrium)
        e, n, nr = self.idx, self.n, self.nr
        Me, De, Ke = M[np.ix_(e, e)], D[np.ix_(e, e)], K[np.ix_(e, e)]
        Mi = np.linalg.inv(Me)
        A = np.zeros((2 * n + nr, 2 * n + nr))
        A[:n, n:2 * n] = np.eye(n)
        A[n:2 * n, :n] = -Mi @ Ke
        A[n:2 * n, n:2 * n] = -Mi @ De
        if self.radiation is not None:
            r = self.radiation
            A[n:2 * n, n:2 * n] -= Mi @ r.D[np.ix_(e, e)]
            A[n:2 * n, 2 * n:] = -Mi @ r.C[e, :]
            A[2 * n:, n:2 * n] = r.B[:, e]
            A[2 * n:, 2 * n:] = r.A
        B = np.zeros((2 * n + nr, n))
        B[n:2 * n] = Mi
        Ad, Bd = zoh(A, B, self.period)
        # Commit only after everything above succeeded: a refused change leaves the model as it was.
        self.M, self.D, self.K = M, D, K
        self.force_scale, self.equilibrium = scale, eq
        self.A, self.B = A, B
        self.Ad, self.Bd = np.ascontiguousarray(Ad), np.ascontiguousarray(Bd)
        self._acc_rows = A[n:2 * n]    # acceleration = rows of A x + Mi u (input held: left limit)
        self._Mi = Mi
        self._k_eq = Ke @ eq[e]        # constant spring preload of the equilibrium offset
        self._scale_c = np.ascontiguousarray(scale, dtype=float)
        self._dcache = {}

    def discretize(self, T):
        """(Ad, Bd) at another period T (cached), e.g. for a recording's sample times."""
        key = round(T * 1e9)
        hit = self._dcache.get(key)
        if hit is None:
            hit = self._dcache[key] = tuple(np.ascontiguousarray(m) for m in zoh(self.A, self.B, T))
        return hit

    # --- state -------------------------------------------------------------------------------------
    def reset(self):
        """Back to home: zero offset, zero twist, zero internal state."""
        self.x[:] = 0.0
        self._u_eff[:] = 0.0

    def set_state(self, q, qd):
        """Set the offset and its rate (6-vectors; disabled DOFs must be zero)."""
        q = np.asarray(q, dtype=float)
        qd = np.asarray(qd, dtype=float)
        self.x[:self.n] = q[self.idx]
        self.x[self.n:2 * self.n] = qd[self.idx]

    @property
    def q(self):
        """Pose offset (6): m and rotation vector, zeros on disabled DOFs."""
        out = np.zeros(6)
        out[self.idx] = self.x[:self.n]
        return out

    @property
    def qd(self):
        out = np.zeros(6)
        out[self.idx] = self.x[self.n:2 * self.n]
        return out

    @property
    def qdd(self):
        """Offset second derivative at the current state with the last input held."""
        out = np.zeros(6)
        out[self.idx] = self._acc_rows @ self.x + self._Mi @ self._u_eff
        return out

    # --- inputs --------------------------------------------------------------------------------------
    def generalized_force(self, wrench):
        """Wrench (6, in ``wrench_frame``) -> scaled control-frame force on the enabled DOFs.

        A wrench of the wrong size or with NaN/inf is refused (ValueError) before it can reach
        the state: one bad sample must never poison the model for the rest of a run.
        """
        w = np.asarray(wrench, dtype=float)
        if w.shape != (6,) or not np.isfinite(w).all():
            raise ValueError(f'wrench must be 6 finite values, got {w.tolist()}')
        if self.wrench_frame == 'body' or self._has_tcp:
            R = quat_to_matrix(rotvec_to_quat(self.q[3:6])) @ self._home_rot   # body orientation
            f, t = w[:3], w[3:6]
            if self.wrench_frame == 'body':
                Rt = R @ self._tcp_rot
                f, t = Rt @ f, Rt @ t
            if self._has_tcp:
                r = R @ self.tcp_offset[:3]
                t = t + np.cross(r, f)   # moment of the TCP force about the model's reference point
            w = np.concatenate([f, t])
        return (w * self.force_scale)[self.idx] + self._k_eq

    def extra_force(self):
        """Nonlinear force added to the input (none here; the floater adds quadratic damping)."""
        return 0.0

    def step(self, wrench, T=None):
        """Advance one period with the wrench held (ZOH); return the new pose offset (6)."""
        if self.compiled and self._compiled_step(wrench, T):
            return self.q
        u = self.generalized_force(wrench) + self.extra_force()
        Ad, Bd = (self.Ad, self.Bd) if T is None else self.discretize(T)
        self.x = Ad @ self.x + Bd @ u
        self._u_eff = u
        return self.q

    # --- outputs -------------------------------------------------------------------------------------
    def pose(self):
        """Reference (TCP) pose [x, y, z, qx, qy, qz, qw] in the control frame."""
        if self._has_tcp:
            return self.outputs()[0]
        return pose_offset.offset_to_pose(self.home, self.q)

    def twist(self):
        """TCP twist [v, omega] in control-frame axes (omega = J_l(theta) theta_dot)."""
        if self._has_tcp:
            return self.outputs()[1]
        return pose_offset.offset_rate_to_twist(self.q, self.qd)

    def accel(self):
        if self._has_tcp:
            return self.outputs()[2]
        return pose_offset.offset_accel_to_accel(self.q, self.qd, self.qdd)

    def outputs(self):
        """(pose, twist, accel) of the TCP in one pass (the node's per-cycle call)."""
        if self.compiled:
            out = self.outputs_into(np.empty(19))
            return out[0:7], out[7:13], out[13:19]
        q, qd, qdd = self.q, self.qd, self.qdd
        out = (pose_offset.offset_to_pose(self.home, q), pose_offset.offset_rate_to_twist(q, qd),
               pose_offset.offset_accel_to_accel(q, qd, qdd))
        if self._has_tcp:
            return pose_offset.point_outputs(*out, self.tcp_offset)
        return out

    # --- compiled path (admittance.lti_model_kernel) ---------------------------------------------------------
    def _quad_matrix(self):
        """Quadratic damping for the kernel: none for this class, the floater's own matrix for
        ``CumminsFloater``; None (numpy path) for any other subclass's extra_force."""
        ef = type(self).extra_force
        if ef is LtiAdmittanceModel.extra_force:
            return _NO_QUAD
        if ef.__qualname__ == 'CumminsFloater.extra_force' and ef.__module__ == 'hil_core.admittance.floater':
            return np.ascontiguousarray(self.quadratic_damping) if self._has_quad else _NO_QUAD
        return None

    def _warm_kernels(self) -> None:
        """Run both kernels once on scratch copies with this model's own argument types, so the
        numba cache load (or compilation) happens here at construction, not at the first
        wrench of a run (about 1 s in a fresh process with the cache, several without)."""
        _ck.step_kernel(self.Ad, self.Bd, self.x.copy(), self._u_eff.copy(), np.zeros(6), self._idx64,
                        self._scale_c, self._k_eq, self.wrench_frame == 'body', self._has_tcp, self._home_rot,
                        self._tcp_rot, self._tcp_pos, self._acc_rows, self._Mi, _NO_QUAD, self.period,
                        np.zeros(self._work.size))
        _ck.outputs_kernel(self.x, self._u_eff, self._idx64, self._acc_rows, self._Mi, self.home,
                           self._has_tcp, self.tcp_offset, np.empty(19), np.zeros(self._work.size))

    def _compiled_step(self, wrench, T) -> bool:
        """One step through the kernel; False when this model's extra force is not compiled."""
        if self._quad is None:
            self._quad = self._quad_matrix()
            if self._quad is None:
                self.compiled = False
                return False
        w = wrench
        if type(w) is not np.ndarray or w.dtype != np.float64 or w.shape != (6,):
            w = np.asarray(wrench, dtype=float)
            if w.shape != (6,):
                raise ValueError(f'wrench must be 6 finite values, got {w.tolist()}')
        Ad, Bd = (self.Ad, self.Bd) if T is None else self.discretize(T)
        if not _ck.step_kernel(Ad, Bd, self.x, self._u_eff, w, self._idx64, self._scale_c, self._k_eq,
                               self.wrench_frame == 'body', self._has_tcp, self._home_rot, self._tcp_rot,
                               self._tcp_pos, self._acc_rows, self._Mi, self._quad, self.period, self._work):
            raise ValueError(f'wrench must be 6 finite values, got {w.tolist()}')
        return True

    def outputs_into(self, out):
        """Compiled outputs into ``out`` (19,): pose [0:7], twist [7:13], accel [13:19]."""
        _ck.outputs_kernel(self.x, self._u_eff, self._idx64, self._acc_rows, self._Mi, self.home,
                           self._has_tcp, self.tcp_offset, out, self._work)
        return out

    def step_outputs(self, wrench, out, T=None):
        """``step`` then the outputs into ``out`` (19,) with no allocation: the node's per-wrench
        call when it keeps one buffer (pose [0:7], twist [7:13], accel [13:19])."""
        if not (self.compiled and self._compiled_step(wrench, T)):
            self.step(wrench, T)
            pose, twist, accel = self.outputs()
            out[0:7], out[7:13], out[13:19] = pose, twist, accel
            return out
        return self.outputs_into(out)

    # --- analysis --------------------------------------------------------------------------------------
    def compliance_frf(self, freqs_hz):
        """Continuous frequency response X/F (H[f, out_dof, in_dof]) of the enabled DOFs, full 6x6."""
        n = self.n
        C = np.zeros((n, self.A.shape[0]))
        C[:, :n] = np.eye(n)
        s = 2j * np.pi * np.asarray(freqs_hz, dtype=float)
        eye = np.eye(self.A.shape[0])
        out = np.zeros((s.size, 6, 6), dtype=complex)
        for i, si in enumerate(s):
            out[i][np.ix_(self.idx, self.idx)] = C @ np.linalg.solve(si * eye - self.A, self.B)
        return out


def warm_up() -> float:
    """Compile (or load from the cache) every admittance kernel (hil_core.warmup); seconds taken."""
    return _ck.warm_up()
