"""Real-time forward kinematics of the Hexaslide (seed 000 section 3, seed 001 section 5).

Unknown: the TCP pose (p, R). Residual of leg i (closure of eq. 1, squared so it is defined
everywhere, also where eq. 2 has no real root): ``f_i = |p + R b_i - c_i - q_abs_i u_i|^2 - l^2``.
Its derivative with respect to the twist (v, w) (w in hexapod_base axes) is
``2 [L_i^T, (R b_i x L_i)^T]``: the analytic inverse Jacobian rows times ``2 L_i . u_i``.

* ``method='newton'``: Newton with that analytic Jacobian and a monotonic-descent factor
  (MGNR: the step is halved until ``|f|`` decreases), so it converges from far guesses;
* ``method='jfmd'``: the Jacobian-free monotonic descent of seed 000 [Shen et al. 2016]: the
  same damped iteration with a forward-difference Jacobian (6 extra residual evaluations).

Both keep the inverted Jacobian between iterations and between calls (chord / Shamanskii
Newton) while its steps stay below ``refresh_step`` and contract fast enough that the next step
is predicted below ``tol``; otherwise it is recomputed at the current iterate, so far from the
solution the iteration is plain damped Newton. A warm-started solve along a 1 kHz trajectory
needs at most one inversion. ``chord=False`` recomputes it at least once per call.
``predict=True`` starts from a constant-velocity extrapolation of the two last estimates
instead of the last one (for periodic samples; fewer Jacobian refreshes).
Convergence: the step computed from the residual at the current iterate is below ``tol`` in
translation [m] and rotation [rad]; that last sub-tolerance correction is applied and not
counted in ``iterations``. A solve that does not converge returns ``converged=False`` with a
``reason`` and leaves the warm-start state untouched.

Written with plain floats and at most one 6x6 numpy inversion per iteration: numpy's per-call overhead
(about 1 us per operation) dominates at this size, see ``bench/fk.py``. This class is the
plain-Python oracle; ``hil_core.hexaslide.ForwardKinematics`` (forward.py) runs the same
iteration in a numba kernel.
"""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from .geometry import HexaslideGeometry

# The chord contraction rate drifts as the iterate moves: refresh when the next step, predicted
# from the last ratio, is within this factor of tol (keeps the 1 kHz warm start at <= 2 steps).
_CHORD_SAFETY = 0.01
_BRANCH_FACTOR = 1.5


class FKResult(NamedTuple):
    pose: np.ndarray        # (7,) [x, y, z, qx, qy, qz, qw]; on failure the last good estimate
    iterations: int         # steps taken (the final, below-tolerance correction not counted)
    converged: bool
    residual: float         # max leg-length error at the last evaluated iterate [m] (f_i / 2l)
    reason: str = ''        # why it did not converge ('' when converged)


def _quat_to_rot(x, y, z, w):
    """Row-major rotation matrix of a unit quaternion as 9 plain floats."""
    return (1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w),
            2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w),
            2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y))


def _rotate_quat(wx, wy, wz, x, y, z, w):
    """exp(wx, wy, wz) * (x, y, z, w), renormalised (rotation vector in base axes)."""
    th2 = wx * wx + wy * wy + wz * wz
    if th2 < 1e-12:
        s, c = 0.5 - th2 / 48.0, 1.0 - th2 / 8.0        # sin(th/2)/th, cos(th/2) by Taylor
    else:
        th = math.sqrt(th2)
        s, c = math.sin(0.5 * th) / th, math.cos(0.5 * th)
    ax, ay, az = wx * s, wy * s, wz * s
    nx = c * x + ax * w + ay * z - az * y
    ny = c * y - ax * z + ay * w + az * x
    nz = c * z + ax * y - ay * x + az * w
    nw = c * w - ax * x - ay * y - az * z
    n = 1.0 / math.sqrt(nx * nx + ny * ny + nz * nz + nw * nw)
    return nx * n, ny * n, nz * n, nw * n


def _distance(a, b) -> float:
    """Cheap distance between states: max position difference [m] and twice the largest
    quaternion component difference (~ the rotation angle [rad] when small; large when the
    quaternions are in opposite hemispheres, which only errs on the cautious side)."""
    return max(abs(a[0] - b[0]), abs(a[1] - b[1]), abs(a[2] - b[2]), 2.0 * abs(a[3] - b[3]),
               2.0 * abs(a[4] - b[4]), 2.0 * abs(a[5] - b[5]), 2.0 * abs(a[6] - b[6]))


