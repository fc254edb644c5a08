"""Plain-numpy inverse kinematics of the Hexaslide (seed 001 eq. 1-2): the test oracle of the
compiled :func:`.inverse.inverse_kinematics`, with what both share: the result record
(:class:`IKResult`), its reason codes and the pose and leg-vector helpers.

Eq. 1: ``d_i = p + R b_i - c_i`` (c_i: guide origin); eq. 2 with the + root:
``q_i = d_i . u_i + sqrt(Delta_i)``, ``Delta_i = d_i^T (u_i u_i^T - I) d_i + l^2``.
Everything is vectorised over a leading axis of poses ``[x, y, z, qx, qy, qz, qw]``.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hil_core.maths.rotations import quat_to_matrix

from .geometry import HexaslideGeometry

# IKResult.reason codes
OK = 0
NO_REAL_SOLUTION = 1      # Delta_i < 0: the link cannot reach the guide
SLIDER_STROKE = 2         # solution outside [stroke_min, stroke_max]
PASSIVE_JOINT_RANGE = 3   # universal or spherical joint deflection beyond its limit
INVALID_INPUT = 4         # non-finite pose or zero-norm quaternion
REASON_TEXT = {OK: 'ok', NO_REAL_SOLUTION: 'no real solution (Delta < 0)',
               SLIDER_STROKE: 'slider stroke exceeded', PASSIVE_JOINT_RANGE: 'passive joint range exceeded',
               INVALID_INPUT: 'invalid pose (NaN/inf or zero quaternion)'}


@dataclass(frozen=True, eq=False)
class IKResult:
    q: np.ndarray              # (N, 6) slider displacement from home [m] (NaN where no real solution)
    ok: np.ndarray             # (N,) bool
    reason: np.ndarray         # (N,) int, lowest failing code (see module constants)
    discriminant: np.ndarray   # (N, 6) Delta_i [m^2]
    universal_angle: np.ndarray   # (N, 6) link deflection at the slider [rad]
    spherical_angle: np.ndarray   # (N, 6) link deflection at the platform [rad]

    @classmethod
    def _of(cls, q, ok, reason, discriminant, universal_angle, spherical_angle):
        """The same object as the generated __init__ builds, without its six frozen setattrs
        (a third of a single-pose compiled IK call)."""
        obj = object.__new__(cls)
        obj.__dict__.update(q=q, ok=ok, reason=reason, discriminant=discriminant,
                            universal_angle=universal_angle, spherical_angle=spherical_angle)
        return obj


def _as_poses(poses) -> np.ndarray:
    poses = np.asarray(poses, dtype=float)
    if poses.shape[-1:] != (7,) or poses.ndim not in (1, 2):
        raise ValueError(f'poses must have shape (7,) or (N, 7), got {poses.shape}')
    return poses.reshape(-1, 7)


def _legs(geom: HexaslideGeometry, poses: np.ndarray):
    """Rotations, rotated platform joints R b_i and eq. 1 vectors d_i, all (N, ...)."""
    with np.errstate(invalid='ignore', divide='ignore'):
        rot = quat_to_matrix(poses[:, 3:])
    rb = np.einsum('nij,kj->nki', rot, geom.platform_joints)
    d = poses[:, None, :3] + rb - geom.guide_origins
    return rot, rb, d


def inverse_kinematics_numpy(geom: HexaslideGeometry, poses) -> IKResult:
    """Plain-numpy inverse kinematics, vectorised (the oracle of the compiled kernel)."""
    poses = _as_poses(poses)
    n = poses.shape[0]
    valid = np.all(np.isfinite(poses), axis=1) & (np.linalg.norm(poses[:, 3:], axis=1) > 1e-9)
    safe = np.where(valid[:, None], poses, np.array([0, 0, geom.home_height, 0, 0, 0, 1.0]))
    rot, rb, d = _legs(geom, safe)
    u = geom.guide_directions
    du = np.einsum('nki,ki->nk', d, u)
    disc = du * du - np.einsum('nki,nki->nk', d, d) + geom.link_length ** 2
    real = disc >= 0.0
    q_abs = du + np.sqrt(np.where(real, disc, 0.0))
    q = np.where(real, q_abs - geom.q_home, np.nan)
    links = (d - q_abs[..., None] * u) / geom.link_length
    # passive joints: deflection of the link from its home direction, seen from the guide
    # (universal joint, base frame) and from the platform (spherical joint, TCP frame)
    uni = np.arccos(np.clip(np.einsum('nki,ki->nk', links, geom.link_home), -1.0, 1.0))
    links_tcp = np.einsum('nji,nkj->nki', rot, links)
    sph = np.arccos(np.clip(np.einsum('nki,ki->nk', links_tcp, geom.link_home), -1.0, 1.0))
    reason = np.zeros(n, dtype=int)
    passive = np.any((uni > geom.universal_limit) | (sph > geom.spherical_limit), axis=1)
    reason[passive] = PASSIVE_JOINT_RANGE
    with np.errstate(invalid='ignore'):
        stroke = np.any((q < geom.stroke_min) | (q > geom.stroke_max), axis=1)
    reason[stroke] = SLIDER_STROKE
    reason[~np.all(real, axis=1)] = NO_REAL_SOLUTION
    reason[~valid] = INVALID_INPUT
    q[~valid] = np.nan
    return IKResult(q=q, ok=reason == OK, reason=reason, discriminant=disc,
                    universal_angle=uni, spherical_angle=sph)
