"""Load time histories for the mock F/T sensor (seed 000: impulse loads on a joystick, random
joystick pushes, the drives' 50 Hz noise and its multiples, sensor noise).

A :class:`LoadProfile` is a sum of components, each a pure function of time, so
``sample(t)`` is vectorised over any (N,) array of times, returns (N, 6) wrenches
``[fx, fy, fz, tx, ty, tz]`` and gives the same numbers for the same seed whatever the call
order or batching (noise is drawn from a counter-based hash of the sample index, not from a
stateful generator). Components are given as dicts (from ROS parameters or a YAML scenario):

* ``{type: constant, wrench: [6]}``
* ``{type: impulses, axis, amplitude, start, period, count, width}``  half-sine pulses
* ``{type: steps, axis, amplitude, start, period, count}``  levels +A, 0, -A, 0, ...
* ``{type: chirp, axis, amplitude, f0, f1, start, duration}``  linear sweep
* ``{type: pushes, rate, force, torque, duration_min, duration_max, horizon}``  random
  joystick-like pushes (Poisson times, random direction, raised-cosine shape)
* ``{type: noise, std: [6] or scalar, rate}``  white noise at ``rate`` samples/s (held)
* ``{type: mains, axis or axes, amplitude, frequency (50), harmonics}``  A sum_h sin(2 pi h f t)/h
"""
from __future__ import annotations

from typing import Iterable

import numpy as np

from hil_core.ft.filters import scipy_signal

COMPONENT_TYPES = ('constant', 'impulses', 'steps', 'chirp', 'pushes', 'noise', 'mains')
_MASK64 = np.uint64(0xFFFFFFFFFFFFFFFF)


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


class LoadProfile:
    """Sum of load components; deterministic from ``seed``."""

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
                out += hashed_normal(self.seed + 7919 * (1 + self.components.index(c)),
                                     np.floor(t * rate + 1e-6).astype(np.int64), 6) * std
            elif kind == 'mains':
                f, harmonics = float(c.get('frequency', 50.0)), int(c.get('harmonics', 1))
                wave = sum(np.sin(2.0 * np.pi * h * f * t) / h for h in range(1, harmonics + 1))
                axes = c.get('axes', [c['axis']] if 'axis' in c else list(range(6)))
                for a in axes:
                    out[:, int(a)] += float(c.get('amplitude', 1.0)) * wave
        return out

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


class GridSampler:
    """A profile's wrenches at sample ``index * period_ns`` (profile time), computed a block of
    ``block`` samples at a time: a frame takes its 4 samples from the block in memory. Sampling 4
    values costs about as many numpy calls as sampling 40 (69 us against 77 us here), and the
    simulated sensor did that every 2.5 ms frame, at the head of the chain: now 11 us per frame
    on average. Blocks of 400 cost less on average but took 0.5-0.7 ms in a running graph, one
    frame in a hundred, long enough to make that frame's chain late. Each value is the profile's
    own at the same time (an integer number of nanoseconds, converted the same way).

    A block of 40 still took 0.4-0.55 ms in the running graph at twice the pace on a slow core
    (calibration 0.82-0.88 s), every tenth frame, at the head of the chain. ``prefetch`` computes
    the next block ahead, where the caller has time (the F/T node: after the frame's deliveries),
    and ``sample`` takes it when it gets there; the values are the same either way."""

    def __init__(self, profile: LoadProfile, period_ns: int, block: int = 40):
        self.profile, self.period_ns, self.block = profile, int(period_ns), int(block)
        self._first = None                  # index of the first sample in the block in memory
        self._values = np.zeros((0, 6))
        self._next: tuple[int, np.ndarray] | None = None    # (first index, values): the next block

    def _block(self, first: int) -> np.ndarray:
        ks = np.arange(first, first + self.block, dtype=np.int64)
        return self.profile.sample(ks * self.period_ns * 1e-9)

    def sample(self, index: np.ndarray) -> np.ndarray:
        """Wrenches (N, 6) at the integer sample indices ``index`` (N,)."""
        index = np.asarray(index, dtype=np.int64)
        out = np.empty((index.shape[0], 6))
        for i, k in enumerate(index.tolist()):
            if self._first is None or not 0 <= k - self._first < self.block:
                first = k // self.block * self.block
                if self._next is not None and self._next[0] == first:
                    self._first, self._values = self._next
                else:
                    self._first, self._values = first, self._block(first)
                self._next = None
            out[i] = self._values[k - self._first]
        return out

    def prefetch_due(self) -> bool:
        """Whether the block after the one in memory is still to compute."""
        return self._first is not None and self._next is None

    def prefetch(self) -> None:
        """Compute the block after the one in memory, for ``sample`` to take."""
        if self.prefetch_due():
            first = self._first + self.block
            self._next = (first, self._block(first))


def sample_stamps_between(prev_ns: int | None, now_ns: int, period_ns: int) -> np.ndarray:
    """Sample times k * period_ns (int ns) in (prev_ns, now_ns]; only now's sample if prev is None.

    A lockstep source publishes exactly these on a /clock tick, so with a 2.5 ms frame and a
    0.625 ms sample period every tick carries 4 samples, the last one stamped t_k, and integer
    nanoseconds never drift.
    """
    last = now_ns // period_ns
    first = last if prev_ns is None else prev_ns // period_ns + 1
    return np.arange(first, last + 1, dtype=np.int64) * period_ns


def check_dropout(values) -> str | None:
    """Problem text of a ``sensor_dropout`` [a, b] window, or None."""
    values = list(values)
    return None if len(values) == 2 and values[1] >= values[0] else \
        '[start, end] in seconds with end >= start ([0, 0] = none)'


def load_scenario_file(path, seed: int = 0) -> tuple[LoadProfile, tuple[float, float]]:
    """A YAML load scenario (``seed``, ``components`` list, optional ``sensor_dropout``) ->
    (profile, dropout window). The same file drives the mock F/T node and the F/T node's
    in-process ``sim`` source, so both give the same samples for the same file."""
    import pathlib

    import yaml

    path = pathlib.Path(path).expanduser()
    if not path.is_file():
        raise ValueError(f"load scenario '{path}' does not exist")
    spec = yaml.safe_load(path.read_text()) or {}
    if not isinstance(spec.get('components'), list):
        raise ValueError(f"load scenario '{path}': needs a 'components' list")
    dropout = (0.0, 0.0)
    if 'sensor_dropout' in spec:
        problem = check_dropout(spec['sensor_dropout'])
        if problem:
            raise ValueError(f"load scenario '{path}': sensor_dropout {problem}")
        dropout = tuple(float(v) for v in spec['sensor_dropout'])
    return LoadProfile(spec['components'], seed=int(spec.get('seed', seed))), dropout


def dropout_mask(stamps_ns: np.ndarray, origin_ns: int, dropout: tuple[float, float]) -> np.ndarray:
    """True for samples outside the dropout window [a, b] (s of profile time)."""
    a, b = dropout
    if not b > a:
        return np.ones(stamps_ns.shape, dtype=bool)
    t = (stamps_ns - origin_ns) * 1e-9
    return (t < a) | (t > b)
