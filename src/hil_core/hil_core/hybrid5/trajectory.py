"""Path generation at the control rate: G-code segments -> (position, velocity, acceleration).

Each segment runs rest-to-rest (exact stop, G61) with a jerk-limited S-curve of the path
parameter s (limits: the segment's feed, a_max, j_max): the seed samples the path at 10 kHz,
3.3 um apart at 2 m/min, one sample per control cycle. Segment j occupies control cycles
k0_j <= k < k0_j + ceil(T_j / Ts); the local time is tau = (k - k0_j) Ts, computed from the
integer cycle index (no accumulated rounding, the same in float32 and float64).

Outputs per cycle: platform p, v, a (m, m/s, m/s^2) in the parallel manipulator frame
(program coordinates + work_origin) and table (A, C) angles with rates and accelerations.
``sample_cycles`` is the vectorised form (any dtype, used by the float32 study and the
tests); ``sample_cycle`` the per-cycle scalar form a controller runs (same numbers).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .gcode import Segment


@dataclass(frozen=True)
class Profile:
    """Symmetric rest-to-rest S-curve over length L: accel phase Ta (jerk phases Tj), cruise Tv."""
    L: float
    V: float
    Tj: float
    Ta: float
    Tv: float
    j: float
    a_p: float

    @property
    def T(self) -> float:
        return 2 * self.Ta + self.Tv


def _accel_phase(V, j, a_max):
    if V * j < a_max * a_max:
        Tj = math.sqrt(V / j)
        return Tj, 2 * Tj, j * Tj
    Tj = a_max / j
    return Tj, Tj + V / a_max, a_max


def s_curve(L: float, v_max: float, a_max: float, j_max: float) -> Profile:
    if not (L > 0 and v_max > 0 and a_max > 0 and j_max > 0):
        raise ValueError('s_curve needs L, v_max, a_max, j_max > 0')
    Tj, Ta, a_p = _accel_phase(v_max, j_max, a_max)
    V = v_max
    if V * Ta > L:                      # v_max not reached: largest V with V * Ta(V) = L
        lo, hi = 0.0, v_max
        for _ in range(80):
            mid = 0.5 * (lo + hi)
            if mid * _accel_phase(mid, j_max, a_max)[1] > L:
                hi = mid
            else:
                lo = mid
        V = lo
        Tj, Ta, a_p = _accel_phase(V, j_max, a_max)
    return Profile(L, V, Tj, Ta, max(0.0, (L - V * Ta) / V), j_max, a_p)


def _accel_scalar(tau, pr: Profile):
    j, Tj, Ta, a_p, V = pr.j, pr.Tj, pr.Ta, pr.a_p, pr.V
    if tau < Tj:
        return j * tau ** 3 / 6, j * tau * tau / 2, j * tau
    if tau < Ta - Tj:
        t = tau - Tj
        v1 = j * Tj * Tj / 2
        return j * Tj ** 3 / 6 + v1 * t + a_p * t * t / 2, v1 + a_p * t, a_p
    sg = Ta - tau
    return V * Ta / 2 - V * sg + j * sg ** 3 / 6, V - j * sg * sg / 2, j * sg


def profile_scalar(tau, pr: Profile):
    """(s, sdot, sddot) at local time tau (clamped to [0, T])."""
    if tau <= 0:
        return 0 * tau, 0 * tau, 0 * tau
    if tau >= pr.T:
        return pr.L + 0 * tau, 0 * tau, 0 * tau
    if tau < pr.Ta:
        return _accel_scalar(tau, pr)
    if tau <= pr.Ta + pr.Tv:
        return pr.V * pr.Ta / 2 + pr.V * (tau - pr.Ta), pr.V + 0 * tau, 0 * tau
    s, v, a = _accel_scalar(pr.T - tau, pr)
    return pr.L - s, v, -a


def _accel_array(tau, c):
    j, Tj, Ta, a_p, V = c
    t2 = tau - Tj
    v1 = j * Tj * Tj / 2
    sg = Ta - tau
    p1 = (j * tau ** 3 / 6, j * tau * tau / 2, j * tau)
    p2 = (j * Tj ** 3 / 6 + v1 * t2 + a_p * t2 * t2 / 2, v1 + a_p * t2, a_p + 0 * tau)
    p3 = (V * Ta / 2 - V * sg + j * sg ** 3 / 6, V - j * sg * sg / 2, j * sg)
    return tuple(np.where(tau < Tj, x1, np.where(tau < Ta - Tj, x2, x3)) for x1, x2, x3 in zip(p1, p2, p3))


def profile_array(tau, c):
    """Vectorised ``profile_scalar``; c = per-sample (L, V, Tj, Ta, Tv, j, a_p) arrays."""
    L, V, Tj, Ta, Tv, j, a_p = c
    T = 2 * Ta + Tv
    tau = np.clip(tau, 0 * tau, T)
    acc = _accel_array(tau, (j, Tj, Ta, a_p, V))
    dec = _accel_array(T - tau, (j, Tj, Ta, a_p, V))
    cru = (V * Ta / 2 + V * (tau - Ta), V + 0 * tau, 0 * tau)
    out = []
    for k, (xa, xc, xd) in enumerate(zip(acc, cru, dec)):
        xd = L - xd if k == 0 else (xd if k == 1 else -xd)
        out.append(np.where(tau < Ta, xa, np.where(tau <= Ta + Tv, xc, xd)))
    return tuple(out)


class PathTrajectory:
    """The whole program as a sequence of S-curve segments sampled at Ts."""

    def __init__(self, segments: list[Segment], Ts: float, a_max: float, j_max: float,
                 angular_speed: float, origin=(0.0, 0.0, 0.0)):
        if not segments:
            raise ValueError('empty path')
        self.Ts, self.segments, self.origin = float(Ts), segments, np.asarray(origin, float)
        self.profiles, self.geo, k0 = [], [], [0]
        for s in segments:
            if s.kind == 'line':
                L = float(np.linalg.norm(s.end - s.start))
                rotary = L < 1e-12      # pure table move: s in radians at the angular speed
                if rotary:
                    L = float(np.linalg.norm(s.ang1 - s.ang0))
                pr = s_curve(L, angular_speed if rotary else s.feed, a_max, j_max)
            else:
                h = float(s.end[s.axes[2]] - s.start[s.axes[2]])
                L = math.hypot(s.radius * s.sweep, h)
                pr = s_curve(L, s.feed, a_max, j_max)
            self.profiles.append(pr)
            k0.append(k0[-1] + int(math.ceil(pr.T / self.Ts)) + 1)
        self.k0 = np.array(k0, dtype=np.int64)
        self.n_cycles = int(self.k0[-1])

    @property
    def duration(self) -> float:
        return self.n_cycles * self.Ts

    def _geometry(self, seg: Segment, pr: Profile, s, sd, sdd, f):
        """Position/derivatives (..., 3) and angles/derivatives (..., 2) at path parameter s
        (scalar or (N,) array; broadcasting keeps the arithmetic identical in both forms)."""
        L = f(pr.L)
        s, sd, sdd = (np.asarray(x)[..., None] for x in (s, sd, sdd))
        dang = (seg.ang1 - seg.ang0).astype(f)
        ang = (seg.ang0.astype(f) + dang * (s / L), dang * (sd / L), dang * (sdd / L))
        if seg.kind == 'line':
            d = (seg.end - seg.start).astype(f)
            if float(np.linalg.norm(seg.end - seg.start)) < 1e-12:
                d = d * 0
            p = (seg.start + self.origin).astype(f) + d * (s / L)
            return (p, d * (sd / L), d * (sdd / L)), ang
        a, b, n = seg.axes
        ea, eb, en = (np.eye(3, dtype=f)[k] for k in (a, b, n))
        w = f(seg.sweep) / L
        th = f(seg.theta0) + w * s
        c, sn = np.cos(th), np.sin(th)
        rad = f(seg.radius)
        hL = f(seg.end[n] - seg.start[n]) / L
        base = self.origin.astype(f) + f(seg.center[a]) * ea + f(seg.center[b]) * eb + f(seg.start[n]) * en
        p = base + (rad * c) * ea + (rad * sn) * eb + (hL * s) * en
        dp = (-rad * sn * w) * ea + (rad * c * w) * eb + hL * en
        ddp = (-rad * c * w * w) * ea + (-rad * sn * w * w) * eb
        return (p, dp * sd, ddp * (sd * sd) + dp * sdd), ang

    def sample_cycle(self, k: int, dtype=np.float64):
        """((p, v, a), (ang, angd, angdd)) at control cycle k (held at the end after the path)."""
        f = np.dtype(dtype).type
        k = min(max(int(k), 0), self.n_cycles - 1)
        i = int(np.searchsorted(self.k0, k, side='right')) - 1
        pr = self.profiles[i]
        s, sd, sdd = profile_scalar(f(k - self.k0[i]) * f(self.Ts), _cast(pr, f))
        return self._geometry(self.segments[i], pr, s, sd, sdd, f)

    def sample_cycles(self, ks: np.ndarray, dtype=np.float64):
        """Vectorised sample_cycle over cycle indices ks: arrays (N,3)x3 and (N,2)x3."""
        f = np.dtype(dtype).type
        ks = np.clip(np.asarray(ks, np.int64), 0, self.n_cycles - 1)
        idx = np.searchsorted(self.k0, ks, side='right') - 1
        P, A = [np.zeros((len(ks), 3), dtype) for _ in range(3)], [np.zeros((len(ks), 2), dtype) for _ in range(3)]
        for i in np.unique(idx):
            m = idx == i
            pr = _cast(self.profiles[i], f)
            c = tuple(np.full(m.sum(), x, dtype) for x in (pr.L, pr.V, pr.Tj, pr.Ta, pr.Tv, pr.j, pr.a_p))
            tau = (ks[m] - self.k0[i]).astype(dtype) * f(self.Ts)
            s, sd, sdd = profile_array(tau, c)
            pos, ang = self._geometry(self.segments[i], self.profiles[i], s, sd, sdd, f)
            for dst, src in zip(P + A, pos + ang):
                dst[m] = src
        return tuple(P), tuple(A)


def _cast(pr: Profile, f) -> Profile:
    return Profile(*(f(x) for x in (pr.L, pr.V, pr.Tj, pr.Ta, pr.Tv, pr.j, pr.a_p)))
