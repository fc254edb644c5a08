"""Position-servo drive axes in plain numpy: ``ServoAxesNumpy``, the test oracle of the compiled
``servo.ServoAxes`` (test/unit/test_servo_compiled.py, 1e-12), and ``ServoConfig``, the gains and
limits both take. The model, its discretisation and the limits are described in ``servo``, the
public module.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hil_core.config_check import valid_config
from hil_core.drives.joint_trajectory_legacy import sample_knots_numpy


MAX_BLOCK = 40     # loop updates per linear block (two frames at the defaults)


@dataclass(frozen=True)
class ServoConfig:
    """Gains and limits of n identical-structure axes (arrays of shape (n,) or scalars)."""
    bandwidth: float = 50.0          # Hz, natural frequency of the closed position loop
    damping: float = 0.7             # zeta of the closed position loop
    velocity_feedforward: float = 1.0
    acceleration_feedforward: float = 1.0
    position_min: tuple = (-0.2,) * 6
    position_max: tuple = (0.2,) * 6
    velocity_max: tuple = (1.0,) * 6
    acceleration_max: tuple = (20.0,) * 6
    servo_period: float = 0.000625   # s, setpoint (servo interrupt) period, seed 000
    internal_steps: int = 5          # loop updates per servo period

    def problem(self) -> str | None:
        """Why this configuration cannot run, or None."""
        lo, hi = np.asarray(self.position_min, float), np.asarray(self.position_max, float)
        vmax, amax = np.asarray(self.velocity_max, float), np.asarray(self.acceleration_max, float)
        if not (lo.shape == hi.shape == vmax.shape == amax.shape):
            return 'position_min, position_max, velocity_max, acceleration_max need one value per joint'
        if np.any(hi <= lo):
            return 'position_max must be above position_min for every joint'
        if np.any(vmax <= 0) or np.any(amax <= 0):
            return 'velocity_max and acceleration_max must be positive'
        h = self.servo_period / self.internal_steps
        wn = 2 * np.pi * self.bandwidth
        # Sampled-data PD on a double integrator: keep w_n h small so the loop behaves as the
        # continuous design (w_n h < 0.2 keeps the discrete poles within a few % of it).
        if wn * h > 0.2:
            return (f'bandwidth {self.bandwidth} Hz is too high for servo_period/internal_steps = '
                    f'{h * 1e6:.1f} us (need 2 pi bandwidth h <= 0.2)')
        return None


class ServoAxesNumpy:
    """State (position, velocity, applied acceleration) of n servo axes and their integration
    in plain numpy: the test oracle of the compiled ``servo.ServoAxes``."""

    def __init__(self, config: ServoConfig, position0, *, fast_path: bool = True):
        """``fast_path=False``: always the step loop (what the compiled class computes, so the
        equality tests compare the same arithmetic; the fast path differs from it by rounding,
        up to a few 1e-12 for slow loops)."""
        self.fast_path = fast_path
        self.config = valid_config(config)
        self.p_min = np.asarray(config.position_min, dtype=float)
        self.p_max = np.asarray(config.position_max, dtype=float)
        self.v_max = np.asarray(config.velocity_max, dtype=float)
        self.a_max = np.asarray(config.acceleration_max, dtype=float)
        wn = 2 * np.pi * config.bandwidth
        self.kp = wn * wn
        self.kv = 2 * config.damping * wn
        self.kvff = float(config.velocity_feedforward)
        self.kaff = float(config.acceleration_feedforward)
        self.h = config.servo_period / config.internal_steps
        p0 = np.asarray(position0, dtype=float).ravel()
        if p0.shape != self.p_min.shape:
            raise ValueError(f'initial position needs {self.p_min.size} values, got {p0.size}')
        if not np.all(np.isfinite(p0)) or np.any(p0 < self.p_min) or np.any(p0 > self.p_max):
            raise ValueError(f'initial position {p0.tolist()} is not finite or beyond the position limits')
        self.position = p0.copy()
        self.velocity = np.zeros_like(p0)
        self.acceleration = np.zeros_like(p0)
        self._maps: dict[int, tuple] = {}

    @property
    def n(self) -> int:
        return self.position.size

    def _bounds(self, p: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Acceleration bounds (lo, hi) from the velocity and braking limits at state (p, v).

        Braking invariant (per axis, toward p_max): v <= sqrt(2 a_max (p_max - p)). Given it,
        full braking (-a_max) over one step keeps it (the stopping point does not move), so
        the final acceleration clip may override these bounds without breaking the limit.
        """
        h, am = self.h, self.a_max
        # Largest end-of-step velocity u with u^2 <= 2 am (p_max - p - (v + u) h / 2).
        d_hi = self.p_max - p - 0.5 * v * h
        d_lo = p - self.p_min + 0.5 * v * h
        with np.errstate(invalid='ignore'):
            root_hi = 0.5 * (-am * h + np.sqrt(am * am * h * h + 8.0 * am * d_hi))
            root_lo = 0.5 * (-am * h + np.sqrt(am * am * h * h + 8.0 * am * d_lo))
        # d < 0: too close to stop gently within the step: brake fully (bound -> -inf).
        v_hi = np.minimum(self.v_max, np.where(d_hi >= 0.0, root_hi, -np.inf))
        v_lo = np.maximum(-self.v_max, np.where(d_lo >= 0.0, -root_lo, np.inf))
        return (v_lo - v) / h, (v_hi - v) / h

    def _limit(self, a_cmd: np.ndarray) -> np.ndarray:
        """Applied acceleration: a_cmd within the velocity/braking bounds, then +-a_max."""
        lo, hi = self._bounds(self.position, self.velocity)
        return np.clip(np.minimum(np.maximum(a_cmd, lo), hi), -self.a_max, self.a_max)

    def _linear_maps(self, m: int):
        """Unconstrained closed loop over m steps: states X (m+1, 2 rows) = P x0 + K u.

        x = [p, v], u_j = [r_j, v_ref_j, a_ref_j]; one step is x+ = Phi x + Gamma u."""
        cached = self._maps.get(m)
        if cached is not None:
            return cached
        h, kp, kv = self.h, self.kp, self.kv
        c = np.array([-kp, -kv])                                   # a = c.x + d.u
        d = np.array([kp, kv * self.kvff, self.kaff])
        integ = np.array([0.5 * h * h, h])
        phi = np.array([[1.0, h], [0.0, 1.0]]) + np.outer(integ, c)
        gamma = np.outer(integ, d)
        big_p = np.zeros((2 * (m + 1), 2))
        big_k = np.zeros((2 * (m + 1), 3 * m))
        big_p[0:2] = np.eye(2)
        for i in range(1, m + 1):
            big_p[2 * i:2 * i + 2] = phi @ big_p[2 * i - 2:2 * i]
            big_k[2 * i:2 * i + 2] = phi @ big_k[2 * i - 2:2 * i]
            big_k[2 * i:2 * i + 2, 3 * (i - 1):3 * i] = gamma
        self._maps[m] = (big_p, big_k, c, d)
        return self._maps[m]

    def run(self, ref_p: np.ndarray, ref_v: np.ndarray, ref_a: np.ndarray | None = None) -> None:
        """Integrate M internal steps of length h.

        ``ref_p``, ``ref_v``: (M+1, n) setpoint position/velocity at the step boundaries
        (row 0 = now). ``ref_a``: (M, n) feedforward acceleration per step, default the mean
        acceleration ``diff(ref_v) / h``; pass zeros for position-only (linear) setpoints.

        Fast path: the unconstrained loop is linear, so all M steps are one matrix product;
        if no limit would have acted at any step the result is exactly what the step loop
        gives (same arithmetic up to rounding) and is kept; otherwise the step loop runs.
        """
        ref_p = np.asarray(ref_p, dtype=float)
        ref_v = np.asarray(ref_v, dtype=float)
        if ref_a is None:
            ref_a = np.diff(ref_v, axis=0) / self.h
        if not (np.all(np.isfinite(ref_p)) and np.all(np.isfinite(ref_v)) and np.all(np.isfinite(ref_a))):
            raise ValueError('servo setpoint is not finite: refused (state unchanged)')
        m = ref_a.shape[0]
        if m > MAX_BLOCK:      # long runs in blocks: the block maps grow as m^2
            for j in range(0, m, MAX_BLOCK):
                e = min(j + MAX_BLOCK, m)
                self._run_block(ref_p[j:e + 1], ref_v[j:e + 1], ref_a[j:e])
            return
        self._run_block(ref_p, ref_v, ref_a)

    def _run_block(self, ref_p, ref_v, ref_a) -> None:
        if not self.fast_path:
            self._run_steps(ref_p, ref_v, ref_a)
            return
        m = ref_a.shape[0]
        big_p, big_k, c, d = self._linear_maps(m)
        u = np.stack([ref_p[:m], ref_v[:m], ref_a], axis=1).reshape(3 * m, -1)
        x0 = np.stack([self.position, self.velocity])
        x = (big_p @ x0 + big_k @ u).reshape(m + 1, 2, -1)
        p_all, v_all = x[:, 0], x[:, 1]
        a_all = c[0] * p_all[:m] + c[1] * v_all[:m] + d[0] * ref_p[:m] + d[1] * ref_v[:m] + d[2] * ref_a
        lo, hi = self._bounds(p_all[:m], v_all[:m])
        if np.all(a_all >= lo) and np.all(a_all <= hi) and np.all(np.abs(a_all) <= self.a_max):
            self.position, self.velocity, self.acceleration = p_all[m].copy(), v_all[m].copy(), a_all[-1].copy()
            return
        self._run_steps(ref_p, ref_v, ref_a)

    def _run_steps(self, ref_p, ref_v, ref_a) -> None:
        """The reference step loop (limits active)."""
        h = self.h
        p, v = self.position, self.velocity
        a = self.acceleration
        kp, kv, kvff, kaff = self.kp, self.kv, self.kvff, self.kaff
        for j in range(ref_a.shape[0]):
            a_cmd = kaff * ref_a[j] + kp * (ref_p[j] - p) + kv * (kvff * ref_v[j] - v)
            a = self._limit(a_cmd)
            p = p + v * h + 0.5 * h * h * a
            v = v + a * h
            self.position, self.velocity = p, v
        self.acceleration = a

    def follow(self, t0: float, n_servo: int, knot_t, knot_p, knot_v=None) -> None:
        """Track a knot trajectory (see ``sample_knots``) for ``n_servo`` servo periods from t0.

        Times are relative to any origin shared by t0 and knot_t (the mock uses seconds since
        its start time to keep float resolution)."""
        m = n_servo * self.config.internal_steps
        t = t0 + self.h * np.arange(m + 1)
        ref_p, ref_v = sample_knots_numpy(knot_t, knot_p, knot_v, t)
        ref_a = None if knot_v is not None else np.zeros((m, self.n))
        self.run(ref_p, ref_v, ref_a)

    def hold(self, n_servo: int, setpoint) -> None:
        """Hold ``setpoint`` with zero velocity feedforward (a drive whose command stream stopped)."""
        m = n_servo * self.config.internal_steps
        sp = np.broadcast_to(np.asarray(setpoint, dtype=float), (m + 1, self.n))
        self.run(sp, np.zeros((m + 1, self.n)), np.zeros((m, self.n)))
