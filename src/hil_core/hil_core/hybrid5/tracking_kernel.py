"""Compiled (numba) 10 kHz control cycle of the hybrid robot, float64.

Profile (cProfile, bench/hybrid5.py's cycle over the AGH path, 4000 cycles): 88-124 us per
cycle, about 40% in the path sample (``PathTrajectory.sample_cycle``: a searchsorted, a
Profile cast and ~30 numpy operations on 1-element arrays in ``_geometry``), the rest in ~60
small Python calls (IK with derivatives, encoder counts, FK, leg model, two CTMs with their
integrators, list building). No single part is heavy: it is interpreter overhead. Here the
path is flattened once into arrays (``PathTable``) and one compiled call does trajectory ->
IK with derivatives -> measurement -> FK -> model -> both CTMs with the nonlinear integrator.

The arithmetic follows ``trajectory``, ``kinematics``, ``dynamics`` and ``control`` term by
term in float64 (the float32 study keeps the Python code, which rounds every operation to
float32). Transcendentals (pow, sin, cos) come from libm here and may differ by an ulp from
numpy's vectorised ones; tests: test/unit/test_hybrid5_compiled.py.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from .kinematics import SQRT3_2
from .params import G0

TWO_SQRT3 = float(2 * np.sqrt(3.0))
INF = math.inf
# gains array slots (one per axis group)
KP, KV, KI, INV_TS, RES, VRES, TS, XI1, TC, TC2, EC, SMAX, VZERO, PLAIN = range(14)
N_GAINS = 14
# controller state: float (s, t_c, q_prev per axis) and int (has_prev, boosts, sg, counts_prev)
# output buffer of ``cycle_kernel``
O_F, O_TAU, O_LD, O_VD, O_AD, O_TH, O_W, O_E, O_P, O_ELEG, O_ETAB = 0, 3, 5, 8, 11, 14, 16, 18, 20, 23, 26
N_OUT = 28


class PathTable:
    """A PathTrajectory flattened into arrays for the compiled sampler (float64)."""

    def __init__(self, path):
        n = len(path.segments)
        self.Ts, self.n_cycles = float(path.Ts), int(path.n_cycles)
        self.k0 = np.ascontiguousarray(path.k0, dtype=np.int64)
        self.prof = np.array([[p.L, p.V, p.Tj, p.Ta, p.Tv, p.j, p.a_p] for p in path.profiles], dtype=float)
        self.kind = np.zeros(n, dtype=np.int64)
        self.axes = np.zeros((n, 3), dtype=np.int64)
        self.geo = np.zeros((n, 12))
        f = np.float64
        for i, seg in enumerate(path.segments):
            g = self.geo[i]
            g[8:10] = seg.ang0.astype(f)
            g[10:12] = (seg.ang1 - seg.ang0).astype(f)
            if seg.kind == 'line':               # trajectory._geometry, line branch
                d = (seg.end - seg.start).astype(f)
                if float(np.linalg.norm(seg.end - seg.start)) < 1e-12:
                    d = d * 0
                g[0:3] = (seg.start + path.origin).astype(f)
                g[3:6] = d
            else:                                # arc: base point, angles, radius, rise
                self.kind[i] = 1
                a, b, nn = seg.axes
                self.axes[i] = (a, b, nn)
                ea, eb, en = (np.eye(3, dtype=f)[k] for k in (a, b, nn))
                g[0:3] = path.origin.astype(f) + f(seg.center[a]) * ea + f(seg.center[b]) * eb + f(seg.start[nn]) * en
                g[3], g[4], g[5] = seg.theta0, seg.sweep, seg.radius
                g[6] = f(seg.end[nn] - seg.start[nn])


@njit(cache=True)
def _accel(tau, j, Tj, Ta, a_p, V):
    if tau < Tj:
        return j * math.pow(tau, 3.0) / 6, j * tau * tau / 2, j * tau
    if tau < Ta - Tj:
        t = tau - Tj
        v1 = j * Tj * Tj / 2
        return j * math.pow(Tj, 3.0) / 6 + v1 * t + a_p * t * t / 2, v1 + a_p * t, a_p
    sg = Ta - tau
    return V * Ta / 2 - V * sg + j * math.pow(sg, 3.0) / 6, V - j * sg * sg / 2, j * sg


@njit(cache=True)
def _profile(tau, pr):
    """trajectory.profile_scalar: (s, sdot, sddot) at local time tau."""
    L, V, Tj, Ta, Tv, j, a_p = pr[0], pr[1], pr[2], pr[3], pr[4], pr[5], pr[6]
    T = 2 * Ta + Tv
    if tau <= 0:
        return 0 * tau, 0 * tau, 0 * tau
    if tau >= T:
        return L + 0 * tau, 0 * tau, 0 * tau
    if tau < Ta:
        return _accel(tau, j, Tj, Ta, a_p, V)
    if tau <= Ta + Tv:
        return V * Ta / 2 + V * (tau - Ta), V + 0 * tau, 0 * tau
    s, v, a = _accel(T - tau, j, Tj, Ta, a_p, V)
    return L - s, v, -a


@njit(cache=True)
def sample_kernel(k, Ts, n_cycles, k0, prof, kind, axes, geo, out):
    """PathTrajectory.sample_cycle(k) into out[0:9] (p, v, a) and out[9:15] (ang, rate, acc)."""
    k = min(max(k, 0), n_cycles - 1)
    lo, hi = 0, k0.size                  # searchsorted(k0, k, side='right') - 1
    while lo < hi:
        mid = (lo + hi) // 2
        if k0[mid] <= k:
            lo = mid + 1
        else:
            hi = mid
    i = lo - 1
    pr = prof[i]
    s, sd, sdd = _profile(float(k - k0[i]) * Ts, pr)
    L = pr[0]
    g = geo[i]
    sl, sdl, sddl = s / L, sd / L, sdd / L
    for c in range(2):
        out[9 + c] = g[8 + c] + g[10 + c] * sl
        out[11 + c] = g[10 + c] * sdl
        out[13 + c] = g[10 + c] * sddl
    if kind[i] == 0:
        for c in range(3):
            out[c] = g[c] + g[3 + c] * sl
            out[3 + c] = g[3 + c] * sdl
            out[6 + c] = g[3 + c] * sddl
        return
    a, b, n = axes[i, 0], axes[i, 1], axes[i, 2]
    w = g[4] / L
    th = g[3] + w * s
    c, sn = math.cos(th), math.sin(th)
    rad = g[5]
    hL = g[6] / L
    dpa, dpb, dpn = -rad * sn * w, rad * c * w, hL
    ddpa, ddpb = -rad * c * w * w, -rad * sn * w * w
    out[a], out[b], out[n] = g[a] + rad * c, g[b] + rad * sn, g[n] + hL * s
    out[3 + a], out[3 + b], out[3 + n] = dpa * sd, dpb * sd, dpn * sd
    out[6 + a], out[6 + b], out[6 + n] = ddpa * (sd * sd) + dpa * sdd, ddpb * (sd * sd) + dpb * sdd, dpn * sdd


@njit(cache=True)
def ik_kernel(p, v, a, R, out):
    """kinematics.ik_derivatives_scalar into out[0:9] = (l1..3, ld1..3, ldd1..3)."""
    x, y, z, vx, vy, vz, ax, ay, az = p[0], p[1], p[2], v[0], v[1], v[2], a[0], a[1], a[2]
    c = SQRT3_2 * R
    half = R / 2
    vv = vx * vx + vy * vy + vz * vz
    zv, za = z * vz, z * az
    for i in range(3):
        dx = x if i == 0 else (x - c if i == 1 else x + c)
        dy = y - R if i == 0 else y + half
        l = (dx * dx + dy * dy + z * z) ** 0.5
        ld = (dx * vx + dy * vy + zv) / l
        out[i] = l
        out[3 + i] = ld
        out[6 + i] = (vv + dx * ax + dy * ay + za - ld * ld) / l


@njit(cache=True)
def _measure(q_raw, gains, ist, fst, n, q, v):
    """CTM.measure: encoder counts (resolution > 0) or raw values; backward-difference rate.
    ist: [has_prev, boosts, sg (n), counts_prev (n)]; fst: [s (n), t_c (n), q_prev (n)]."""
    res = gains[RES]
    has_prev = ist[0] != 0
    for i in range(n):
        if res > 0:
            cnt = round(q_raw[i] / res)
            prev = ist[2 + n + i] if has_prev else cnt
            ist[2 + n + i] = cnt
            q[i] = float(cnt) * gains[RES]
            v[i] = float(cnt - prev) * gains[VRES]
        else:
            qi = q_raw[i]
            prev_f = fst[2 * n + i] if has_prev else qi
            fst[2 * n + i] = qi
            q[i] = qi
            v[i] = (qi - prev_f) * gains[INV_TS]
    ist[0] = 1


@njit(cache=True)
def _ctm_update(q_d, v_d, a_d, q, v, M, G, gains, ist, fst, n, u, e_out):
    """CTM.update with NonlinearIntegrator.update (eq. 28-35)."""
    Ts = gains[TS]
    for i in range(n):
        ei = q_d[i] - q[i]
        e_out[i] = ei
        if gains[PLAIN] != 0:
            fst[i] = fst[i] + ei * Ts
        else:
            vd = v_d[i]
            sg = 1 if vd > gains[VZERO] else (-1 if vd < -gains[VZERO] else 0)      # eq. 35
            if sg != ist[2 + i]:                                                  # eq. 34
                ist[2 + i] = sg
                fst[n + i] = 0.0
                ist[1] += 1
            else:
                fst[n + i] = fst[n + i] + Ts                                      # eq. 33
            tc = fst[n + i]
            if tc <= gains[TC2]:                                                  # eq. 31
                phi_t = gains[XI1]
            elif tc <= gains[TC] and abs(ei) >= gains[EC]:
                phi_t = 2.0 * gains[XI1] * (1.0 - tc / gains[TC])
            else:
                phi_t = 0.0
            s = fst[i] + (phi_t + 1.0) * ei * Ts                                  # eq. 29-30
            smax = gains[SMAX]
            fst[i] = smax if s > smax else (-smax if s < -smax else s)
    for i in range(n):
        e_v = v_d[i] - v[i]
        u[i] = M[i] * (a_d[i] + gains[KP] * e_out[i] + gains[KV] * e_v + gains[KI] * fst[i]) + G[i]


@njit(cache=True)
def cycle_kernel(l_raw, th_raw, ref, R, model, gl, il, fl, gt, it, ft, out):
    """One control cycle on a joint reference ref (15: l, ld, ldd, th, w, e) into out
    (F, tau, e_leg, e_table at O_F, O_TAU, O_ELEG, O_ETAB). model = (m_p, m_s, J_r, m_g, J44,
    J55, m4r4 g)."""
    q = np.empty(3)
    v = np.empty(3)
    _measure(l_raw, gl, il, fl, 3, q, v)
    qt = np.empty(2)
    vt = np.empty(2)
    _measure(th_raw, gt, it, ft, 2, qt, vt)
    # kinematics.fk_scalar (eq. 12-15)
    q1, q2, q3 = q[0] * q[0], q[1] * q[1], q[2] * q[2]
    x = (q3 - q2) / (TWO_SQRT3 * R)
    y = (q2 + q3 - 2.0 * q1) / (6.0 * R)
    yr = y - R
    z2 = q1 - x * x - yr * yr
    z = z2 ** 0.5 if z2 > 0 else z2 * np.nan
    # dynamics.leg_model_scalar (eq. 23-24)
    m_p, m_s, J_r, m_g = model[0], model[1], model[2], model[3]
    c = SQRT3_2 * R
    half = R / 2
    d = np.empty((3, 3))
    d[0, 0], d[0, 1], d[0, 2] = x, y - R, z
    d[1, 0], d[1, 1], d[1, 2] = x - c, y + half, z
    d[2, 0], d[2, 1], d[2, 2] = x + c, y + half, z
    l2 = np.empty(3)
    inv_l2 = np.empty(3)
    for i in range(3):
        l2[i] = d[i, 0] * d[i, 0] + d[i, 1] * d[i, 1] + d[i, 2] * d[i, 2]
        inv_l2[i] = 1 / l2[i]
    s_inv = inv_l2[0] + inv_l2[1] + inv_l2[2]
    cols = np.empty((3, 3))
    for i in range(3):
        j, k = (i + 1) % 3, (i + 2) % 3
        ax, ay, az = d[j, 0], d[j, 1], d[j, 2]
        bx, by, bz = d[k, 0], d[k, 1], d[k, 2]
        cols[i, 0], cols[i, 1], cols[i, 2] = ay * bz - az * by, az * bx - ax * bz, ax * by - ay * bx
    det = d[0, 0] * cols[0, 0] + d[0, 1] * cols[0, 1] + d[0, 2] * cols[0, 2]
    mg = m_g * G0
    M = np.empty(3)
    G = np.empty(3)
    for i in range(3):
        s = l2[i] ** 0.5 / det
        cx, cy, cz = cols[i, 0], cols[i, 1], cols[i, 2]
        jj = s * s * (cx * cx + cy * cy + cz * cz)
        M[i] = m_s + m_p * jj + J_r * (jj * s_inv - inv_l2[i])
        G[i] = mg * s * cz
    _ctm_update(ref[0:3], ref[3:6], ref[6:9], q, v, M, G, gl, il, fl, 3, out[O_F:O_F + 3], out[O_ELEG:O_ELEG + 3])
    Mt = np.empty(2)
    Gt = np.empty(2)
    Mt[0], Mt[1] = model[4], model[5]
    Gt[0], Gt[1] = model[6] * math.sin(qt[0]), 0.0
    _ctm_update(ref[9:11], ref[11:13], ref[13:15], qt, vt, Mt, Gt, gt, it, ft, 2, out[O_TAU:O_TAU + 2],
                out[O_ETAB:O_ETAB + 2])


@njit(cache=True)
def path_cycle_kernel(k, l_raw, th_raw, R, model, gl, il, fl, gt, it, ft, Ts, n_cycles, k0, prof, kind,
                      axes, geo, out):
    """Trajectory sample + IK with derivatives + ``cycle_kernel``: the whole cycle k. Fills the
    reference (l, ld, ldd at O_LD.., th, w, e at O_TH.., p at O_P) and the outputs."""
    smp = np.empty(15)
    sample_kernel(k, Ts, n_cycles, k0, prof, kind, axes, geo, smp)
    ref = np.empty(15)
    ik_kernel(smp[0:3], smp[3:6], smp[6:9], R, ref)
    for c in range(6):
        ref[9 + c] = smp[9 + c]                    # table_inverse: the angles as they are
    for c in range(9):
        out[O_LD + c] = ref[c]
    for c in range(6):
        out[O_TH + c] = ref[9 + c]
    for c in range(3):
        out[O_P + c] = smp[c]
    cycle_kernel(l_raw, th_raw, ref, R, model, gl, il, fl, gt, it, ft, out)


@njit(cache=True)
def reference_kernel(k, R, Ts, n_cycles, k0, prof, kind, axes, geo, out):
    """Joint reference of cycle k into out (18): l, ld, ldd (9), th, w, e (6), p (3)."""
    smp = np.empty(15)
    sample_kernel(k, Ts, n_cycles, k0, prof, kind, axes, geo, smp)
    ik_kernel(smp[0:3], smp[3:6], smp[6:9], R, out)
    for c in range(6):
        out[9 + c] = smp[9 + c]
    for c in range(3):
        out[15 + c] = smp[c]


def reference(table: PathTable, k: int, R: float):
    """((l, ld, ldd), (th, w, e), p) lists (p an array) of cycle k: the form
    ``HybridController.desired`` and ``motion`` hand to the controller."""
    buf = np.empty(18)
    reference_kernel(int(k), R, table.Ts, table.n_cycles, table.k0, table.prof, table.kind, table.axes,
                     table.geo, buf)
    r = buf.tolist()
    return (r[0:3], r[3:6], r[6:9]), (r[9:11], r[11:13], r[13:15]), buf[15:18]


def gains_array(gains, Ts: float, resolution: float, plain: bool) -> np.ndarray:
    """The float64 constants of CTM / NonlinearIntegrator (control.py, f = float)."""
    g = np.zeros(N_GAINS)
    g[KP], g[KV], g[KI] = gains.Kp, gains.Kv, gains.Ki
    g[INV_TS], g[RES], g[VRES], g[TS] = 1.0 / Ts, float(resolution), float(resolution / Ts), float(Ts)
    g[XI1], g[TC], g[TC2] = float(gains.xi - 1.0), float(gains.Tc), float(gains.Tc / 2)
    g[EC], g[SMAX], g[VZERO], g[PLAIN] = float(gains.e_c), float(gains.s_max), float(gains.v_zero), float(plain)
    return g


def new_state(n: int) -> tuple[np.ndarray, np.ndarray]:
    """(int state, float state) of one axis group at reset: no previous sample, sg 0, t_c inf."""
    ist = np.zeros(2 + 2 * n, dtype=np.int64)
    fst = np.zeros(3 * n)
    fst[n:2 * n] = INF
    return ist, fst
