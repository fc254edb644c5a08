"""numba kernels of the servo drive model (``hil_core.drives.servo``) and of the knot sampling
(``hil_core.drives.joint_trajectory_legacy.sample_knots``): one call per frame.

They repeat the plain-numpy oracle's arithmetic operation by operation (same order, no fast
math), so compiled and numpy results agree to rounding (test/unit/test_servo_compiled.py):

* ``sample``: the setpoint between knots (cubic Hermite with velocities, linear without,
  held outside the knot span with zero velocity);
* ``replan``: the knots of a trajectory made active in a frame (``replan_knots``): the setpoint
  at that moment, then the trajectory's points after it;
* the servo step loop of ``ServoAxesNumpy._run_steps`` (limits always evaluated). The numpy
  class first tries the unconstrained closed loop as one matrix product; that is the same
  loop up to rounding, so there is no such fast path here: 20 scalar loop updates per axis
  cost less than the matrix product's call overhead.

Each entry point writes the new state into ``out`` (3, n) (rows position, velocity, applied
acceleration) and returns a status; the caller's state is untouched unless it is OK, which is
how a refused setpoint leaves the axes where they were. UNUSUAL (knot times not finite or not
strictly increasing, a non-finite time) means "let the numpy oracle do it": its behaviour on
such input (a ValueError, or its own NaN handling) is the reference and is not duplicated.

Signatures are fixed (read-only, any-layout float64 arrays) and compiled or loaded from the
on-disk cache by :func:`warm_up`; after that the dispatchers cannot compile any more, so a
caller passing another type gets a TypeError instead of a compilation in a real-time frame.
"""
from __future__ import annotations

import math

import numpy as np
from numba import types

from hil_core.maths.jit import FrozenKernels, njit_cached

OK, NOT_FINITE, UNUSUAL = 0, 1, 2
# gains vector: kp, kv, kvff, kaff, h
KP, KV, KVFF, KAFF, H = range(5)
# limits rows: p_min, p_max, v_max, a_max


@njit_cached
def _knots_usual(knot_t):
    """Finite, strictly increasing knot times (what validated messages give)."""
    for k in range(knot_t.size):
        if not math.isfinite(knot_t[k]):
            return False
        if k > 0 and not knot_t[k] > knot_t[k - 1]:
            return False
    return True


@njit_cached
def _basis(knot_t, t):
    """Where time t falls and its interpolation weights, shared by all axes.

    (seg, dt, outside, s, Hermite weights h00 h10 h01 h11, their derivatives d00 d10 d01 d11),
    computed as numpy's clip / searchsorted(side='right') and the oracle's formulas give them."""
    k = knot_t.size
    lo, hi = knot_t[0], knot_t[k - 1]
    outside = t < lo or t > hi
    tc = min(max(t, lo), hi)
    count = 0                                   # knots <= tc (searchsorted right)
    while count < k and knot_t[count] <= tc:
        count += 1
    seg = min(max(count - 1, 0), k - 2)
    t0, t1 = knot_t[seg], knot_t[seg + 1]
    s = (tc - t0) / (t1 - t0)
    s2 = s * s
    s3 = s * s * s
    return (seg, t1 - t0, outside, s,
            2.0 * s3 - 3.0 * s2 + 1.0, s3 - 2.0 * s2 + s, -2.0 * s3 + 3.0 * s2, s3 - s2,
            6.0 * s2 - 6.0 * s, 3.0 * s2 - 4.0 * s + 1.0, -6.0 * s2 + 6.0 * s, 3.0 * s2 - 2.0 * s)


@njit_cached
def _value(knot_p, knot_v, has_v, b, i):
    """Setpoint (position, velocity) of axis i at a time with basis b (``_basis``)."""
    seg, dt, outside, s, h00, h10, h01, h11, d00, d10, d01, d11 = b
    p0, p1 = knot_p[seg, i], knot_p[seg + 1, i]
    if not has_v:
        vel = (p1 - p0) / dt
        return p0 + s * (p1 - p0), 0.0 if outside else vel
    v0, v1 = knot_v[seg, i] * dt, knot_v[seg + 1, i] * dt      # tangents in the unit parameter
    pos = h00 * p0 + h10 * v0 + h01 * p1 + h11 * v1
    vel = (d00 * p0 + d10 * v0 + d01 * p1 + d11 * v1) / dt
    return pos, 0.0 if outside else vel


