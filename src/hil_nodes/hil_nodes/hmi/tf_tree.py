"""A small transform tree for the view: the edges /tf, /tf_static and the URDF's joints give,
each frame's pose in a fixed frame by composing edges up to it (what rviz's TF display does
with tf2). No interpolation: the view shows the newest edge of each frame (live) or the
newest at or before the slider time (replay)."""
from __future__ import annotations

import numpy as np

from hil_core.maths.tf_frames import compose

IDENTITY = (np.zeros(3), np.array([0.0, 0.0, 0.0, 1.0]))


class TfTree:
    def __init__(self):
        self.edges: dict[str, tuple[str, np.ndarray, np.ndarray]] = {}   # child -> (parent, xyz, quat xyzw)

    def set(self, parent: str, child: str, xyz, quat_xyzw) -> None:
        self.edges[child.lstrip('/')] = (parent.lstrip('/'), np.asarray(xyz, float), np.asarray(quat_xyzw, float))

    def update(self, transforms) -> None:
        """``transforms``: (parent, child, xyz, quat xyzw) tuples (hil_core.maths.tf_frames)."""
        for parent, child, xyz, quat in transforms:
            self.set(parent, child, xyz, quat)

    def copy(self) -> 'TfTree':
        out = TfTree()
        out.edges = dict(self.edges)
        return out

    def root_of(self, frame: str) -> str:
        """The topmost ancestor of ``frame`` (itself when it has no parent)."""
        seen = {frame}
        while frame in self.edges:
            frame = self.edges[frame][0]
            if frame in seen:          # a loop in what was received: stop where it closes
                break
            seen.add(frame)
        return frame

    def pose(self, frame: str, fixed: str) -> tuple[np.ndarray, np.ndarray] | None:
        """(xyz, quat xyzw) of ``frame`` in ``fixed``; None when ``frame`` does not hang below it."""
        chain = []
        f = frame.lstrip('/')
        while f != fixed:
            edge = self.edges.get(f)
            if edge is None or len(chain) > len(self.edges):
                return None
            chain.append((edge[0], f, edge[1], edge[2]))
            f = edge[0]
        t = (fixed, fixed, *IDENTITY)
        for edge in reversed(chain):
            t = compose(t, edge)
        return t[2], t[3]


def xyzw_to_wxyz(q) -> tuple[float, float, float, float]:
    """viser (three.js side) takes quaternions as wxyz; ROS gives xyzw."""
    return float(q[3]), float(q[0]), float(q[1]), float(q[2])
