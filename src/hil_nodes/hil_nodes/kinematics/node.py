"""``kinematics`` lifecycle node: joint states -> estimated TCP pose, FK/IK queries, rviz output.

Seed 000 section 3 / seed 001 section 5: the pose of the Hexaslide TCP is estimated in real time
by forward kinematics, warm-started from the last estimate, at the joint-state rate. For the
iiwa the flange pose comes from pinocchio (``hil_core.iiwa.kinematics``).

* ``/joint_states`` -> ``/kinematics/tcp_pose`` (PoseStamped, stamp = the joint sample time,
  frame ``frame_id``). No publication, and a (throttled) diagnostic, for: missing or duplicated
  joint names, name/position count mismatch, NaN/inf positions, decreasing stamps, FK
  non-convergence (the warm start then stays at the last good estimate). A repeated stamp is
  counted silently (the lockstep mock repeats t_0 before the first command); a zero stamp is
  valid (simulated time starts at 0).
* queries with standard messages (topic pairs, correlation by ``header.stamp``):
  FK: JointState on ``/kinematics/forward/request`` -> PoseStamped on ``.../response``;
  IK: PoseStamped on ``/kinematics/inverse/request`` -> JointState on ``.../response``.
  A failed query is answered with NaN values and ``header.frame_id = 'error: <reason>'``.
* ``/kinematics/markers`` (MarkerArray, at most ``marker_rate`` Hz of joint-sample time): the
  six legs, sliders, platform joints and platform of the Hexaslide (the closed chain cannot go
  through robot_state_publisher). ``/robot_description`` (latched String): ``urdf_file``.
* ``/tf``: ``frame_id`` -> the child of the URDF's floating joint (Hexaslide ``tcp``, hybrid5
  ``hybrid5_platform``) = the FK pose, with every joint sample, stamped with it; the URDF joint
  frames (``tf_joint_frames``; off where robot_state_publisher runs) and the six Hexaslide
  ``leg_i`` frames at ``tf_frames_rate``. ``/tf_static``: ``tcp -> ft_sensor_frame`` and the
  URDF's fixed joints (hil_nodes.msgs.tf_publisher).
"""
from __future__ import annotations

import math
import time

import numpy as np
from geometry_msgs.msg import Point, PoseStamped
from rclpy.clock import Clock, ClockType
from sensor_msgs.msg import JointState
from std_msgs.msg import ColorRGBA, String
from visualization_msgs.msg import Marker, MarkerArray

from hil_core import hexaslide as hx
from hil_nodes import qos, topics
from hil_nodes.msgs import convert
from hil_nodes.framework.base import ERROR, OK, STALE, WARN, HilLifecycleNode
from hil_nodes.runtime.intra_publisher import reader_count
from hil_nodes.kinematics import params
from hil_nodes.kinematics.robots import DEFAULT_URDF, resolve, robot_adapter
from hil_nodes.runtime.chain_port import joint_state_from_message, pose_port
from hil_nodes.runtime.frame_loop import LOOP
from hil_nodes.runtime.runner import main_for
from hil_nodes.msgs.tf_publisher import RobotTf


