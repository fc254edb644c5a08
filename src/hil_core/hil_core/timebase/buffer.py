"""Medium level (seed 000 section 4.2): the reference ring buffer with write and read indices.

"Every buffer slot contains a six components pose for a maximum of six slots." A pose is kept
as six components ``[x, y, z, rx, ry, rz]`` (position and rotation vector about the home
orientation): the low level blends poses linearly, and linear blending of rotation vectors is
smooth and exact for constant-rate rotations about a fixed axis (hexapod tilts stay far from
the pi singularity of the chart). Every slot also keeps the stamp of its reference so that the
delay from reference to servo setpoint can be measured exactly.

W (write index) advances once per high-level cycle, R (read index) once per move start; both
are counters (slot = index mod size). ``distance = W - R`` is the number of written poses not
yet read. Writer faults are handled here, before the poses reach the motion program:

* a stamp not newer than the last written one by half a period (duplicate, out of order) is
  refused;
* a gap of up to ``max_gap_fill`` missing periods (dropped references) is filled by linear
  interpolation, so W keeps advancing at the high-level rate and the curve does not double a
  step: the buffered look-ahead is what makes this possible before the pose is needed. After a
  longer gap (the stream stopped and restarted) only the last ``max_gap_fill`` periods are
  filled, which restores the default distance at once;
* a full buffer (writer far ahead of the reader) drops its oldest unread pose (overrun): the
  delay stays bounded, which is what a HIL loop needs.
"""
from __future__ import annotations

import numpy as np

from hil_core.maths.rotations import quat_to_rotvec, rotvec_to_quat


def pose7_to_pose6(poses):
    """[x, y, z, qx, qy, qz, qw] -> [x, y, z, rx, ry, rz] (rotation vector about home)."""
    poses = np.asarray(poses, dtype=float)
    return np.concatenate([poses[..., :3], quat_to_rotvec(poses[..., 3:7])], axis=-1)


def pose6_to_pose7(poses):
    poses = np.asarray(poses, dtype=float)
    return np.concatenate([poses[..., :3], rotvec_to_quat(poses[..., 3:6])], axis=-1)


class RingBuffer:
    """Six-component poses with stamps, write index W and read index R (see module doc)."""

    def __init__(self, size: int = 6, period: float = 0.0025, max_gap_fill: int = 2):
        if size < 3:
            raise ValueError(f'buffer size must be at least 3, got {size}')
        if not period > 0.0:
            raise ValueError(f'period must be positive, got {period}')
        self.size = int(size)
        self.period = float(period)
        self.max_gap_fill = int(max_gap_fill)
        self.poses = np.zeros((self.size, 6))
        self.stamps = np.zeros(self.size)
        self.w = -1            # index of the last written pose
        self.r = -1            # index of the last read pose
        self.overruns = 0
        self.refused = 0
        self.filled = 0

    @property
    def distance(self) -> int:
        return self.w - self.r

    @property
    def last_stamp(self) -> float | None:
        return None if self.w < 0 else float(self.stamps[self.w % self.size])

    def _put(self, pose6, stamp: float) -> None:
        if self.w - self.r >= self.size:
            self.r += 1                      # overwrite the oldest unread pose
            self.overruns += 1
        self.w += 1
        self.poses[self.w % self.size] = pose6
        self.stamps[self.w % self.size] = stamp

    def write(self, pose6, stamp: float) -> str:
        """Write one reference; returns 'ok', 'filled:<n>', 'stale' or 'invalid'."""
        pose6 = np.asarray(pose6, dtype=float)
        if pose6.shape != (6,) or not np.all(np.isfinite(pose6)) or not np.isfinite(stamp):
            self.refused += 1
            return 'invalid'
        last = self.last_stamp
        if last is not None:
            gap = (stamp - last) / self.period
            if gap < 0.5:
                self.refused += 1
                return 'stale'
            missing = int(round(gap)) - 1
            if missing >= 1:
                # fill the last max_gap_fill missing periods by linear interpolation in time: a
                # short gap is filled completely, a long one (stream restart) gets just enough
                # look-ahead to restore the default distance at once
                n_fill = min(missing, self.max_gap_fill)
                prev = self.poses[self.w % self.size].copy()
                for i in range(missing - n_fill + 1, missing + 1):
                    a = i / (missing + 1)
                    self._put(prev + a * (pose6 - prev), last + a * (stamp - last))
                self.filled += n_fill
                self._put(pose6, stamp)
                return f'filled:{n_fill}'
        self._put(pose6, stamp)
        return 'ok'

    def read(self):
        """Advance R and return (pose6, stamp), or None when nothing unread is left (underrun)."""
        if self.w <= self.r:
            return None
        self.r += 1
        i = self.r % self.size
        return self.poses[i].copy(), float(self.stamps[i])
