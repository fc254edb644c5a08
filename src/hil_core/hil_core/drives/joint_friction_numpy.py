"""LuGre joint friction in plain numpy: ``JointFrictionNumpy``, the test oracle of the compiled
``joint_friction.JointFriction`` (test/unit/test_joint_friction_compiled.py, 1e-12), and
``FrictionParams``, the parameters both take. The model and its fixed-step scheme are described
in ``joint_friction``, the public module.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class FrictionParams:
    fc: np.ndarray        # Coulomb level (N m)
    fs: np.ndarray        # static (breakaway) level (N m)
    vs: np.ndarray        # Stribeck velocity (rad/s)
    sigma0: np.ndarray    # bristle stiffness (N m/rad)
    sigma1: np.ndarray    # bristle damping (N m s/rad)
    sigma2: np.ndarray    # viscous coefficient (N m s/rad)

    @classmethod
    def make(cls, n, fc, fs, vs, sigma0, sigma1, sigma2) -> 'FrictionParams':
        vals = [np.broadcast_to(np.asarray(x, float), (n,)).copy() for x in (fc, fs, vs, sigma0, sigma1, sigma2)]
        p = cls(*vals)
        p.validate()
        return p

    def validate(self) -> None:
        arrs = [self.fc, self.fs, self.vs, self.sigma0, self.sigma1, self.sigma2]
        if not all(np.all(np.isfinite(a)) for a in arrs):
            raise ValueError('friction parameters must be finite')
        if np.any(self.fc <= 0) or np.any(self.fs < self.fc) or np.any(self.vs <= 0) or np.any(self.sigma0 <= 0):
            raise ValueError('friction needs fc > 0, fs >= fc, vs > 0, sigma0 > 0')
        if np.any(self.sigma1 < 0) or np.any(self.sigma2 < 0):
            raise ValueError('friction damping and viscous coefficients must be >= 0')


class JointFrictionNumpy:
    """LuGre friction of n joints with the closed-form, implicit fixed-step solution, in plain
    numpy: the test oracle of the compiled ``joint_friction.JointFriction``."""

    ITERATIONS = 40

    def __init__(self, params: FrictionParams):
        params.validate()
        self.p = params
        self.z = np.zeros(params.fc.shape)

    def reset(self) -> None:
        self.z[:] = 0.0

    def level(self, v) -> np.ndarray:
        p = self.p
        return p.fc + (p.fs - p.fc) * np.exp(-(np.asarray(v) / p.vs) ** 2)

    def _z_of(self, v, z0, g, h):
        p = self.p
        a = p.sigma0 * np.abs(v) * h / g
        zss = np.sign(v) * g / p.sigma0
        e = np.exp(-a)
        z = zss + (z0 - zss) * e
        dz = (g / p.sigma0 - np.sign(v) * z0) * e * p.sigma0 * h / g
        return z, dz

    def step(self, v_k, tau, m, h: float):
        """Advance one step: joint velocity v_k, torque tau (all but friction), inertia m.

        Returns (v_next, friction f_next); updates the internal state z.
        """
        p = self.p
        v_k = np.asarray(v_k, float)
        tau = np.asarray(tau, float)
        m = np.asarray(m, float)
        g = self.level(v_k)
        z0 = self.z
        # |z| can exceed g/sigma0 right after breakaway (g falls from F_s to F_c); LuGre then
        # relaxes it exponentially, which the closed form does too (no clipping here).
        zmax = np.maximum(g / p.sigma0, np.abs(z0))
        c = m / h
        s01 = p.sigma0 + p.sigma1 / h

        def phi(v):
            z, dz = self._z_of(v, z0, g, h)
            return c * (v - v_k) + s01 * z - p.sigma1 * z0 / h + p.sigma2 * v - tau, c + s01 * dz + p.sigma2, z

        # bracket: z(v) lies in [-zmax, zmax]
        base = tau + c * v_k + p.sigma1 * z0 / h
        lo = (base - s01 * zmax) / (c + p.sigma2)
        hi = (base + s01 * zmax) / (c + p.sigma2)
        v = np.clip((tau + c * v_k - p.sigma0 * z0) / (c + p.sigma0 * h + p.sigma1 + p.sigma2), lo, hi)
        for _ in range(self.ITERATIONS):
            f, df, _ = phi(v)
            lo = np.where(f < 0, v, lo)
            hi = np.where(f > 0, v, hi)
            dv = f / df
            if np.all(np.abs(dv) <= 1e-12 * (1.0 + np.abs(v))):
                v = v - dv
                break
            v_new = v - dv
            outside = (v_new < lo) | (v_new > hi) | ~np.isfinite(v_new)
            v = np.where(outside, 0.5 * (lo + hi), v_new)
        _, _, z = phi(v)
        f_next = p.sigma0 * z + p.sigma1 * (z - z0) / h + p.sigma2 * v
        self.z = z
        return v, f_next
