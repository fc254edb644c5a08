"""The timebase pipeline of seed 000 sections 4.2-4.3, streaming, one servo cycle at a time.

    writer --write()--> RingBuffer (W) --read at move start (R)--> triangular-velocity moves
    (merged) --segmentation every h--> inverse kinematics --> cubic B-spline --> servo points,
    with the time-base control choosing per servo cycle how much interpolation time elapses.

Positions along the pipeline (integers are exact, so runs are reproducible bit for bit):

* move m starts at move-unit time u = m and reads the buffer (R advances, or the move holds
  the previous target on an underrun);
* segment point j is the curve at u = j / n_seg (n_seg = T / h), turned into joint space;
* the servo position v (in segmentation units) advances by ``factor / n_sub`` per servo cycle
  (n_sub = h / Ts); it trails the newest segment point by one segmentation time, which is
  what the B-spline needs to be evaluated.

Default delay from reference stamp to servo setpoint, by construction and measured by the
tests: ``D_default * T + 1.5 T + h`` = 2 x 2.5 + 3.75 + 1.25 = 10 ms, the four poses of seed
000 section 5. A stamp channel runs through every linear stage next to the pose, so the delay
of every servo point is known exactly (also under time-base distortion and faults).

:class:`TimeBaseEngineNumpy` here is the readable reference and test oracle; the public
``TimeBaseEngine`` (engine.py) runs the same pipeline in numba kernels (engine_kernel.py).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from .blending import blend
from .bspline import basis, prefilter_weights
from .buffer import RingBuffer, pose6_to_pose7, pose7_to_pose6
from .control import TimeBaseControl

IKFunction = Callable[[np.ndarray], tuple]   # (N, 7) poses -> (q (N, J), ok (N,))
_HIST = 16


def _ratio(a: float, b: float, what: str) -> int:
    r = a / b
    n = int(round(r))
    if n < 1 or abs(r - n) > 1e-6:
        raise ValueError(f'{what} must be a whole multiple (got ratio {r:.6g})')
    return n


@dataclass(frozen=True)
class TimeBaseConfig:
    move_time: float = 0.0025           # T: high-level period, one move
    segmentation_time: float = 0.00125  # h
    servo_period: float = 0.000625      # Ts
    buffer_size: int = 6
    default_distance: int = 2
    step: float = 0.01                  # time-base step, fraction of the servo period
    gentle_steps: int = 2
    max_steps: int = 10
    patience: int = 4                   # servo cycles outside the default before escalating
    time_base_control: bool = True
    prefilter: str = 'exact'            # 'exact' (cubics reproduced) | 'none' (plain B-spline)
    max_gap_fill: int = 2
    extrapolate_moves: int = 1          # underrun: moves continued at constant velocity before holding
    n_seg: int = field(init=False)
    n_sub: int = field(init=False)
    step_scale: int = field(init=False)

    def __post_init__(self):
        for name in ('move_time', 'segmentation_time', 'servo_period'):
            v = getattr(self, name)
            if not (np.isfinite(v) and v > 0):
                raise ValueError(f'{name} must be positive and finite, got {v}')
        object.__setattr__(self, 'n_seg', _ratio(self.move_time, self.segmentation_time,
                                                 'move_time / segmentation_time'))
        object.__setattr__(self, 'n_sub', _ratio(self.segmentation_time, self.servo_period,
                                                 'segmentation_time / servo_period'))
        object.__setattr__(self, 'step_scale', _ratio(1.0, self.step, '1 / step'))
        prefilter_weights(self.prefilter)
        if not self.default_distance < self.buffer_size:
            raise ValueError('default_distance must be smaller than buffer_size')
        if not 0 <= self.extrapolate_moves <= 4:
            raise ValueError('extrapolate_moves must be in [0, 4]')
        if self.max_gap_fill < self.default_distance:
            raise ValueError('max_gap_fill must be >= default_distance (restart look-ahead)')
        TimeBaseControl(self.default_distance, self.step, self.gentle_steps, self.max_steps, self.patience)

    @property
    def servo_per_move(self) -> int:
        return self.n_seg * self.n_sub

    @property
    def default_delay(self) -> float:
        return self.default_distance * self.move_time + 1.5 * self.move_time + self.segmentation_time


@dataclass
class FrameOutput:
    positions: np.ndarray      # (N, J) joint setpoints of the servo cycles of this frame
    velocities: np.ndarray     # (N, J) per second
    ref_stamps: np.ndarray     # (N,) reference time each setpoint reproduces
    factors: np.ndarray        # (N,) time-base factor used in each cycle
    distances: np.ndarray      # (N,) W - R after each cycle's reads
    fractional_distances: np.ndarray  # (N,) the same with sub-pose resolution (controlled)
    underruns: int             # moves started without a new pose in this frame
    fault: str | None          # IK failure (latched): the output holds


def start_joints(pose7, solve):
    """The start pose as a float array and its joints by ``solve``; ValueError for a pose that is
    not finite or has no inverse kinematics solution (both engines start through it)."""
    pose7 = np.asarray(pose7, dtype=float)
    if pose7.shape != (7,) or not np.all(np.isfinite(pose7)) or np.linalg.norm(pose7[3:]) < 1e-9:
        raise ValueError('start pose must be a finite [x, y, z, qx, qy, qz, qw]')
    q, ok = solve(pose7[None])
    if not ok[0]:
        raise ValueError('start pose has no inverse kinematics solution')
    return pose7, q


class TimeBaseEngineNumpy:
    """The pipeline in numpy, one servo cycle at a time: the test oracle of the compiled
    ``TimeBaseEngine`` (engine.py), which runs the same steps in numba kernels."""

    def __init__(self, config: TimeBaseConfig, ik: IKFunction):
        self.cfg = config
        self.ik = ik
        self._w = prefilter_weights(config.prefilter)
        self.started = False
        self.fault: str | None = None
        self.underruns = 0

    # --- set-up ---------------------------------------------------------------------------
    def _solve(self, poses7):
        q, ok = self.ik(np.asarray(poses7, dtype=float))
        return np.asarray(q, dtype=float), np.asarray(ok, dtype=bool)

    def start(self, pose7, stamp: float) -> None:
        """Begin at rest at ``pose7`` (the robot's pose: first reference of a synchronised
        stream), as if it had been written every period up to ``stamp``."""
        cfg = self.cfg
        pose7, q = start_joints(pose7, self._solve)
        T, d0 = cfg.move_time, cfg.default_distance
        p6 = pose7_to_pose6(pose7)
        self.buffer = RingBuffer(cfg.buffer_size, T, cfg.max_gap_fill)
        self.control = TimeBaseControl(d0, cfg.step, cfg.gentle_steps, cfg.max_steps, cfg.patience,
                                       cfg.time_base_control, cfg.servo_per_move)
        self.start_stamp = float(stamp)
        self._cycles = 0                         # servo cycles since start: the reader's clock
        for i in range(d0 + 1):
            self.buffer.write(p6, stamp - (d0 - i) * T)
        s_move0 = stamp - d0 * T                 # stamp of the target of move 0
        self._move = -1
        self._targets = np.array([np.append(p6, s_move0 + m * T) for m in (-3, -2, -1)])
        self._f = np.zeros((_HIST, q.shape[1] + 1))
        self._c = np.zeros_like(self._f)
        for j in range(-3, 1):
            row = np.append(q[0], s_move0 + (j / cfg.n_seg - 1.5) * T)
            self._f[j % _HIST] = row
            self._c[j % _HIST] = row              # the prefilter is the identity on linear data
        self._j = 0
        self._v = -cfg.n_sub * cfg.step_scale    # v = -1 segmentation unit, as integer
        self.last_valid_pose7 = pose7.copy()
        self.fault = None
        self.underruns = 0
        self.holding = False
        self.holds = 0
        self._extrapolated = 0
        self.started = True

    # --- writer side -----------------------------------------------------------------------
    def write(self, pose7, stamp: float) -> str:
        """One reference from the high level: 'ok', 'filled:n', 'stale' or 'invalid'."""
        pose7 = np.asarray(pose7, dtype=float)
        if pose7.shape != (7,) or not np.all(np.isfinite(pose7)) or np.linalg.norm(pose7[3:]) < 1e-9:
            self.buffer.refused += 1
            return 'invalid'
        return self.buffer.write(pose7_to_pose6(pose7), float(stamp))

    # --- low level ---------------------------------------------------------------------------
    def _start_move(self) -> None:
        cfg = self.cfg
        item = self.buffer.read()
        # poses already covered by an extrapolated move are skipped (their stamp is not newer)
        while item is not None and item[1] <= self._targets[2, -1] + 0.5 * cfg.move_time:
            item = self.buffer.read()
        if item is not None:
            target = np.append(item[0], item[1])
            self._extrapolated = 0
            self.holding = False
        else:
            self.underruns += 1
            self._frame_underruns += 1
            last, prev = self._targets[2], self._targets[1]
            if self._extrapolated < cfg.extrapolate_moves and not self.holding:
                # the pose is late: continue at constant velocity (what a late or dropped
                # reference would most likely have said); the real one replaces what follows
                target = 2.0 * last - prev
                self._extrapolated += 1
            else:
                target = last.copy()               # stream gone: hold (zero move, no jump)
                self.holding = True
                self.holds += 1
        self._targets = np.vstack([self._targets[1:], target])
        self._move += 1
        x = np.arange(1, cfg.n_seg + 1) / cfg.n_seg
        pos, _ = blend(self._targets, x)                      # segmentation of the curve
        held = self._f[self._j % _HIST]
        if self.fault is None:
            poses7 = pose6_to_pose7(pos[:, :6])
            q, ok = self._solve(poses7)
            good = np.all(np.isfinite(q), axis=1) & ok
            rows = np.column_stack([q, pos[:, 6]])
            bad = np.flatnonzero(~good)
            k = int(bad[0]) if bad.size else len(rows)
            if k > 0:
                self.last_valid_pose7 = poses7[k - 1]
            if bad.size:
                # latch: hold the last reachable segment point (the spline brings the output
                # to rest without a jump); only a restart clears it
                self.fault = (f'inverse kinematics failed at segment point u={self._move + x[k]:.3f} '
                              f'(pose {np.round(poses7[k], 6).tolist()}): holding')
                rows[k:] = rows[k - 1] if k > 0 else held
        else:
            rows = np.repeat(held[None], cfg.n_seg, axis=0)
        for row in rows:
            self._j += 1
            j = self._j
            self._f[j % _HIST] = row
            # prefilter (bspline.py) summed left to right, not by a BLAS dot whose rounding
            # depends on the build: the control decides on the stamp channel of c, and the W-R
            # error does land exactly on its deadband edge (drifting writer), so the last bit
            # decides a step there; this order is the compiled engine's too
            f, w = self._f, self._w
            self._c[j % _HIST] = (w[0] * f[j % _HIST] + w[1] * f[(j - 1) % _HIST]
                                  + w[2] * f[(j - 2) % _HIST] + w[3] * f[(j - 3) % _HIST])

    def step_frame(self, frame_time: float | None = None) -> FrameOutput:
        """Run the servo cycles of one move time; returns their setpoints.

        ``frame_time``: the reader clock at the start of this frame (lockstep: the frame stamp,
        so a frame the hardware advanced without us shows up as distance); by default the
        engine counts its own servo cycles (real time: nominal timer ticks).
        """
        if not self.started:
            raise RuntimeError('start() the engine first')
        cfg = self.cfg
        n_cycles = cfg.servo_per_move
        scale = cfg.n_sub * cfg.step_scale
        self._frame_underruns = 0
        vs = np.empty(n_cycles)
        factors = np.empty(n_cycles)
        distances = np.empty(n_cycles, dtype=int)
        frac = np.empty(n_cycles)
        lag = 1.5 + cfg.segmentation_time / cfg.move_time   # internal lag of blending + spline, moves
        for i in range(n_cycles):
            n = self.control.n
            self._v += cfg.step_scale + n
            self._cycles += 1
            need = -(-self._v // scale) + 1                  # control points up to ceil(v) + 1
            while self._j < need:
                self._start_move()
            vs[i] = v = self._v / scale
            factors[i] = 1.0 + n * cfg.step
            distances[i] = self.buffer.distance
            # W-R distance with sub-pose resolution, from the stamp channel of the output
            j = need - 2
            t = v - j
            c = self._c[:, -1]
            ref = ((1 - t) ** 3 * c[(j - 1) % _HIST] + (3 * t ** 3 - 6 * t * t + 4) * c[j % _HIST]
                   + (-3 * t ** 3 + 3 * t * t + 3 * t + 1) * c[(j + 1) % _HIST] + t ** 3 * c[(j + 2) % _HIST]) / 6.0
            if frame_time is None:
                now = self.start_stamp + self._cycles * cfg.servo_period
            else:
                now = frame_time + (i + 1) * cfg.servo_period
            frac[i] = (now - ref) / cfg.move_time - lag
            # while holding on an underrun there is nothing to catch up with: relax instead
            self.control.update(cfg.default_distance if self.holding else frac[i])
        j = np.ceil(vs).astype(int) - 1
        wp, wv = basis(vs - j)
        rows = self._c[(j[:, None] + np.arange(-1, 3)[None, :]) % _HIST]   # (N, 4, J + 1)
        pos = np.einsum('nk,nkc->nc', wp, rows)
        vel = np.einsum('nk,nkc->nc', wv, rows) * (factors / cfg.segmentation_time)[:, None]
        return FrameOutput(positions=pos[:, :-1], velocities=vel[:, :-1], ref_stamps=pos[:, -1],
                           factors=factors, distances=distances, fractional_distances=frac,
                           underruns=self._frame_underruns,
                           fault=self.fault)
