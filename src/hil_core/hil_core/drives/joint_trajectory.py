"""Joint trajectories exactly as a ROS 2 Kilted joint_trajectory_controller (JTC) accepts them.

Two layers, each with its own reasons (docs/lab_ros2_control.md, STYLE.md section 2):

* :func:`jtc_validate`: the acceptance rules of ``JointTrajectoryController::
  validate_trajectory_msg`` (ros2_controllers, branch ``kilted``), in the same order, with the
  same parameter names and defaults (:class:`JtcSettings`). The first failing rule refuses the
  whole message; a refused message is dropped and the running trajectory goes on.
* :func:`guard_trajectory`: what the JTC does *not* check (NaN/inf, joint limits, duplicate
  names, negative times). A mock that behaves like the stock part runs the JTC rules first and
  this guard second, and counts the two kinds of refusal separately.

Plus :func:`to_controller_order` (``fill_partial_goal`` + ``sort_to_local_joint_order``).

Messages are plain data here (:class:`Trajectory`, :class:`Point`; no rclpy in hil_core); times
are integer nanoseconds, as ``rclcpp::Time``/``Duration`` hold them, so the "ends in the past"
comparison is exact. ``hil_nodes.msgs.convert.trajectory_from_msg`` builds one from a message.

The previous combined check of the mock (:func:`validate_joint_trajectory`, with
:func:`order_joint_trajectory` and :func:`sample_knots`) lives in
:mod:`hil_core.drives.joint_trajectory_legacy` and is re-exported here until the mock is switched.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from hil_core.drives.joint_trajectory_legacy import (order_joint_trajectory, sample_knots,  # noqa: F401 (re-export)
                                              validate_joint_trajectory)

# std::numeric_limits<float>::epsilon(): the JTC's threshold for a "non-zero" end velocity
FLOAT_EPSILON = float(np.finfo(np.float32).eps)


@dataclass(frozen=True)
class Point:
    """One trajectory_msgs/JointTrajectoryPoint; empty tuples are empty fields."""
    time_from_start_ns: int
    positions: tuple = ()
    velocities: tuple = ()
    accelerations: tuple = ()
    effort: tuple = ()


@dataclass(frozen=True)
class Trajectory:
    """One trajectory_msgs/JointTrajectory: ``stamp_ns`` = header.stamp (0 = start now)."""
    joint_names: tuple
    points: tuple
    stamp_ns: int = 0

    @classmethod
    def from_arrays(cls, joint_names, stamp_ns: int, times, positions, velocities=None,
                    accelerations=None) -> 'Trajectory':
        """Rows of positions/velocities per point; ``times`` in seconds, rounded to whole
        nanoseconds exactly as ``hil_nodes.msgs.convert.sec_to_duration`` does."""
        pts = []
        for i, t in enumerate(times):
            pts.append(Point(int(round(float(t) * 1e9)),
                             tuple(float(x) for x in positions[i]),
                             () if velocities is None else tuple(float(x) for x in velocities[i]),
                             () if accelerations is None else tuple(float(x) for x in accelerations[i])))
        return cls(tuple(joint_names), tuple(pts), int(stamp_ns))


@dataclass(frozen=True)
class JtcSettings:
    """The JTC parameters that decide acceptance (names and defaults of
    joint_trajectory_controller_parameters.yaml, kilted)."""
    joints: tuple
    command_interfaces: tuple = ('position',)
    allow_partial_joints_goal: bool = False
    allow_nonzero_velocity_at_trajectory_end: bool = False
    allow_integration_in_goal_trajectories: bool = False

    @property
    def has_effort_command_interface(self) -> bool:
        return 'effort' in self.command_interfaces

    @classmethod
    def from_parameters(cls, params: dict) -> 'JtcSettings':
        """From a controller's ``ros__parameters`` (config/controllers.yaml); absent = default."""
        names = ('allow_partial_joints_goal', 'allow_nonzero_velocity_at_trajectory_end',
                 'allow_integration_in_goal_trajectories')
        return cls(tuple(params['joints']), tuple(params.get('command_interfaces', ('position',))),
                   **{k: bool(params[k]) for k in names if k in params})


