"""The drives' fast acceptance of a plain joint trajectory: the common command decided on whole
arrays, the full check (``TrajectoryFollower.accept``) for everything else.

The mock drives take 400 trajectories a second. The full check builds a ``Trajectory`` of
``Point`` tuples from the message and runs the JTC rules, the guard and the reordering on them:
80 us per message on an idle machine, 250-400 us in a running one-process graph (14 % of its
CPU in a py-spy profile, 2026-11-26). A *plain* trajectory (every point with one position per
joint, velocities on every point or on none, no accelerations, no effort, each joint named once
and all of the controller's joints named) is decided here from a few arrays in ~10 us.

The rule: :func:`accept_plain` returns an :class:`~hil_core.drives.plants.controllers.Acceptance`
only for a trajectory the full check accepts, with the same entry to the last bit; anything it
does not accept outright (a limit crossed, a NaN, an end in the past, times not increasing,
a partial goal) returns None and goes to the full check, which gives the reason. So a refusal
always comes from the full check, and the full check is this function's test oracle
(test/nodes/test_plain_trajectory.py, hypothesis).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hil_core.drives.joint_trajectory import FLOAT_EPSILON, Point, Trajectory
from hil_core.drives.plants.plain_trajectory_kernel import plain_kernel
from hil_core.maths.jit import timed_warm_up

NS_PER_S = 1_000_000_000
_MAX_NAME_ORDERS = 8           # name orders remembered (a hostile stream must not grow the cache)


@dataclass(frozen=True)
class PlainTrajectory:
    """A plain trajectory_msgs/JointTrajectory as arrays: ``times_ns`` (points,) int64,
    ``positions`` (points, names), ``velocities`` the same or None (no point has any)."""
    joint_names: tuple
    stamp_ns: int
    times_ns: np.ndarray
    positions: np.ndarray
    velocities: np.ndarray | None


def trajectory_of_plain(plain: PlainTrajectory) -> Trajectory:
    """The ``Trajectory`` of a plain one, for the full check (the inverse of
    ``plain_from_trajectory``)."""
    vel = plain.velocities
    return Trajectory(tuple(plain.joint_names),
                      tuple(Point(int(t), tuple(map(float, plain.positions[k])),
                                  () if vel is None else tuple(map(float, vel[k])))
                            for k, t in enumerate(plain.times_ns.tolist())),
                      int(plain.stamp_ns))


def plain_from_trajectory(traj: Trajectory) -> PlainTrajectory | None:
    """The :class:`PlainTrajectory` of ``traj``, or None when it is not plain (the test twin of
    ``hil_nodes.msgs.convert.plain_trajectory_from_msg``, which reads a message directly)."""
    names, points = tuple(traj.joint_names), traj.points
    n = len(names)
    if not n or not points:
        return None
    nv = len(points[0].velocities)
    if nv not in (0, n) or any(len(p.positions) != n or len(p.velocities) != nv or p.accelerations or p.effort
                               for p in points):
        return None
    return PlainTrajectory(names, int(traj.stamp_ns),
                           np.array([p.time_from_start_ns for p in points], dtype=np.int64),
                           np.array([p.positions for p in points], dtype=float).reshape(len(points), n),
                           np.array([p.velocities for p in points], dtype=float).reshape(len(points), n)
                           if nv else None)


def seconds(times_ns: np.ndarray) -> np.ndarray:
    """time_from_start in seconds exactly as ``sec + nanosec * 1e-9`` of the message (both the
    fast path and ``TrajectoryFollower.accept`` use it: their entries are compared bit for bit)."""
    return (times_ns // NS_PER_S) + (times_ns % NS_PER_S) * 1e-9


class PlainAcceptance:
    """:func:`accept_plain` for one controller: its joints, JTC settings and limits in the
    controller's order, and ``order`` (the controller's index of each hardware joint)."""

    def __init__(self, joints: tuple, settings, limits, order: np.ndarray):
        self.joints = tuple(joints)
        self.check_end_velocity = not settings.allow_nonzero_velocity_at_trajectory_end
        self.lo, self.hi, self.vmax = (np.asarray(x, dtype=float) for x in limits)
        self.order = np.asarray(order)
        self._columns: dict[tuple, np.ndarray | None] = {}
        warm_up()              # the kernel is loaded here (the drives' configure), not at the first command

    def columns(self, names: tuple) -> np.ndarray | None:
        """Index into ``names`` of each controller joint; None unless ``names`` is the controller's
        joints each once (any order): partial goals, duplicates and unknown joints are not plain."""
        cols = self._columns.get(names, False)
        if cols is False:
            ok = len(names) == len(self.joints) and set(names) == set(self.joints)
            cols = np.array([names.index(j) for j in self.joints]) if ok else None
            if len(self._columns) < _MAX_NAME_ORDERS:
                self._columns[names] = cols
        return cols

    def accept(self, plain: PlainTrajectory, now_ns: int):
        """The entry ``(times s, positions, velocities)`` in hardware order when the full check
        accepts ``plain`` at ``now_ns``; None: let the full check decide. One compiled call
        (``plain_kernel``, 2 us on an idle machine against 24 us for :meth:`accept_numpy`)."""
        cols = self.columns(plain.joint_names)
        if cols is None:
            return None
        t = plain.times_ns
        if plain.stamp_ns != 0 and plain.stamp_ns + int(t[-1]) < now_ns:
            return None
        vel = _NO_VELOCITIES if plain.velocities is None else plain.velocities
        ok, times, pos, out_v = plain_kernel(t, plain.positions, vel, cols, self.order, self.lo, self.hi,
                                             self.vmax, self.check_end_velocity, FLOAT_EPSILON)
        if not ok:
            return None
        return times, pos, (None if plain.velocities is None else out_v)

    def accept_numpy(self, plain: PlainTrajectory, now_ns: int):
        """:meth:`accept` in numpy (the compiled kernel's twin; both have the full check as oracle)."""
        cols = self.columns(plain.joint_names)
        if cols is None:
            return None
        t = plain.times_ns
        if t[0] < 0 or (len(t) > 1 and not (np.diff(t) > 0).all()):
            return None
        if plain.stamp_ns != 0 and plain.stamp_ns + int(t[-1]) < now_ns:
            return None
        pos = plain.positions[:, cols]
        if not ((pos >= self.lo).all() and (pos <= self.hi).all()):      # NaN fails both
            return None
        vel = plain.velocities
        if vel is not None:
            vel = vel[:, cols]
            if not ((np.abs(vel) <= self.vmax).all() and np.isfinite(vel).all()):
                return None
            if self.check_end_velocity and not (np.abs(vel[-1]) <= FLOAT_EPSILON).all():
                return None
            vel = vel[:, self.order]
        if not np.isfinite(pos).all():          # limits of +-inf let inf through the comparisons
            return None
        return seconds(t), pos[:, self.order], vel


_NO_VELOCITIES = np.zeros((0, 0))


def warm_up() -> float:
    """Compile (or load from the cache) the kernel, with and without velocities; seconds taken."""
    def run():
        idx = np.arange(2)
        for vel in (np.zeros((1, 2)), _NO_VELOCITIES):
            plain_kernel(np.zeros(1, dtype=np.int64), np.zeros((1, 2)), vel, idx, idx, -np.ones(2), np.ones(2),
                         np.ones(2), True, 1e-7)
    return timed_warm_up(run)
