"""The load profiles' sampling in plain numpy (``LoadProfileNumpy``), kept as the test oracle of
the compiled one (``hil_core.ft.load_profiles.LoadProfile``, test/unit/test_load_profiles_compiled.py),
and what both share: the components' validation, the pushes drawn from the seed, the
counter-based noise hash. The components are documented in ``hil_core.ft.load_profiles``.
"""
from __future__ import annotations

from typing import Iterable

import numpy as np

from hil_core.ft.filters import scipy_signal

COMPONENT_TYPES = ('constant', 'impulses', 'steps', 'chirp', 'pushes', 'noise', 'mains')


def _splitmix64(x: np.ndarray) -> np.ndarray:
    """Counter-based hash (splitmix64 finaliser): uint64 -> well-mixed uint64."""
    with np.errstate(over='ignore'):
        z = x + np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))


def hashed_normal(seed: int, index: np.ndarray, channels: int) -> np.ndarray:
    """Standard normal values N(0,1) at integer ``index`` (N,) for ``channels`` columns."""
    idx = np.asarray(index, dtype=np.int64).astype(np.uint64)[:, None]
    ch = np.arange(channels, dtype=np.uint64)[None, :]
    with np.errstate(over='ignore'):
        base = _splitmix64(np.uint64(seed & 0xFFFFFFFF) * np.uint64(0x100000001B3) + ch * np.uint64(2 ** 40))
        h1 = _splitmix64(base ^ (idx * np.uint64(2)))
        h2 = _splitmix64(base ^ (idx * np.uint64(2) + np.uint64(1)))
    u1 = ((h1 >> np.uint64(11)).astype(np.float64) + 0.5) / 2.0 ** 53
    u2 = ((h2 >> np.uint64(11)).astype(np.float64) + 0.5) / 2.0 ** 53
    return np.sqrt(-2.0 * np.log(u1)) * np.cos(2.0 * np.pi * u2)   # Box-Muller


def _axis_column(n: int, axis: int, values: np.ndarray) -> np.ndarray:
    out = np.zeros((n, 6))
    out[:, int(axis)] = values
    return out


def mains_axes(c: dict) -> list[int]:
    """The axes a mains component adds to (``axes``, else ``axis``, else all six)."""
    return [int(a) for a in c.get('axes', [c['axis']] if 'axis' in c else list(range(6)))]


