"""Space-manipulator plant + controller (seed 002): the free-floating satellite simulated
around a real (or mock) fixed-base KUKA iiwa. docs/space_iiwa.md.

Each ``/joint_states`` sample (1 kHz FRI rate; in lockstep one per frame of the mock) runs one
HIL iteration (``hil_core.space.plant``: joint rates, satellite by eq. 7, inertial EE pose by
eq. 12, Dynamic-Jacobian law eq. 11 with PI, smooth limits) and commands joint positions to the
iiwa's ``joint_trajectory_controller`` (a stock JTC on the position interface, as
lbr_fri_ros2_stack's iiwa takes it: FRI has no velocity command): one JointTrajectory stamped
with the sample, the law's limited joint velocity integrated over the sample's period (from the
measured position where the control (re)starts) followed by a braking tail to rest at
``acceleration_max`` (hil_nodes.space_plant.command), so the controller stops the arm on its own
along that ramp when the messages stop. ``joint_names`` names the joints in /joint_states and the
command (lbr's ``lbr_A1`` .. in hardware mode). It also publishes the satellite odometry, the
inertial EE pose, the errors and rviz markers. ``/tf``:
``world_frame -> satellite_frame`` (the integrated satellite pose) with every sample, the arm's
joint frames at ``tf_frames_rate``; ``/tf_static``: ``satellite -> iiwa_link_0`` (mount_xyz,
mount_rpy) and the arm URDF's fixed joints (hil_nodes.msgs.tf_publisher).

Safety: joint states with NaN/inf, missing joints, wrong sizes, position jumps beyond what
the velocity limits allow, or a gap in stamps beyond ``max_gap``, and no joint states for
``stale_timeout`` wall seconds, latch a FAULT: a ``fault`` event on ``/hil/events`` (the
supervisor goes to FAULT) and the command ramps to zero at the acceleration limits (never a
jump: the positions follow a braking trajectory). Duplicate or out-of-order stamps are ignored (counted). The fault clears when the
supervisor leaves FAULT (reset); the satellite state is kept and the integrators restart.
"""
from __future__ import annotations

import time
from collections import deque

import numpy as np
from diagnostic_msgs.msg import DiagnosticArray
from geometry_msgs.msg import PoseStamped
from nav_msgs.msg import Odometry
from rclpy.clock import Clock, ClockType
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, String
from trajectory_msgs.msg import JointTrajectory

from hil_core.iiwa.kinematics import JOINT_NAMES, default_urdf
from hil_core.supervision.modes import HilMode
from hil_core.maths.rotations import quat_to_matrix
from hil_core.space.model import FreeFloatingModel, euler_zyx_to_matrix
from hil_core.space.phases import SpacePhases
from hil_core.space.plant import SpacePlant
from hil_nodes import qos, topics
from hil_nodes.framework.base import ERROR, OK, WARN, HilLifecycleNode
from hil_nodes.msgs.convert import (ns_to_stamp, positions_by_name, pose_to_array, status_array,
                                    velocities_by_name)
from hil_nodes.runtime.chain_port import (joint_state_from_message, odometry_port, pose_port,
                                          vector_port)
from hil_nodes.runtime.frame_loop import LOOP
from hil_nodes.runtime.runner import main_for
from hil_nodes.space_plant import params
from hil_nodes.space_plant.command import command, command_port
from hil_nodes.space_plant.markers import satellite_markers
from hil_nodes.msgs.tf_publisher import SpaceTf


