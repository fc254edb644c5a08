"""What a Kilted joint_trajectory_controller commands, cycle by cycle (a port of its semantics).

From ros2_controllers ``kilted``: ``joint_trajectory_controller/src/trajectory.cpp``
(``Trajectory::sample``, ``interpolate_between_points``, ``set_point_before_trajectory_msg``)
and ``JointTrajectoryController::update`` / ``topic_callback`` / ``on_activate``. No code is
copied; the behaviour is restated and tested (test/unit/test_jtc_sampling.py).

* :class:`SampledTrajectory`: one accepted message in controller joint order. Before its first
  point it interpolates from the "point before" (the state at receipt); between points the
  degree follows the fields (positions -> linear, + velocities -> cubic, + accelerations ->
  quintic); past the last point it returns the last point *as given* (its velocity too).
* :class:`JtcLoop`: the controller's update loop. A message that passes :func:`jtc_validate`
  at receipt replaces the active trajectory at the next update (the latest one wins). On the
  first sample of a new trajectory the point before is the last command (with
  ``interpolate_from_desired_state``) labelled with the time of the update that wrote it, or
  the measured state at this update's time. Each update samples the trajectory at
  ``traj_time`` (desired state) and at ``traj_time + update_period`` and writes the latter to
  the command interfaces: the command leads by one period. ``traj_time`` starts at the update
  time of the first sample and then advances by ``period`` per update.

Times are integer nanoseconds like rclcpp's; seconds for the polynomials are ``ns / 1e9`` as
``rclcpp::Duration::seconds()`` computes them. Not modelled: tolerances and goal handling
(none are configured in config/controllers.yaml), ``cmd_timeout``, speed scaling, angle
wraparound, the closed-loop PID adapter, integration of velocity-only points.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hil_core.drives.joint_trajectory import (FLOAT_EPSILON, JtcSettings, Trajectory, Verdict, jtc_validate,
                                       to_controller_order)


@dataclass
class State:
    """A JointTrajectoryPoint in controller order; None = empty field."""
    positions: np.ndarray
    velocities: np.ndarray | None = None
    accelerations: np.ndarray | None = None


def interpolate(t_a: int, a: State, t_b: int, b: State, t: int) -> State:
    """``interpolate_between_points``: the polynomial between (t_a, a) and (t_b, b) at t (ns).

    Outside [t_a, t_b] the sample time is clamped and the degree drops to linear, so the
    result is the end point itself, with the linear segment's slope as velocity."""
    so_far, between = (t - t_a) / 1e9, (t_b - t_a) / 1e9
    has_v = a.velocities is not None and b.velocities is not None
    has_a = a.accelerations is not None and b.accelerations is not None
    if so_far < 0.0:
        so_far, has_v, has_a = 0.0, False, False
    if so_far > between:
        so_far, has_v, has_a = between, False, False
    p0, p1 = a.positions, b.positions
    zeros = np.zeros_like(p0)
    if not has_v and not has_a:
        c1 = (p1 - p0) / between if between != 0.0 else zeros
        return State(p0 + so_far * c1, c1.copy(), zeros)
    T, x = between, so_far
    v0, v1 = a.velocities, b.velocities
    if has_v and not has_a:
        c2 = c3 = zeros
        if T != 0.0:
            c2 = (-3.0 * p0 + 3.0 * p1 - 2.0 * v0 * T - v1 * T) / T ** 2
            c3 = (2.0 * p0 - 2.0 * p1 + v0 * T + v1 * T) / T ** 3
        pos = p0 + x * v0 + x * x * c2 + x ** 3 * c3
        return State(pos, v0 + 2.0 * x * c2 + 3.0 * x * x * c3, 2.0 * c2 + 6.0 * x * c3)
    if not has_v:
        # accelerations without velocities: upstream falls through every branch (zeros)
        return State(zeros.copy(), zeros.copy(), zeros.copy())
    a0, a1 = a.accelerations, b.accelerations
    c3 = c4 = c5 = zeros
    if T != 0.0:
        c3 = (-20 * p0 + 20 * p1 - 3 * a0 * T ** 2 + a1 * T ** 2 - 12 * v0 * T - 8 * v1 * T) / (2 * T ** 3)
        c4 = (30 * p0 - 30 * p1 + 3 * a0 * T ** 2 - 2 * a1 * T ** 2 + 16 * v0 * T + 14 * v1 * T) / (2 * T ** 4)
        c5 = (-12 * p0 + 12 * p1 - a0 * T ** 2 + a1 * T ** 2 - 6 * v0 * T - 6 * v1 * T) / (2 * T ** 5)
    c2 = 0.5 * a0
    pos = p0 + x * v0 + x ** 2 * c2 + x ** 3 * c3 + x ** 4 * c4 + x ** 5 * c5
    vel = v0 + 2 * x * c2 + 3 * x ** 2 * c3 + 4 * x ** 3 * c4 + 5 * x ** 4 * c5
    acc = 2 * c2 + 6 * x * c3 + 12 * x ** 2 * c4 + 20 * x ** 3 * c5
    return State(pos, vel, acc)


