"""numba kernel of the braking tail (``hil_core.space.command_stream``): one call per joint
sample of the space plant (1 kHz).

It repeats the plain-numpy oracle's arithmetic (``command_stream_numpy.braking_tail``) with
scalar loops over the joints (the same expressions in the same order, so the same numbers bit
for bit: test/unit/test_space_command_stream.py), and writes into arrays the caller gives: the
numpy version's two dozen whole-array operations on 7 values took 28 us a sample, more than the
law itself. The stop times are kept sorted and unique by insertion (at most one per joint).

Signature fixed (read-only any-layout float64 vectors, int64 times, C-contiguous outputs),
compiled or loaded from the on-disk cache by :func:`warm_up` and then frozen: another type is a
TypeError, never a compilation in a real-time frame.
"""
from __future__ import annotations

import math

from numba import types

from hil_core.maths.jit import FrozenKernels, njit_cached


BAD_LIMITS = -1
BAD_COMMAND = -2


@njit_cached
def tail(q_next, v, a, period_ns, grid_ns, min_span_ns, stop, knots, times, pos, vel):
    """Write the tail's points into ``times`` (n + 2,), ``pos`` and ``vel`` (n + 2, n), with
    ``stop`` and ``knots`` (n + 1,) as scratch; returns the number of points, or BAD_LIMITS when
    an ``a`` is not positive and finite, BAD_COMMAND when a ``q_next`` or ``v`` is not finite."""
    n = v.shape[0]
    for i in range(n):
        if not (a[i] > 0.0 and a[i] < math.inf):
            return BAD_LIMITS
        if not (math.isfinite(v[i]) and math.isfinite(q_next[i])):
            return BAD_COMMAND
    m = 0
    for i in range(n):
        if v[i] != 0.0:
            steps = math.ceil(abs(v[i]) / a[i] * 1e9 / grid_ns - 1e-9)
            if steps < 1.0:                      # np.maximum(steps, moving): a moving joint, one step
                steps = 1.0
            stop[i] = int(steps) * grid_ns
            # insert into the sorted unique knots
            k = 0
            while k < m and knots[k] < stop[i]:
                k += 1
            if k == m or knots[k] != stop[i]:
                for j in range(m, k, -1):
                    knots[j] = knots[j - 1]
                knots[k] = stop[i]
                m += 1
        else:
            stop[i] = 0
    end = min_span_ns - period_ns
    if m > 0 and knots[m - 1] > end:
        end = knots[m - 1]
    if (m == 0 or end > knots[m - 1]) and end > 0:
        knots[m] = end
        m += 1
    for r in range(m + 1):
        tau = 0 if r == 0 else knots[r - 1]
        times[r] = tau + period_ns
        for i in range(n):
            if v[i] != 0.0:
                T = stop[i] * 1e-9
                s = min(tau * 1e-9, T)
                vel[r, i] = v[i] * (1.0 - s / T)
                pos[r, i] = q_next[i] + (v[i] * s - 0.5 * v[i] / T * s * s)
            else:
                vel[r, i] = 0.0
                pos[r, i] = q_next[i] + 0.0
    return m + 1


_V = types.Array(types.float64, 1, 'A', readonly=True)
_I = types.Array(types.int64, 1, 'C')
_M = types.Array(types.float64, 2, 'C')
SIGNATURES = {
    tail: [(_V, _V, _V, types.int64, types.int64, types.int64, _I, _I, _I, _M, _M)],
}
KERNELS = FrozenKernels(SIGNATURES)
warm_up = KERNELS.warm_up
ready = KERNELS.ready
