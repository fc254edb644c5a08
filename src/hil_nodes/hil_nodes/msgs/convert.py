"""Message <-> numpy conversions shared by the nodes: the one module that builds and fills
messages (no algorithm lives here).

Pose arrays follow hil_core's convention: ``[x, y, z, qx, qy, qz, qw]`` for poses (metres,
unit quaternion, scalar last, as geometry_msgs) and 6-vectors ``[fx, fy, fz, tx, ty, tz]`` /
``[vx, vy, vz, wx, wy, wz]`` for wrenches and twists. ``array_to_*`` build a new message;
``fill_*`` refill one in place, for the 400 Hz streams that publish from a ``MessageRing``
(hil_nodes.msgs.message_ring says why). Statuses and events (diagnostic_msgs) are built here too.
"""
from __future__ import annotations

import array

import numpy as np
from builtin_interfaces.msg import Duration, Time
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from geometry_msgs.msg import Accel, Pose, Twist, Wrench
from std_msgs.msg import Header

from hil_nodes.msgs.message_ring import MessageRing


def stamp_to_ns(stamp: Time) -> int:
    return int(stamp.sec) * 1_000_000_000 + int(stamp.nanosec)


def ns_to_stamp(ns: int) -> Time:
    ns = int(ns)
    return Time(sec=ns // 1_000_000_000, nanosec=ns % 1_000_000_000)


def stamp_to_sec(stamp: Time) -> float:
    return stamp.sec + stamp.nanosec * 1e-9


def duration_ns(t: float) -> int:
    """Seconds to whole nanoseconds, as a Duration field carries them (``sec_to_duration``)."""
    return int(round(t * 1e9))


def sec_to_duration(t: float) -> Duration:
    ns = duration_ns(t)
    return Duration(sec=ns // 1_000_000_000, nanosec=ns % 1_000_000_000)


def duration_to_sec(d: Duration) -> float:
    return d.sec + d.nanosec * 1e-9


def wrench_to_array(w: Wrench) -> np.ndarray:
    return np.array([w.force.x, w.force.y, w.force.z, w.torque.x, w.torque.y, w.torque.z])


def array_to_wrench(a) -> Wrench:
    w = Wrench()
    w.force.x, w.force.y, w.force.z, w.torque.x, w.torque.y, w.torque.z = (float(v) for v in a[:6])
    return w


def twist_to_array(t: Twist) -> np.ndarray:
    return np.array([t.linear.x, t.linear.y, t.linear.z, t.angular.x, t.angular.y, t.angular.z])


def _linear_angular(msg, a):
    """A Twist or Accel (linear, angular) filled from the 6 values ``a``."""
    msg.linear.x, msg.linear.y, msg.linear.z, msg.angular.x, msg.angular.y, msg.angular.z = (float(v) for v in a[:6])
    return msg


def array_to_twist(a) -> Twist:
    return _linear_angular(Twist(), a)


def array_to_accel(a) -> Accel:
    return _linear_angular(Accel(), a)


def pose_to_array(p: Pose) -> np.ndarray:
    return np.array([p.position.x, p.position.y, p.position.z,
                     p.orientation.x, p.orientation.y, p.orientation.z, p.orientation.w])


def array_to_pose(a) -> Pose:
    p = Pose()
    p.position.x, p.position.y, p.position.z = (float(v) for v in a[:3])
    p.orientation.x, p.orientation.y, p.orientation.z, p.orientation.w = (float(v) for v in a[3:7])
    return p


def fill_stamp(stamp, ns: int) -> None:
    """builtin_interfaces/Time in place, as ``ns_to_stamp``."""
    stamp.sec, stamp.nanosec = divmod(int(ns), 1_000_000_000)


def fill_wrench_stamped(msg, stamp_ns: int, frame_id: str, w) -> None:
    """geometry_msgs/WrenchStamped in place from the 6 values ``w`` (force, torque)."""
    fill_stamp(msg.header.stamp, stamp_ns)
    msg.header.frame_id = frame_id
    wrench = msg.wrench
    f, t = wrench.force, wrench.torque
    f.x, f.y, f.z, t.x, t.y, t.z = map(float, w[:6])


def fill_pose_stamped(msg, stamp, frame_id: str, pose) -> None:
    """geometry_msgs/PoseStamped in place: ``stamp`` in ns or a Time message, ``pose`` the 7
    values (position, quaternion x y z w)."""
    if hasattr(stamp, 'nanosec'):
        msg.header.stamp.sec, msg.header.stamp.nanosec = stamp.sec, stamp.nanosec
    else:
        fill_stamp(msg.header.stamp, stamp)
    msg.header.frame_id = frame_id
    p = msg.pose
    pos, q = p.position, p.orientation
    pos.x, pos.y, pos.z, q.x, q.y, q.z, q.w = map(float, pose[:7])


def value_text(v) -> str:
    """A status value as text: a float to 9 significant digits, a sequence of numbers to 6 each."""
    if isinstance(v, (list, tuple, np.ndarray)):
        return '[' + ', '.join(f'{float(x):.6g}' for x in v) + ']'
    if isinstance(v, float):
        return f'{v:.9g}'
    return str(v)


def diagnostic_status(level, name: str, message: str, hardware_id: str, values: dict) -> DiagnosticStatus:
    """diagnostic_msgs/DiagnosticStatus: ``level`` an int or the message's byte, values as ``value_text``."""
    status = DiagnosticStatus(level=bytes([level]) if isinstance(level, int) else level, name=name,
                              message=message, hardware_id=hardware_id)
    status.values = [KeyValue(key=str(k), value=value_text(v)) for k, v in values.items()]
    return status


def status_array(stamp, level, name: str, message: str, hardware_id: str, values: dict) -> DiagnosticArray:
    """A DiagnosticArray of one status stamped ``stamp`` (a Time): a node's status on /diagnostics,
    or an event on /hil/events (``name`` the event, ``hardware_id`` the node that reports it)."""
    return DiagnosticArray(header=Header(stamp=stamp),
                           status=[diagnostic_status(level, name, message, hardware_id, values)])


def joint_positions(msg, names) -> np.ndarray:
    """Positions of ``names`` (in that order) from a sensor_msgs/JointState.

    Extra joints are ignored (a JointState may carry a whole system); a missing or duplicated
    name, a name/position count mismatch or a non-finite position raises ValueError saying which.
    """
    return positions_by_name(list(msg.name), msg.position, names)


def positions_by_name(got, position, names) -> np.ndarray:
    """``joint_positions`` of the joints ``got`` (a list or tuple of names) at ``position`` (a
    sequence or an array): a JointState's fields, or a chain port's payload."""
    if len(position) != len(got):
        raise ValueError(f'{len(got)} joint names but {len(position)} positions')
    if (got is names or list(got) == list(names)) and len(set(got)) == len(got):
        # the usual message: the robot's joints in its order (read through the buffer at once)
        q = np.array(position, dtype=float)
        if np.isfinite(q).all():                # (the method: np.all's wrapper cost 3-4 us a frame)
            return q
    got = list(got)
    index = {n: i for i, n in enumerate(got)}
    if len(index) != len(got):
        raise ValueError('duplicate joint names')
    missing = [n for n in names if n not in index]
    if missing:
        raise ValueError(f'missing joints {missing} (got {got})')
    q = np.array([position[index[n]] for n in names], dtype=float)
    if not np.all(np.isfinite(q)):
        bad = [n for n, v in zip(names, q) if not np.isfinite(v)]
        raise ValueError(f'non-finite position of {bad}')
    return q


class JointOrder:
    """``positions_by_name`` for one robot's joints (``names``), its checks of the joint names
    made once per names tuple: a stream in one process sends the same tuple with every sample (a
    chain port's, hil_nodes.runtime.chain_port.joint_state_port), so once it was accepted in the
    robot's order only the positions are checked (the names' checks were 8 us of the kinematics'
    57 us frame in a lockstep graph, 2026-11-29). A tuple cannot change; anything else (a
    message's list) is checked every time."""

    __slots__ = ('names', '_accepted')

    def __init__(self, names):
        self.names = list(names)
        self._accepted = None        # the tuple last accepted in the robot's order

    def positions(self, got, position) -> np.ndarray:
        if got is self._accepted and len(position) == len(got):
            q = np.array(position, dtype=float)
            if np.isfinite(q).all():
                return q
        q = positions_by_name(got, position, self.names)
        if type(got) is tuple and list(got) == self.names:
            self._accepted = got
        return q


def joint_velocities(msg, names):
    """Velocities of ``names`` from a sensor_msgs/JointState, or None when it carries none.

    Same checks as ``joint_positions`` (call that first for the names); a velocity count that
    differs from the name count or a non-finite velocity raises ValueError.
    """
    return velocities_by_name(list(msg.name), msg.velocity, names)


def velocities_by_name(got, velocity, names):
    """``joint_velocities`` of the joints ``got`` at ``velocity`` (a JointState's fields, or a
    chain port's payload; None or empty: None)."""
    if velocity is None or len(velocity) == 0:
        return None
    got = list(got)
    if len(velocity) != len(got):
        raise ValueError(f'{len(got)} joint names but {len(velocity)} velocities')
    index = {n: i for i, n in enumerate(got)}
    qd = np.array([velocity[index[n]] for n in names], dtype=float)
    if not np.all(np.isfinite(qd)):
        bad = [n for n, v in zip(names, qd) if not np.isfinite(v)]
        raise ValueError(f'non-finite velocity of {bad}')
    return qd


def float_sequence(row) -> array.array:
    """A float64 message sequence from a numpy row: an array.array('d') is taken by the
    generated setters as is, where a list is type-checked element by element (at 400 Hz with
    8 points x 2 fields per message that check was a third of the message's cost)."""
    return array.array('d', np.ascontiguousarray(row, dtype=np.float64).tobytes())


class TrajectoryMessages:
    """JointTrajectory messages built once per point count and refilled for every frame: the
    generated message classes cost ~5 us per object to construct (8 points, their durations and
    a header: ~80 us per message at 400 Hz), where refilling the sequences costs ~1 us each.
    Each point count has its ``MessageRing`` (hil_nodes.msgs.message_ring says why a ring)."""

    def __init__(self, names, period: float):
        self.names = list(names)
        self.period = float(period)
        self._by_size: dict[int, MessageRing] = {}

    def _message(self, n: int):
        ring = self._by_size.get(n)
        if ring is None:
            ring = self._by_size[n] = MessageRing(lambda: self._new(n))
        return ring.next()

    def _new(self, n: int):
        from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint
        msg = JointTrajectory(joint_names=self.names)
        msg.points = [JointTrajectoryPoint(time_from_start=sec_to_duration((i + 1) * self.period)) for i in range(n)]
        return msg

    def fill(self, stamp_ns: int, positions, velocities, first_index: int = 1):
        """The message with points at first_index * period, (first_index + 1) * period, ..."""
        positions = np.asarray(positions, dtype=np.float64)
        velocities = np.asarray(velocities, dtype=np.float64)
        n = positions.shape[0]
        msg = self._message(n) if first_index == 1 else None
        if msg is None:
            return joint_trajectory(self.names, stamp_ns, (np.arange(n) + first_index) * self.period,
                                    positions, velocities)
        fill_stamp(msg.header.stamp, stamp_ns)
        # the rows' bytes in one copy each, then a slice per point (2.6 us for 8 points x 2
        # fields against 4.7 converting row by row)
        p_bytes, v_bytes = positions.tobytes(), velocities.tobytes()
        width = 8 * positions.shape[1]
        for k, pt in enumerate(msg.points):
            pt.positions = array.array('d', p_bytes[k * width:(k + 1) * width])
            pt.velocities = array.array('d', v_bytes[k * width:(k + 1) * width])
        return msg


def joint_trajectory(names, stamp_ns: int, times, positions, velocities=None):
    """trajectory_msgs/JointTrajectory: header.stamp = ``stamp_ns``, one point per row of
    ``positions`` at ``time_from_start = times[i]`` (s), velocities optional (ros2_control JTC)."""
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint
    msg = JointTrajectory()
    msg.header.stamp = ns_to_stamp(stamp_ns)
    msg.joint_names = list(names)
    positions = np.asarray(positions, dtype=np.float64)
    points = []
    for i, t in enumerate(times):
        pt = JointTrajectoryPoint(time_from_start=sec_to_duration(float(t)))
        pt.positions = float_sequence(positions[i])
        if velocities is not None:
            pt.velocities = float_sequence(velocities[i])
        points.append(pt)
    msg.points = points
    return msg


def transform_stamped(stamp, parent: str, child: str, xyz, quat_xyzw):
    """geometry_msgs/TransformStamped of a hil_core.maths.tf_frames transform."""
    from geometry_msgs.msg import TransformStamped
    t = TransformStamped()
    t.header.stamp = stamp
    t.header.frame_id, t.child_frame_id = parent, child
    tr, r = t.transform.translation, t.transform.rotation
    tr.x, tr.y, tr.z = (float(v) for v in xyz)
    r.x, r.y, r.z, r.w = (float(v) for v in quat_xyzw)
    return t


def update_transform(t, stamp, xyz, quat_xyzw) -> None:
    """Refill a TransformStamped in place (same frames)."""
    t.header.stamp = stamp
    tr, r = t.transform.translation, t.transform.rotation
    tr.x, tr.y, tr.z = float(xyz[0]), float(xyz[1]), float(xyz[2])
    r.x, r.y, r.z, r.w = float(quat_xyzw[0]), float(quat_xyzw[1]), float(quat_xyzw[2]), float(quat_xyzw[3])


def tf_message(stamp, transforms):
    """tf2_msgs/TFMessage of (parent, child, xyz, quat_xyzw) tuples, all stamped ``stamp``."""
    from tf2_msgs.msg import TFMessage
    return TFMessage(transforms=[transform_stamped(stamp, *t) for t in transforms])


def trajectory_from_msg(msg):
    """hil_core.drives.joint_trajectory.Trajectory of a trajectory_msgs/JointTrajectory (an rclpy message
    or one deserialized by rosbags), times as integer nanoseconds, for ``jtc_validate``."""
    from hil_core.drives.joint_trajectory import Point, Trajectory

    def ns(t):
        return int(t.sec) * 1_000_000_000 + int(t.nanosec)
    points = tuple(Point(ns(p.time_from_start), tuple(map(float, p.positions)), tuple(map(float, p.velocities)),
                         tuple(map(float, p.accelerations)), tuple(map(float, p.effort))) for p in msg.points)
    return Trajectory(tuple(msg.joint_names), points, ns(msg.header.stamp))


def plain_trajectory_from_msg(msg):
    """hil_core.drives.plants.plain_trajectory.PlainTrajectory of a JointTrajectory, or None when it is
    not plain (the drives' fast path; ``trajectory_from_msg`` serves the full check). Each field
    is read once (an rclpy field is a property); the rows go through the buffer of rclpy's
    float64 sequences (array.array('d')) in one copy."""
    from hil_core.drives.plants.plain_trajectory import PlainTrajectory
    points, names = msg.points, tuple(msg.joint_names)
    n = len(names)
    if not n or not points:
        return None
    nv = len(points[0].velocities)
    if nv not in (0, n):
        return None
    pos, vel, times = [], [], []
    for p in points:
        p_row, v_row = p.positions, p.velocities
        if len(p_row) != n or len(v_row) != nv or len(p.accelerations) or len(p.effort):
            return None
        pos.append(p_row)
        vel.append(v_row)
        d = p.time_from_start
        times.append(int(d.sec) * 1_000_000_000 + int(d.nanosec))
    shape = (len(points), n)
    return PlainTrajectory(names, stamp_to_ns(msg.header.stamp), np.array(times, dtype=np.int64),
                           _rows(pos, shape), _rows(vel, shape) if nv else None)


def _rows(rows, shape) -> np.ndarray:
    if all(getattr(r, 'typecode', None) == 'd' for r in rows):
        # writable (a bytearray): the compiled kernel then sees one array type, the one it was
        # loaded for at configure (a read-only array is another signature, loaded mid-run)
        return np.frombuffer(bytearray(b''.join(rows)), dtype=float).reshape(shape)
    return np.array(rows, dtype=float).reshape(shape)     # a message built outside rclpy (rosbags)