class SpacePlantNode(HilLifecycleNode, name='space_plant', task='plant', params=params.PARAMS):
    """Statuses "space_plant: plant": the simulated satellite and the arm's control law."""

    def hardware_id(self) -> str:
        return 'simulated free-floating satellite (space_plant)'   # the arm itself is the mock's or the lab's

    def __init__(self, node_name: str | None = None, **kwargs):
        super().__init__(node_name, **kwargs)
        self._own_timers = []
        self._subs = []
        self.plant = None

    def configure_node(self) -> None:
        p = self.p
        sat, gains = params.plant_config(p)
        self.model = FreeFloatingModel(sat, p.urdf or None)          # ValueError refuses
        self.v_max = np.asarray(self.model.model.velocityLimit[6:]) * p.velocity_scale
        self.plant = SpacePlant(self.model, gains, self.v_max, p.acceleration_max, p.velocity_cutoff_hz,
                                p.position_margin)
        self.plant.set_setpoint(p.setpoint_position, euler_zyx_to_matrix(np.radians(p.setpoint_euler_zyx_deg)))
        stream = self.stream_qos()
        if len(p.joint_names) != 7 or len(set(p.joint_names)) != 7:
            raise ValueError(f'joint_names: 7 distinct names, got {list(p.joint_names)}')
        self.joint_names = tuple(p.joint_names)
        self.a_max = np.broadcast_to(np.asarray(p.acceleration_max, float), (7,)).copy()
        self._cmd_pub = self.create_lifecycle_publisher(JointTrajectory, topics.IIWA_JOINT_TRAJECTORY,
                                                        qos.command(lockstep=self.p.lockstep))
        self._cmd_port = command_port(self._cmd_pub, self.joint_names)
        self._odom_pub = self.create_lifecycle_publisher(Odometry, topics.SPACE_SATELLITE_ODOM, stream)
        self._ee_pub = self.create_lifecycle_publisher(PoseStamped, topics.SPACE_EE_POSE, stream)
        self._err_pub = self.create_lifecycle_publisher(Float64MultiArray, topics.SPACE_ERRORS, stream)
        # for observers and the recorder (hil_nodes.runtime.chain_port: bytes from the arrays)
        self._odom_port = odometry_port(self._odom_pub, p.world_frame, p.satellite_frame)
        self._ee_port = pose_port(self._ee_pub, p.world_frame)
        self._err_port = vector_port(self._err_pub)
        self._marker_pub = self.create_lifecycle_publisher(satellite_markers.msg_type, topics.SPACE_MARKERS, 10)
        # (the URDF's own joint names: the frames are the suite's in every mode)
        self._tf = SpaceTf(self, p.urdf or default_urdf(), JOINT_NAMES, p.world_frame, p.satellite_frame,
                           p.mount_xyz, p.mount_rpy, p.tf_frames_rate, p.tf_joint_frames)
        self._event_pub = self.create_lifecycle_publisher(DiagnosticArray, topics.HIL_EVENTS,
                                                          qos.command(50, lockstep=self.p.lockstep))
        self._subs = [
            self.create_subscription(JointState, topics.JOINT_STATES, self._on_joints,
                                     qos.joint_states(self.p.lockstep), chain_input=self._on_joint_payload),
            self.create_subscription(PoseStamped, topics.SPACE_EE_SETPOINT, self._on_setpoint, qos.command()),
            self.create_subscription(String, topics.HIL_MODE, self._on_mode, qos.latched()),
        ]
        self._reset_state()

    def _reset_state(self) -> None:
        self.last_ns = None
        self.q_last = None
        self.fault = None
        self.mode = None
        self.phases = SpacePhases()
        self.last_cmd = np.zeros(7)       # the law's last joint velocity (rad/s)
        self.q_cmd = None                 # the commanded joint positions (rad)
        self.period_ns = 1_000_000        # the last joint sample period (ns): the command's step
        self.cmd_ns = 0                   # the last command's stamp
        self.frames = self.ignored = self.faults = 0
        self.out = None
        self.step_us = deque(maxlen=2000)
        self._wall_last = time.monotonic()
        self._rate = (time.monotonic(), 0)
        self.loop_rate = 0.0

    def activate_node(self) -> None:
        self.fault = None                 # re-activation is a reset
        steady = Clock(clock_type=ClockType.STEADY_TIME)
        self._wall_last = time.monotonic()
        self._own_timers = [self.create_timer(self.p.status_period, self._publish_status, clock=steady),
                        self.create_timer(0.01, self._watchdog, clock=steady)]

    def deactivate_node(self) -> None:
        self.release(*self._own_timers)
        self._own_timers = []
        # Stop smoothly: the positions follow the velocity's ramp down at the acceleration limits
        # (blocking: at most v_max / a_max, a fraction of a second), then hold. The last message's
        # tail alone would do it on the robot side; these messages also pace a lockstep mock,
        # one stamp per sample period after the last joint sample.
        dt_ns = self.period_ns
        while self.plant is not None and self.q_cmd is not None and np.any(self.plant.limiter.last != 0):
            self._send(self.plant.limiter.brake(dt_ns * 1e-9), dt_ns, self.cmd_ns + dt_ns)
            time.sleep(dt_ns * 1e-9)
        self.last_ns = None

    def cleanup_node(self) -> None:
        self.release(*self._subs, self._cmd_pub, self._odom_pub, self._ee_pub, self._err_pub, self._marker_pub,
                     self._event_pub, self._tf)
        self._subs = []

    def error_node(self) -> None:
        self.deactivate_node()

    # --- inputs --------------------------------------------------------------------------------
    def _on_mode(self, msg: String) -> None:
        old, self.mode = self.mode, msg.data
        if old == HilMode.FAULT and msg.data != HilMode.FAULT and self.fault:
            self.get_logger().info(f'fault cleared by the supervisor ({msg.data}): restarting the control')
            self.fault = None
            # the dead-peer watch starts again from the reset: the silence before it is the fault
            # just cleared, not a new one (a peer still silent faults again stale_timeout later)
            self._wall_last = time.monotonic()

    def _on_setpoint(self, msg: PoseStamped) -> None:
        a = pose_to_array(msg.pose)
        nq = np.linalg.norm(a[3:])
        if not np.all(np.isfinite(a)) or abs(nq - 1.0) > 1e-3:
            self.status(WARN, 'rejected EE set-point: non-finite or non-unit quaternion', norm=nq)
            return
        a[3:] /= nq
        self.plant.set_setpoint(a[:3], quat_to_matrix(a[3:]))
        self.status(OK, 'new EE set-point', x=a[0], y=a[1], z=a[2])

    def _on_joints(self, msg: JointState) -> None:
        self._on_joint_payload(joint_state_from_message(msg))

    def _on_joint_payload(self, payload) -> None:
        """A joint sample (stamp ns, names, positions, velocities, efforts): from the drives'
        chain port in one process, else read from the message (hil_nodes.runtime.chain_port)."""
        if not self.active:
            return
        t_ns, names, position, velocity, _ = payload
        if self.last_ns is not None and t_ns <= self.last_ns:
            self.ignored += 1              # duplicate (t_0 re-published) or out of order
            return
        self._wall_last = time.monotonic()
        dt = 1e-3 if self.last_ns is None else (t_ns - self.last_ns) * 1e-9
        try:
            q = positions_by_name(names, position, self.joint_names)
            qd = velocities_by_name(names, velocity, self.joint_names) if self.p.use_measured_velocity else None
            if self.q_last is not None:
                if dt > self.p.max_gap:
                    raise ValueError(f'stale joint states: {dt:.4f} s gap > max_gap {self.p.max_gap}')
                jump = np.abs(q - self.q_last) - (self.v_max / self.p.velocity_scale * dt + self.p.jump_margin)
                if np.any(jump > 0):
                    raise ValueError(f'joint position jump at {[self.joint_names[i] for i in np.flatnonzero(jump > 0)]}')
        except ValueError as exc:
            # the satellite integration restarts from the next good sample (satellite pose kept)
            self.last_ns, self.q_last, self.plant.q_prev = t_ns, None, None
            if not self.fault:
                self._raise_fault(t_ns, str(exc) if 'stale' in str(exc) or 'jump' in str(exc)
                                  else f'bad joint states: {exc}')
            if self.q_cmd is not None:
                self._send(self.plant.limiter.brake(min(dt, 0.01)), self._step_ns(dt), t_ns)
            return
        stopped = not np.any(self.plant.limiter.last != 0)
        on, reset, events = self.phases.update(self.mode, stopped)
        for name, why in events:
            self._event(t_ns, name, why, OK)
        if reset:
            self.plant.ctrl.reset()
        t0 = time.perf_counter()
        if self.plant.q_prev is None:
            self.plant.reset(q, None if self.out is None else self.out.sat_pose)
            self.plant.limiter.reset(self.last_cmd)
            if self.q_cmd is None:         # (re)start: the positions continue from the measured ones
                self.q_cmd = q.copy()
        out = self.plant.step(q, min(dt, 0.01), qd, control=on and not self.fault)
        self.step_us.append((time.perf_counter() - t0) * 1e6)
        self.last_ns, self.q_last, self.out = t_ns, q, out
        self._send(out.command, self._step_ns(dt), t_ns)
        self._publish_state(t_ns, out)
        self.frames += 1

    # --- outputs -------------------------------------------------------------------------------
    def _step_ns(self, dt: float) -> int:
        """The command's step: the sample's period (at most 10 ms, as the law's own step)."""
        self.period_ns = max(1, int(round(min(dt, 0.01) * 1e9)))
        return self.period_ns

    def _send(self, velocity, step_ns: int, stamp_ns: int) -> None:
        """Command the law's joint velocity as positions: integrated over ``step_ns`` (the
        sample's period, the law's own rate) from the last commanded positions, reached at
        ``stamp_ns + step_ns``, then the tail to rest (hil_nodes.space_plant.command)."""
        self.last_cmd = np.asarray(velocity, float).copy()
        self.q_cmd = self.q_cmd + self.last_cmd * (step_ns * 1e-9)
        self.cmd_ns = int(stamp_ns)
        # (the payload is its receivers' once sent: fresh arrays)
        self._cmd_port.send(command(self.joint_names, stamp_ns, self.q_cmd, self.last_cmd, self.a_max, step_ns))

    def _event(self, t_ns: int, name: str, why: str, level) -> None:
        self._event_pub.publish(status_array(ns_to_stamp(t_ns), level, name, why, self.get_name(),
                                             {'frames': self.frames}))

    def _publish_state(self, t_ns: int, out) -> None:
        self._odom_port.send((t_ns, out.sat_pose, out.sat_twist))
        self._ee_port.send((t_ns, out.ee_pose))
        e = out.error
        sat_euler = np.degrees(self.plant.satellite_euler_zyx())
        self._err_port.send(np.concatenate((e, (np.linalg.norm(e[:3]), np.degrees(np.linalg.norm(e[3:])),
                                                out.damping, out.sigma_min), sat_euler)))
        if self.frames % self.p.marker_every == 0:
            self._marker_pub.publish(satellite_markers(ns_to_stamp(t_ns), self.p.world_frame, out,
                                                       self.plant.r_des))
        # /tf is for rviz and the recorder: in real time after the frame's deliveries, off the path
        # to the command (kinematics' _send_tf says why); in lockstep in its place (a bag's order)
        tf = self._tf
        if self.p.lockstep:
            tf.on_sample(t_ns, out.sat_pose, self.q_last)
        else:
            pose, q = out.sat_pose, self.q_last
            LOOP.after_frame(self, lambda: self.active and self._tf is tf and tf.on_sample(t_ns, pose, q))

    def _raise_fault(self, t_ns: int, why: str) -> None:
        self.fault = why
        self.faults += 1
        self.get_logger().error(f'FAULT: {why}; ramping the joint velocity command to zero')
        self.status(ERROR, f'fault: {why}', faults=self.faults)
        self._event(t_ns, 'fault', why, ERROR)

    def _watchdog(self) -> None:
        """Dead peer: no joint states for stale_timeout -> fault; keep ramping the command down."""
        if not self.active or self.last_ns is None:
            return
        if time.monotonic() - self._wall_last > self.p.stale_timeout:
            if not self.fault:
                self._raise_fault(self.last_ns, f'no joint states for {self.p.stale_timeout} s (dead peer?)')
            if np.any(self.plant.limiter.last != 0) and self.q_cmd is not None:
                # the stamps go on from the last command's (no joint sample gives one)
                self._send(self.plant.limiter.brake(0.01), 10_000_000, self.cmd_ns + 10_000_000)

    def _publish_status(self) -> None:
        now = time.monotonic()
        t_prev, f_prev = self._rate
        self.loop_rate = (self.frames - f_prev) / max(now - t_prev, 1e-9)
        self._rate = (now, self.frames)
        values = dict(frames=self.frames, ignored_samples=self.ignored, faults=self.faults,
                      loop_rate_hz=self.loop_rate)
        if self.out is not None:
            z, y, x = np.degrees(self.plant.satellite_euler_zyx())
            values.update(satellite_euler_zyx_deg=f'{z:.6f} {y:.6f} {x:.6f}',
                          satellite_displacement_m=float(np.linalg.norm(self.out.sat_pose[:3])),
                          ee_position_error_m=float(np.linalg.norm(self.out.error[:3])),
                          ee_orientation_error_deg=float(np.degrees(np.linalg.norm(self.out.error[3:]))),
                          damping=self.out.damping, sigma_min=self.out.sigma_min)
        if self.step_us:
            s = np.asarray(self.step_us)
            values.update(step_p50_us=float(np.percentile(s, 50)), step_p99_us=float(np.percentile(s, 99)))
        if self.fault:
            self.status(ERROR, f'fault: {self.fault}', **values)
        else:
            self.status(OK, 'running' if self.active else 'inactive', **values)


main = main_for(SpacePlantNode)

if __name__ == '__main__':
    main()
