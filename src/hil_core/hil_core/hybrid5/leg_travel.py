"""The legs' stroke (docs/hybrid5.md, "Programs and jogs"): a program or a jog that would take a
leg outside its travel is refused before anything moves, with the leg, the length and where.

The travel of each leg is the URDF's ``<limit lower upper>`` of its prismatic joint
(urdf/hybrid5.urdf: 0.6-1.6 m), the one place the robot's geometry is written. A program is
judged along its whole S-curve path, sampled every ``SAMPLE_CYCLES`` control cycles (1 ms at
10 kHz: at the rapid feed the platform moves about 0.2 mm between two samples) and at its last
cycle, with the legs from the inverse kinematics (eq. 7); a jog along its straight move, which
the S-curve follows point for point (``JOG_SAMPLES`` points, ends included). The homing move from
the home pose to a program's start is a jog of the same kind.
"""
from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass

import numpy as np

from hil_core.hybrid5 import kinematics as kin

SAMPLE_CYCLES = 10
JOG_SAMPLES = 201


@dataclass(frozen=True)
class Stroke:
    """Leg travel: ``lower`` and ``upper`` (m) of each of the three legs, named ``names``."""
    names: tuple
    lower: np.ndarray
    upper: np.ndarray

    @classmethod
    def from_urdf(cls, urdf_text: str, leg_joints) -> 'Stroke':
        """The ``<limit lower upper>`` of the three leg joints (ValueError naming what is
        missing)."""
        joints = {j.get('name'): j for j in ET.fromstring(urdf_text).findall('joint')}
        lower, upper = [], []
        for name in leg_joints:
            joint = joints.get(name)
            limit = None if joint is None else joint.find('limit')
            if limit is None or limit.get('lower') is None or limit.get('upper') is None:
                raise ValueError(f'the URDF has no <limit lower upper> for leg joint {name!r}')
            lo, hi = float(limit.get('lower')), float(limit.get('upper'))
            if not lo < hi:
                raise ValueError(f'leg joint {name!r}: lower {lo} is not below upper {hi}')
            lower.append(lo)
            upper.append(hi)
        return cls(tuple(leg_joints), np.array(lower), np.array(upper))

    def first_outside(self, legs: np.ndarray) -> tuple[int, int] | None:
        """(row, leg) of the first leg length outside its travel in ``legs`` (N, 3), None if all
        are inside (a NaN, a pose the legs cannot reach, is outside)."""
        bad = ~((legs >= self.lower) & (legs <= self.upper))
        rows = np.flatnonzero(bad.any(axis=1))
        if not rows.size:
            return None
        return int(rows[0]), int(np.flatnonzero(bad[rows[0]])[0])

    def why(self, what: str, leg: int, length: float, where: str) -> str:
        return (f'{what} takes {self.names[leg]} to {length:.4f} m {where}, outside its travel '
                f'{self.lower[leg]:g}-{self.upper[leg]:g} m (the URDF limit)')


def _check_points(p, R: float, stroke: Stroke, what: str, where) -> None:
    """ValueError naming the first platform position of ``p`` (n x 3, m) that takes a leg outside
    ``stroke``; ``where(row)`` says where along the motion that row is."""
    with np.errstate(invalid='ignore'):
        legs = kin.inverse(p, R)
    found = stroke.first_outside(legs)
    if found is not None:
        row, leg = found
        at = f'x y z = {p[row, 0]:.4f} {p[row, 1]:.4f} {p[row, 2]:.4f} m'
        raise ValueError(stroke.why(what, leg, legs[row, leg], where(row, at)))


def check_path(path, R: float, stroke: Stroke, what: str = 'the program') -> None:
    """ValueError if the S-curve ``path`` (hil_core.hybrid5.trajectory.PathTrajectory) takes a
    leg outside ``stroke`` anywhere along it."""
    ks = np.unique(np.r_[np.arange(0, path.n_cycles, SAMPLE_CYCLES), path.n_cycles - 1])
    (p, _, _), _ = path.sample_cycles(ks)
    _check_points(p, R, stroke, what, lambda row, at: f'at {ks[row] * path.Ts:.3f} s of its path (platform at {at})')


def check_move(p0, p1, R: float, stroke: Stroke, what: str = 'the jog') -> None:
    """ValueError if the straight move of the platform from ``p0`` to ``p1`` (m) takes a leg
    outside ``stroke``."""
    s = np.linspace(0.0, 1.0, JOG_SAMPLES)[:, None]
    p = np.asarray(p0, float)[None, :] * (1.0 - s) + np.asarray(p1, float)[None, :] * s
    _check_points(p, R, stroke, what, lambda row, at: f'at {at}')