@njit_cached
def sample(knot_t, knot_p, knot_v, has_v, t, out_p, out_v):
    """Setpoints at times t into out_p, out_v (len(t), n); status OK or UNUSUAL."""
    n = knot_p.shape[1]
    if knot_t.size < 2:
        for j in range(t.size):
            for i in range(n):
                out_p[j, i] = knot_p[0, i]
                out_v[j, i] = 0.0
        return OK
    if not _knots_usual(knot_t):
        return UNUSUAL
    for j in range(t.size):
        if not math.isfinite(t[j]):
            return UNUSUAL
        b = _basis(knot_t, t[j])
        for i in range(n):
            out_p[j, i], out_v[j, i] = _value(knot_p, knot_v, has_v, b, i)
    return OK


@njit_cached
def replan(knot_t, knot_p, knot_v, has_v, sp_p, sp_v, sample_sp, times, pos, vel, has_new_v, start, now,
           out_t, out_p, out_v):
    """The knots of an accepted trajectory made active at ``now`` (``replan_knots``): the setpoint
    at ``now`` (sampled from the current knots with ``sample_sp``, else ``sp_p``/``sp_v``: the
    measured state), then the points at ``start + times`` later than ``now + 1e-12``, into
    out_t (K + 1,), out_p, out_v (K + 1, n). Returns the rows written (at least 2), 0 when no
    point is later (the caller holds the last one) or -1 when the current knots are UNUSUAL
    for ``sample`` (the numpy oracle decides)."""
    n = knot_p.shape[1]
    if sample_sp:                               # ``sample`` at the one time ``now``, into row 0
        at = np.empty(1)
        at[0] = now
        if sample(knot_t, knot_p, knot_v, has_v, at, out_p[:1], out_v[:1]) != OK:
            return -1
    else:
        for i in range(n):
            out_p[0, i] = sp_p[i]
            out_v[0, i] = sp_v[i]
    out_t[0] = now
    rows = 1
    for k in range(times.size):
        t = start + times[k]
        if t > now + 1e-12:
            out_t[rows] = t
            for i in range(n):
                out_p[rows, i] = pos[k, i]
                out_v[rows, i] = vel[k, i] if has_new_v else 0.0
            rows += 1
    return rows if rows > 1 else 0


@njit_cached
def _step(p, v, rp, rv, ra, p_min, p_max, v_max, a_max, gains):
    """One loop update of one axis (ServoAxesNumpy._run_steps with _bounds and _limit)."""
    kp, kv, kvff, kaff, h = gains[KP], gains[KV], gains[KVFF], gains[KAFF], gains[H]
    a_cmd = kaff * ra + kp * (rp - p) + kv * (kvff * rv - v)
    d_hi = p_max - p - 0.5 * v * h
    d_lo = p - p_min + 0.5 * v * h
    v_hi = -np.inf                        # d < 0: too close to stop gently: brake fully
    if d_hi >= 0.0:
        v_hi = 0.5 * (-a_max * h + math.sqrt(a_max * a_max * h * h + 8.0 * a_max * d_hi))
    v_lo = np.inf
    if d_lo >= 0.0:
        v_lo = -(0.5 * (-a_max * h + math.sqrt(a_max * a_max * h * h + 8.0 * a_max * d_lo)))
    v_hi = min(v_max, v_hi)
    v_lo = max(-v_max, v_lo)
    lo, hi = (v_lo - v) / h, (v_hi - v) / h
    a = min(max(min(max(a_cmd, lo), hi), -a_max), a_max)
    return p + v * h + 0.5 * h * h * a, v + a * h, a


@njit_cached
def _start(pos, vel, acc, out):
    for i in range(pos.size):
        out[0, i], out[1, i], out[2, i] = pos[i], vel[i], acc[i]


