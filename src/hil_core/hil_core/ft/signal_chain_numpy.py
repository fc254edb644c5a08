"""The F/T signal chain in plain Python/numpy: ``SignalChainNumpy``, the test oracle of the
compiled ``signal_chain.SignalChain`` (same interface and numbers; test/unit/test_ft_compiled.py),
with what both share: the configuration (``ChainConfig``), the per-sample output
(``ChainOutput``), the reason codes and the payload gravity wrench.

What the chain does (validity, hold, payload gravity compensation, bias, Butterworth low-pass
and notch, decimation) is described in ``signal_chain``, the public module.
"""
from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from hil_core.ft.filters import StreamFilter, design_sos, group_delay_s

MINI45_RANGE = (580.0, 580.0, 1160.0, 20.0, 20.0, 20.0)   # ATI mini45 SI-580-20 (N, N m)
VALID, OUT_OF_ORDER, NONFINITE, SATURATED, SPIKE, STATUS = range(6)
REASONS = ('valid', 'out_of_order', 'nonfinite', 'saturated', 'spike', 'status')


def gravity_wrench(R, mass: float, cog, gravity=(0.0, 0.0, -9.81)) -> np.ndarray:
    """Wrench of a static payload seen by the sensor: [R^T m g, p x (R^T m g)], (..., 6).

    R (..., 3, 3) rotates sensor-frame vectors into the base frame, cog p is in the sensor frame.
    """
    R = np.asarray(R, dtype=float)
    f = mass * (np.swapaxes(R, -1, -2) @ np.asarray(gravity, dtype=float))
    p0, p1, p2 = (float(v) for v in cog)
    f0, f1, f2 = f[..., 0], f[..., 1], f[..., 2]
    # p x f written out: np.cross costs ~50 us per call on small arrays
    t = np.stack([p1 * f2 - p2 * f1, p2 * f0 - p0 * f2, p0 * f1 - p1 * f0], axis=-1)
    return np.concatenate([f, t], axis=-1)


@dataclass
class ChainConfig:
    sample_rate: float = 1600.0           # Hz, input rate (filter design)
    publish_rate: float = 400.0           # Hz
    cutoff_hz: float = 40.0               # seed 000: 40 Hz, about 6 ms delay
    order: int = 2
    notch_hz: float = 0.0                 # 0 = no notch; 50 for the drives' mains noise
    notch_q: float = 30.0
    bias_samples: int = 200
    payload_mass: float = 0.0             # kg
    payload_cog: tuple = (0.0, 0.0, 0.0)  # m, sensor frame
    gravity: tuple = (0.0, 0.0, -9.81)    # m/s^2, base frame
    sensing_range: tuple = MINI45_RANGE
    spike_factor: float = 10.0            # 0 disables spike detection
    spike_floor: tuple = (5.0, 0.5)       # N, N m: smallest jump scale
    spike_window: int = 200               # samples of the running jump scale
    spike_max_run: int = 16               # a jump that persists this long is a real step
    stale_timeout: float = 0.05           # s without a valid sample -> stop publishing
    decimation: str = 'grid'              # 'grid' (stamp multiple of the period) or 'count'

    def __post_init__(self):
        if self.publish_rate <= 0 or self.publish_rate > self.sample_rate:
            raise ValueError(f'publish_rate {self.publish_rate} must be in (0, sample_rate={self.sample_rate}]')
        if self.decimation not in ('grid', 'count'):
            raise ValueError(f"decimation must be 'grid' or 'count', got {self.decimation!r}")
        if len(self.sensing_range) != 6 or min(self.sensing_range) <= 0:
            raise ValueError('sensing_range needs 6 positive values')


@dataclass
class ChainOutput:
    """Per input sample: reason code, held/compensated input, filtered value, publish flag."""
    stamps: np.ndarray                    # (N,) int ns
    reason: np.ndarray                    # (N,) int, VALID or the rejection reason
    raw: np.ndarray                       # (N, 6) compensated unfiltered input (held when invalid)
    filtered: np.ndarray                  # (N, 6), NaN for rejected out-of-order samples
    publish: np.ndarray                   # (N,) bool: on the publish grid and not stale

    @property
    def valid(self) -> np.ndarray:
        return self.reason == VALID


def rotate_wrench(R, w) -> np.ndarray:
    """Express wrenches (..., 6) given in sensor axes in base axes: [R f, R t] (same point)."""
    w = np.asarray(w, dtype=float)
    R = np.asarray(R, dtype=float)
    return np.concatenate([w[..., :3] @ R.T, w[..., 3:] @ R.T], axis=-1)


