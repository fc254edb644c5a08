"""The public timebase engine: :class:`TimeBaseEngineNumpy`'s pipeline in numba kernels.

Same interface as the oracle (``TimeBaseEngine(config, ik)``, ``start``, ``write``,
``step_frame(frame_time=None)``, ``started``, ``fault``, ``holding``, ``holds``,
``underruns``, ``last_valid_pose7``, ``buffer.distance/overruns/refused/filled``,
``control.n/factor/level``) and the same numbers (test/unit/test_timebase_compiled.py).

* IK: with the compiled hexaslide IK (``hil_core.hexaslide.hexaslide_ik(...)``, it carries
  ``kernel_params``) the segment points are solved inside the frame kernel; any other IK callable
  ``(N, 7) -> (q (N, J), ok (N,))`` is called from Python between two kernel calls.
* Outputs: ``step_frame`` returns new arrays every frame (callers keep a frame's points for the
  next message); the kernel writes into them, the engine state lives in preallocated arrays.
* ``frame_time=None``: the reader clock counts the engine's own servo cycles from the start
  stamp (nominal timer ticks); a float is the reader clock at the start of this frame.
"""
from __future__ import annotations

import numpy as np

from hil_core.maths.jit import timed_warm_up

from . import engine_kernel as K
from .bspline import prefilter_weights
from .buffer import pose7_to_pose6
from .control import TimeBaseControl
from .engine_numpy import _HIST, FrameOutput, IKFunction, TimeBaseConfig, start_joints

_WRITE = {K.W_OK: 'ok', K.W_STALE: 'stale', K.W_INVALID: 'invalid'}
assert K.HIST == _HIST


class _BufferView:
    """What callers read of the ring buffer (RingBuffer's attributes), from the kernel state."""

    def __init__(self, ist, buf, size: int, period: float):
        self._ist, self._buf, self.size, self.period = ist, buf, size, period

    distance = property(lambda self: int(self._ist[K.I_W] - self._ist[K.I_R]))
    w = property(lambda self: int(self._ist[K.I_W]))
    r = property(lambda self: int(self._ist[K.I_R]))
    overruns = property(lambda self: int(self._ist[K.I_OVERRUNS]))
    refused = property(lambda self: int(self._ist[K.I_REFUSED]))
    filled = property(lambda self: int(self._ist[K.I_FILLED]))

    @property
    def last_stamp(self) -> float | None:
        w = int(self._ist[K.I_W])
        return None if w < 0 else float(self._buf[w % self.size, 6])


class _ControlView:
    """TimeBaseControl's readable state (n, level, factor, limit) from the kernel state."""

    def __init__(self, ist, control: TimeBaseControl):
        self._ist, self.step = ist, control.step
        self.default_distance, self.max_steps, self.gentle_steps = (
            control.default_distance, control.max_steps, control.gentle_steps)

    n = property(lambda self: int(self._ist[K.I_N]))
    level = property(lambda self: int(self._ist[K.I_LEVEL]))
    factor = property(lambda self: 1.0 + int(self._ist[K.I_N]) * self.step)
    limit = property(lambda self: min(self.max_steps, self.gentle_steps * (int(self._ist[K.I_LEVEL]) + 1)))