def _extrapolate(a, b):
    """Constant-velocity prediction from the two last estimates: b + (b - a), rotation b a^-1 b."""
    ax, ay, az, aw = -a[3], -a[4], -a[5], a[6]                     # a^-1
    bx, by, bz, bw = b[3], b[4], b[5], b[6]
    dx = bw * ax + bx * aw + by * az - bz * ay                     # d = b * a^-1
    dy = bw * ay - bx * az + by * aw + bz * ax
    dz = bw * az + bx * ay - by * ax + bz * aw
    dw = bw * aw - bx * ax - by * ay - bz * az
    return (2 * b[0] - a[0], 2 * b[1] - a[1], 2 * b[2] - a[2],
            dw * bx + dx * bw + dy * bz - dz * by, dw * by - dx * bz + dy * bw + dz * bx,
            dw * bz + dx * by - dy * bx + dz * bw, dw * bw - dx * bx - dy * by - dz * bz)


class ForwardKinematicsNumpy:
    """Slider displacements (from home) -> TCP pose, warm-started (see module docstring).

    The plain-Python twin of the compiled ``ForwardKinematics`` and its test oracle."""

    def __init__(self, geom: HexaslideGeometry, method: str = 'newton', tol: float = 1e-9,
                 max_iter: int = 50, fd_step: float = 1e-7, max_halvings: int = 30,
                 refresh_step: float = 1e-3, chord: bool = True, predict: bool = False):
        if method not in ('newton', 'jfmd'):
            raise ValueError(f"method must be 'newton' or 'jfmd', got {method!r}")
        if not (tol > 0 and max_iter >= 1 and fd_step > 0):
            raise ValueError('tol and fd_step must be > 0, max_iter >= 1')
        self.geom = geom
        self.method = method
        self.tol = float(tol)
        self.max_iter = int(max_iter)
        self.fd_step = float(fd_step)
        self.max_halvings = int(max_halvings)
        self.refresh_step = float(refresh_step)
        self.chord = bool(chord)
        self.predict = bool(predict)
        if np.any(np.abs(geom.platform_joints[:, 2]) > 0):
            raise ValueError('the platform joints must lie in the TCP plane (b_z = 0)')
        if np.any(geom.guide_origins[:, 2] != 0) or np.any(geom.guide_directions[:, 2] != 0):
            raise ValueError('the guides must lie in the base joint plane z = 0')
        # per leg: b_x, b_y, home slider x, y, guide u_x, u_y (everything at z = 0)
        home = geom.guide_origins + geom.q_home[:, None] * geom.guide_directions
        self._legs = [(float(b[0]), float(b[1]), float(h[0]), float(h[1]), float(u[0]), float(u[1]))
                      for b, h, u in zip(geom.platform_joints, home, geom.guide_directions)]
        self._h = [tuple(map(float, h)) for h in geom.link_home]
        # assembly-mode check: passive deflection beyond 1.5 x the joint limit is no physical
        # configuration (the design limits of the yaml files are themselves estimates)
        self._cos_universal = math.cos(min(math.pi, _BRANCH_FACTOR * geom.universal_limit))
        self._cos_spherical = math.cos(min(math.pi, _BRANCH_FACTOR * geom.spherical_limit))
        self._home = (0.0, 0.0, float(geom.home_height), 0.0, 0.0, 0.0, 1.0)
        self._l2 = geom.link_length ** 2
        self._half_inv_l = 0.5 / geom.link_length
        self.reset()

    def _reset_pose(self, pose) -> tuple:
        """The normalised warm-start pose of reset() (ValueError if it is no pose)."""
        if pose is None:
            pose = (0.0, 0.0, self.geom.home_height, 0.0, 0.0, 0.0, 1.0)
        pose = [float(v) for v in pose]
        norm = math.sqrt(sum(v * v for v in pose[3:]))
        if len(pose) != 7 or not all(map(math.isfinite, pose)) or norm < 1e-9:
            raise ValueError('reset pose must be 7 finite values with a non-zero quaternion')
        return (*pose[:3], *(v / norm for v in pose[3:]))

    def reset(self, pose=None):
        """Forget the warm start: the next solve starts from ``pose`` (7,) or from home."""
        self._state = self._reset_pose(pose)
        self._jinv = None                           # inverse Jacobian kept for chord steps
        self._prev = None                           # the estimate before the last (predictor)

    @property
    def last_pose(self) -> np.ndarray:
        """The last converged estimate (the warm start of the next solve)."""
        return np.array(self._state)

    # --- residual and Jacobians --------------------------------------------------------------
    def _eval(self, s, base, jac_rows=None):
        """Residuals f_i at state s (px, py, pz, qx, qy, qz, qw) for the slider positions ``base``
        ((b_x, b_y, slider_x, slider_y) per leg, slider z = 0); Jacobian rows if a list is given."""
        px, py, pz = s[0], s[1], s[2]
        r00, r01, _, r10, r11, _, r20, r21, _ = _quat_to_rot(s[3], s[4], s[5], s[6])
        l2 = self._l2
        f = []
        for bx, by, cx, cy in base:
            rx, ry, rz = r00 * bx + r01 * by, r10 * bx + r11 * by, r20 * bx + r21 * by
            lx, ly, lz = px + rx - cx, py + ry - cy, pz + rz
            f.append(lx * lx + ly * ly + lz * lz - l2)
            if jac_rows is not None:
                jac_rows.append((2 * lx, 2 * ly, 2 * lz, 2 * (ry * lz - rz * ly),
                                 2 * (rz * lx - rx * lz), 2 * (rx * ly - ry * lx)))
        return f

    def _jacobian(self, s, base, f0):
        """Analytic (newton) or forward-difference (jfmd) Jacobian df/d(v, w) at s."""
        if self.method == 'newton':
            rows = []
            self._eval(s, base, rows)
            return np.array(rows)
        h = self.fd_step
        cols = []
        for k in range(6):
            if k < 3:
                sk = list(s)
                sk[k] += h
            else:
                w = [0.0, 0.0, 0.0]
                w[k - 3] = h
                sk = (s[0], s[1], s[2], *_rotate_quat(*w, *s[3:]))
            cols.append([(a - b) / h for a, b in zip(self._eval(sk, base), f0)])
        return np.array(cols).T

    def _inverse(self, s, base, f):
        try:
            jinv = np.linalg.inv(self._jacobian(s, base, f))
        except np.linalg.LinAlgError:
            return None
        return jinv if np.all(np.isfinite(jinv)) else None

    @staticmethod
    def _step(s, dx, lam):
        return (s[0] + lam * dx[0], s[1] + lam * dx[1], s[2] + lam * dx[2],
                *_rotate_quat(lam * dx[3], lam * dx[4], lam * dx[5], s[3], s[4], s[5], s[6]))

    # --- solver -------------------------------------------------------------------------------
    def solve(self, q, guess=None) -> FKResult:
        """Pose for slider displacements ``q`` (6,), from ``guess`` or the last estimate."""
        try:
            q = [float(v) for v in q]
        except (TypeError, ValueError):
            return self._fail(0, 'invalid joint vector (need 6 finite values)', math.inf)
        if len(q) != 6 or not all(map(math.isfinite, q)):
            return self._fail(0, 'invalid joint vector (need 6 finite values)', math.inf)
        start, jinv, trusted = self._state, (self._jinv if self.chord else None), True
        if guess is not None:
            try:
                g = [float(v) for v in guess]
                n = math.sqrt(g[3] * g[3] + g[4] * g[4] + g[5] * g[5] + g[6] * g[6])
            except (TypeError, ValueError, IndexError):
                g, n = [], 0.0
            if len(g) != 7 or not all(map(math.isfinite, g)) or not n > 1e-9:
                return self._fail(0, 'invalid guess pose', math.inf)
            start, jinv, trusted = (g[0], g[1], g[2], g[3] / n, g[4] / n, g[5] / n, g[6] / n), None, False
        s0 = start
        if self.predict and trusted and self._prev is not None:
            predicted = _extrapolate(self._prev, start)
            if _distance(predicted, start) < self.refresh_step:    # consecutive samples only
                s0 = predicted
        base = [(bx, by, hx + qi * ux, hy + qi * uy) for (bx, by, hx, hy, ux, uy), qi in zip(self._legs, q)]
        out = self._iterate(s0, base, jinv)
        # A far move may land on another assembly mode (another real root of the closure
        # equations with the same sliders, e.g. the platform flipped by tens of degrees): only a
        # solution with the eq. 2 + root and the passive joints in range is the robot's pose.
        # Distinct assembly modes are far apart away from singularities, so a small correction
        # of a validated estimate needs no check; otherwise check, and retry once from home.
        if out[0] and (not trusted or _distance(out[1], start) > self.refresh_step):
            problem = self._branch_problem(out[1], base)
            if problem and (not trusted or start != self._home):
                retry = self._iterate(self._home, base, None)
                out = (*retry[:2], None, out[3] + retry[3], *retry[4:])
                problem = self._branch_problem(out[1], base) if out[0] else ''
            if problem:
                out = (False, out[1], None, out[3], out[4], f'no pose on the robot\'s assembly mode: {problem}')
        ok, state, jinv, iterations, residual, reason = out
        if not ok:
            return self._fail(iterations, reason, residual)
        self._prev = self._state if trusted else None
        self._state, self._jinv = state, jinv
        return FKResult(pose=np.array(state), iterations=iterations, converged=True, residual=residual)

    def _iterate(self, s, base, jinv):
        """Damped (chord) Newton from s: (ok, state, jinv, iterations, residual, reason)."""
        f = self._eval(s, base)
        merit = sum(v * v for v in f)
        tol, prev = self.tol, math.inf
        for it in range(self.max_iter + 1):
            residual = self._half_inv_l * max(map(abs, f))
            fresh = jinv is None
            if fresh:
                jinv = self._inverse(s, base, f)
                if jinv is None:
                    return False, s, None, it, residual, 'singular Jacobian'
            dx = (jinv @ f).tolist()
            size = max(map(abs, dx))
            # chord step with an old Jacobian: keep it only while it is small and contracts
            # fast enough that the next step is predicted below tol; otherwise refresh (Newton)
            if not fresh and size >= tol and (size > self.refresh_step or size * size >= _CHORD_SAFETY * tol * prev):
                jinv, fresh = self._inverse(s, base, f), True
                if jinv is None:
                    return False, s, None, it, residual, 'singular Jacobian'
                dx = (jinv @ f).tolist()
                size = max(map(abs, dx))
            if size < tol:
                return True, self._step(s, dx, -1.0), jinv, it, residual, ''
            if it == self.max_iter:
                break
            lam = -1.0
            for _ in range(self.max_halvings):
                s_new = self._step(s, dx, lam)
                f_new = self._eval(s_new, base)
                merit_new = sum(v * v for v in f_new)
                if merit_new < merit:
                    break
                if not fresh:                       # old (chord) Jacobian: refresh before damping
                    jinv, fresh = self._inverse(s, base, f), True
                    if jinv is None:
                        return False, s, None, it, residual, 'singular Jacobian'
                    dx = (jinv @ f).tolist()
                    size = max(map(abs, dx))
                    continue
                lam *= 0.5                          # monotonic-descent factor
            else:
                return False, s, None, it, residual, 'no descent (monotonic-descent factor exhausted)'
            if size * -lam > self.refresh_step:
                jinv = None                         # far from the solution: plain damped Newton
            s, f, merit, prev = s_new, f_new, merit_new, size * -lam
        return (False, s, None, self.max_iter, self._half_inv_l * max(map(abs, f)),
                f'no convergence in {self.max_iter} iterations')

    def _branch_problem(self, s, base) -> str:
        """'' if every leg is on the + root of eq. 2 with plausible passive joint deflections."""
        px, py, pz = s[0], s[1], s[2]
        r00, r01, r02, r10, r11, r12, r20, r21, r22 = _quat_to_rot(s[3], s[4], s[5], s[6])
        inv_l = 1.0 / self.geom.link_length
        for i, ((bx, by, cx, cy), (_, _, _, _, ux, uy), (hx, hy, hz)) in enumerate(zip(base, self._legs, self._h)):
            lx = (px + r00 * bx + r01 * by - cx) * inv_l
            ly = (py + r10 * bx + r11 * by - cy) * inv_l
            lz = (pz + r20 * bx + r21 * by) * inv_l
            if lx * ux + ly * uy >= 0.0:
                return f'leg {i + 1} on the - root of eq. 2'
            if lx * hx + ly * hy + lz * hz < self._cos_universal:
                return f'universal joint {i + 1} beyond 1.5 x its limit'
            rhx, rhy, rhz = r00 * hx + r01 * hy + r02 * hz, r10 * hx + r11 * hy + r12 * hz, r20 * hx + r21 * hy + r22 * hz
            if lx * rhx + ly * rhy + lz * rhz < self._cos_spherical:
                return f'spherical joint {i + 1} beyond 1.5 x its limit'
        return ''

    def _fail(self, iterations, reason, residual) -> FKResult:
        return FKResult(pose=np.array(self._state), iterations=iterations, converged=False,
                        residual=residual, reason=reason)