class KinematicsNode(HilLifecycleNode, name='kinematics', task='pose estimate', params=params.PARAMS):
    """Kinematics node (see module docstring). Statuses "kinematics: pose estimate": the TCP
    pose from forward kinematics, bad joint states."""

    def __init__(self, node_name: str | None = None, **kwargs):
        super().__init__(node_name, **kwargs)
        self.robot = None
        self._io = []
        self._desc_pub = None
        self.counters = dict.fromkeys(('published', 'malformed', 'bad_stamp', 'repeated_stamp', 'fk_failed',
                                       'fk_queries', 'ik_queries', 'query_errors', 'inactive_dropped'), 0)
        # The joint-state subscription lives as long as the node (see configure_node).
        self._joint_sub = None
        self._joint_sub_lockstep: bool | None = None
        self._last_stamp = -1   # no sample yet: sim time starts at 0, a zero stamp is valid
        self._last_marker = -math.inf
        self._built = None
        self._stale_timer = None
        self._stale = False
        self._last_input = 0.0

    # --- parameters and lifecycle ---------------------------------------------------------------
    def check_parameters(self, p) -> str | None:
        """Build the robot model for these values (configure, or a change while inactive)."""
        urdf = resolve(p.urdf_file or DEFAULT_URDF[p.robot])
        if not urdf.is_file():
            return f"parameter 'urdf_file': {urdf} not found"
        try:
            robot = robot_adapter(p)
        except (ValueError, OSError) as exc:
            return f"robot '{p.robot}': {exc}"
        self._built = (robot, params.pose_frame(p), urdf.read_text())
        return None

    def _adopt(self) -> None:
        self.robot, self.frame, description = self._built
        self._order = convert.JointOrder(self.robot.joint_names)
        if self._desc_pub is not None:          # (publish_description: false where robot_state_publisher runs)
            self._desc_pub.publish(String(data=description))

    def apply_parameters(self, changed: set[str]) -> None:
        # only while inactive (nothing here is dynamic): the model checked above replaces the old
        self._adopt()
        note = ' (lockstep QoS applies at the next configure)' if 'lockstep' in changed else ''
        self.status(OK, 'parameters applied' + note, changed=','.join(sorted(changed)), robot=self.p.robot)

    def configure_node(self) -> None:
        self._desc_pub = (self.create_publisher(String, topics.ROBOT_DESCRIPTION, qos.latched())
                          if self.p.publish_description else None)
        self._adopt()                      # built by check_parameters during load_parameters
        stream = self.stream_qos()
        self.pose_pub = self.create_lifecycle_publisher(PoseStamped, topics.KINEMATICS_TCP_POSE,
                                                        self.driver_output_qos())
        self._pose_port = pose_port(self.pose_pub, lambda: self.frame)
        self._cycle = self.cycle_monitor('fk', 0.0025)
        self.marker_pub = self.create_lifecycle_publisher(MarkerArray, topics.KINEMATICS_MARKERS, 10)
        self._tf = RobotTf(self, self._built[2], self.robot.joint_names, self.frame, self.robot.geom,
                           self.p.tf_frames_rate, self.p.tf_joint_frames, self.p.ft_sensor_frame)
        self.fk_resp = self.create_lifecycle_publisher(PoseStamped, topics.KINEMATICS_FK_RESPONSE, qos.command())
        self.ik_resp = self.create_lifecycle_publisher(JointState, topics.KINEMATICS_IK_RESPONSE, qos.command())
        # wall (steady) clock: in lockstep a dead clock owner also stops the node clock
        self._stale_timer = self.create_group_timer(self.p.stale_timeout / 2.0, self._check_stale,
                                                    clock=Clock(clock_type=ClockType.STEADY_TIME))
        self._io = [self.pose_pub, self.marker_pub, self.fk_resp, self.ik_resp,
                    self.create_subscription(JointState, topics.KINEMATICS_FK_REQUEST, self._on_fk_query,
                                             qos.command()),
                    self.create_subscription(PoseStamped, topics.KINEMATICS_IK_REQUEST, self._on_ik_query,
                                             qos.command())]
        # /joint_states is subscribed once, not once per configure: a transient-
        # local subscription created anew was replayed the publisher's history, joint states from
        # before the deactivation that DDS handed over after the activation, and they came out as
        # poses of the past. The subscription is volatile now (qos.joint_states), and a kept one
        # takes every sample when it arrives, so one published while inactive is dropped then.
        # Only a change of the QoS (the lockstep parameter) needs a new one.
        if self._joint_sub is None or self._joint_sub_lockstep != bool(self.p.lockstep):
            self.release(self._joint_sub)
            self._joint_sub = self.create_subscription(JointState, topics.JOINT_STATES, self._on_joints,
                                                      qos.joint_states(self.p.lockstep),
                                                      chain_input=self._on_joint_payload)
            self._joint_sub_lockstep = bool(self.p.lockstep)

    def activate_node(self) -> None:
        self.robot.reset()                 # cold start from home: converges everywhere (tested)
        self._last_stamp = -1   # no sample yet: sim time starts at 0, a zero stamp is valid
        self._last_marker = -math.inf
        self._last_input = time.monotonic()
        self._stale = False

    def _check_stale(self) -> None:
        if self.active and not self._stale and time.monotonic() - self._last_input > self.p.stale_timeout:
            self._stale = True
            self.status(STALE, f'no joint states for {self.p.stale_timeout} s: no TCP pose estimate',
                        published=self.counters['published'])

    def cleanup_node(self) -> None:
        self.release(self._stale_timer, *self._io, self._desc_pub, getattr(self, '_tf', None))
        self._stale_timer = self._desc_pub = self._tf = None
        self._io = []
        self.robot = None

    # --- real-time stream -------------------------------------------------------------------------
    def _on_joints(self, msg: JointState) -> None:
        self._on_joint_payload(joint_state_from_message(msg))

    def _on_joint_payload(self, payload) -> None:
        """A joint sample (stamp ns, names, positions, ...): from the drives' chain port in one
        process, else read from the message (hil_nodes.runtime.chain_port)."""
        if not self.active:
            self.counters['inactive_dropped'] += 1
            return
        with self._cycle(payload[0]):
            sample = self._take_joints(*payload[:3])
        # /tf after the cycle: the cycle is the chain's path (sample -> pose), as in real time,
        # where /tf goes out after the frame's deliveries (``_send_tf``); in lockstep its 50 Hz
        # joint and leg frames were 28 us of the 57 us a frame the node's cycle measured
        # (2026-11-29, calibration about 0.8 s)
        if sample is not None:
            self._send_tf(*sample)

    def _take_joints(self, stamp: int, names, position) -> tuple | None:
        """The sample's pose out (and markers for a viewer); (stamp, pose, q) for /tf, None when
        the sample was refused."""
        self._last_input = time.monotonic()
        if self._stale:
            self._stale = False
            self.status(OK, 'joint states resumed')
        # bad input is counted, and told with its count at most once per warn_interval (the
        # node's own parameter) for its kind
        try:
            q = self._order.positions(names, position)
        except ValueError as exc:
            self.counters['malformed'] += 1
            self.report_problem('malformed', ERROR, f'malformed joint state: {exc}', interval=self.p.warn_interval,
                                count=self.counters['malformed'], stamp=stamp)
            return
        if stamp == self._last_stamp:
            self.counters['repeated_stamp'] += 1
            return
        if stamp < self._last_stamp:
            self.counters['bad_stamp'] += 1
            self.report_problem('bad_stamp', WARN, 'joint state with out-of-order stamp ignored',
                                interval=self.p.warn_interval, count=self.counters['bad_stamp'], stamp=stamp,
                                last=self._last_stamp)
            return
        try:
            pose, reason = self.robot.fk(q)
        except ValueError as exc:
            pose, reason = None, str(exc)
        if pose is None:
            self.counters['fk_failed'] += 1
            self.report_problem('fk_failed', ERROR, f'forward kinematics failed: {reason}',
                                interval=self.p.warn_interval, count=self.counters['fk_failed'], stamp=stamp,
                                q=np.array2string(q, precision=6))
            return
        self._last_stamp = stamp
        self._pose_port.send((stamp, pose))
        self.counters['published'] += 1
        self.count_published(topics.KINEMATICS_TCP_POSE)
        rate = self.p.marker_rate
        # rviz markers only for a reader (20 marker objects: ~1 ms in a running graph, 30 times a
        # second); the readers are asked at the marker rate too, not every frame without one
        if rate > 0 and self.robot.geom is not None and stamp * 1e-9 - self._last_marker >= 1.0 / rate:
            self._last_marker = stamp * 1e-9
            if reader_count(self.marker_pub):
                self.marker_pub.publish(self._markers(convert.ns_to_stamp(stamp), pose, q))
        return stamp, pose, q

    def _send_tf(self, stamp: int, pose, q) -> None:
        """/tf of the sample: nobody in the chain reads it (rviz, the recorder), so in real time it
        goes out after the frame's deliveries (``frame_loop.after_frame``: its 50 Hz joint and leg
        frames took 0.3-0.4 ms in the chain's path at twice the pace on a slow core); in lockstep
        in its place, so that a bag keeps its order."""
        tf = self._tf
        if self.p.lockstep:
            tf.on_sample(stamp, pose, q)
            return
        LOOP.after_frame(self, lambda: self.active and self._tf is tf and tf.on_sample(stamp, pose, q))

    # --- queries ---------------------------------------------------------------------------------------
    def _on_fk_query(self, msg: JointState) -> None:
        if not self.active:
            return
        self.counters['fk_queries'] += 1
        out = PoseStamped()
        out.header.stamp = msg.header.stamp
        try:
            pose, reason = self.robot.fk_query_solve(convert.joint_positions(msg, self.robot.joint_names))
        except ValueError as exc:
            pose, reason = None, str(exc)
        if pose is None:
            self.counters['query_errors'] += 1
            out.header.frame_id = f'error: {reason}'
            pose = [math.nan] * 7
        else:
            out.header.frame_id = self.frame
        out.pose = convert.array_to_pose(pose)
        self.fk_resp.publish(out)

    def _on_ik_query(self, msg: PoseStamped) -> None:
        if not self.active:
            return
        self.counters['ik_queries'] += 1
        out = JointState(name=list(self.robot.joint_names))
        out.header.stamp = msg.header.stamp
        if msg.header.frame_id not in ('', self.frame):
            q, reason = None, f"pose frame '{msg.header.frame_id}' is not '{self.frame}'"
        else:
            q, reason = self.robot.ik(convert.pose_to_array(msg.pose))
        if q is None:
            self.counters['query_errors'] += 1
            out.header.frame_id = f'error: {reason}'
            q = [math.nan] * len(out.name)
        else:
            out.header.frame_id = self.frame
        out.position = [float(v) for v in q]
        self.ik_resp.publish(out)

    # --- rviz ---------------------------------------------------------------------------------------------
    def _markers(self, stamp, pose, q) -> MarkerArray:
        geom = self.robot.geom
        sliders, joints = hx.chain_points(geom, pose, q)
        size = geom.link_length

        def marker(mid, kind, ns, scale, rgba):
            m = Marker(id=mid, type=kind, action=Marker.ADD, ns=ns)
            m.header.stamp = stamp
            m.header.frame_id = self.frame
            m.pose.orientation.w = 1.0
            m.scale.x, m.scale.y, m.scale.z = scale
            m.color = ColorRGBA(r=rgba[0], g=rgba[1], b=rgba[2], a=rgba[3])
            return m

        legs = marker(0, Marker.LINE_LIST, 'legs', (0.03 * size, 0, 0), (0.8, 0.8, 0.85, 1.0))
        legs.points = [Point(x=float(v[0]), y=float(v[1]), z=float(v[2]))
                       for pair in zip(sliders, joints) for v in pair]
        balls = marker(1, Marker.SPHERE_LIST, 'joints', (0.05 * size,) * 3, (0.15, 0.35, 0.8, 1.0))
        balls.points = [Point(x=float(v[0]), y=float(v[1]), z=float(v[2])) for v in (*sliders, *joints)]
        platform = marker(2, Marker.CYLINDER, 'platform',
                          (2.2 * geom.platform_radius, 2.2 * geom.platform_radius, 0.03 * size),
                          (0.95, 0.55, 0.1, 0.8))
        platform.pose = convert.array_to_pose(pose)
        return MarkerArray(markers=[legs, balls, platform])


main = main_for(KinematicsNode)

if __name__ == '__main__':
    main()
