"""CDR bytes of the chain's stream types written from arrays, without a message object.

Why: a chain port (hil_nodes.runtime.chain_port) hands its stage's arrays to the next stage; the
recorder still needs the stream's bytes. Building an rclpy message only to read its fields back
(``cdr_encode``) cost more than the stage's algorithm: the time base's JointTrajectory took
~50 us to fill and ~40 us to encode per frame, in a running Hexafloat graph. What is constant
for a stream (its frame id, its joint names) is encoded once, when the port is made.

The bytes are those of ``hil_nodes.msgs.cdr_encode`` (plain CDR, little endian, XCDR1, no
padding after the last field), which are rclpy's own: test/unit/test_cdr_arrays.py checks both
against rclpy's ``serialize_message`` of the same message built with ``hil_nodes.msgs.convert``.
"""
from __future__ import annotations

import numpy as np

from hil_nodes.msgs.cdr_encode import _HEADER, _TIME, _U32, _align, _string, _strings

_NS = 1_000_000_000
_EMPTY = _U32.pack(0)


def _stamp(stamp_ns: int) -> bytes:
    return _TIME.pack(*divmod(int(stamp_ns), _NS))


def _doubles(values) -> bytes:
    return np.ascontiguousarray(values, dtype=np.float64).tobytes()


def _named_prefix(names, frame_id: str) -> bytes:
    """The bytes after a header's stamp of a message that starts with a header and joint names:
    the frame id and the names (what JointState and JointTrajectory share)."""
    buf = bytearray(_HEADER)
    buf += bytes(8)                                   # the stamp: offsets below as in the message
    _string(buf, frame_id)
    _strings(buf, list(names))
    return bytes(buf[12:])


class StampedDoubles:
    """A header (its frame id fixed), fixed strings, then a fixed number of float64 fields:
    geometry_msgs/WrenchStamped (6: force, torque), PoseStamped (7: position, quaternion x y z w),
    nav_msgs/Odometry (``strings`` the child frame; 85: pose, its covariance, twist, its
    covariance)."""

    def __init__(self, frame_id: str, count: int, strings=()):
        buf = bytearray(_HEADER)
        buf += bytes(8)                               # the stamp: offsets below as in the message
        _string(buf, frame_id)
        for text in strings:
            _string(buf, text)
        _align(buf, 8)
        self._tail = bytes(buf[12:])                  # the frame id and the padding to the doubles
        self.count = count

    def encode(self, stamp_ns: int, values) -> bytes:
        data = _doubles(values)
        if len(data) != 8 * self.count:
            raise ValueError(f'{len(data) // 8} values, the message has {self.count}')
        return b''.join((_HEADER, _stamp(stamp_ns), self._tail, data))


class Float64ArrayBytes:
    """std_msgs/Float64MultiArray without a layout (no dimensions, offset 0): a vector."""

    _PREFIX = _HEADER + _U32.pack(0) + _U32.pack(0)

    def encode(self, values) -> bytes:
        data = _doubles(values)
        n = len(data) // 8
        # the count ends at offset 12: aligned to 8 only with padding before the values
        return b''.join((self._PREFIX, _U32.pack(n), bytes(4) if n else b'', data))


class JointStateBytes:
    """sensor_msgs/JointState with fixed joint names and an empty frame id (what a
    joint_state_broadcaster publishes)."""

    def __init__(self, names, frame_id: str = ''):
        self._prefix = _named_prefix(names, frame_id)

    def encode(self, stamp_ns: int, position, velocity=None, effort=None) -> bytes:
        buf = bytearray(_HEADER)
        buf += _stamp(stamp_ns)
        buf += self._prefix
        for values in (position, velocity, effort):
            _sequence(buf, values)
        return bytes(buf)


