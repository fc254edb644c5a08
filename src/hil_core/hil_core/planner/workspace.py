"""Offline total-orientation workspace of the Hexaslide and its modified-ellipsoid limits (seed 001 3.1).

Procedure (seed 001 section 3.1, vectorised):

* spherical grid about the nominal workspace centre (the home position): azimuth phi in
  [-90, 90] deg, elevation theta in [-90, 270) deg (``ellipsoid.direction``);
* orientation grid: every combination of roll, pitch, yaw sampled in the table-3 ranges;
* along each direction the radius grows from the centre; a point belongs to the workspace only if
  *every* orientation passes the kinematic constraints (real IK solution, slider stroke, passive
  joint ranges: ``inverse_kinematics``) and the kinetostatic one (``kinetostatic_index`` =
  ||J^-T|| below a bound). The first failing radius ends the search: the saved radius is the last
  radius before it, so the whole segment from the centre is feasible (the seed scans inward from
  r_max and keeps the outermost feasible point; scanning outward is the conservative variant).
  A coarse scan brackets the boundary, a fine scan inside the bracket resolves it;
* a modified ellipsoid is fitted inside the discrete surface: for a fixed exponent n the
  constraints h(u_j)^n >= (m r_j)^-n are linear in w = a^-n, so a linear program finds the largest
  half-axes; the exponent with the largest volume wins;
* hard limit: the same search with a less restrictive kinetostatic bound; the expansion k is the
  largest that keeps k * r_e inside that second discrete surface (times a margin). Where the
  kinematic constraints bound both surfaces, the soft fit is made inside r_hard / min_expansion
  so that a hard surface with room for the braking distance always exists.
"""
from __future__ import annotations

import itertools
import time
from dataclasses import dataclass

import numpy as np
from scipy.optimize import linprog

from hil_core.hexaslide import home_pose, inverse_kinematics, kinetostatic_index, load_geometry
from hil_core.planner.ellipsoid import ModifiedEllipsoid, direction
from hil_core.maths.rotations import rpy_to_quat

EXPONENTS = (2.0, 2.5, 3.0, 4.0, 6.0)


@dataclass
class WorkspaceSettings:
    phi_step_deg: float = 10.0
    theta_step_deg: float = 10.0
    orientations_per_axis: int = 3          # samples of each of roll, pitch, yaw (3: -max, 0, +max)
    r_max: float | None = None              # default: 3 x the largest table-3 translation
    coarse_steps: int = 30
    fine_steps: int = 12
    kinetostatic_soft: float = 2.5          # bound on ||J^-T||, relative to its value at home
    kinetostatic_hard: float = 3.5          # the less restrictive bound of the hard limit
    fit_margin: float = 0.98                # r_e <= fit_margin * discrete radius
    expansion_margin: float = 0.98
    min_expansion: float = 1.25             # the soft fit leaves at least this room to the hard surface


@dataclass
class WorkspaceResult:
    robot: str
    settings: WorkspaceSettings
    centre: np.ndarray
    phi: np.ndarray               # (D,) azimuth of each direction [rad]
    theta: np.ndarray             # (D,) elevation [rad]
    directions: np.ndarray        # (D, 3)
    orientations: np.ndarray      # (O, 4) quaternions of the total-orientation grid
    r_soft: np.ndarray            # (D,) discrete total-orientation radius (soft kinetostatic bound)
    r_hard: np.ndarray            # (D,) with the hard (less restrictive) bound
    r_zero: np.ndarray            # (D,) zero-orientation workspace (soft bound), for the figure
    bounds: tuple                 # absolute ||J^-T|| bounds (soft, hard)
    ellipsoid: ModifiedEllipsoid
    expansion: float
    seconds: float
    box_inside: bool = False
    orientation_range: tuple = ()     # rad, roll/pitch/yaw half ranges the workspace was computed for

    def as_dict(self) -> dict:
        s = self.settings
        home = np.r_[self.centre, 0.0, 0.0, 0.0, 1.0]
        return {
            'robot': self.robot,
            'generated_by': 'hil workspace (hil_core.planner.workspace, seed 001 section 3.1)',
            'centre': [float(v) for v in self.centre],
            'home_pose': [float(v) for v in home],
            'soft': {'semi_axes': [float(v) for v in self.ellipsoid.semi_axes],
                     'semi_axes_order': 'x+, x-, y+, y-, z+, z- (m, about the centre)',
                     'exponent': float(self.ellipsoid.exponent)},
            'hard_expansion': float(self.expansion),
            'orientation_range_rpy': [float(v) for v in self.orientation_range],
            'kinetostatic_bound': {'soft': float(self.bounds[0]), 'hard': float(self.bounds[1])},
            'discretisation': {'phi_step_deg': s.phi_step_deg, 'theta_step_deg': s.theta_step_deg,
                               'orientations': int(len(self.orientations)), 'directions': int(len(self.phi)),
                               'fit_margin': s.fit_margin, 'expansion_margin': s.expansion_margin,
                               'min_expansion': s.min_expansion},
            'min_discrete_radius': {'soft': float(self.r_soft.min()), 'hard': float(self.r_hard.min())},
            'nominal_box_inside_soft': bool(self.box_inside),
        }


