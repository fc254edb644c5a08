"""Real-time forward kinematics of the Hexaslide (seed 000 section 3, seed 001 section 5).

Unknown: the TCP pose (p, R). Residual of leg i (closure of eq. 1, squared so it is defined
everywhere, also where eq. 2 has no real root): ``f_i = |p + R b_i - c_i - q_abs_i u_i|^2 - l^2``.
Its derivative with respect to the twist (v, w) is ``2 [L_i^T, (R b_i x L_i)^T]``: the rows of
the analytic inverse Jacobian times ``2 L_i . u_i``.

* ``method='newton'``: Newton with that analytic Jacobian and a monotonic-descent factor
  (MGNR: the step is halved until ``|f|`` decreases), so it converges from far guesses;
* ``method='jfmd'``: the Jacobian-free monotonic descent of seed 000 [Shen et al. 2016]: the
  same damped iteration with a forward-difference Jacobian (6 extra residual evaluations).

Each solve starts from the last converged estimate (warm start) unless a guess is given;
``converged`` is False with a ``reason`` when the tolerance is not met, and the warm-start
state is then left untouched.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from hil_core.rotations import matrix_to_quat, quat_to_matrix, rotvec_to_quat

from .geometry import HexaslideGeometry


@dataclass(frozen=True, eq=False)
class FKResult:
    pose: np.ndarray        # (7,) [x, y, z, qx, qy, qz, qw] last estimate
    iterations: int         # Newton steps taken (the final, below-tolerance correction not counted)
    converged: bool
    residual: float         # max leg-length error | |L_i| - l | at the returned pose [m]
    reason: str = ''        # why it did not converge ('' when converged)


def _rodrigues(w0: float, w1: float, w2: float):
    """Rotation matrix of the rotation vector w as nested tuples (plain floats: cheap)."""
    th2 = w0 * w0 + w1 * w1 + w2 * w2
    if th2 < 1e-16:
        a, b = 1.0 - th2 / 6.0, 0.5 - th2 / 24.0
    else:
        th = math.sqrt(th2)
        a, b = math.sin(th) / th, (1.0 - math.cos(th)) / th2
    return np.array([[1 - b * (w1 * w1 + w2 * w2), -a * w2 + b * w0 * w1, a * w1 + b * w0 * w2],
                     [a * w2 + b * w0 * w1, 1 - b * (w0 * w0 + w2 * w2), -a * w0 + b * w1 * w2],
                     [-a * w1 + b * w0 * w2, a * w0 + b * w1 * w2, 1 - b * (w0 * w0 + w1 * w1)]])


class ForwardKinematics:
    """Slider displacements (from home) -> TCP pose, warm-started (see module docstring)."""

    def __init__(self, geom: HexaslideGeometry, method: str = 'newton', tol: float = 1e-9,
                 max_iter: int = 50, fd_step: float = 1e-7, max_halvings: int = 30):
        if method not in ('newton', 'jfmd'):
            raise ValueError(f"method must be 'newton' or 'jfmd', got {method!r}")
        if not (tol > 0 and max_iter >= 1):
            raise ValueError('tol must be > 0 and max_iter >= 1')
        self.geom = geom
        self.method = method
        self.tol = float(tol)
        self.max_iter = int(max_iter)
        self.fd_step = float(fd_step)
        self.max_halvings = int(max_halvings)
        self._b = np.array(geom.platform_joints)
        self._u = np.array(geom.guide_directions)
        self._c = np.array(geom.guide_origins)
        self._l2 = geom.link_length ** 2
        self.reset()

    def reset(self, pose=None):
        """Forget the warm start (next solve starts from ``pose`` or home)."""
        if pose is None:
            self._p = np.array([0.0, 0.0, self.geom.home_height])
            self._rot = np.eye(3)
        else:
            pose = np.asarray(pose, dtype=float)
            self._p = pose[:3].copy()
            self._rot = quat_to_matrix(pose[3:])

    @property
    def last_pose(self) -> np.ndarray:
        return np.concatenate([self._p, matrix_to_quat(self._rot)])

    # --- residual and Jacobians ----------------------------------------------------------------
    def _links(self, p, rot, base):
        rb = self._b @ rot.T
        return rb, p + rb - base

    def _residual(self, p, rot, base):
        _, links = self._links(p, rot, base)
        return np.einsum('ij,ij->i', links, links) - self._l2

    def _jacobian_fd(self, p, rot, base, f0):
        jac = np.empty((6, 6))
        h = self.fd_step
        for k in range(6):
            if k < 3:
                pk = p.copy()
                pk[k] += h
                jac[:, k] = (self._residual(pk, rot, base) - f0) / h
            else:
                w = [0.0, 0.0, 0.0]
                w[k - 3] = h
                jac[:, k] = (self._residual(p, _rodrigues(*w) @ rot, base) - f0) / h
        return jac

    # --- solver -------------------------------------------------------------------------------
    def solve(self, q, guess=None) -> FKResult:
        q = np.asarray(q, dtype=float)
        if q.shape != (6,) or not np.all(np.isfinite(q)):
            return self._fail(0, 'invalid joint vector (need 6 finite values)')
        if guess is not None:
            guess = np.asarray(guess, dtype=float)
            p, rot = guess[:3].copy(), quat_to_matrix(guess[3:])
        else:
            p, rot = self._p.copy(), self._rot.copy()
        base = self._c + (self.geom.q_home + q)[:, None] * self._u
        rb, links = self._links(p, rot, base)
        f = np.einsum('ij,ij->i', links, links) - self._l2
        merit = float(np.dot(f, f))
        for it in range(self.max_iter + 1):
            if self.method == 'newton':
                jac = 2.0 * np.concatenate([links, np.cross(rb, links)], axis=1)
            else:
                jac = self._jacobian_fd(p, rot, base, f)
            try:
                dx = np.linalg.solve(jac, -f)
            except np.linalg.LinAlgError:
                return self._fail(it, 'singular Jacobian')
            if not np.all(np.isfinite(dx)):
                return self._fail(it, 'singular Jacobian')
            if max(abs(dx[0]), abs(dx[1]), abs(dx[2])) < self.tol and \
                    max(abs(dx[3]), abs(dx[4]), abs(dx[5])) < self.tol:
                p = p + dx[:3]
                rot = _rodrigues(dx[3], dx[4], dx[5]) @ rot
                return self._success(p, rot, base, it)
            if it == self.max_iter:
                break
            lam = 1.0
            for _ in range(self.max_halvings):
                p_new = p + lam * dx[:3]
                rot_new = _rodrigues(lam * dx[3], lam * dx[4], lam * dx[5]) @ rot
                rb_new, links_new = self._links(p_new, rot_new, base)
                f_new = np.einsum('ij,ij->i', links_new, links_new) - self._l2
                merit_new = float(np.dot(f_new, f_new))
                if merit_new < merit:
                    break
                lam *= 0.5
            else:
                return self._fail(it, 'no descent (monotonic-descent factor exhausted)')
            p, rot, rb, links, f, merit = p_new, rot_new, rb_new, links_new, f_new, merit_new
        return self._fail(self.max_iter, f'no convergence in {self.max_iter} iterations')

    def _success(self, p, rot, base, iterations) -> FKResult:
        _, links = self._links(p, rot, base)
        residual = float(np.max(np.abs(np.sqrt(np.einsum('ij,ij->i', links, links))
                                       - self.geom.link_length)))
        self._p, self._rot = p, rot
        pose = np.concatenate([p, matrix_to_quat(rot)])
        return FKResult(pose=pose, iterations=iterations, converged=True, residual=residual)

    def _fail(self, iterations, reason) -> FKResult:
        return FKResult(pose=self.last_pose, iterations=iterations, converged=False,
                        residual=math.inf, reason=reason)
