"""Synchronization coefficient (seed 000 section 4.1.1).

At motion start the external model's first reference and the robot's pose may disagree. The
coefficient c goes 0 -> 1 over ``duration`` with a C1 shape at both ends; the output blends the
robot's pose at the start (``start_pose``) into the *incoming* reference::

    p_out = (1 - c) p_start + c p_ref,     q_out = slerp(q_start, q_ref, c)

Once c reaches 1 the block is transparent: the reference is returned as the same array object,
bit-identical. Orientation is blended on the shortest arc (rotation vector of q_start^-1 q_ref).
"""
from __future__ import annotations

import numpy as np

from hil_core.planner.ramps import check_shape, ramp
from hil_core.maths.rotations import quat_multiply, quat_conjugate, quat_normalize, quat_to_rotvec, rotvec_to_quat


def slerp(q0, q1, c):
    """Shortest-arc spherical interpolation, q0 at c = 0, q1 at c = 1 (scalar-last quaternions)."""
    q0 = quat_normalize(q0)
    rel = quat_multiply(quat_conjugate(q0), quat_normalize(q1))
    return quat_multiply(q0, rotvec_to_quat(quat_to_rotvec(rel) * np.asarray(c, dtype=float)[..., None]))


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

    def step(self, reference):
        """Advance one period and return the blended pose (the reference itself once c = 1)."""
        if self.start_pose is None:
            raise RuntimeError('SyncRamp.step before start()')
        self.k = min(self.k + 1, self.steps)
        if self.k >= self.steps:
            return reference
        c = self.coefficient
        out = np.empty(7)
        out[:3] = (1.0 - c) * self.start_pose[:3] + c * np.asarray(reference[:3], dtype=float)
        out[3:] = slerp(self.start_pose[3:], reference[3:], c)
        return out