class TimeBaseEngine:
    def __init__(self, config: TimeBaseConfig, ik: IKFunction):
        self.cfg = config
        self.ik = ik
        self._w = prefilter_weights(config.prefilter).copy()
        params = getattr(ik, 'kernel_params', None)
        self._inline_ik = params is not None
        self._ikp = params if self._inline_ik else _NO_IK
        self.started = False
        self.fault: str | None = None
        self._ist = np.zeros(K.INT_SIZE, dtype=np.int64)
        self._fst = np.zeros(K.FLOAT_SIZE)
        self._cf = self._config_array(config)
        warm_up()

    def _config_array(self, cfg: TimeBaseConfig) -> np.ndarray:
        ctl = TimeBaseControl(cfg.default_distance, cfg.step, cfg.gentle_steps, cfg.max_steps, cfg.patience,
                              cfg.time_base_control, cfg.servo_per_move)
        c = np.zeros(K.CONFIG_SIZE)
        c[K.K_T], c[K.K_H], c[K.K_TS], c[K.K_STEP] = cfg.move_time, cfg.segmentation_time, cfg.servo_period, cfg.step
        c[K.K_D0], c[K.K_GENTLE], c[K.K_MAX_STEPS] = cfg.default_distance, cfg.gentle_steps, cfg.max_steps
        c[K.K_PATIENCE], c[K.K_ENABLED] = cfg.patience, cfg.time_base_control
        c[K.K_PER_STEP_CYCLE], c[K.K_DEADBAND] = ctl.per_step_cycle, ctl.deadband
        c[K.K_EXTRAPOLATE], c[K.K_MAX_GAP], c[K.K_SIZE] = cfg.extrapolate_moves, cfg.max_gap_fill, cfg.buffer_size
        c[K.K_NSEG], c[K.K_NSUB], c[K.K_STEP_SCALE] = cfg.n_seg, cfg.n_sub, cfg.step_scale
        c[K.K_LAG] = 1.5 + cfg.segmentation_time / cfg.move_time   # engine.py: blending + spline lag
        c[K.K_MAX_LEVEL], c[K.K_CYCLES] = cfg.max_steps // cfg.gentle_steps, cfg.servo_per_move
        c[K.K_INLINE_IK] = self._inline_ik
        self._control_template = ctl
        return c

    # --- state read by the nodes and tests ------------------------------------------------
    underruns = property(lambda self: int(self._ist[K.I_UNDERRUNS]))
    holds = property(lambda self: int(self._ist[K.I_HOLDS]))
    holding = property(lambda self: bool(self._ist[K.I_HOLDING]))

    @property
    def last_valid_pose7(self) -> np.ndarray:
        return self._fst[K.F_LAST_VALID:K.F_LAST_VALID + 7].copy()

    # --- set-up ---------------------------------------------------------------------------
    def _solve(self, poses7):
        q, ok = self.ik(np.asarray(poses7, dtype=float))
        return np.asarray(q, dtype=float), np.asarray(ok, dtype=bool)

    def start(self, pose7, stamp: float) -> None:
        """Begin at rest at ``pose7``, as if it had been written every period up to ``stamp``
        (TimeBaseEngineNumpy.start)."""
        cfg = self.cfg
        pose7, q = start_joints(pose7, self._solve)
        T, d0, nj = cfg.move_time, cfg.default_distance, q.shape[1]
        p6 = pose7_to_pose6(pose7)
        ist, fst = self._ist, self._fst
        ist[:] = 0
        fst[:] = 0.0
        ist[K.I_W] = ist[K.I_R] = -1
        self._buf = np.zeros((cfg.buffer_size, 7))
        self._scratch = np.zeros(18)
        self.buffer = _BufferView(ist, self._buf, cfg.buffer_size, T)
        self.control = _ControlView(ist, self._control_template)
        self.start_stamp = float(stamp)
        fst[K.F_START_STAMP] = self.start_stamp
        for i in range(d0 + 1):
            K.buffer_write(self._cf, ist, self._buf, p6, stamp - (d0 - i) * T, self._scratch)
        s_move0 = stamp - d0 * T                 # stamp of the target of move 0
        ist[K.I_MOVE] = -1
        self._targets = np.array([np.append(p6, s_move0 + m * T) for m in (-3, -2, -1)])
        self._f = np.zeros((_HIST, nj + 1))
        self._c = np.zeros_like(self._f)
        for j in range(-3, 1):
            row = np.append(q[0], s_move0 + (j / cfg.n_seg - 1.5) * T)
            self._f[j % _HIST] = row
            self._c[j % _HIST] = row              # the prefilter is the identity on linear data
        ist[K.I_J] = 0
        ist[K.I_V] = -cfg.n_sub * cfg.step_scale  # v = -1 segmentation unit, as integer
        fst[K.F_LAST_VALID:K.F_LAST_VALID + 7] = pose7
        n, s = cfg.servo_per_move, cfg.n_seg
        self._seg, self._p7 = np.zeros((s, 7)), np.zeros((s, 7))
        self._qs, self._oks = np.zeros((s, nj)), np.zeros(s, dtype=np.bool_)
        self._rows, self._held = np.zeros((s, nj + 1)), np.zeros(nj + 1)
        self._vs = np.zeros(n)                   # servo positions of the frame (kernel scratch)
        self.fault = None
        self.started = True

    # --- writer side -----------------------------------------------------------------------
    def write(self, pose7, stamp: float) -> str:
        """One reference from the high level: 'ok', 'filled:n', 'stale' or 'invalid'."""
        if not self.started:
            raise RuntimeError('start() the engine first')
        if not (type(pose7) is np.ndarray and pose7.dtype == np.float64 and pose7.shape == (7,)
                and pose7.flags.c_contiguous):
            pose7 = np.ascontiguousarray(pose7, dtype=float)
            if pose7.shape != (7,):
                self._ist[K.I_REFUSED] += 1
                return 'invalid'
        code, n_fill = K.write(self._cf, self._ist, self._buf, pose7, float(stamp), self._scratch)
        return f'filled:{n_fill}' if code == K.W_FILLED else _WRITE[code]

    # --- low level ---------------------------------------------------------------------------
    def step_frame(self, frame_time: float | None = None) -> FrameOutput:
        """``TimeBaseEngineNumpy.step_frame`` (its docstring), in one kernel call."""
        if not self.started:
            raise RuntimeError('start() the engine first')
        has_time = frame_time is not None
        ft = float(frame_time) if has_time else 0.0
        n, nj1 = self._vs.shape[0], self._f.shape[1]
        pos, vel = np.empty((n, nj1)), np.empty((n, nj1))
        factors, distances, frac = np.empty(n), np.empty(n, dtype=np.int64), np.empty(n)
        args = (self._cf, self._ist, self._fst, self._buf, self._targets, self._f, self._c, self._w,
                self._seg, self._p7, self._qs, self._oks, self._rows, self._held, self._ikp, ft, has_time,
                self._vs, factors, distances, frac, pos, vel)
        while K.run_frame(*args) == K.NEED_IK:
            q, ok = self._solve(self._p7.copy())
            self._qs[:] = q
            self._oks[:] = ok
        if self.fault is None and self._ist[K.I_FAULT]:
            self.fault = self._fault_text()
        return FrameOutput(pos[:, :-1], vel[:, :-1], pos[:, -1], factors, distances, frac,
                           int(self._ist[K.I_FRAME_UNDERRUNS]), self.fault)

    def _fault_text(self) -> str:
        k = int(self._ist[K.I_FAULT_K])
        u = int(self._ist[K.I_FAULT_MOVE]) + (k + 1) / self.cfg.n_seg
        pose = np.round(self._fst[K.F_FAULT_POSE:K.F_FAULT_POSE + 7], 6).tolist()
        return f'inverse kinematics failed at segment point u={u:.3f} (pose {pose}): holding'


