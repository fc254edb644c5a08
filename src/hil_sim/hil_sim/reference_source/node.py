"""Scripted command source (docs/mock_hexapod.md): stands in for planner + timebase in CI.

Mode-aware producer (docs/CONTRACTS.md "HIL modes"): in lockstep it computes frame k only
when both ``/joint_states`` and ``/hil/frame`` stamped t_k are in (``FrameSync``), so its
output is a function of message content only; in real time it computes a frame for every
``/joint_states`` message with the latest mode from ``/hil/frame``. Once it has seen a
frame it commands every frame (holding in IDLE): one JointTrajectory stamped t_k with one
point per servo substep (positions + velocities). Motion math: ``hil_core.drives.scripted_motion``.
Events (homed, synchronized, home_reached) go to ``/hil/events`` stamped with the frame time.
"""
from __future__ import annotations

import numpy as np
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from sensor_msgs.msg import JointState
from std_msgs.msg import Header
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from hil_core.supervision.lockstep import FrameSync
from hil_core.drives.scripted_motion import ScriptConfig, ScriptedMotion
from hil_core.supervision.timing import HIGH_LEVEL_PERIOD, SERVO_PERIOD
from hil_nodes import qos, topics
from hil_nodes.framework.base import OK, WARN, HilLifecycleNode, Param
from hil_nodes.msgs.convert import ns_to_stamp, sec_to_duration, stamp_to_ns
from hil_nodes.runtime.runner import main_for

JOINTS = [f'slider_{i}' for i in range(1, 7)]


class ReferenceSourceNode(HilLifecycleNode):
    # statuses "reference_source: reference": the scripted reference and its phases
    STATUS_TASK = 'reference'
    PARAMS = (
        Param('joint_names', 'str[]', JOINTS, 'commanded joints, in command order',
              check=lambda v: None if v and len(set(v)) == len(v) else 'needs unique joint names'),
        Param('amplitudes', 'float[]', [0.01] * 6, 'sine amplitude per joint (m)', range=(0.0, 1.0)),
        Param('frequencies', 'float[]', [0.3, 0.4, 0.5, 0.6, 0.7, 0.8], 'sine frequency per joint (Hz)',
              range=(0.0, 50.0)),
        Param('seed', int, 0, 'seed of the random sine phases (same seed = same run)', range=(0, 2**31 - 1)),
        Param('velocity_max', 'float[]', [0.2] * 6, 'velocity limit of homing/return moves (m/s)',
              range=(1e-6, 100.0)),
        Param('acceleration_max', 'float[]', [2.0] * 6, 'acceleration limit of homing/return moves (m/s^2)',
              range=(1e-6, 1e4)),
        Param('fault_deceleration', 'float[]', [2.0] * 6, 'braking deceleration on FAULT (m/s^2)',
              range=(1e-6, 1e4)),
        Param('sync_duration', float, 2.0, 'duration of the synchronization ramp (s)', range=(1e-3, 600.0)),
        Param('homing_min_duration', float, 1.0, 'shortest homing / return-home move (s)', range=(1e-3, 600.0)),
        Param('frame_period', float, HIGH_LEVEL_PERIOD, 'frame T (s)', range=(1e-4, 1.0)),
        Param('servo_period', float, SERVO_PERIOD, 'spacing of the command points (s)', range=(1e-5, 0.1)),
    )

    def __init__(self, node_name: str = 'reference_source', **kwargs):
        super().__init__(node_name, **kwargs)
        self._subs = []

    def _script_config(self, p) -> ScriptConfig:
        return ScriptConfig(amplitudes=tuple(p.amplitudes), frequencies=tuple(p.frequencies), seed=p.seed,
                            home=(0.0,) * len(p.joint_names), velocity_max=tuple(p.velocity_max),
                            acceleration_max=tuple(p.acceleration_max),
                            fault_deceleration=tuple(p.fault_deceleration),
                            sync_duration=p.sync_duration, homing_min_duration=p.homing_min_duration)

    def check_parameters(self, p) -> str | None:
        n = len(p.joint_names)
        for name in ('amplitudes', 'frequencies', 'velocity_max', 'acceleration_max', 'fault_deceleration'):
            if len(getattr(p, name)) != n:
                return f"parameter '{name}' needs one value per joint ({n}), got {len(getattr(p, name))}"
        points = p.frame_period / p.servo_period
        if round(points) < 1 or abs(points - round(points)) > 1e-6:
            return "parameter 'frame_period' must be a whole multiple of 'servo_period'"
        problem = self._script_config(p).problem()
        return f'script parameters: {problem}' if problem else None

    def apply_parameters(self, changed: set[str]) -> None:
        if not self.active:         # accepted while inactive: restart the script from IDLE
            self.motion = ScriptedMotion(self._script_config(self.p))
            self.n_points = int(round(self.p.frame_period / self.p.servo_period))

    # --- lifecycle ---------------------------------------------------------------------------
    def configure_node(self) -> None:
        p = self.p
        self.motion = ScriptedMotion(self._script_config(p))
        self.n_points = int(round(p.frame_period / p.servo_period))
        self.sync = FrameSync(('joints', 'frame'))
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
        for sub in self._subs:
            self.destroy_subscription(sub)
        self._subs = []
        self.destroy_lifecycle_publisher(self._cmd_pub)
        self.destroy_lifecycle_publisher(self._event_pub)

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
        if not self.active:
            return
        key = stamp_to_ns(msg.header.stamp)
        if self.p.lockstep:
            for k, parts in self.sync.put('joints', key, msg):
                self._compute(k, parts['frame'].frame_id, parts['joints'])
        elif self.mode is not None:
            self._compute(key, self.mode, msg)

    def _on_frame(self, msg: Header) -> None:
        if not self.active:
            return
        self.mode = msg.frame_id
        if self.p.lockstep:
            for k, parts in self.sync.put('frame', stamp_to_ns(msg.stamp), msg):
                self._compute(k, parts['frame'].frame_id, parts['joints'])

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
        pos, vel, events = self.motion.frame(t, mode, measured, t + offsets)
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
        arr = DiagnosticArray()
        arr.header.stamp = ns_to_stamp(t_ns)
        arr.status = [DiagnosticStatus(level=bytes([OK]) if isinstance(OK, int) else OK,
                                       name=name, message=why, hardware_id=self.get_name(),
                                       values=[KeyValue(key='phase', value=self.motion.phase.value),
                                               KeyValue(key='seed', value=str(self.p.seed))])]
        self._event_pub.publish(arr)
        self.get_logger().info(f'event {name} at {t_ns * 1e-9:.4f} s: {why}')


main = main_for(ReferenceSourceNode)

if __name__ == '__main__':
    main()