class LoadProfileNumpy:
    """Sum of load components; deterministic from ``seed``. ``sample`` in numpy: the oracle of the
    compiled ``load_profiles.LoadProfile``, which has the same constructor."""

    def __init__(self, components: Iterable[dict], seed: int = 0):
        self.seed = int(seed)
        self.components = [dict(c) for c in components]
        rng = np.random.default_rng(self.seed)
        self._pushes = []
        for i, c in enumerate(self.components):
            kind = c.get('type')
            if kind not in COMPONENT_TYPES:
                raise ValueError(f'load component {i}: unknown type {kind!r}; expected one of {COMPONENT_TYPES}')
            if 'axis' in c and not 0 <= int(c['axis']) <= 5:
                raise ValueError(f'load component {i}: axis {c["axis"]} must be 0..5')
            if kind == 'mains' and not all(0 <= a <= 5 for a in mains_axes(c)):
                raise ValueError(f'load component {i}: axes {c["axes"]} must be in 0..5')
            if kind == 'pushes':
                self._pushes.append(self._draw_pushes(c, rng))

    @staticmethod
    def _draw_pushes(c: dict, rng: np.random.Generator) -> np.ndarray:
        """Rows [t0, duration, fx, fy, fz, tx, ty, tz]: push times and peak wrenches."""
        rate, horizon = float(c.get('rate', 1.0)), float(c.get('horizon', 60.0))
        times = np.cumsum(rng.exponential(1.0 / rate, size=int(rate * horizon * 2 + 10)))
        times = times[times < horizon] + float(c.get('start', 0.0))
        n = times.size
        durations = rng.uniform(float(c.get('duration_min', 0.1)), float(c.get('duration_max', 0.5)), n)
        dirs = rng.normal(size=(n, 3))
        dirs /= np.linalg.norm(dirs, axis=1, keepdims=True)
        tdirs = rng.normal(size=(n, 3))
        tdirs /= np.linalg.norm(tdirs, axis=1, keepdims=True)
        mags = rng.uniform(0.2, 1.0, size=(n, 1))
        peak = np.hstack([dirs * mags * float(c.get('force', 20.0)), tdirs * mags * float(c.get('torque', 1.0))])
        return np.column_stack([times, durations, peak])

    def sample(self, t) -> np.ndarray:
        """Wrenches (N, 6) at times ``t`` (N,) in seconds."""
        t = np.atleast_1d(np.asarray(t, dtype=float))
        n = t.shape[0]
        out = np.zeros((n, 6))
        pushes = iter(self._pushes)
        for c in self.components:
            kind = c['type']
            if kind == 'constant':
                out += np.asarray(c.get('wrench', [0.0] * 6), dtype=float)[None, :]
            elif kind == 'impulses':
                out += _axis_column(n, c.get('axis', 0), self._impulses(c, t))
            elif kind == 'steps':
                out += _axis_column(n, c.get('axis', 0), self._steps(c, t))
            elif kind == 'chirp':
                t0, dur = float(c.get('start', 0.0)), float(c.get('duration', 10.0))
                inside = (t >= t0) & (t <= t0 + dur)
                wave = scipy_signal().chirp(t - t0, f0=float(c.get('f0', 0.1)), t1=dur, f1=float(c.get('f1', 10.0)),
                                            method='linear', phi=-90.0)
                out += _axis_column(n, c.get('axis', 0), float(c.get('amplitude', 1.0)) * wave * inside)
            elif kind == 'pushes':
                out += self._push_sum(next(pushes), t)
            elif kind == 'noise':
                rate = float(c.get('rate', 1600.0))
                std = np.broadcast_to(np.asarray(c.get('std', 0.1), dtype=float), (6,))
                out += hashed_normal(self.noise_seed(c), np.floor(t * rate + 1e-6).astype(np.int64), 6) * std
            elif kind == 'mains':
                f, harmonics = float(c.get('frequency', 50.0)), int(c.get('harmonics', 1))
                wave = sum(np.sin(2.0 * np.pi * h * f * t) / h for h in range(1, harmonics + 1))
                for a in mains_axes(c):
                    out[:, int(a)] += float(c.get('amplitude', 1.0)) * wave
        return out

    def noise_seed(self, c: dict) -> int:
        """The hash seed of a noise component (its place in the list: the first equal one's)."""
        return self.seed + 7919 * (1 + self.components.index(c))

    @staticmethod
    def _impulses(c: dict, t: np.ndarray) -> np.ndarray:
        t0, period = float(c.get('start', 1.0)), float(c.get('period', 5.0))
        count, width = int(c.get('count', 4)), float(c.get('width', 0.02))
        k = np.floor((t - t0) / period)
        tau = t - t0 - k * period
        on = (k >= 0) & (k < count) & (tau < width)
        return float(c.get('amplitude', 10.0)) * np.sin(np.pi * tau / width) * on

    @staticmethod
    def _steps(c: dict, t: np.ndarray) -> np.ndarray:
        t0, period, count = float(c.get('start', 1.0)), float(c.get('period', 2.0)), int(c.get('count', 4))
        k = np.floor((t - t0) / period)
        levels = np.array([1.0, 0.0, -1.0, 0.0])
        on = (k >= 0) & (k < count)
        return float(c.get('amplitude', 10.0)) * levels[np.mod(k, 4).astype(int)] * on

    @staticmethod
    def _push_sum(pushes: np.ndarray, t: np.ndarray) -> np.ndarray:
        if pushes.size == 0:
            return np.zeros((t.shape[0], 6))
        tau = (t[:, None] - pushes[None, :, 0]) / pushes[None, :, 1]       # (N, M) phase in [0, 1]
        shape = np.where((tau >= 0) & (tau <= 1), 0.5 * (1.0 - np.cos(2.0 * np.pi * tau)), 0.0)
        return shape @ pushes[:, 2:]