class SampledTrajectory:
    """``joint_trajectory_controller::Trajectory`` for one accepted, sorted message."""

    def __init__(self, stamp_ns: int, times_ns, positions, velocities=None, accelerations=None):
        self.start_ns = int(stamp_ns)
        self.times_ns = np.asarray(times_ns, dtype=np.int64)
        if positions is None:
            raise ValueError('points without positions (allow_integration_in_goal_trajectories) are not modelled')
        self.points = [State(np.asarray(positions[i], float),
                             None if velocities is None else np.asarray(velocities[i], float),
                             None if accelerations is None else np.asarray(accelerations[i], float))
                       for i in range(len(self.times_ns))]
        self.sampled_already = False
        self.before_ns = 0
        self.before: State | None = None

    def set_point_before(self, time_ns: int, state: State) -> None:
        """The segment before the first point starts here; a state without velocities
        (accelerations) gets zeros when the first point has them, so the degree matches."""
        first = self.points[0]
        vel = state.velocities
        if vel is None and first.velocities is not None:
            vel = np.zeros_like(first.velocities)
        acc = state.accelerations
        if acc is None and first.accelerations is not None:
            acc = np.zeros_like(first.accelerations)
        self.before_ns, self.before = int(time_ns), State(np.asarray(state.positions, float).copy(), vel, acc)

    def sample(self, t_ns: int) -> State | None:
        """The state at ``t_ns``, or None where the JTC's sample returns false (before the
        point before the trajectory)."""
        if not self.sampled_already:
            if self.start_ns == 0:          # header stamp 0: start at the first sample
                self.start_ns = int(t_ns)
            self.sampled_already = True
        if t_ns < self.before_ns:
            return None
        first_ns = self.start_ns + int(self.times_ns[0])
        if t_ns < first_ns:
            return interpolate(self.before_ns, self.before, first_ns, self.points[0], t_ns)
        for i in range(len(self.points) - 1):
            t0 = self.start_ns + int(self.times_ns[i])
            t1 = self.start_ns + int(self.times_ns[i + 1])
            if t0 <= t_ns < t1:
                return interpolate(t0, self.points[i], t1, self.points[i + 1], t_ns)
        last = self.points[-1]              # played out: the last point as given
        zeros = np.zeros_like(last.positions)
        return State(last.positions.copy(), zeros if last.velocities is None else last.velocities.copy(),
                     zeros if last.accelerations is None else last.accelerations.copy())


class JtcLoop:
    """The controller's topic callback and update loop, driven by the caller's clock."""

    def __init__(self, settings: JtcSettings, update_rate: float, initial_positions,
                 interpolate_from_desired_state: bool = False, has_velocity_state: bool = True):
        self.settings = settings
        self.update_period_ns = int(1e9 / float(update_rate))   # Duration(0, uint32(1e9 / rate))
        self.ifds = bool(interpolate_from_desired_state)
        n = len(settings.joints)
        q0 = np.asarray(initial_positions, dtype=float)
        # on_activate: last command = measured state; a hold trajectory (stamp 0, one point) is queued
        self.last_commanded = State(q0.copy(), np.zeros(n) if has_velocity_state else None)
        self.last_commanded_ns = 0
        self.pending: SampledTrajectory | None = SampledTrajectory(0, [0], [q0], None)
        self.current: SampledTrajectory | None = None
        self.traj_ns = 0
        self.command: State | None = None
        self.refused: dict[str, int] = {}
        self.accepted = 0

    def receive(self, traj: Trajectory, now_ns: int) -> Verdict:
        """``topic_callback`` at node time ``now_ns``: validate, then queue (latest wins)."""
        verdict = jtc_validate(traj, self.settings, now_ns)
        if not verdict:
            self.refused[verdict.reason] = self.refused.get(verdict.reason, 0) + 1
            return verdict
        hold = None if self.command is None else self.command.positions
        order = to_controller_order(traj, self.settings.joints, hold)
        self.pending = SampledTrajectory(order.stamp_ns, order.times_ns, order.positions, order.velocities,
                                         order.accelerations)
        self.accepted += 1
        return verdict

    def update(self, time_ns: int, period_ns: int, measured: State) -> State | None:
        """One controller update at ``time_ns``; returns the command written (None: nothing)."""
        if self.pending is not None:
            self.current, self.pending = self.pending, None
        if self.current is None:
            return None
        if not self.current.sampled_already:
            if self.ifds:
                if abs(self.last_commanded_ns / 1e9) < FLOAT_EPSILON:
                    self.last_commanded_ns = time_ns
                self.current.set_point_before(self.last_commanded_ns, self.last_commanded)
            else:
                self.current.set_point_before(time_ns, measured)
            self.traj_ns = time_ns
        else:
            self.traj_ns += period_ns
        self.current.sample(self.traj_ns)                    # desired state (tolerances only)
        command = self.current.sample(self.traj_ns + self.update_period_ns)
        if command is not None:
            self.command = command
            self.last_commanded, self.last_commanded_ns = command, time_ns
        return command
