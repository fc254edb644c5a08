"""Modified ellipsoid of seed 001 (section 3.1, eq. 3-4): the analytic soft/hard workspace limit.

The seed writes the limit as ``r_e = f(a, phi, theta)`` in spherical coordinates about the
nominal workspace centre, with ``r_e,x = r_e cos(theta) cos(phi)``, ``r_e,y = r_e cos(theta)
sin(phi)``, ``r_e,z = r_e sin(theta)``, but does not print ``f``. Ours is an asymmetric
super-ellipsoid: one semi-axis per half-axis (``a_x+, a_x-, a_y+, a_y-, a_z+, a_z-``) and an
exponent ``n >= 2`` ("modified": ``n = 2`` with equal halves is the ordinary ellipsoid)::

    h(P) = ( |P_x / a_x(sign P_x)|^n + |P_y / a_y(...)|^n + |P_z / a_z(...)|^n )^(1/n)
    r_e(u) = 1 / h(u)        for a unit direction u(phi, theta)

``h`` is a gauge (convex, positively homogeneous of degree 1), so ``|P| <= r_e`` iff ``h(P) <= 1``
and the hard limit, the soft one expanded by ``k`` (seed 001 section 3.4), is ``h(P) <= k``.
Convexity gives the clearance used by the recovery brake: a point of level ``h`` is at least
``(k - h) * min(a)`` from the hard surface. ``n >= 2`` makes the surface C1 across the
coordinate planes, so the outward normal ``grad h / |grad h|`` is defined everywhere (also on the
axes, the seed's degenerate directions) except at the centre, where it is never needed.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


def spherical_angles(p):
    """Seed 001 eq. 5-7: azimuth phi = atan(P_y/P_x) in [-90, 90] deg, P_xl = sign(P_x) sqrt(P_x^2+P_y^2),
    elevation theta = atan(P_z / P_xl) unwrapped to [-90, 270) deg so that (r, phi, theta) covers
    space once. Degenerate cases (P_x = 0, P on the z axis, P = 0) get the continuous limit values:
    P_x = 0 -> phi = +-90 deg with the sign of P_y, treated as P_xl >= 0; P on the z axis -> phi = 0.
    Returns (r, phi, theta) in radians, vectorised over leading axes."""
    p = np.asarray(p, dtype=float)
    x, y, z = p[..., 0], p[..., 1], p[..., 2]
    r = np.sqrt(x * x + y * y + z * z)
    rho = np.sqrt(x * x + y * y)
    on_z = rho == 0.0
    sx = np.where(x < 0.0, -1.0, 1.0)
    # atan(P_y / P_x) without dividing by zero: the angle of (|P_x|, sign(P_x) P_y)
    phi = np.where(on_z, 0.0, np.arctan2(sx * y, np.abs(x)))
    pxl = sx * rho
    theta = np.arctan2(z, pxl)                      # (-pi, pi]: pxl < 0 means the far half
    theta = np.where(theta < -0.5 * np.pi, theta + 2.0 * np.pi, theta)
    return r, phi, theta


def direction(phi, theta):
    """Unit vector of seed 001 eq. 4 (r_e = 1)."""
    phi = np.asarray(phi, dtype=float)
    theta = np.asarray(theta, dtype=float)
    return np.stack([np.cos(theta) * np.cos(phi), np.cos(theta) * np.sin(phi), np.sin(theta)], axis=-1)


@dataclass(frozen=True)
class ModifiedEllipsoid:
    """Coefficient vector ``a`` of seed 001: half-axes (x+, x-, y+, y-, z+, z-) in metres and the
    exponent; ``centre`` is the nominal workspace centre in the base frame."""
    semi_axes: tuple[float, float, float, float, float, float]
    exponent: float = 2.0
    centre: tuple[float, float, float] = (0.0, 0.0, 0.0)

    def __post_init__(self):
        a = np.asarray(self.semi_axes, dtype=float)
        if a.shape != (6,) or not np.all(np.isfinite(a)) or np.any(a <= 0):
            raise ValueError(f'semi_axes must be 6 positive finite lengths, got {self.semi_axes}')
        if not (np.isfinite(self.exponent) and self.exponent >= 2.0):
            raise ValueError(f'exponent must be >= 2 (C1 surface), got {self.exponent}')
        if len(self.centre) != 3 or not np.all(np.isfinite(self.centre)):
            raise ValueError(f'centre must be 3 finite numbers, got {self.centre}')
        object.__setattr__(self, '_a', tuple(float(v) for v in a))

    def level_point(self, p) -> float:
        """``level`` of one local point in plain float arithmetic (the per-cycle path: numpy's
        per-call overhead is most of the cost on 3-vectors)."""
        a = self._a
        x, y, z = float(p[0]), float(p[1]), float(p[2])
        sx = abs(x) / (a[0] if x >= 0.0 else a[1])
        sy = abs(y) / (a[2] if y >= 0.0 else a[3])
        sz = abs(z) / (a[4] if z >= 0.0 else a[5])
        m = max(sx, sy, sz)
        if not m > 0.0:
            return 0.0 if m == 0.0 else float('nan')
        n = self.exponent
        return m * ((sx / m) ** n + (sy / m) ** n + (sz / m) ** n) ** (1.0 / n)

    def normal_point(self, p) -> np.ndarray:
        """``normal`` of one local point in float arithmetic (recovery's per-cycle path)."""
        a = self._a
        x, y, z = float(p[0]), float(p[1]), float(p[2])
        ax = a[0] if x >= 0.0 else a[1]
        ay = a[2] if y >= 0.0 else a[3]
        az = a[4] if z >= 0.0 else a[5]
        sx, sy, sz = x / ax, y / ay, z / az
        m = max(abs(sx), abs(sy), abs(sz))
        if not m > 0.0:
            return np.array([0.0, 0.0, 1.0])
        e = self.exponent - 1.0
        gx = math.copysign(abs(sx / m) ** e, sx) / ax
        gy = math.copysign(abs(sy / m) ** e, sy) / ay
        gz = math.copysign(abs(sz / m) ** e, sz) / az
        norm = math.sqrt(gx * gx + gy * gy + gz * gz)
        return np.array([gx / norm, gy / norm, gz / norm])

    # --- core gauge -----------------------------------------------------------------------
    def _axes_for(self, p):
        a = np.asarray(self.semi_axes, dtype=float)
        pos = p >= 0.0
        return np.where(pos, a[0::2], a[1::2])

    def level(self, p_local):
        """h(P) for positions relative to the centre: < 1 inside the soft limit, = k on the hard one."""
        p = np.asarray(p_local, dtype=float)
        s = np.abs(p) / self._axes_for(p)
        m = np.max(s, axis=-1, keepdims=True)
        safe = np.where(m > 0.0, m, 1.0)
        n = self.exponent
        # factor the largest term out: no overflow or underflow for any magnitude
        return m[..., 0] * np.sum((s / safe) ** n, axis=-1) ** (1.0 / n)

    def radius(self, u):
        """r_e along unit direction(s) u."""
        return 1.0 / self.level(u)

    def radius_at(self, phi, theta):
        """The seed's form r_e = f(a, phi, theta)."""
        return self.radius(direction(phi, theta))

    def inside(self, p_local, expansion: float = 1.0):
        """|P| <= r_e(direction of P) * expansion (the centre is inside)."""
        return self.level(p_local) <= expansion

    def local(self, p_base):
        return np.asarray(p_base, dtype=float) - np.asarray(self.centre, dtype=float)

    @property
    def min_radius(self) -> float:
        """Smallest r_e over all directions: the smallest half-axis (n >= 2)."""
        return float(min(self.semi_axes))

    # --- surface frame (seed 001 section 3.4) --------------------------------------------------
    def normal(self, p_local):
        """Outward unit normal of the level surface through P (grad h / |grad h|), vectorised.
        Defined on the axes too; P = 0 (no direction) returns the +z axis by convention."""
        p = np.asarray(p_local, dtype=float)
        a = self._axes_for(p)
        s = p / a
        n = self.exponent
        m = np.max(np.abs(s), axis=-1, keepdims=True)
        safe = np.where(m > 0.0, m, 1.0)
        g = np.sign(s) * np.abs(s / safe) ** (n - 1.0) / a    # grad h up to a positive factor
        norm = np.linalg.norm(g, axis=-1, keepdims=True)
        zaxis = np.zeros_like(g)
        zaxis[..., 2] = 1.0
        return np.where(norm > 0.0, g / np.where(norm > 0.0, norm, 1.0), zaxis)

    def tangent_frame(self, p_local):
        """(t_theta, t_phi, n_e): unit tangents from the partial derivatives of eq. 4 with respect to
        theta and phi, made orthonormal against the normal, and the outward normal n_e. At the poles
        (theta = +-90 deg, where d/dphi vanishes) and on the z axis the tangents fall back to the x
        and y directions projected on the tangent plane: the seed's "degenerate cases"."""
        p = np.asarray(p_local, dtype=float)
        n_e = self.normal(p)
        _, phi, theta = spherical_angles(p)
        h = 1e-6
        d_theta = (self._surface(phi, theta + h) - self._surface(phi, theta - h)) / (2 * h)
        t_theta = _orthonormal(d_theta, n_e, fallback=np.array([1.0, 0.0, 0.0]))
        # t_phi = n_e x t_theta: spans the seed's tangent plane with t_theta, and keeps the frame
        # right-handed everywhere (the seed switches the cross-product order with theta instead)
        t_phi = np.cross(n_e, t_theta)
        return t_theta, t_phi, n_e

    def _surface(self, phi, theta):
        u = direction(phi, theta)
        return u * self.radius(u)[..., None]

    def surface_points(self, phi, theta, expansion: float = 1.0):
        """Points of the (expanded) surface in the base frame, for markers and figures."""
        return self._surface(phi, theta) * expansion + np.asarray(self.centre, dtype=float)

    def as_dict(self) -> dict:
        return {'semi_axes': [float(v) for v in self.semi_axes], 'exponent': float(self.exponent),
                'centre': [float(v) for v in self.centre]}


def _orthonormal(v, n, fallback):
    """v minus its component along n, normalised; the fallback axis (projected) where v vanishes."""
    v = v - np.sum(v * n, axis=-1, keepdims=True) * n
    norm = np.linalg.norm(v, axis=-1, keepdims=True)
    fb = np.broadcast_to(fallback, v.shape)
    fb = fb - np.sum(fb * n, axis=-1, keepdims=True) * n
    fb_norm = np.linalg.norm(fb, axis=-1, keepdims=True)
    alt = np.broadcast_to(np.array([0.0, 1.0, 0.0]), v.shape)
    alt = alt - np.sum(alt * n, axis=-1, keepdims=True) * n
    alt_norm = np.linalg.norm(alt, axis=-1, keepdims=True)
    fb = np.where(fb_norm > 1e-6, fb / np.where(fb_norm > 0, fb_norm, 1.0),
                  alt / np.where(alt_norm > 0, alt_norm, 1.0))
    good = norm > 1e-9
    return np.where(good, v / np.where(good, norm, 1.0), fb)