@njit_cached
def hold(pos, vel, acc, limits, gains, m, setpoint, out):
    """m loop updates toward a fixed setpoint, no feedforward (ServoAxesNumpy.hold)."""
    _start(pos, vel, acc, out)
    for i in range(pos.size):
        if not math.isfinite(setpoint[i]):
            return NOT_FINITE
    for j in range(m):
        for i in range(pos.size):
            out[0, i], out[1, i], out[2, i] = _step(out[0, i], out[1, i], setpoint[i], 0.0, 0.0, limits[0, i],
                                                    limits[1, i], limits[2, i], limits[3, i], gains)
    return OK


@njit_cached
def follow(pos, vel, acc, limits, gains, t0, m, knot_t, knot_p, knot_v, has_v, out):
    """m loop updates along the knots from time t0 (ServoAxesNumpy.follow)."""
    if knot_t.size < 2:                 # one knot: its position, zero velocity and acceleration
        return hold(pos, vel, acc, limits, gains, m, knot_p[0], out)
    _start(pos, vel, acc, out)
    if not _knots_usual(knot_t):
        return UNUSUAL
    h = gains[H]
    n = pos.size
    ref = np.empty((2, n))              # setpoint at the step start: position, velocity
    for j in range(m + 1):              # every boundary is sampled and checked, as numpy does
        t = t0 + h * j
        if not math.isfinite(t):
            return UNUSUAL
        b = _basis(knot_t, t)
        for i in range(n):
            rp, rv = _value(knot_p, knot_v, has_v, b, i)
            if not (math.isfinite(rp) and math.isfinite(rv)):
                return NOT_FINITE
            if j > 0:                   # the step from the previous boundary to this one
                rv0 = ref[1, i]
                ra = (rv - rv0) / h if has_v else 0.0    # the setpoint's mean acceleration
                if not math.isfinite(ra):
                    return NOT_FINITE
                out[0, i], out[1, i], out[2, i] = _step(out[0, i], out[1, i], ref[0, i], rv0, ra, limits[0, i],
                                                        limits[1, i], limits[2, i], limits[3, i], gains)
            ref[0, i], ref[1, i] = rp, rv
    return OK


@njit_cached
def run(pos, vel, acc, limits, gains, ref_p, ref_v, ref_a, has_a, out):
    """Loop updates along setpoint rows (ServoAxesNumpy.run); without ref_a the mean
    acceleration diff(ref_v) / h."""
    _start(pos, vel, acc, out)
    h = gains[H]
    m = ref_a.shape[0] if has_a else ref_v.shape[0] - 1
    for r in range(ref_p.shape[0]):          # everything given is checked first, as numpy does
        for i in range(pos.size):
            if not (math.isfinite(ref_p[r, i]) and math.isfinite(ref_v[r, i])):
                return NOT_FINITE
    for j in range(m):
        for i in range(pos.size):
            ra = ref_a[j, i] if has_a else (ref_v[j + 1, i] - ref_v[j, i]) / h
            if not math.isfinite(ra):
                return NOT_FINITE
    for j in range(m):
        for i in range(pos.size):
            ra = ref_a[j, i] if has_a else (ref_v[j + 1, i] - ref_v[j, i]) / h
            out[0, i], out[1, i], out[2, i] = _step(out[0, i], out[1, i], ref_p[j, i], ref_v[j, i], ra,
                                                    limits[0, i], limits[1, i], limits[2, i], limits[3, i],
                                                    gains)
    return OK


_V1 = types.Array(types.float64, 1, 'A', readonly=True)
_V2 = types.Array(types.float64, 2, 'A', readonly=True)
_OUT = types.Array(types.float64, 2, 'C')
_STATE = (_V1, _V1, _V1, _V2, _V1)
SIGNATURES = {
    sample: [(_V1, _V2, _V2, types.boolean, _V1, _OUT, _OUT)],
    follow: [_STATE + (types.float64, types.int64, _V1, _V2, _V2, types.boolean, _OUT)],
    hold: [_STATE + (types.int64, _V1, _OUT)],
    run: [_STATE + (_V2, _V2, _V2, types.boolean, _OUT)],
    replan: [(_V1, _V2, _V2, types.boolean, _V1, _V1, types.boolean, _V1, _V2, _V2, types.boolean, types.float64,
              types.float64, types.Array(types.float64, 1, 'C'), _OUT, _OUT)],
}
KERNELS = FrozenKernels(SIGNATURES)
warm_up = KERNELS.warm_up
ready = KERNELS.ready
