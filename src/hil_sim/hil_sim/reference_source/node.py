"""Scripted command source (docs/mock_hardware.md): stands in for planner + timebase in CI.

Mode-aware producer (docs/CONTRACTS.md "HIL modes"): in lockstep it computes frame k only
when both ``/joint_states`` and ``/hil/frame`` stamped t_k are in (``FrameSync``), so its
output is a function of message content only; in real time it computes a frame for every
``/joint_states`` message with the latest mode from ``/hil/frame``. Once it has seen a
frame it commands every frame (holding in IDLE): one JointTrajectory stamped t_k with one
point per servo substep (positions + velocities). Motion math: ``hil_core.drives.scripted_motion``.
Events (homed, synchronized, home_reached) go to ``/hil/events`` stamped with the frame time.

Motion command (the HMI's, or ``ros2 param set /reference_source via_points [...]``): the dynamic
parameter ``via_points`` is checked when it is set (``ScriptedMotion.check_via``: RUNNING only,
inside the URDF's travel, within the script's limits, from the setpoint of the next frame) and
refused with the reason in the SetParameters answer; accepted, the path starts at the next frame.
"""
from __future__ import annotations

import pathlib

import numpy as np
from diagnostic_msgs.msg import DiagnosticArray
from rcl_interfaces.msg import SetParametersResult
from sensor_msgs.msg import JointState
from std_msgs.msg import Header
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from hil_core.data_paths import data_root
from hil_core.drives.plants.description import parse_ros2_control
from hil_core.drives.scripted_motion import ScriptedMotion
from hil_nodes import qos, topics
from hil_nodes.framework.base import OK, WARN, HilLifecycleNode
from hil_nodes.framework.mode_aware import JointFramePairing
from hil_nodes.msgs.convert import ns_to_stamp, sec_to_duration, status_array
from hil_nodes.runtime.runner import main_for
from hil_sim.reference_source import params


