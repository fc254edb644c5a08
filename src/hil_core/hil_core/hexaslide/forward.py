"""Compiled real-time forward kinematics: :class:`ForwardKinematics` (the public one).

Same constructor, ``solve``, ``reset`` and ``last_pose`` as its plain-Python oracle
:class:`ForwardKinematicsNumpy` (forward_numpy.py, where the algorithm is explained); a solve runs in
the numba kernel of :mod:`.forward_kernel` on arrays this object owns (warm-start state, parameters,
scratch), so a warm-started solve costs a few microseconds and allocates only its result.
"""
from __future__ import annotations

import math

import numpy as np

from . import forward_kernel as K
from .forward_numpy import FKResult, ForwardKinematicsNumpy
from .geometry import HexaslideGeometry
from hil_core.maths.jit import timed_warm_up

_BAD_Q = 'invalid joint vector (need 6 finite values)'
_PROBLEM = {K.MINUS_ROOT: 'leg {} on the - root of eq. 2',
            K.UNIVERSAL: 'universal joint {} beyond 1.5 x its limit',
            K.SPHERICAL: 'spherical joint {} beyond 1.5 x its limit'}


class ForwardKinematics(ForwardKinematicsNumpy):
    """Slider displacements (from home) -> TCP pose, warm-started; compiled (see module doc).

    The private helpers inherited from the oracle (``_iterate``, ``_branch_problem``) still work
    on their own tuples; the warm-start state of ``solve`` lives in the kernel's arrays."""

    def __init__(self, geom: HexaslideGeometry, method: str = 'newton', tol: float = 1e-9,
                 max_iter: int = 50, fd_step: float = 1e-7, max_halvings: int = 30,
                 refresh_step: float = 1e-3, chord: bool = True, predict: bool = False):
        self._st = np.zeros(K.STATE_SIZE)
        super().__init__(geom, method, tol, max_iter, fd_step, max_halvings, refresh_step, chord, predict)
        p = np.zeros(K.PARAM_SIZE)
        p[K.C_TOL], p[K.C_MAX_ITER], p[K.C_FD_STEP] = self.tol, self.max_iter, self.fd_step
        p[K.C_HALVINGS], p[K.C_REFRESH] = self.max_halvings, self.refresh_step
        p[K.C_CHORD], p[K.C_PREDICT], p[K.C_JFMD] = self.chord, self.predict, self.method == 'jfmd'
        p[K.C_COS_UNI], p[K.C_COS_SPH] = self._cos_universal, self._cos_spherical
        p[K.C_L2], p[K.C_HALF_INV_L], p[K.C_INV_L] = self._l2, self._half_inv_l, 1.0 / geom.link_length
        p[K.C_HOME:K.C_HOME + 7] = self._home
        for i, (leg, h) in enumerate(zip(self._legs, self._h)):
            p[K.C_LEGS + K.LEG * i:K.C_LEGS + K.LEG * (i + 1)] = (*leg, *h)
        self._prm = p
        self._ws = np.zeros(K.WORK_SIZE)
        self._no_guess = np.zeros(7)
        self._reasons = {K.BAD_Q: _BAD_Q, K.BAD_GUESS: 'invalid guess pose',
                         K.SINGULAR: 'singular Jacobian',
                         K.NO_DESCENT: 'no descent (monotonic-descent factor exhausted)',
                         K.NO_CONVERGENCE: f'no convergence in {self.max_iter} iterations'}
        warm_up()

    def reset(self, pose=None):
        """Forget the warm start: the next solve starts from ``pose`` (7,) or from home."""
        self._st[:] = 0.0
        self._st[K.S_STATE:K.S_STATE + 7] = self._reset_pose(pose)

    @property
    def _state(self) -> tuple:
        return tuple(self._st[K.S_STATE:K.S_STATE + 7].tolist())

    @_state.setter
    def _state(self, value) -> None:            # the oracle's reset() assigns it
        self._st[K.S_STATE:K.S_STATE + 7] = value

    @property
    def last_pose(self) -> np.ndarray:
        """The last converged estimate (the warm start of the next solve)."""
        return self._st[K.S_STATE:K.S_STATE + 7].copy()

    def solve(self, q, guess=None) -> FKResult:
        """Pose for slider displacements ``q`` (6,), from ``guess`` or the last estimate."""
        if not (type(q) is np.ndarray and q.dtype == np.float64 and q.shape == (6,)
                and q.flags.c_contiguous and q.flags.writeable):     # else a copy (one kernel type)
            try:
                q = np.array([float(v) for v in q], dtype=np.float64)
            except (TypeError, ValueError):
                return self._failed(0, _BAD_Q, math.inf)
            if q.shape != (6,):
                return self._failed(0, _BAD_Q, math.inf)
        if guess is None:
            g, g_state = self._no_guess, 0
        else:
            try:
                g = np.array([float(v) for v in guess], dtype=np.float64)
                g_state = 1 if g.shape == (7,) else 2
            except (TypeError, ValueError):
                g, g_state = self._no_guess, 2
        code, iterations, residual, leg = K.solve(self._prm, self._st, q, g, g_state, self._ws)
        pose = self._st[K.S_STATE:K.S_STATE + 7].copy()
        if code == K.CONVERGED:
            return FKResult(pose, iterations, True, residual)
        if leg >= 0:
            reason = "no pose on the robot's assembly mode: " + _PROBLEM[code].format(leg + 1)
        else:
            reason = self._reasons[code]
        return FKResult(pose, iterations, False, residual, reason)

    def _failed(self, iterations, reason, residual) -> FKResult:
        return FKResult(self.last_pose, iterations, False, residual, reason)


_warm = [None]


def warm_up() -> float:
    """Compile (or load from the on-disk cache) the FK kernel; seconds taken (0 once done)."""
    if _warm[0] is not None:
        return 0.0

    def run():
        prm, st, ws = np.zeros(K.PARAM_SIZE), np.zeros(K.STATE_SIZE), np.zeros(K.WORK_SIZE)
        prm[K.C_MAX_ITER] = 1.0
        K.solve(prm, st, np.zeros(6), np.zeros(7), 0, ws)
    _warm[0] = timed_warm_up(run)
    return _warm[0]
