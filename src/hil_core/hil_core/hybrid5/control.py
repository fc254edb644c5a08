"""Computed-torque tracking with the nonlinear integrator (seed 003 eq. 28-37).

Per axis i, every sample t (period Ts):
    sg_i(t)   = sign(v_d,i(t))                                  (eq. 35 / 37)
    t_vo,i    = t if sg_i(t-1) != sg_i(t) else t_vo,i            (eq. 34: reversal or stop)
    t_c,i     = t - t_vo,i                                       (eq. 33)
    phi_e,i   = 1 if |e_i| >= e_c else 0                         (eq. 32)
    phi_t,i   = xi - 1                          0 <= t_c <= Tc/2
              = 2 (xi - 1)(1 - t_c/Tc) phi_e    Tc/2 < t_c <= Tc  (eq. 31)
              = 0                               otherwise
    phi_c,i   = phi_t,i + 1                                      (eq. 30)
    s_c,i(t)  = sat(s_c,i(t-1) + phi_c,i e_i Ts, -S_max, S_max)  (eq. 29)
    u(t)      = M [a_d + Kp e + Kv e_v + Ki s_c] + G             (eq. 28 legs, eq. 36 table)
with e = q_d - q, e_v = v_d - v and v = (q(t) - q(t-1)) / Ts (backward difference, as the seed).
After a reversal the boost (xi) lets the integral change sign quickly instead of fighting
its wind-up; the limit S_max bounds the wind-up itself. ``plain=True`` turns both off (a
classic unbounded integrator, phi_c = 1) for the comparison test.

Works per axis on floats or numpy scalars of one dtype (constants cast by ``f``): the
same code runs in float64 and in float32 (the study of table 3) and counts its operations.
"""
from __future__ import annotations

from .params import Gains

INF = float('inf')


class NonlinearIntegrator:
    """Eq. 29-35 for n axes, per axis in the seed's conditional form (floats or numpy
    scalars of one dtype, given by ``f``); ``update(e, v_d)`` returns the list s_c."""

    def __init__(self, gains: Gains, n: int, Ts: float, f=float, plain: bool = False):
        self.g, self.n, self.plain, self.f = gains, n, plain, f
        self.Ts, self.xi1, self.Tc, self.Tc2 = f(Ts), f(gains.xi - 1.0), f(gains.Tc), f(gains.Tc / 2)
        self.e_c, self.s_max, self.v_zero = f(gains.e_c), f(gains.s_max), f(gains.v_zero)
        self.zero, self.one, self.two = f(0.0), f(1.0), f(2.0)
        self.reset()
        self.boosts = 0                          # reversals/stops detected (diagnostics)

    def reset(self) -> None:
        self.s = [self.zero] * self.n
        self.sg = [0] * self.n
        self.t_c = [INF] * self.n                # no reversal seen yet: no boost

    def update(self, e, v_d) -> list:
        Ts = self.Ts
        for i in range(self.n):
            ei = e[i]
            if self.plain:
                self.s[i] = self.s[i] + ei * Ts
                continue
            v = v_d[i]
            sg = 1 if v > self.v_zero else (-1 if v < -self.v_zero else 0)        # eq. 35
            if sg != self.sg[i]:                                                # eq. 34
                self.sg[i], self.t_c[i] = sg, self.zero
                self.boosts += 1
            else:
                self.t_c[i] = self.t_c[i] + Ts                                  # eq. 33
            tc = self.t_c[i]
            if tc <= self.Tc2:                                                  # eq. 31
                phi_t = self.xi1
            elif tc <= self.Tc and abs(ei) >= self.e_c:                         # eq. 31-32
                phi_t = self.two * self.xi1 * (self.one - tc / self.Tc)
            else:
                phi_t = self.zero
            s = self.s[i] + (phi_t + self.one) * ei * Ts                        # eq. 29-30
            self.s[i] = self.s_max if s > self.s_max else (-self.s_max if s < -self.s_max else s)
        return self.s


class CTM:
    """Computed-torque law eq. 28/36 for one axis group; model M, G supplied per call.

    With an encoder ``resolution`` > 0 the measured position is taken as an integer count
    (as the drives deliver it) and the velocity v = (n(t) - n(t-1)) res / Ts is formed from
    the exact integer difference, then cast (the float(int) casts of seed table 1): in float32
    a difference of two ~1 m lengths would lose 6e-8 m, i.e. 6e-4 m/s of velocity."""

    def __init__(self, gains: Gains, n: int, Ts: float, f=float, plain_integrator: bool = False,
                 resolution: float = 0.0):
        self.n, self.f = n, f
        self.Kp, self.Kv, self.Ki = f(gains.Kp), f(gains.Kv), f(gains.Ki)
        self.inv_Ts = f(1.0 / Ts)
        self.res = float(resolution)
        self.f_res, self.f_vres = f(resolution), f(resolution / Ts)
        self.integrator = NonlinearIntegrator(gains, n, Ts, f, plain_integrator)
        self.q_prev = None

    def reset(self) -> None:
        self.integrator.reset()
        self.q_prev = None

    def measure(self, q_raw):
        """Measured positions -> (q, v) lists in the controller's number type.

        q_raw: physical units as delivered (float64); rounded to whole counts first when a
        resolution is set, so float32 and float64 controllers see the same integers."""
        f = self.f
        if self.res > 0:
            counts = [int(round(float(x) / self.res)) for x in q_raw]
            prev = counts if self.q_prev is None else self.q_prev
            self.q_prev = counts
            return [f(c) * self.f_res for c in counts], [f(c - p) * self.f_vres for c, p in zip(counts, prev)]
        q = [f(x) for x in q_raw]
        prev = q if self.q_prev is None else self.q_prev
        self.q_prev = q
        return q, [(q[i] - prev[i]) * self.inv_Ts for i in range(self.n)]

    def update(self, q_d, v_d, a_d, meas, M, G):
        """Returns (u, e, e_v) as lists: command force/torque, position and velocity errors.

        meas = (q, v) from ``measure``."""
        q, v = meas
        e = [q_d[i] - q[i] for i in range(self.n)]
        e_v = [v_d[i] - v[i] for i in range(self.n)]
        s = self.integrator.update(e, v_d)
        u = [M[i] * (a_d[i] + self.Kp * e[i] + self.Kv * e_v[i] + self.Ki * s[i]) + G[i]
             for i in range(self.n)]
        return u, e, e_v