def direction_grid(phi_step_deg: float, theta_step_deg: float):
    phi = np.radians(np.linspace(-90.0, 90.0, int(round(180.0 / phi_step_deg)) + 1))
    theta = np.radians(np.arange(-90.0, 270.0 - 1e-9, theta_step_deg))
    pp, tt = np.meshgrid(phi, theta, indexing='ij')
    return pp.ravel(), tt.ravel()


def orientation_grid(half_range_rpy, per_axis: int) -> np.ndarray:
    axes = [np.linspace(-h, h, per_axis) if per_axis > 1 else np.zeros(1) for h in half_range_rpy]
    rpy = np.array(list(itertools.product(*axes)))
    return rpy_to_quat(rpy)


def feasible(geom, centre, dirs, radii, quats, bounds):
    """(D, R) booleans for each kinetostatic bound: every orientation passes at centre + r u."""
    d, r, o = len(dirs), radii.shape[1], len(quats)
    pos = centre + radii[..., None] * dirs[:, None, :]
    poses = np.concatenate([np.repeat(pos.reshape(-1, 3), o, axis=0), np.tile(quats, (d * r, 1))], axis=1)
    ik = inverse_kinematics(geom, poses)
    index = np.full(len(poses), np.inf)
    if ik.ok.any():
        index[ik.ok] = kinetostatic_index(geom, poses[ik.ok])
    return [np.all((index <= b).reshape(d, r, o), axis=2) for b in bounds]


def _last_feasible(ok, radii):
    """Radius before the first failure along each row (0 if the first fails, last if none fails)."""
    first_bad = np.where(ok.all(axis=1), ok.shape[1], np.argmin(ok, axis=1))
    r = np.where(first_bad > 0, radii[np.arange(len(ok)), np.maximum(first_bad - 1, 0)], 0.0)
    return r, first_bad


def radius_search(geom, centre, dirs, quats, bounds, r_max, coarse, fine, chunk=64):
    """Discrete workspace radius along each direction, for each bound: list of (D,) arrays."""
    out = [np.zeros(len(dirs)) for _ in bounds]
    grid = np.linspace(r_max / coarse, r_max, coarse)
    for start in range(0, len(dirs), chunk):
        sl = slice(start, start + chunk)
        dd = dirs[sl]
        radii = np.broadcast_to(grid, (len(dd), coarse))
        oks = feasible(geom, centre, dd, radii, quats, bounds)
        for b, ok in enumerate(oks):
            r_lo, _ = _last_feasible(ok, radii)
            frac = np.arange(1, fine + 1) / (fine + 1)
            fine_radii = r_lo[:, None] + (r_max / coarse) * frac[None, :]
            fok = feasible(geom, centre, dd, fine_radii, quats, (bounds[b],))[0]
            r_fine, first_bad = _last_feasible(fok, fine_radii)
            out[b][sl] = np.where(first_bad > 0, r_fine, r_lo)
    return out


def fit_modified_ellipsoid(dirs, radii, centre, margin=0.98, exponents=EXPONENTS,
                           prefer_inside=None) -> ModifiedEllipsoid:
    """Largest modified ellipsoid with r_e(u_j) <= margin * r_j at every discrete direction.
    Among the exponents, one whose surface contains ``prefer_inside`` (points relative to the
    centre: the nominal box corners) wins over a larger one that does not (seed 001: the soft
    limit is more permissive than the nominal workspace)."""
    dirs = np.asarray(dirs, dtype=float)
    target = margin * np.asarray(radii, dtype=float)
    if np.any(target <= 0):
        raise ValueError('the discrete workspace has a zero radius: the centre is not reachable')
    # half-axis guesses (radius measured along each half-axis) normalise the LP objective
    guess = np.array([target[np.argmax(s * dirs[:, i])] for i in range(3) for s in (1, -1)])
    best, best_score = None, (False, -1.0)
    probe = _fibonacci_sphere(2000)
    for n in exponents:
        cols = np.zeros((len(dirs), 6))
        for i in range(3):
            cols[:, 2 * i] = np.where(dirs[:, i] >= 0, np.abs(dirs[:, i]) ** n, 0.0)
            cols[:, 2 * i + 1] = np.where(dirs[:, i] < 0, np.abs(dirs[:, i]) ** n, 0.0)
        # w_i = (guess_i / a_i)^n  ->  constraint sum cols * w / guess^n >= target^-n
        scaled = cols / guess ** n
        res = linprog(np.ones(6), A_ub=-scaled * target[:, None] ** n, b_ub=-np.ones(len(dirs)),
                      bounds=[(1e-9, None)] * 6, method='highs')
        if not res.success:
            continue
        axes = guess / res.x ** (1.0 / n)
        ell = ModifiedEllipsoid(tuple(float(a) for a in axes), float(n), tuple(float(c) for c in centre))
        # the LP is exact up to its tolerance: shrink until every constraint holds strictly
        excess = np.max(ell.radius(dirs) / target)
        if excess > 1.0:
            ell = ModifiedEllipsoid(tuple(float(a) for a in axes / (excess * (1 + 1e-9))), float(n),
                                    ell.centre)
        volume = float(np.mean(ell.radius(probe) ** 3))
        contains = prefer_inside is None or bool(np.all(ell.level(prefer_inside) <= 1.0))
        if (contains, volume) > best_score:
            best, best_score = ell, (contains, volume)
    if best is None:
        raise ValueError('no modified ellipsoid fits inside the discrete workspace')
    return best