@dataclass(frozen=True)
class Verdict:
    """Outcome of a check: ``reason`` is a stable identifier ('' when accepted), ``rule`` the
    row of the acceptance table (0 for the guard), ``detail`` a sentence for the log."""
    accepted: bool
    reason: str = ''
    rule: int = 0
    detail: str = ''

    def __bool__(self) -> bool:
        return self.accepted


ACCEPTED = Verdict(True)

# The JTC's refusals, in the order it checks them (rule number = row of STYLE.md section 2).
JTC_REASONS = {
    'joint_count': 1,              # not allow_partial_joints_goal and len(joint_names) != len(joints)
    'empty_joint_names': 2,
    'empty_points': 3,
    'unknown_joint': 4,
    'nonzero_end_velocity': 5,     # not allow_nonzero_velocity_at_trajectory_end
    'ends_in_past': 6,             # stamp != 0 and stamp + last time_from_start < now
    'time_not_increasing': 7,
    'point_size': 8,               # positions/velocities/accelerations vs joint_names
    'effort_not_supported': 9,     # effort entries without an 'effort' command interface
}

GUARD_REASONS = ('duplicate_joint', 'negative_time', 'non_finite', 'position_limit', 'velocity_limit')


def _refuse(reason: str, detail: str) -> Verdict:
    return Verdict(False, reason, JTC_REASONS[reason], detail)


def _field_ok(n_names: int, values: tuple, allow_empty: bool) -> bool:
    """validate_trajectory_point_field: empty passes only where allowed, else one per name."""
    return (allow_empty and len(values) == 0) or len(values) == n_names


def jtc_validate(traj: Trajectory, settings: JtcSettings, now_ns: int) -> Verdict:
    """Would a Kilted JTC accept ``traj`` at controller time ``now_ns``?

    The rules of ``validate_trajectory_msg`` in its order. Rules 7-9 run point by point (the
    time of point i, then its fields, then its effort, then point i+1), as in the source, so
    the first failing point decides which reason is given."""
    names = traj.joint_names
    if not settings.allow_partial_joints_goal and len(names) != len(settings.joints):
        return _refuse('joint_count', f"Joints on incoming trajectory don't match the controller joints "
                                      f'({len(names)} for {len(settings.joints)})')
    if len(names) == 0:
        return _refuse('empty_joint_names', 'Empty joint names on incoming trajectory')
    if len(traj.points) == 0:
        return _refuse('empty_points', 'Empty trajectory received')
    for name in names:
        if name not in settings.joints:
            return _refuse('unknown_joint', f"Incoming joint {name} doesn't match the controller's joints")
    if not settings.allow_nonzero_velocity_at_trajectory_end:
        for i, v in enumerate(traj.points[-1].velocities):
            # fabs(v) > eps: a NaN compares false and passes, as in the source. (Upstream logs
            # joint_names.at(i), which throws when velocities outnumber the names.)
            if abs(v) > FLOAT_EPSILON:
                who = names[i] if i < len(names) else f'#{i}'
                return _refuse('nonzero_end_velocity',
                               f'Velocity of last trajectory point of joint {who} is not zero: {v:.15f}')
    if traj.stamp_ns != 0:
        end_ns = traj.stamp_ns + traj.points[-1].time_from_start_ns
        if end_ns < now_ns:
            return _refuse('ends_in_past', f'Received trajectory with non-zero start time '
                                           f'({traj.stamp_ns * 1e-9:.9f}) that ends in the past '
                                           f'({end_ns * 1e-9:.9f} < now {now_ns * 1e-9:.9f})')
    n = len(names)
    previous_ns = 0
    for i, pt in enumerate(traj.points):
        if i > 0 and pt.time_from_start_ns <= previous_ns:
            return _refuse('time_not_increasing',
                           f'Time between points {i - 1} and {i} is not strictly increasing, it is '
                           f'{previous_ns * 1e-9:.9f} and {pt.time_from_start_ns * 1e-9:.9f} respectively')
        previous_ns = pt.time_from_start_ns
        fields = (('positions', pt.positions), ('velocities', pt.velocities),
                  ('accelerations', pt.accelerations))
        if settings.allow_integration_in_goal_trajectories:
            if not (pt.positions or pt.velocities or pt.accelerations):
                return _refuse('point_size', 'The given trajectory has no position, velocity, or '
                                             f'acceleration points (point #{i})')
            bad = [(what, vals) for what, vals in fields if vals and len(vals) != n]
        else:
            allow_empty = {'positions': False, 'velocities': True, 'accelerations': True}
            bad = [(what, vals) for what, vals in fields if not _field_ok(n, vals, allow_empty[what])]
        if bad:
            what, vals = bad[0]
            return _refuse('point_size', f'Mismatch between joint_names size ({n}) and {what} '
                                         f'({len(vals)}) at point #{i}')
        if not settings.has_effort_command_interface and pt.effort:
            return _refuse('effort_not_supported', "Trajectories with effort fields are only supported "
                                                   "for controllers using the 'effort' command interface")
    return ACCEPTED