class Published(NamedTuple):
    """What a block of samples publishes: raw rows (stamps, (n, 6)), filtered rows on the publish
    grid (stamps, (m, 6)), both in the output frame, and how many samples were rejected. (A named
    tuple: made every frame, where a frozen dataclass's fields cost a call each.)"""
    raw_stamps: list
    raw: np.ndarray
    stamps: list
    filtered: np.ndarray
    rejected: int


def published_numpy(out: ChainOutput, R, raw_all: bool, rotate: bool) -> Published:
    """The rows of ``out`` that are published (``signal_chain.published``, the oracle): raw at
    the valid samples (all with ``raw_all``, else those on the publish grid), filtered on the
    grid, turned into the base axes by the sensor's orientation ``R`` with ``rotate``."""
    valid = out.valid
    raw_rows = np.flatnonzero(valid if raw_all else valid & out.publish)
    rows = np.flatnonzero(out.publish)
    raw, filtered = out.raw[raw_rows], out.filtered[rows]
    if rotate:
        raw, filtered = rotate_wrench(R, raw), rotate_wrench(R, filtered)
    return Published(out.stamps[raw_rows].tolist(), raw, out.stamps[rows].tolist(), filtered,
                     int(np.count_nonzero(~valid)))


def block_arrays(stamps_ns, x_si) -> tuple[np.ndarray, np.ndarray]:
    """A block's (N,) int64 stamps and (N, 6) float samples (one sample may come as (6,)), or
    ValueError naming both shapes."""
    t = np.atleast_1d(np.asarray(stamps_ns, dtype=np.int64))
    x = np.asarray(x_si, dtype=float)
    if x.ndim == 1:
        x = x[None, :]
    if x.ndim != 2 or x.shape[1] != 6 or x.shape[0] != t.shape[0]:
        raise ValueError(f'process needs (N,) stamps and (N, 6) samples, got {t.shape} and {np.shape(x_si)}')
    return t, x


def configure_chain(chain, cfg: ChainConfig) -> None:
    """What both chains derive from their configuration (filter, grid, limits, zero bias)."""
    chain.cfg = cfg
    chain.sos = design_sos(cfg.order, cfg.cutoff_hz, cfg.sample_rate, cfg.notch_hz, cfg.notch_q)
    chain.filter = StreamFilter(chain.sos)
    chain.period_ns = int(round(1e9 / cfg.publish_rate))
    chain.decimate_every = max(1, int(round(cfg.sample_rate / cfg.publish_rate)))
    chain.stale_ns = int(round(cfg.stale_timeout * 1e9))
    chain.range = np.asarray(cfg.sensing_range, dtype=float)
    chain.bias = np.zeros(6)


