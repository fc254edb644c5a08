"""numba kernel of the LuGre joint friction step (``hil_core.drives.joint_friction``): one call
per joint-simulation step (1 kHz in the iiwa mock).

It repeats the plain-numpy oracle's arithmetic (``JointFrictionNumpy.step``) operation by
operation (same order, no fast math, numpy's NaN rules for maximum / clip / sign), with scalar
loops over the joints instead of whole-array operations: the same bracket, the same first
guess, the same safeguarded Newton iteration (bisection to the bracket midpoint when Newton
leaves the bracket or is not finite), the same convergence test *over all joints at once*
(every joint keeps iterating until all have converged, as the array code does) and the same
iteration limit. Compiled and numpy results therefore agree to rounding
(test/unit/test_joint_friction_compiled.py), though not bit for bit: numpy's vectorised exp
(AVX-512 builds) and the C library's exp used here differ in the last bit for a few % of
arguments, and the Newton iteration ends at the rounding floor of its residual.

Signature is fixed (read-only, any-layout float64 arrays, float64 h, int64 iterations) and
compiled or loaded from the on-disk cache by :func:`warm_up`; after that the dispatcher cannot
compile any more, so a caller passing another type gets a TypeError instead of a compilation
in a real-time frame.
"""
from __future__ import annotations

import math

from numba import types

from hil_core.maths.jit import FrozenKernels, njit_cached

# rows of the parameter matrix (6, n)
FC, FS, VS, SIGMA0, SIGMA1, SIGMA2 = range(6)
# rows of the output matrix (ROWS, n): the results, then the kernel's scratch
V_NEXT, Z_NEXT, F_NEXT, _LO, _HI, _DV, _G = range(7)
ROWS = 7


@njit_cached
def _maximum(a, b):
    """np.maximum of two floats (NaN in either gives NaN)."""
    return a if (a > b or a != a) else b


@njit_cached
def _minimum(a, b):
    """np.minimum of two floats (NaN in either gives NaN)."""
    return a if (a < b or a != a) else b


@njit_cached
def _sign(v):
    """np.sign of a float: -1, 0 (for +-0), 1, NaN for NaN."""
    if v > 0.0:
        return 1.0
    if v < 0.0:
        return -1.0
    if v == 0.0:
        return 0.0
    return v


@njit_cached
def _phi(v, v_k, tau, z0, g, c, s01, sigma0, sigma1, sigma2, h):
    """(residual, its derivative, z(v)) of one joint: JointFrictionNumpy._z_of and phi."""
    a = sigma0 * abs(v) * h / g
    sv = _sign(v)
    zss = sv * g / sigma0
    e = math.exp(-a)
    z = zss + (z0 - zss) * e
    dz = (g / sigma0 - sv * z0) * e * sigma0 * h / g
    f = c * (v - v_k) + s01 * z - sigma1 * z0 / h + sigma2 * v - tau
    df = c + s01 * dz + sigma2
    return f, df, z


@njit_cached
def step(params, z0, v_k, tau, m, h, iterations, out):
    """One friction step of n joints (JointFrictionNumpy.step).

    params (6, n): rows fc, fs, vs, sigma0, sigma1, sigma2; z0, v_k, tau, m (n,); h the step;
    iterations the Newton limit; writes out (ROWS, n): rows v_next, z_next, f_next (the rows
    after them are scratch). Returns the number of Newton iterations run."""
    n = z0.size
    for i in range(n):
        fc, fs, vs, sigma0, sigma1, sigma2 = (params[FC, i], params[FS, i], params[VS, i], params[SIGMA0, i],
                                              params[SIGMA1, i], params[SIGMA2, i])
        r = v_k[i] / vs
        g = fc + (fs - fc) * math.exp(-(r * r))
        zmax = _maximum(g / sigma0, abs(z0[i]))
        c = m[i] / h
        s01 = sigma0 + sigma1 / h
        base = tau[i] + c * v_k[i] + sigma1 * z0[i] / h
        lo = (base - s01 * zmax) / (c + sigma2)
        hi = (base + s01 * zmax) / (c + sigma2)
        v0 = (tau[i] + c * v_k[i] - sigma0 * z0[i]) / (c + sigma0 * h + sigma1 + sigma2)
        out[V_NEXT, i] = _minimum(_maximum(v0, lo), hi)
        out[_LO, i] = lo
        out[_HI, i] = hi
        out[_G, i] = g
    done = 0
    for it in range(iterations):
        converged = True
        for i in range(n):
            sigma0, sigma1, sigma2 = params[SIGMA0, i], params[SIGMA1, i], params[SIGMA2, i]
            v = out[V_NEXT, i]
            f, df, _ = _phi(v, v_k[i], tau[i], z0[i], out[_G, i], m[i] / h, sigma0 + sigma1 / h,
                            sigma0, sigma1, sigma2, h)
            if f < 0:
                out[_LO, i] = v
            if f > 0:
                out[_HI, i] = v
            dv = f / df
            out[_DV, i] = dv
            if not abs(dv) <= 1e-12 * (1.0 + abs(v)):
                converged = False
        done = it + 1
        if converged:
            for i in range(n):
                out[V_NEXT, i] = out[V_NEXT, i] - out[_DV, i]
            break
        for i in range(n):
            v_new = out[V_NEXT, i] - out[_DV, i]
            lo, hi = out[_LO, i], out[_HI, i]
            if v_new < lo or v_new > hi or not math.isfinite(v_new):
                out[V_NEXT, i] = 0.5 * (lo + hi)
            else:
                out[V_NEXT, i] = v_new
    for i in range(n):
        sigma0, sigma1, sigma2 = params[SIGMA0, i], params[SIGMA1, i], params[SIGMA2, i]
        v = out[V_NEXT, i]
        _, _, z = _phi(v, v_k[i], tau[i], z0[i], out[_G, i], m[i] / h, sigma0 + sigma1 / h,
                       sigma0, sigma1, sigma2, h)
        out[Z_NEXT, i] = z
        out[F_NEXT, i] = sigma0 * z + sigma1 * (z - z0[i]) / h + sigma2 * v
    return done


_V1 = types.Array(types.float64, 1, 'A', readonly=True)
_M2 = types.Array(types.float64, 2, 'A', readonly=True)
_OUT = types.Array(types.float64, 2, 'C')
SIGNATURES = {
    step: [(_M2, _V1, _V1, _V1, _V1, types.float64, types.int64, _OUT)],
}
KERNELS = FrozenKernels(SIGNATURES)
warm_up = KERNELS.warm_up
ready = KERNELS.ready
