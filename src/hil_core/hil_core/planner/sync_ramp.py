"""Synchronization coefficient (seed 000 section 4.1.1).

At motion start the external model's first reference and the robot's pose may disagree. The
coefficient c goes 0 -> 1 over ``duration`` with a C1 shape at both ends; the output blends the
robot's pose at the start (``start_pose``) into the *incoming* reference::

    p_out = (1 - c) p_start + c p_ref,     q_out = slerp(q_start, q_ref, c)

Once c reaches 1 the block is transparent: the reference is returned as the same array object,
bit-identical. Orientation is blended on the shortest arc (rotation vector of q_start^-1 q_ref).
"""
from __future__ import annotations

import math

import numpy as np

from hil_core.planner.ramps import check_shape, ramp
from hil_core.maths.rotations import quat_multiply, quat_conjugate, quat_normalize, quat_to_rotvec, rotvec_to_quat


def slerp_numpy(q0, q1, c):
    """Shortest-arc spherical interpolation, q0 at c = 0, q1 at c = 1 (scalar-last quaternions),
    vectorised over leading axes: ``slerp``'s oracle and its way for arrays of quaternions."""
    q0 = quat_normalize(q0)
    rel = quat_multiply(quat_conjugate(q0), quat_normalize(q1))
    return quat_multiply(q0, rotvec_to_quat(quat_to_rotvec(rel) * np.asarray(c, dtype=float)[..., None]))


def slerp(q0, q1, c):
    """``slerp_numpy``; one pair of quaternions and one coefficient (the planner's every frame while
    it synchronizes, seed 000 4.1.1) in plain floats: the same operations in the same order as
    numpy's, 131 us -> a few us here (calibration 0.8 s). Eight numpy calls on 4-vectors had made
    the synchronizing frames the planner's slowest, 0.4-0.8 ms at twice the pace on a slow core:
    the start of a run, where the supervisor judged real time lost."""
    q0, q1 = np.asarray(q0, dtype=float), np.asarray(q1, dtype=float)
    if q0.shape != (4,) or q1.shape != (4,) or np.ndim(c) != 0:
        return slerp_numpy(q0, q1, c)
    c = float(c)
    ax, ay, az, aw = q0.tolist()
    n = math.sqrt(ax * ax + ay * ay + az * az + aw * aw)
    ax, ay, az, aw = ax / n, ay / n, az / n, aw / n
    bx, by, bz, bw = q1.tolist()
    n = math.sqrt(bx * bx + by * by + bz * bz + bw * bw)
    bx, by, bz, bw = bx / n, by / n, bz / n, bw / n
    # rel = conj(q0) * q1 (quat_multiply's formula with a = (-ax, -ay, -az, aw))
    rx = aw * bx - ax * bw - ay * bz + az * by
    ry = aw * by + ax * bz - ay * bw - az * bx
    rz = aw * bz - ax * by + ay * bx - az * bw
    rw = aw * bw + ax * bx + ay * by + az * bz
    # quat_to_rotvec(rel): normalised, shortest arc, angle * axis
    n = math.sqrt(rx * rx + ry * ry + rz * rz + rw * rw)
    rx, ry, rz, rw = rx / n, ry / n, rz / n, rw / n
    if rw < 0:
        rx, ry, rz, rw = -rx, -ry, -rz, -rw
    s = math.sqrt(rx * rx + ry * ry + rz * rz)
    k = 2.0 * math.atan2(s, rw) / s if s > 1e-12 else 2.0 + (2.0 / 3.0) * s ** 2
    vx, vy, vz = rx * k * c, ry * k * c, rz * k * c
    # rotvec_to_quat(v)
    angle = math.sqrt(vx * vx + vy * vy + vz * vz)
    half = 0.5 * angle
    k = math.sin(half) / angle if angle > 1e-8 else 0.5 - angle ** 2 / 48.0
    dx, dy, dz, dw = vx * k, vy * k, vz * k, math.cos(half)
    # q0 * d
    return np.array([aw * dx + ax * dw + ay * dz - az * dy,
                     aw * dy - ax * dz + ay * dw + az * dx,
                     aw * dz + ax * dy - ay * dx + az * dw,
                     aw * dw - ax * dx - ay * dy - az * dz])


class SyncRamp:
    """Per-cycle synchronization coefficient; ``step`` is called once per high-level period."""

    def __init__(self, duration: float, dt: float, shape: str = 'quintic'):
        if not (np.isfinite(duration) and duration > 0):
            raise ValueError(f'sync duration must be > 0 s, got {duration}')
        if not (np.isfinite(dt) and dt > 0):
            raise ValueError(f'dt must be > 0 s, got {dt}')
        self.duration = float(duration)
        self.dt = float(dt)
        self.shape = check_shape(shape)
        self.start_pose = None
        self.k = 0

    @property
    def steps(self) -> int:
        return max(1, int(np.ceil(self.duration / self.dt - 1e-9)))

    def start(self, start_pose) -> None:
        p = np.asarray(start_pose, dtype=float)
        if p.shape != (7,) or not np.all(np.isfinite(p)):
            raise ValueError(f'start pose must be 7 finite numbers, got {start_pose}')
        self.start_pose = p.copy()
        self.k = 0

    @property
    def coefficient(self) -> float:
        return float(ramp(self.k / self.steps, self.shape))

    @property
    def done(self) -> bool:
        return self.start_pose is not None and self.k >= self.steps

    def next_coefficient(self) -> float | None:
        """The coefficient the next ``step`` blends with; None when it returns the reference itself
        (c = 1; the planner's compiled frame blends with it, ``quiet_frame``)."""
        k = min(self.k + 1, self.steps)
        return None if k >= self.steps else float(ramp(k / self.steps, self.shape))

    def advance(self) -> None:
        """One period on, without blending (what ``step`` does besides; ``quiet_frame``)."""
        self.k = min(self.k + 1, self.steps)

    def step(self, reference):
        """Advance one period and return the blended pose (the reference itself once c = 1)."""
        if self.start_pose is None:
            raise RuntimeError('SyncRamp.step before start()')
        c = self.next_coefficient()
        self.advance()
        if c is None:
            return reference
        out = np.empty(7)
        out[:3] = (1.0 - c) * self.start_pose[:3] + c * np.asarray(reference[:3], dtype=float)
        out[3:] = slerp(self.start_pose[3:], reference[3:], c)
        return out