_NO_IK = np.zeros(1)
_NO_IK.setflags(write=False)           # the same array type as a packed geometry: one kernel
_warm = [None]


def warm_up() -> float:
    """Compile (or load from the on-disk cache) the engine kernels with the IK kernels they
    inline; seconds taken (0 once done). ``TimeBaseEngine(...)`` calls it."""
    if _warm[0] is not None:
        return 0.0

    def run():
        from hil_core.hexaslide import inverse_kernel
        inverse_kernel.warm_up()
        eng = TimeBaseEngine.__new__(TimeBaseEngine)
        _warm[0] = 0.0                      # constructing below must not recurse
        eng.__init__(TimeBaseConfig(), _identity_ik)
        eng.start(np.array([0.0, 0.0, 0.1, 0.0, 0.0, 0.0, 1.0]), 0.0)
        eng.write(np.array([0.0, 0.0, 0.1, 0.0, 0.0, 0.0, 1.0]), 0.0025)
        eng.step_frame()
        eng.step_frame(0.005)
    try:
        _warm[0] = timed_warm_up(run)
    except BaseException:
        _warm[0] = None
        raise
    return _warm[0]


def _identity_ik(poses7):
    return np.asarray(poses7)[:, :6].copy(), np.ones(len(poses7), dtype=bool)
