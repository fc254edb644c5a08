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

``LoadProfile.sample`` is one compiled call (``load_profiles_kernel``: a block of 40 samples of
the seed-000 load in 10.6 us against 95.6 us in numpy, calibration about 0.9 s);
``LoadProfileNumpy`` (``load_profiles_numpy``) is its oracle (test/unit/test_load_profiles_compiled.py).
"""
from __future__ import annotations

from typing import Iterable

import numpy as np

from hil_core.ft import load_profiles_kernel as _k
# the components' validation and pushes, the noise hash, the oracle: shared with the numpy twin
from hil_core.ft.load_profiles_numpy import (COMPONENT_TYPES, LoadProfileNumpy, hashed_normal,  # noqa: F401
                                            mains_axes)


def warm_up() -> float:
    """Compile or load the sampling kernel (hil_core.warmup; every profile's constructor does);
    seconds taken (0.0 when done already)."""
    return _k.warm_up()


class LoadProfile(LoadProfileNumpy):
    """Sum of load components; deterministic from ``seed``. ``sample`` is one compiled call
    (``load_profiles_kernel``; the constructor compiles it or loads it from the cache, as
    :func:`warm_up` does ahead of any profile); ``LoadProfileNumpy`` is its oracle."""

    def __init__(self, components: Iterable[dict], seed: int = 0):
        super().__init__(components, seed)
        self._comps, self._push_rows, self._seeds = self._pack()
        warm_up()

    def _pack(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The components as ``load_profiles_kernel`` reads them (its docstring), with the
        defaults and conversions of ``LoadProfileNumpy.sample``."""
        comps = np.zeros((len(self.components), _k.N_COLS))
        seeds = np.zeros(len(self.components), dtype=np.uint64)
        push_tables, rows = [], 0
        pushes = iter(self._pushes)
        for i, c in enumerate(self.components):
            kind = c['type']
            row = comps[i]
            row[_k.KIND_COL] = _k.KIND[kind]
            row[_k.AXIS] = int(c.get('axis', 0))
            row[_k.AMP] = float(c.get('amplitude', {'impulses': 10.0, 'steps': 10.0}.get(kind, 1.0)))
            if kind == 'constant':
                row[_k.VEC:_k.VEC + 6] = np.asarray(c.get('wrench', [0.0] * 6), dtype=float)
            elif kind == 'impulses':
                row[_k.P0:_k.P3 + 1] = (float(c.get('start', 1.0)), float(c.get('period', 5.0)),
                                        int(c.get('count', 4)), float(c.get('width', 0.02)))
            elif kind == 'steps':
                row[_k.P0:_k.P2 + 1] = float(c.get('start', 1.0)), float(c.get('period', 2.0)), int(c.get('count', 4))
            elif kind == 'chirp':
                row[_k.P0:_k.P3 + 1] = (float(c.get('f0', 0.1)), float(c.get('f1', 10.0)), float(c.get('start', 0.0)),
                                        float(c.get('duration', 10.0)))
            elif kind == 'pushes':
                table = next(pushes)
                row[_k.P0], row[_k.P1] = rows, table.shape[0]
                push_tables.append(table)
                rows += table.shape[0]
            elif kind == 'noise':
                row[_k.P0] = float(c.get('rate', 1600.0))
                row[_k.VEC:_k.VEC + 6] = np.broadcast_to(np.asarray(c.get('std', 0.1), dtype=float), (6,))
                seeds[i] = self.noise_seed(c) & 0xFFFFFFFF
            elif kind == 'mains':
                row[_k.P0], row[_k.P1] = float(c.get('frequency', 50.0)), int(c.get('harmonics', 1))
                for a in mains_axes(c):
                    row[_k.VEC + a] += 1
        table = np.ascontiguousarray(np.vstack(push_tables)) if push_tables else np.zeros((0, 8))
        return comps, table, seeds

    def sample(self, t) -> np.ndarray:
        """Wrenches (N, 6) at times ``t`` (N,) in seconds."""
        t = np.ascontiguousarray(np.atleast_1d(np.asarray(t, dtype=float)))
        out = np.empty((t.shape[0], 6))
        _k.sample_kernel(t, self._comps, self._push_rows, self._seeds, out)
        return out


class GridSampler:
    """A profile's wrenches at sample ``index * period_ns`` (profile time), computed a block of
    ``block`` samples at a time: a frame takes its 4 samples from the block in memory. Each value
    is the profile's own at the same time (an integer number of nanoseconds, converted the same
    way). ``prefetch`` computes the next block ahead, where the caller has time (the F/T node:
    after the frame's deliveries), and ``sample`` takes it when it gets there; the values are the
    same either way.

    Why blocks and prefetch: with the profile in numpy, sampling 4 values cost about as many
    calls as sampling 40 (69 us against 77 us), and a block of 40 took 0.4-0.55 ms in the running
    graph at twice the pace on a slow core (calibration 0.82-0.88 s), every tenth frame, at the
    head of the chain. The profile is compiled now (10.6 us a block alone); both stay, as a
    block's cost still grows with the profile's components."""

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