class JointTrajectoryBytes:
    """trajectory_msgs/JointTrajectory with fixed joint names and an empty frame id, every point
    with positions, optional velocities and no accelerations or efforts (what the time base
    sends: a ``PlainTrajectory``).

    A stream's messages differ only in their stamp, their point times and their values: for each
    layout (point count, joint count, velocities or not) the bytes are written once with zeros
    for the values and times, with the byte offsets of every value and time; a message is then
    that template with its values put in place by one numpy assignment and its stamp and point
    times packed in place (~10 us for 16 points of 6 joints, where writing it field by field took
    ~60 us). The point times are not part of the layout: the iiwa's braking tail changes them
    from one sample to the next (its stop times follow the velocities), and a layout per set of
    times was rebuilt every few samples."""

    def __init__(self, names, frame_id: str = ''):
        self._prefix = _named_prefix(names, frame_id)
        self._layouts: dict = {}

    def _layout(self, n_points: int, n_joints: int, velocities: bool):
        key = (n_points, n_joints, velocities)
        layout = self._layouts.get(key)
        if layout is None:
            if len(self._layouts) >= 16:          # (a stream has a few layouts)
                self._layouts.clear()
            buf = bytearray(_HEADER)
            buf += bytes(8)
            buf += self._prefix
            _align(buf, 4)
            buf += _U32.pack(n_points)
            offsets = []
            time_offsets = []
            for _ in range(n_points):
                for present in (True, velocities):
                    _align(buf, 4)
                    if not present:
                        buf += _EMPTY
                        continue
                    buf += _U32.pack(n_joints)
                    _align(buf, 8)
                    offsets.append(len(buf))
                    buf += bytes(8 * n_joints)
                _align(buf, 4)
                buf += _EMPTY                         # accelerations
                buf += _EMPTY                         # effort
                time_offsets.append(len(buf))         # time_from_start (int32 sec, uint32 nanosec)
                buf += bytes(8)
            # every value's 8 bytes, row by row: positions then velocities of each point
            index = (np.asarray(offsets)[:, None] + np.arange(8 * n_joints)[None, :]).ravel()
            layout = self._layouts[key] = (bytes(buf), index, tuple(time_offsets))
        return layout

    def encode(self, stamp_ns: int, times_ns, positions, velocities=None) -> bytes:
        times_ns = np.asarray(times_ns, dtype=np.int64)
        pos = np.asarray(positions, dtype=np.float64)
        n_points, n_joints = pos.shape
        if len(times_ns) != n_points:
            raise ValueError(f'{len(times_ns)} point times for {n_points} points')
        template, index, time_offsets = self._layout(n_points, n_joints, velocities is not None)
        values = pos if velocities is None else np.concatenate((pos, np.asarray(velocities, dtype=np.float64)), axis=1)
        buf = bytearray(template)
        np.frombuffer(buf, dtype=np.uint8)[index] = np.ascontiguousarray(values).view(np.uint8).ravel()
        _TIME.pack_into(buf, 4, *divmod(int(stamp_ns), _NS))
        for offset, t in zip(time_offsets, times_ns.tolist()):
            _TIME.pack_into(buf, offset, *divmod(t, _NS))
        return bytes(buf)


class TfBytes:
    """tf2_msgs/TFMessage of transforms that share one stamp: (parent, child, xyz, quat xyzw)."""

    def __init__(self):
        self._frames: dict = {}

    def encode(self, stamp_ns: int, transforms) -> bytes:
        stamp = _stamp(stamp_ns)
        buf = bytearray(_HEADER)
        buf += _U32.pack(len(transforms))
        for parent, child, xyz, quat in transforms:
            _align(buf, 4)
            buf += stamp
            _string(buf, parent)
            _string(buf, child)
            _align(buf, 8)
            buf += _doubles(xyz)
            buf += _doubles(quat)
        return bytes(buf)


def _sequence(buf: bytearray, values) -> None:
    """A float64[] field: count, then the values aligned to 8 (none: an empty sequence)."""
    _align(buf, 4)
    if values is None or len(values) == 0:
        buf += _EMPTY
        return
    buf += _U32.pack(len(values))
    _align(buf, 8)
    buf += _doubles(values)