class ReferenceSourceNode(HilLifecycleNode, name='reference_source', task='reference', params=params.PARAMS):
    """Statuses "reference_source: reference": the scripted reference and its phases."""

    def __init__(self, node_name: str | None = None, **kwargs):
        super().__init__(node_name, **kwargs)
        self._subs = []
        self.add_on_set_parameters_callback(self._check_via_points)

    def check_parameters(self, p) -> str | None:
        n = len(p.joint_names)
        for name in ('amplitudes', 'frequencies', 'velocity_max', 'acceleration_max', 'fault_deceleration'):
            if len(getattr(p, name)) != n:
                return f"parameter '{name}' needs one value per joint ({n}), got {len(getattr(p, name))}"
        points = p.frame_period / p.servo_period
        if round(points) < 1 or abs(points - round(points)) > 1e-6:
            return "parameter 'frame_period' must be a whole multiple of 'servo_period'"
        problem = params.script_config(p).problem()
        return f'script parameters: {problem}' if problem else None

    def _check_via_points(self, parameters) -> SetParametersResult:
        """A via_points command, checked against the motion it would change before the base's
        callback accepts it (rclpy calls the newest callback first); other parameters pass."""
        given = [prm for prm in parameters if prm.name == 'via_points']
        if not given or not self.configured or not list(given[-1].value or []):
            return SetParametersResult(successful=True)      # configure-time values, an empty command
        if not self.active:
            return SetParametersResult(successful=False, reason='via points are taken while the script runs '
                                       '(reference_source is not active)')
        try:
            self.motion.check_via(self._next_frame_t(), list(given[-1].value), *self._travel, self.p.joint_names)
        except ValueError as exc:
            self.status(WARN, f'via points refused: {exc}', task='motion command')
            return SetParametersResult(successful=False, reason=str(exc))
        return SetParametersResult(successful=True)

    def _next_frame_t(self) -> float:
        """Sim time of the next frame the script computes (the via path starts there)."""
        return (self.last_t_ns * 1e-9 if self.last_t_ns is not None else 0.0) + self.p.frame_period

    def _load_travel(self, p):
        """(lower, upper) of the joints' position commands in the URDF's <ros2_control> block."""
        path = pathlib.Path(p.robot_description)
        path = path if path.is_absolute() or path.exists() else data_root() / path
        try:
            info = parse_ros2_control(path.read_text())
        except (OSError, ValueError) as exc:
            raise ValueError(f"parameter 'robot_description' ({path}): {exc}") from exc
        lower, upper = info.command_limits()
        index = {n: i for i, n in enumerate(info.joint_names)}
        missing = [n for n in p.joint_names if n not in index]
        if missing:
            raise ValueError(f"parameter 'robot_description': joints {missing} are not in {path}")
        order = [index[n] for n in p.joint_names]
        return lower[order], upper[order]

    def apply_parameters(self, changed: set[str]) -> None:
        if 'via_points' in changed and self.active and self.p.via_points:
            self.motion.request_via(self.p.via_points, *self._travel, self.p.joint_names)
            self.status(OK, f'via points accepted: {len(self.p.via_points) // (len(self.p.joint_names) + 1)} '
                        'point(s) from the next frame', task='motion command')
            return
        if not self.active:         # accepted while inactive: restart the script from IDLE
            self.motion = ScriptedMotion(params.script_config(self.p))
            self.n_points = int(round(self.p.frame_period / self.p.servo_period))
            self._input.lockstep = self.p.lockstep

    # --- lifecycle ---------------------------------------------------------------------------
    def configure_node(self) -> None:
        p = self.p
        self.motion = ScriptedMotion(params.script_config(p))
        self._travel = self._load_travel(p)
        self.last_t_ns = None
        self.n_points = int(round(p.frame_period / p.servo_period))
        self._input = JointFramePairing(p.lockstep, self._compute)
        self.mode = None
        self.frames = 0
        self.bad_joint_states = 0
        self._cmd_pub = self.create_lifecycle_publisher(JointTrajectory, topics.HEXAPOD_JOINT_TRAJECTORY,
                                                        qos.command(depth=50, lockstep=self.p.lockstep))
        self._event_pub = self.create_lifecycle_publisher(DiagnosticArray, topics.HIL_EVENTS,
                                                          qos.command(depth=50, lockstep=self.p.lockstep))
        # /joint_states as joint_state_broadcaster publishes it (volatile: hil_nodes.qos.joint_states)
        self._subs = [self.create_subscription(JointState, topics.JOINT_STATES, self._on_joints,
                                               qos.joint_states(self.p.lockstep)),
                      self.create_subscription(Header, topics.HIL_FRAME, self._on_frame, self.stream_qos())]

    def cleanup_node(self) -> None:
        self.release(*self._subs, self._cmd_pub, self._event_pub)
        self._subs = []

    # --- inputs ------------------------------------------------------------------------------
    def _measured(self, msg: JointState):
        """Joint positions in our joint order, or None (with a warning) when unusable."""
        names = list(msg.name)
        try:
            order = [names.index(n) for n in self.p.joint_names]
            q = np.asarray(msg.position, dtype=float)[order]
        except (ValueError, IndexError):
            q = None
        if q is None or not np.all(np.isfinite(q)):
            self.bad_joint_states += 1
            self.status(WARN, 'unusable /joint_states (names, size or NaN): using the last setpoint',
                        bad_joint_states=self.bad_joint_states)
            return None
        return q

    def _on_joints(self, msg: JointState) -> None:
        if self.active:
            self._input.joints(msg, self.mode)

    def _on_frame(self, msg: Header) -> None:
        if self.active:
            self.mode = msg.frame_id
            self._input.frame(msg)

    # --- output ------------------------------------------------------------------------------
    def _compute(self, t_ns: int, mode: str, joints: JointState) -> None:
        measured = self._measured(joints)
        t = t_ns * 1e-9
        if measured is None:
            if self.motion.segment is None:
                return     # nothing safe to command yet: the drives hold (lockstep: late command)
            measured = self.motion.segment.evaluate(np.array([t]))[0][0]
        dt = self.p.servo_period
        offsets = dt * np.arange(1, self.n_points + 1)
        self.last_t_ns = t_ns
        pos, vel, events = self.motion.frame(t, mode, measured, t + offsets)
        if self.motion.via_refused:
            self.status(WARN, f'via points not started: {self.motion.via_refused}', task='motion command')
            self.motion.via_refused = None
        msg = JointTrajectory()
        msg.header.stamp = ns_to_stamp(t_ns)
        msg.joint_names = list(self.p.joint_names)
        msg.points = [JointTrajectoryPoint(positions=pos[i].tolist(), velocities=vel[i].tolist(),
                                           time_from_start=sec_to_duration(offsets[i]))
                      for i in range(self.n_points)]
        self._cmd_pub.publish(msg)
        self.frames += 1
        for name, why in events:
            self._publish_event(t_ns, name, why)

    def _publish_event(self, t_ns: int, name: str, why: str) -> None:
        self._event_pub.publish(status_array(ns_to_stamp(t_ns), OK, name, why, self.get_name(),
                                             {'phase': self.motion.phase.value, 'seed': self.p.seed}))
        self.get_logger().info(f'event {name} at {t_ns * 1e-9:.4f} s: {why}')


main = main_for(ReferenceSourceNode)

if __name__ == '__main__':
    main()
