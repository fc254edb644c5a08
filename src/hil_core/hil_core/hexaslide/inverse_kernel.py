"""Compiled inverse kinematics of the Hexaslide (seed 001 eq. 1-2): the kernels of :mod:`.inverse`.

:func:`inverse_kinematics_numpy` (inverse_numpy.py) is the test oracle; this module computes the same
numbers pose by pose in a numba kernel: the same operations in the same order (numpy's einsum
sums three terms as (a0 + a2) + a1, its norms sequentially, both reproduced here), so q and the
discriminants agree to the last bit or within a few ulps where numpy's SIMD transcendental
functions (arccos) differ from libm's (test/unit/test_hexaslide_compiled.py).

``pack_geometry`` turns a :class:`HexaslideGeometry` into one float array (layout below) that
the kernels read, also from inside the timebase kernel (hil_core.timebase.engine).
"""
from __future__ import annotations

import math

import numpy as np

from .geometry import HexaslideGeometry
from hil_core.maths.jit import njit_cached, timed_warm_up

# packed geometry: scalars, then LEG_SIZE values per leg
P_LINK, P_LINK2, P_UNIVERSAL, P_SPHERICAL, P_HOME_Z = 0, 1, 2, 3, 4
LEGS = 8
LEG_SIZE = 16
# per leg: b (3), c (3), u (3), q_home, stroke_min, stroke_max, link_home (3), unused
L_B, L_C, L_U, L_QHOME, L_MIN, L_MAX, L_H = 0, 3, 6, 9, 10, 11, 12

# reason codes (same values as inverse_numpy.py)
OK, NO_REAL_SOLUTION, SLIDER_STROKE, PASSIVE_JOINT_RANGE, INVALID_INPUT = 0, 1, 2, 3, 4


def pack_geometry(geom: HexaslideGeometry) -> np.ndarray:
    """Everything the IK kernel needs, one read-only float64 array (cached on the geometry)."""
    packed = geom.__dict__.get('_compiled_params')
    if packed is not None:
        return packed
    p = np.zeros(LEGS + 6 * LEG_SIZE)
    p[P_LINK], p[P_LINK2] = geom.link_length, geom.link_length ** 2
    p[P_UNIVERSAL], p[P_SPHERICAL] = geom.universal_limit, geom.spherical_limit
    p[P_HOME_Z] = geom.home_height
    for k in range(6):
        o = LEGS + k * LEG_SIZE
        p[o + L_B:o + L_B + 3] = geom.platform_joints[k]
        p[o + L_C:o + L_C + 3] = geom.guide_origins[k]
        p[o + L_U:o + L_U + 3] = geom.guide_directions[k]
        p[o + L_QHOME] = geom.q_home[k]
        p[o + L_MIN], p[o + L_MAX] = geom.stroke_min[k], geom.stroke_max[k]
        p[o + L_H:o + L_H + 3] = geom.link_home[k]
    p.setflags(write=False)
    object.__setattr__(geom, '_compiled_params', p)     # frozen dataclass: cache beside its fields
    return p