class SignalChainNumpy:
    """Stateful chain in Python/numpy (the oracle); feed it with :meth:`process` in stamp order."""

    def __init__(self, cfg: ChainConfig):
        configure_chain(self, cfg)
        self._bias_buf: deque = deque(maxlen=int(cfg.bias_samples))
        self.counters = {r: 0 for r in REASONS}
        self.last_stamp: int | None = None
        self.last_valid_stamp: int | None = None
        self._last_valid_x: np.ndarray | None = None   # SI input of the last valid sample
        self._held: np.ndarray | None = None           # compensated input fed to the filter
        self._range_list = [float(v) for v in cfg.sensing_range]
        self._no_payload = np.zeros(6)
        self._eye = np.eye(3)
        self._last_valid_list: list[float] = []
        self._jump_scale = [float(v) for v in cfg.spike_floor]
        self._spike_run = 0
        self._count = 0

    # --- configuration-time figures ------------------------------------------------------------
    def delay_estimate(self, f_hi: float = 7.0) -> float:
        """Mean analytic group delay (s) over 0..f_hi Hz (seed 000: about 6 ms at 40 Hz)."""
        return float(np.mean(group_delay_s(self.sos, np.linspace(0.0, f_hi, 15), self.cfg.sample_rate)))

    # --- bias ------------------------------------------------------------------------------------
    def tare(self) -> tuple[bool, str]:
        """Software bias = mean of the last ``bias_samples`` valid compensated samples."""
        need = self._bias_buf.maxlen
        if len(self._bias_buf) < need:
            return False, f'bias needs {need} valid samples, only {len(self._bias_buf)} available'
        self.bias = np.mean(np.asarray(self._bias_buf), axis=0)
        return True, 'bias set from {} samples: [{}]'.format(need, ', '.join(f'{v:.4g}' for v in self.bias))

    def clear_bias(self) -> None:
        self.bias = np.zeros(6)

    # --- processing ------------------------------------------------------------------------------
    def _classify(self, t: int, x: np.ndarray, flagged: bool) -> int:
        # plain Python floats: six numbers do not pay numpy's per-call overhead
        if self.last_stamp is not None and t <= self.last_stamp:
            return OUT_OF_ORDER
        xs = x.tolist()
        if not all(map(math.isfinite, xs)):
            return NONFINITE
        if any(abs(v) >= r for v, r in zip(xs, self._range_list)):
            return SATURATED
        if flagged:
            return STATUS
        if self.cfg.spike_factor > 0 and self._last_valid_x is not None:
            last = self._last_valid_list
            jf = math.sqrt((xs[0] - last[0]) ** 2 + (xs[1] - last[1]) ** 2 + (xs[2] - last[2]) ** 2)
            jt = math.sqrt((xs[3] - last[3]) ** 2 + (xs[4] - last[4]) ** 2 + (xs[5] - last[5]) ** 2)
            floor_f, floor_t = self.cfg.spike_floor
            k = self.cfg.spike_factor
            if jf > k * max(self._jump_scale[0], floor_f) or jt > k * max(self._jump_scale[1], floor_t):
                self._spike_run += 1
                if self._spike_run < self.cfg.spike_max_run:
                    return SPIKE
                self._jump_scale = [floor_f, floor_t]    # a real step: accept it, restart the scale
            else:
                w = 1.0 / self.cfg.spike_window
                self._jump_scale = [self._jump_scale[0] + (jf - self._jump_scale[0]) * w,
                                    self._jump_scale[1] + (jt - self._jump_scale[1]) * w]
        self._spike_run = 0
        return VALID

    def process(self, stamps_ns, x_si, R=None, flagged=None) -> ChainOutput:
        """Run (N,) stamps and (N, 6) SI samples through the chain.

        ``R`` (3, 3) or (N, 3, 3): sensor orientation for gravity compensation (identity if
        None). ``flagged`` (N,) bool: samples the source marked bad (status word).
        """
        t, x = block_arrays(stamps_ns, x_si)
        n = t.shape[0]
        cfg = self.cfg
        if cfg.payload_mass == 0.0:
            g = self._no_payload
        elif R is None or np.ndim(R) == 2:   # one orientation for the whole block: one row
            g = self._gravity_row(self._eye if R is None else R)
        else:
            g = gravity_wrench(R, cfg.payload_mass, cfg.payload_cog, cfg.gravity)
        per_row = g.ndim == 2
        reason = np.empty(n, dtype=np.int64)
        u = np.zeros((n, 6))
        alive = np.zeros(n, dtype=bool)      # a filter input exists for this sample
        fresh = np.zeros(n, dtype=bool)      # within stale_timeout of the last valid sample
        for i in range(n):
            r = self._classify(int(t[i]), x[i], bool(flagged[i]) if flagged is not None else False)
            reason[i] = r
            self.counters[REASONS[r]] += 1
            if r == OUT_OF_ORDER:
                continue
            self.last_stamp = int(t[i])
            if r == VALID:
                comp = x[i] - (g[i] if per_row else g)
                self._bias_buf.append(comp)
                self._held = comp - self.bias
                self._last_valid_x = x[i].copy()
                self._last_valid_list = self._last_valid_x.tolist()
                self.last_valid_stamp = int(t[i])
            if self._held is not None:
                u[i] = self._held
                alive[i] = True
                fresh[i] = int(t[i]) - self.last_valid_stamp <= self.stale_ns
        y = np.full((n, 6), np.nan)      # NaN where no filter output exists (never published)
        idx = np.flatnonzero(alive) if n > 1 else np.arange(int(alive[0]))
        if idx.size:
            if not self.filter.initialised:
                self.filter.reset(u[idx[0]])
            y[idx] = self.filter.step(u[idx[0]])[None, :] if idx.size == 1 else self.filter.block(u[idx])
        publish = fresh.copy()
        if cfg.decimation == 'grid':
            publish &= (t % self.period_ns) == 0
        else:
            for i in idx:
                self._count += 1
                publish[i] = (self._count % self.decimate_every) == 0
        return ChainOutput(stamps=t, reason=reason, raw=u, filtered=y, publish=publish)

    def _gravity_row(self, R) -> np.ndarray:
        """gravity_wrench for one (3, 3) R in plain floats (a third of the numpy cost)."""
        (r00, r01, r02), (r10, r11, r12), (r20, r21, r22) = np.asarray(R, dtype=float).tolist()
        m = self.cfg.payload_mass
        gx, gy, gz = self.cfg.gravity
        f0 = m * (r00 * gx + r10 * gy + r20 * gz)
        f1 = m * (r01 * gx + r11 * gy + r21 * gz)
        f2 = m * (r02 * gx + r12 * gy + r22 * gz)
        p0, p1, p2 = self.cfg.payload_cog
        return np.array([f0, f1, f2, p1 * f2 - p2 * f1, p2 * f0 - p0 * f2, p0 * f1 - p1 * f0])

    def is_stale(self, now_ns: int) -> bool:
        return bool(self.last_valid_stamp is None or now_ns - self.last_valid_stamp > self.stale_ns)
