"""Inverse kinematics, analytic inverse Jacobian and kinetostatic index (seed 001 eq. 1-2).

Eq. 1: ``d_i = p + R b_i - c_i`` (c_i: guide origin); eq. 2 with the + root:
``q_i = d_i . u_i + sqrt(Delta_i)``, ``Delta_i = d_i^T (u_i u_i^T - I) d_i + l^2``.
Everything is vectorised over a leading axis of poses ``[x, y, z, qx, qy, qz, qw]``.
:func:`inverse_kinematics` runs the compiled kernel of :mod:`.inverse_kernel`;
:func:`inverse_kinematics_numpy` is its plain-numpy twin and test oracle.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hil_core.maths.rotations import quat_to_matrix

from . import inverse_kernel
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


def inverse_kinematics(geom: HexaslideGeometry, poses) -> IKResult:
    """Slider displacements from home for TCP poses in ``hexapod_base`` (seed 001 eq. 2).

    Compiled (a few microseconds per call); the same numbers as :func:`inverse_kinematics_numpy`.
    The first call in a process compiles or loads the kernel (``inverse_kernel.warm_up``).
    """
    if not (type(poses) is np.ndarray and poses.dtype == np.float64 and poses.flags.c_contiguous
            and (poses.shape == (7,) or (poses.ndim == 2 and poses.shape[1] == 7))):
        poses = np.ascontiguousarray(_as_poses(poses))
    elif poses.ndim == 1:
        poses = poses.reshape(1, 7)
    n = poses.shape[0]
    q, disc, uni, sph = np.empty((n, 6)), np.empty((n, 6)), np.empty((n, 6)), np.empty((n, 6))
    ok, reason = np.empty(n, dtype=np.bool_), np.empty(n, dtype=np.int64)
    inverse_kernel.ik_batch(inverse_kernel.pack_geometry(geom), poses, q, ok, reason, disc, uni, sph)
    return IKResult._of(q, ok, reason, disc, uni, sph)


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


def inverse_jacobian(geom: HexaslideGeometry, pose) -> np.ndarray:
    """Analytic inverse Jacobian: ``qdot = Jinv @ [v; w]`` (TCP twist in hexapod_base).

    Differentiating ``|L_i|^2 = l^2`` with ``L_i = p + R b_i - c_i - q_abs_i u_i`` gives
    ``L_i . (v + w x R b_i - qdot_i u_i) = 0``, so row i is
    ``[L_i^T, ((R b_i) x L_i)^T] / (L_i . u_i)`` with ``L_i . u_i = -sqrt(Delta_i)`` (+ root of
    eq. 2), singular where Delta_i = 0.
    ``pose`` (7,) gives (6, 6); (N, 7) gives (N, 6, 6). NaN where IK has no real solution.
    """
    arr = np.asarray(pose, dtype=float)
    poses = _as_poses(arr)
    _, rb, d = _legs(geom, poses)
    u = geom.guide_directions
    du = np.einsum('nki,ki->nk', d, u)
    disc = du * du - np.einsum('nki,nki->nk', d, d) + geom.link_length ** 2
    with np.errstate(invalid='ignore'):
        root = np.sqrt(disc)
    links = d - (du + root)[..., None] * u   # L_i . u_i = du - q_abs = -sqrt(Delta_i)
    jinv = np.concatenate([links, np.cross(rb, links)], axis=-1) / -root[..., None]
    return jinv[0] if arr.ndim == 1 else jinv


def kinetostatic_index(geom: HexaslideGeometry, poses) -> np.ndarray:
    """Seed 001 kinetostatic bound: ``||J^-T||_2``, the largest actuator force per unit wrench.

    Statics: wrench ``W = Jinv^T f`` (f: slider forces), so ``f = Jinv^-T W`` and the maximum
    multiplication of external loads is ``||Jinv^-T||_2 = 1 / sigma_min(Jinv)`` (mixed units,
    as in the paper: forces and torques in one 6-vector). ``inf`` where IK fails.
    """
    jinv = inverse_jacobian(geom, _as_poses(poses))
    out = np.full(jinv.shape[0], np.inf)
    good = np.all(np.isfinite(jinv), axis=(1, 2))
    if np.any(good):
        sv = np.linalg.svd(jinv[good], compute_uv=False)
        with np.errstate(divide='ignore'):
            out[good] = 1.0 / sv[:, -1]
    return out


def chain_points(geom: HexaslideGeometry, pose, q):
    """Slider (base joint) centres and platform joint centres in hexapod_base, (6, 3) each.

    For drawing the closed chain (rviz markers): link i joins ``sliders[i]`` to ``joints[i]``.
    """
    pose = np.asarray(pose, dtype=float)
    sliders = geom.guide_origins + (geom.q_home + np.asarray(q, dtype=float))[:, None] * geom.guide_directions
    joints = pose[:3] + geom.platform_joints @ quat_to_matrix(pose[3:]).T
    return sliders, joints