def _fibonacci_sphere(n):
    i = np.arange(n) + 0.5
    z = 1 - 2 * i / n
    rho = np.sqrt(1 - z * z)
    ang = np.pi * (1 + 5 ** 0.5) * i
    return np.stack([rho * np.cos(ang), rho * np.sin(ang), z], axis=1)


def compute_workspace(robot: str, settings: WorkspaceSettings | None = None, progress=None) -> WorkspaceResult:
    s = settings or WorkspaceSettings()
    say = progress or (lambda msg: None)
    t0 = time.perf_counter()
    geom = load_geometry(robot)
    centre = home_pose(geom)[:3]
    quats = orientation_grid(geom.workspace_half_range[3:], s.orientations_per_axis)
    phi, theta = direction_grid(s.phi_step_deg, s.theta_step_deg)
    dirs = direction(phi, theta)
    r_max = s.r_max or 3.0 * float(np.max(geom.workspace_half_range[:3]))
    home_index = float(kinetostatic_index(geom, home_pose(geom)[None])[0])
    bounds = (s.kinetostatic_soft * home_index, s.kinetostatic_hard * home_index)
    say(f'{robot}: {len(dirs)} directions x {len(quats)} orientations, r_max {r_max:.3f} m, '
        f'||J^-T|| bounds {bounds[0]:.2f} / {bounds[1]:.2f}')
    r_soft, r_hard = np.zeros(len(dirs)), np.zeros(len(dirs))
    block = max(1, len(dirs) // 10)
    for start in range(0, len(dirs), block):
        sl = slice(start, start + block)
        r_soft[sl], r_hard[sl] = radius_search(geom, centre, dirs[sl], quats, bounds, r_max,
                                               s.coarse_steps, s.fine_steps)
        say(f'  directions {min(start + block, len(dirs))}/{len(dirs)} '
            f'({time.perf_counter() - t0:.1f} s)')
    r_zero = radius_search(geom, centre, dirs, rpy_to_quat(np.zeros((1, 3))), bounds[:1], r_max,
                           s.coarse_steps, s.fine_steps)[0]
    if np.any(r_soft >= r_max * (1 - 1e-9)):
        say('  warning: some directions reach r_max; raise --r-max for a tighter result')
    # where kinematics (not the kinetostatic bound) limits both surfaces, relaxing the bound gains
    # nothing: the soft fit is pulled in there so that the hard surface still has room outside it
    r_fit = np.minimum(r_soft, r_hard / s.min_expansion)
    box = np.array(list(itertools.product((-1.0, 1.0), repeat=3))) * geom.workspace_half_range[:3]
    ell = fit_modified_ellipsoid(dirs, r_fit, centre, s.fit_margin, prefer_inside=box)
    expansion = s.expansion_margin * float(np.min(r_hard / ell.radius(dirs)))
    if not expansion > 1.0:
        raise ValueError(f'hard limit expansion {expansion:.3f} <= 1: the hard kinetostatic bound '
                         'must be less restrictive than the soft one')
    say(f'  fitted: semi-axes {np.round(ell.semi_axes, 4).tolist()} m, exponent {ell.exponent}, '
        f'hard expansion {expansion:.3f} ({time.perf_counter() - t0:.1f} s)')
    box_inside = bool(np.all(ell.level(box) <= 1.0))
    say(f'  nominal workspace box (table 3) inside the soft limit: {box_inside}')
    return WorkspaceResult(robot, s, centre, phi, theta, dirs, quats, r_soft, r_hard, r_zero, bounds, ell,
                           expansion, time.perf_counter() - t0, box_inside,
                           tuple(float(v) for v in geom.workspace_half_range[3:]))
