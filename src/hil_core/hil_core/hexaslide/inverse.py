"""Inverse kinematics, analytic inverse Jacobian and kinetostatic index (seed 001 eq. 1-2).

Eq. 1: ``d_i = p + R b_i - c_i`` (c_i: guide origin); eq. 2 with the + root:
``q_i = d_i . u_i + sqrt(Delta_i)``, ``Delta_i = d_i^T (u_i u_i^T - I) d_i + l^2``.
Everything is vectorised over a leading axis of poses ``[x, y, z, qx, qy, qz, qw]``.
:func:`inverse_kinematics` runs the compiled kernel of :mod:`.inverse_kernel`;
:func:`inverse_kinematics_numpy` (:mod:`.inverse_numpy`) is its plain-numpy twin and test oracle.
:func:`hexaslide_ik` wraps either as the IK callable of the time base (``hil_core.timebase``).
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from hil_core.maths.rotations import quat_to_matrix

from . import inverse_kernel
from .geometry import HexaslideGeometry, load_geometry
# the result record, its reason codes and the pose helpers are shared with the oracle
from .inverse_numpy import (INVALID_INPUT, NO_REAL_SOLUTION, OK, PASSIVE_JOINT_RANGE, REASON_TEXT, SLIDER_STROKE,
                            IKResult, _as_poses, _legs, inverse_kinematics_numpy)

__all__ = ['INVALID_INPUT', 'NO_REAL_SOLUTION', 'OK', 'PASSIVE_JOINT_RANGE', 'REASON_TEXT', 'SLIDER_STROKE',
           'IKResult', 'chain_points', 'hexaslide_ik', 'inverse_jacobian', 'inverse_kinematics',
           'inverse_kinematics_numpy', 'kinetostatic_index', 'warm_up']


def inverse_kinematics(geom: HexaslideGeometry, poses) -> IKResult:
    """Slider displacements from home for TCP poses in ``hexapod_base`` (seed 001 eq. 2).

    Compiled (a few microseconds per call); the same numbers as :func:`inverse_kinematics_numpy`.
    The first call in a process compiles or loads the kernel (:func:`warm_up`).
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


def hexaslide_ik(geometry='hexaslide_scaled', compiled: bool = True) -> Callable[[np.ndarray], tuple]:
    """The time base's IK callable ``(N, 7) poses -> (q (N, 6), ok (N,))`` for a hexaslide
    geometry (object or name).

    Compiled (default): it carries the packed geometry as ``kernel_params``, so
    ``hil_core.timebase.TimeBaseEngine`` solves its segment points inside the frame kernel.
    ``compiled=False``: plain-numpy IK (the oracle; the engine then calls it from Python).
    """
    geom = load_geometry(geometry) if isinstance(geometry, str) else geometry
    if not compiled:
        def ik(poses7):
            r = inverse_kinematics_numpy(geom, poses7)
            return r.q, r.ok
        ik.geometry = geom
        return ik
    params = inverse_kernel.pack_geometry(geom)

    def ik(poses7):
        poses7 = np.ascontiguousarray(np.asarray(poses7, dtype=float).reshape(-1, 7))
        q, ok = np.empty((len(poses7), 6)), np.empty(len(poses7), dtype=np.bool_)
        inverse_kernel.ik_q(params, poses7, q, ok)
        return q, ok
    ik.geometry = geom
    ik.kernel_params = params
    # the kernel for these parameters (a read-only array: a signature of its own) is loaded now,
    # at configure, not in the first frame of a run (it was: 3 ms there)
    ik(np.array([0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0]))
    return ik


def warm_up() -> float:
    """Compile or load the IK kernels (``inverse_kernel``); seconds taken (0 once done)."""
    return inverse_kernel.warm_up()