_FIELDS = ('positions', 'velocities', 'accelerations', 'effort')


def _field_rows(traj: Trajectory, what: str, width: int):
    """The field of every point as one (points, width) array; ``()`` when no point fills it;
    None when the points differ (some empty, other lengths): the per-point path decides."""
    rows = [getattr(pt, what) for pt in traj.points]
    if not any(rows):
        return ()
    if any(len(r) != width for r in rows):
        return None
    return np.array(rows, dtype=float)


def guard_trajectory(traj: Trajectory, joints: Sequence[str], position_min=None, position_max=None,
                     velocity_max=None) -> Verdict:
    """The stricter layer, for a trajectory the JTC rules accepted: duplicate names, negative
    ``time_from_start``, NaN/inf anywhere, positions beyond [min, max], |velocity| above max.
    Limits are in the order of ``joints`` (the controller's); None = unchecked.

    Whole arrays decide acceptance (the drives get 400 of these per second); anything that may
    be refused goes through :func:`guard_trajectory_per_point`, the check point by point, which
    names the first offending point and joint (and is the test oracle of this one)."""
    names = traj.joint_names
    if len(set(names)) != len(names) or any(pt.time_from_start_ns < 0 for pt in traj.points):
        return guard_trajectory_per_point(traj, joints, position_min, position_max, velocity_max)
    fields = {}
    for what in _FIELDS:
        rows = _field_rows(traj, what, len(names))
        if rows is None or (len(rows) and not np.isfinite(rows).all()):
            return guard_trajectory_per_point(traj, joints, position_min, position_max, velocity_max)
        fields[what] = rows
    sel = [(j, names.index(name)) for j, name in enumerate(joints) if name in names]
    if sel:
        cj, k = np.array(sel).T
        q, v = fields['positions'], fields['velocities']
        bad = False
        if len(q):
            q = q[:, k]
            bad = ((position_min is not None and bool((q < np.asarray(position_min, dtype=float)[cj]).any()))
                   or (position_max is not None and bool((q > np.asarray(position_max, dtype=float)[cj]).any())))
        if not bad and len(v) and velocity_max is not None:
            bad = bool((np.abs(v[:, k]) > np.asarray(velocity_max, dtype=float)[cj]).any())
        if bad:
            return guard_trajectory_per_point(traj, joints, position_min, position_max, velocity_max)
    return ACCEPTED