@njit_cached
def ik_pose(prm, pose, q, disc, uni, sph):
    """IK of one pose (7,) into q, disc, uni, sph (6,) each; returns the reason code.

    Mirrors inverse_kinematics_numpy for one row: an invalid pose is evaluated at home
    (its discriminants and angles are reported) with q NaN.
    """
    valid = True
    for i in range(7):
        if not math.isfinite(pose[i]):
            valid = False
    qx, qy, qz, qw = pose[3], pose[4], pose[5], pose[6]
    norm = math.sqrt(((qx * qx + qy * qy) + qz * qz) + qw * qw)
    if not norm > 1e-9:
        valid = False
    if valid:
        px, py, pz = pose[0], pose[1], pose[2]
    else:
        px, py, pz, qx, qy, qz, qw, norm = 0.0, 0.0, prm[P_HOME_Z], 0.0, 0.0, 0.0, 1.0, 1.0
    x, y, z, w = qx / norm, qy / norm, qz / norm, qw / norm      # quat_normalize
    r00, r01, r02 = 1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)
    r10, r11, r12 = 2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)
    r20, r21, r22 = 2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)
    l, l2 = prm[P_LINK], prm[P_LINK2]
    real = True
    stroke = False
    passive = False
    for k in range(6):
        o = LEGS + k * LEG_SIZE
        bx, by, bz = prm[o + L_B], prm[o + L_B + 1], prm[o + L_B + 2]
        rbx = (r00 * bx + r01 * by) + r02 * bz
        rby = (r10 * bx + r11 * by) + r12 * bz
        rbz = (r20 * bx + r21 * by) + r22 * bz
        dx = (px + rbx) - prm[o + L_C]
        dy = (py + rby) - prm[o + L_C + 1]
        dz = (pz + rbz) - prm[o + L_C + 2]
        ux, uy, uz = prm[o + L_U], prm[o + L_U + 1], prm[o + L_U + 2]
        du = (dx * ux + dz * uz) + dy * uy                       # numpy einsum order
        dd = (dx * dx + dz * dz) + dy * dy
        dk = du * du - dd + l2
        disc[k] = dk
        if dk >= 0.0:
            q_abs = du + math.sqrt(dk)
            q[k] = q_abs - prm[o + L_QHOME]
        else:
            real = False
            q_abs = du + math.sqrt(0.0)
            q[k] = np.nan
        lx, ly, lz = (dx - q_abs * ux) / l, (dy - q_abs * uy) / l, (dz - q_abs * uz) / l
        hx, hy, hz = prm[o + L_H], prm[o + L_H + 1], prm[o + L_H + 2]
        uni[k] = math.acos(min(max((lx * hx + lz * hz) + ly * hy, -1.0), 1.0))
        tx = (r00 * lx + r10 * ly) + r20 * lz                    # R^T link
        ty = (r01 * lx + r11 * ly) + r21 * lz
        tz = (r02 * lx + r12 * ly) + r22 * lz
        sph[k] = math.acos(min(max((tx * hx + tz * hz) + ty * hy, -1.0), 1.0))
        if uni[k] > prm[P_UNIVERSAL] or sph[k] > prm[P_SPHERICAL]:
            passive = True
        if q[k] < prm[o + L_MIN] or q[k] > prm[o + L_MAX]:
            stroke = True
    if not valid:
        for k in range(6):
            q[k] = np.nan
        return INVALID_INPUT
    if not real:
        return NO_REAL_SOLUTION
    if stroke:
        return SLIDER_STROKE
    if passive:
        return PASSIVE_JOINT_RANGE
    return OK


@njit_cached
def ik_batch(prm, poses, q, ok, reason, disc, uni, sph):
    """IK of poses (N, 7) into q, disc, uni, sph (N, 6), ok and reason (N,)."""
    for i in range(poses.shape[0]):
        reason[i] = ik_pose(prm, poses[i], q[i], disc[i], uni[i], sph[i])
        ok[i] = reason[i] == OK


@njit_cached
def ik_q(prm, poses, q, ok):
    """Only what the timebase needs: q (N, 6) and ok (N,) bool (scratch angles on the stack)."""
    disc = np.empty(6)
    uni = np.empty(6)
    sph = np.empty(6)
    for i in range(poses.shape[0]):
        ok[i] = ik_pose(prm, poses[i], q[i], disc, uni, sph) == OK


_warm = [None]


def warm_up() -> float:
    """Compile (or load from the on-disk cache) the IK kernels; seconds taken (0 once done)."""
    if _warm[0] is not None:
        return 0.0

    def run():
        prm = np.zeros(LEGS + 6 * LEG_SIZE)
        prm[P_LINK] = prm[P_LINK2] = 1.0
        poses = np.zeros((1, 7))
        q, a, b, c = (np.empty((1, 6)) for _ in range(4))
        ik_batch(prm, poses, q, np.empty(1, dtype=np.bool_), np.empty(1, dtype=np.int64), a, b, c)
        ik_q(prm, poses, q, np.empty(1, dtype=np.bool_))
    _warm[0] = timed_warm_up(run)
    return _warm[0]
