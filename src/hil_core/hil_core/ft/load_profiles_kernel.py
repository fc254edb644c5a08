"""Compiled (numba) sampling of a load profile (``hil_core.ft.load_profiles.LoadProfile``): one
call for a block of sample times, every component inside.

Why: the simulated F/T source samples its profile a block of 40 samples at a time
(``GridSampler``). In numpy that is about 50 calls on (40, 6) arrays (the noise hash alone 20):
77 us alone, and 0.4-0.55 ms in the running one-process graph, every tenth frame (calibration
0.82-0.88 s), about 4 % of the container's CPU at pace 1 (py-spy, 2026-11-29). Here a block is
one loop over its samples.

The arithmetic is that of ``load_profiles_numpy.LoadProfileNumpy.sample``, element by element in
the same order: the components are added in their list order, each as numpy computes it
(``hashed_normal``'s uint64 hash wraps the same way, Box-Muller's log and cos from the C library
instead of numpy's, and the pushes' sum over the pushes in their order where numpy's matrix
product may group them differently). Tests: test/unit/test_load_profiles_compiled.py, to 1e-12.

Packed components (``comps``, float64, one row each, ``N_COLS`` columns): the kind code (``KIND``)
in column 0, then by kind:

* constant: the wrench in ``VEC`` .. ``VEC + 5``;
* impulses: axis, amplitude, start, period, count, width (``AXIS``, ``AMP``, ``P0`` ..);
* steps: axis, amplitude, start, period, count;
* chirp: axis, amplitude, f0, f1, start, duration;
* pushes: the first row of its pushes in ``pushes`` (``P0``) and their number (``P1``); a push row
  is [t0, duration, fx, fy, fz, tx, ty, tz];
* noise: rate (``P0``), std in ``VEC`` ..; its hash seed (masked to 32 bits, as numpy's) in ``seeds``;
* mains: amplitude, frequency (``P0``), harmonics (``P1``), and in ``VEC`` .. how many times each
  axis is listed (each listing adds the wave once, as numpy's loop over the axes does).
"""
from __future__ import annotations

import math

import numpy as np
from numba import types

from hil_core.maths.jit import FrozenKernels, njit_cached

KIND = {'constant': 0, 'impulses': 1, 'steps': 2, 'chirp': 3, 'pushes': 4, 'noise': 5, 'mains': 6}
KIND_COL, AXIS, AMP, P0, P1, P2, P3, VEC = 0, 1, 2, 3, 4, 5, 6, 7
N_COLS = VEC + 6

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_SEED_MUL = np.uint64(0x100000001B3)
_CHANNEL_STEP = np.uint64(2 ** 40)
_S11, _S27, _S30, _S31 = np.uint64(11), np.uint64(27), np.uint64(30), np.uint64(31)
_ONE, _TWO = np.uint64(1), np.uint64(2)


@njit_cached
def _splitmix64(x):
    z = x + _GOLDEN
    z = (z ^ (z >> _S30)) * _MIX1
    z = (z ^ (z >> _S27)) * _MIX2
    return z ^ (z >> _S31)


@njit_cached
def _normal(seed, index, channel):
    """``load_profiles_numpy.hashed_normal``'s value at (index, channel)."""
    base = _splitmix64(seed * _SEED_MUL + np.uint64(channel) * _CHANNEL_STEP)
    idx = np.uint64(index)
    h1 = _splitmix64(base ^ (idx * _TWO))
    h2 = _splitmix64(base ^ (idx * _TWO + _ONE))
    u1 = (np.float64(h1 >> _S11) + 0.5) / 2.0 ** 53
    u2 = (np.float64(h2 >> _S11) + 0.5) / 2.0 ** 53
    return math.sqrt(-2.0 * math.log(u1)) * math.cos(2.0 * np.pi * u2)


@njit_cached
def sample_kernel(t, comps, pushes, seeds, out):
    """Fill ``out`` (N, 6) with the profile's wrenches at the times ``t`` (N,) in seconds."""
    n, n_comp = t.shape[0], comps.shape[0]
    acc = np.zeros(6)
    for i in range(n):
        ti = t[i]
        for j in range(6):
            acc[j] = 0.0
        for c in range(n_comp):
            row = comps[c]
            kind = int(row[KIND_COL])
            if kind == 0:                                   # constant
                for j in range(6):
                    acc[j] += row[VEC + j]
            elif kind == 1:                                 # impulses: half sines
                t0, period, count, width = row[P0], row[P1], row[P2], row[P3]
                k = math.floor((ti - t0) / period)
                tau = ti - t0 - k * period
                on = 1.0 if (k >= 0 and k < count and tau < width) else 0.0
                acc[int(row[AXIS])] += row[AMP] * math.sin(np.pi * tau / width) * on
            elif kind == 2:                                 # steps: +A, 0, -A, 0
                t0, period, count = row[P0], row[P1], row[P2]
                k = math.floor((ti - t0) / period)
                phase = int(k - 4.0 * math.floor(k / 4.0))
                level = 1.0 if phase == 0 else (-1.0 if phase == 2 else 0.0)
                on = 1.0 if (k >= 0 and k < count) else 0.0
                acc[int(row[AXIS])] += row[AMP] * level * on
            elif kind == 3:                                 # chirp: scipy.signal.chirp, linear, phi -90 deg
                f0, f1, t0, dur = row[P0], row[P1], row[P2], row[P3]
                inside = 1.0 if (ti >= t0 and ti <= t0 + dur) else 0.0
                tt = ti - t0
                beta = (f1 - f0) / dur
                phase = 2 * np.pi * (f0 * tt + 0.5 * beta * tt * tt)
                wave = math.cos(phase + (-90.0 * (np.pi / 180)))
                acc[int(row[AXIS])] += row[AMP] * wave * inside
            elif kind == 4:                                 # pushes: raised cosines
                first, count = int(row[P0]), int(row[P1])
                for j in range(6):
                    s = 0.0
                    for m in range(first, first + count):
                        tau = (ti - pushes[m, 0]) / pushes[m, 1]
                        shape = 0.5 * (1.0 - math.cos(2.0 * np.pi * tau)) if (tau >= 0 and tau <= 1) else 0.0
                        s += shape * pushes[m, 2 + j]
                    acc[j] += s
            elif kind == 5:                                 # noise: white, held at its rate
                index = np.int64(math.floor(ti * row[P0] + 1e-6))
                for j in range(6):
                    acc[j] += _normal(seeds[c], index, j) * row[VEC + j]
            else:                                           # mains: A sum_h sin(2 pi h f t) / h
                f, harmonics = row[P0], int(row[P1])
                wave = 0.0
                for h in range(1, harmonics + 1):
                    wave += math.sin(2.0 * np.pi * h * f * ti) / h
                for j in range(6):
                    for _ in range(int(row[VEC + j])):
                        acc[j] += row[AMP] * wave
        for j in range(6):
            out[i, j] = acc[j]


_F1 = types.float64[::1]
_F2 = types.float64[:, ::1]
KERNELS = FrozenKernels({sample_kernel: [(_F1, _F2, _F2, types.uint64[::1], _F2)]})
warm_up = KERNELS.warm_up
