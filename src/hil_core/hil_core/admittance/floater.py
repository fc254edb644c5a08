"""Floating-platform model in Cummins form, for the Hexafloat scenario (seed 000 section 3).

    (M + A_inf) x_ddot + mu(t) + B_lin x_dot + B_quad (|x_dot| * x_dot) + (C_hs + C_moor) x = F

with the radiation memory ``mu = int K(t - tau) x_dot(tau) dtau`` replaced by its linear
state-space approximation (what hydrodynamic tools export, e.g. a fit of WAMIT/Nemoh/Capytaine
radiation kernels): ``z_dot = A z + B x_dot``, ``mu = C z + D x_dot``.

The linear part (inertia, added mass, hydrostatics, mooring, linear damping, radiation) is one
LTI system discretised exactly by ``LtiAdmittanceModel``. The quadratic (viscous drag) damping is
the only nonlinearity: it enters as an input held over the step, evaluated at the mid-step
velocity predicted from the current acceleration, which makes the scheme second order in the
period (checked against an adaptive solve_ivp integration in the tests).

YAML format (``floater:`` mapping; a 6-list means a diagonal matrix, 6 lists of 6 a full one):

    floater:
      mass: [..6..]                 # rigid-body mass / inertia about the reference point
      added_mass: [..6..]           # A_inf
      hydrostatic_stiffness: ...    # C_hs
      mooring_stiffness: ...        # optional, added to C_hs
      linear_damping: ...           # B_lin, optional
      quadratic_damping: ...        # B_quad, optional
      radiation:                    # optional: A (n x n), B (n x 6), C (6 x n), D (6 x 6, optional)
        A: [[...], ...]
        B: [[...], ...]
        C: [[...], ...]
"""
from __future__ import annotations

import numpy as np
import yaml

from hil_core.admittance.lti_model import HOME_IDENTITY, LtiAdmittanceModel, Radiation

_FIELDS = ('mass', 'added_mass', 'hydrostatic_stiffness', 'mooring_stiffness', 'linear_damping',
           'quadratic_damping', 'radiation')


def _matrix6(name, value):
    a = np.asarray(value, dtype=float)
    if a.shape == (6,):
        a = np.diag(a)
    if a.shape != (6, 6):
        raise ValueError(f'floater {name}: needs 6 values (diagonal) or 6x6, got shape {a.shape}')
    if not np.all(np.isfinite(a)):
        raise ValueError(f'floater {name}: must be finite')
    return a


def _radiation(spec) -> Radiation:
    try:
        A = np.atleast_2d(np.asarray(spec['A'], dtype=float))
        B = np.atleast_2d(np.asarray(spec['B'], dtype=float))
        C = np.atleast_2d(np.asarray(spec['C'], dtype=float))
    except KeyError as exc:
        raise ValueError(f'floater radiation: missing matrix {exc}') from None
    n = A.shape[0]
    D = np.asarray(spec.get('D', np.zeros((6, 6))), dtype=float)
    if A.shape != (n, n) or B.shape != (n, 6) or C.shape != (6, n) or D.shape != (6, 6):
        raise ValueError(f'floater radiation: shapes A {A.shape}, B {B.shape}, C {C.shape}, D {D.shape};'
                         f' need A (n, n), B (n, 6), C (6, n), D (6, 6)')
    if not all(np.all(np.isfinite(X)) for X in (A, B, C, D)):
        raise ValueError('floater radiation: matrices must be finite')
    if n and np.max(np.linalg.eigvals(A).real) >= 0:
        raise ValueError('floater radiation: A must be asymptotically stable (all eigenvalues Re < 0)')
    return Radiation(A, B, C, D)


class CumminsFloater(LtiAdmittanceModel):
    """Cummins-equation floater (see module docstring); same state/outputs as the LTI model."""

    def __init__(self, mass, added_mass, hydrostatic_stiffness, period, linear_damping=None,
                 quadratic_damping=None, mooring_stiffness=None, radiation: Radiation | None = None,
                 home=HOME_IDENTITY, enabled=(True,) * 6, force_scale=(1.0,) * 6,
                 equilibrium=(0.0,) * 6, wrench_frame='control', tcp_offset=HOME_IDENTITY):
        zero = np.zeros((6, 6))
        self.rigid_mass = _matrix6('mass', mass)
        self.added_mass = _matrix6('added_mass', added_mass)
        self.hydrostatic_stiffness = _matrix6('hydrostatic_stiffness', hydrostatic_stiffness)
        self.mooring_stiffness = zero if mooring_stiffness is None else _matrix6('mooring_stiffness', mooring_stiffness)
        self.linear_damping = zero if linear_damping is None else _matrix6('linear_damping', linear_damping)
        self.quadratic_damping = zero if quadratic_damping is None else _matrix6('quadratic_damping',
                                                                                 quadratic_damping)
        super().__init__(self.rigid_mass + self.added_mass, self.linear_damping,
                         self.hydrostatic_stiffness + self.mooring_stiffness, period, home=home,
                         enabled=enabled, force_scale=force_scale, equilibrium=equilibrium,
                         wrench_frame=wrench_frame, radiation=radiation, tcp_offset=tcp_offset)
        self._has_quad = bool(np.any(self.quadratic_damping))

    def extra_force(self):
        """Quadratic damping at the predicted mid-step velocity, held over the step."""
        if not self._has_quad:
            return 0.0
        v_mid = self.qd + 0.5 * self.period * self.qdd
        return -(self.quadratic_damping @ (np.abs(v_mid) * v_mid))[self.idx]

    @classmethod
    def from_dict(cls, spec: dict, period: float, **kwargs) -> 'CumminsFloater':
        spec = spec.get('floater', spec)
        unknown = set(spec) - set(_FIELDS)
        if unknown:
            raise ValueError(f'floater: unknown field(s) {sorted(unknown)}; known: {list(_FIELDS)}')
        for required in ('mass', 'added_mass', 'hydrostatic_stiffness'):
            if required not in spec:
                raise ValueError(f'floater: missing field {required!r}')
        rad = spec.get('radiation')
        return cls(spec['mass'], spec['added_mass'], spec['hydrostatic_stiffness'], period,
                   linear_damping=spec.get('linear_damping'), quadratic_damping=spec.get('quadratic_damping'),
                   mooring_stiffness=spec.get('mooring_stiffness'),
                   radiation=None if not rad else _radiation(rad), **kwargs)

    @classmethod
    def from_yaml(cls, path: str, period: float, **kwargs) -> 'CumminsFloater':
        with open(path, encoding='utf-8') as f:
            spec = yaml.safe_load(f)
        if not isinstance(spec, dict):
            raise ValueError(f'{path}: expected a mapping with a floater: section')
        return cls.from_dict(spec, period, **kwargs)