def guard_trajectory_per_point(traj: Trajectory, joints: Sequence[str], position_min=None, position_max=None,
                               velocity_max=None) -> Verdict:
    """:func:`guard_trajectory` point by point, joint by joint: the verdict and its message."""
    names = list(traj.joint_names)
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        return Verdict(False, 'duplicate_joint', 0, f'duplicate joint name(s) {dup}')
    for i, pt in enumerate(traj.points):
        if pt.time_from_start_ns < 0:
            return Verdict(False, 'negative_time', 0,
                           f'negative time_from_start {pt.time_from_start_ns * 1e-9:.9f} s at point #{i}')
        for what in ('positions', 'velocities', 'accelerations', 'effort'):
            vals = np.asarray(getattr(pt, what), dtype=float)
            if vals.size and not np.all(np.isfinite(vals)):
                return Verdict(False, 'non_finite', 0, f'non-finite {what} at point #{i}')
    index = {name: names.index(name) for name in joints if name in names}
    lo = None if position_min is None else np.asarray(position_min, dtype=float)
    hi = None if position_max is None else np.asarray(position_max, dtype=float)
    vmax = None if velocity_max is None else np.asarray(velocity_max, dtype=float)
    for i, pt in enumerate(traj.points):
        for j, name in enumerate(joints):
            k = index.get(name)
            if k is None:
                continue
            if pt.positions:
                q = pt.positions[k]
                if (lo is not None and q < lo[j]) or (hi is not None and q > hi[j]):
                    return Verdict(False, 'position_limit', 0,
                                   f'position {q:.6g} of {name} at point #{i} is beyond its limits '
                                   f'[{-np.inf if lo is None else lo[j]:.6g}, {np.inf if hi is None else hi[j]:.6g}]')
            if pt.velocities and vmax is not None and abs(pt.velocities[k]) > vmax[j]:
                return Verdict(False, 'velocity_limit', 0, f'velocity {pt.velocities[k]:.6g} of {name} at '
                                                           f'point #{i} exceeds its limit {vmax[j]:.6g}')
    return ACCEPTED


@dataclass
class ControllerOrder:
    """An accepted trajectory in the controller's joint order: arrays (points, joints)."""
    stamp_ns: int
    times_ns: np.ndarray
    positions: np.ndarray | None
    velocities: np.ndarray | None
    accelerations: np.ndarray | None = None
    names: tuple = field(default=())


def to_controller_order(traj: Trajectory, joints: Sequence[str], hold_positions=None) -> ControllerOrder:
    """``fill_partial_goal`` then ``sort_to_local_joint_order`` for an accepted trajectory.

    Omitted joints (``allow_partial_joints_goal``) hold ``hold_positions`` (the current position
    command, in ``joints`` order) with 0 velocity and acceleration; empty fields stay None."""
    names = list(traj.joint_names)
    joints = list(joints)
    hold = None if hold_positions is None else np.asarray(hold_positions, dtype=float)

    def column(what: str, fill):
        if not all(getattr(pt, what) for pt in traj.points):
            return None
        rows = _field_rows(traj, what, len(names))
        if rows is not None and len(rows):          # every point complete: whole arrays
            out = np.empty((len(traj.points), len(joints)))
            for j, name in enumerate(joints):
                if name in names:
                    out[:, j] = rows[:, names.index(name)]
                elif fill is None:
                    raise ValueError(f'joint {name} omitted and no hold position given')
                else:
                    out[:, j] = fill[j] if np.ndim(fill) else fill
            return out
        rows = []
        for pt in traj.points:
            vals = getattr(pt, what)
            row = []
            for j, name in enumerate(joints):
                if name in names:
                    row.append(vals[names.index(name)])
                elif fill is None:
                    raise ValueError(f'joint {name} omitted and no hold position given')
                else:
                    row.append(fill[j] if np.ndim(fill) else fill)
            rows.append(row)
        return np.asarray(rows, dtype=float)

    return ControllerOrder(
        stamp_ns=traj.stamp_ns,
        times_ns=np.array([pt.time_from_start_ns for pt in traj.points], dtype=np.int64),
        positions=column('positions', hold), velocities=column('velocities', 0.0),
        accelerations=column('accelerations', 0.0), names=tuple(joints))
