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


class StampedDoubles:
    """A header (its frame id fixed) followed by a fixed number of float64 fields:
    geometry_msgs/WrenchStamped (6: force, torque), PoseStamped (7: position, quaternion x y z w)."""

    def __init__(self, frame_id: str, count: int):
        buf = bytearray(_HEADER)
        buf += bytes(8)                               # the stamp: offsets below as in the message
        _string(buf, frame_id)
        _align(buf, 8)
        self._tail = bytes(buf[12:])                  # the frame id and the padding to the doubles
        self.count = count

    def encode(self, stamp_ns: int, values) -> bytes:
        data = _doubles(values)
        if len(data) != 8 * self.count:
            raise ValueError(f'{len(data) // 8} values, the message has {self.count}')
        return b''.join((_HEADER, _stamp(stamp_ns), self._tail, data))


class JointStateBytes:
    """sensor_msgs/JointState with fixed joint names and an empty frame id (what a
    joint_state_broadcaster publishes)."""

    def __init__(self, names, frame_id: str = ''):
        buf = bytearray(_HEADER)
        buf += bytes(8)
        _string(buf, frame_id)
        _strings(buf, list(names))
        self._prefix = bytes(buf[12:])
        self._offset = len(buf)
        self.n = len(names)

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
    sends: a ``PlainTrajectory``)."""

    def __init__(self, names, frame_id: str = ''):
        buf = bytearray(_HEADER)
        buf += bytes(8)
        _string(buf, frame_id)
        _strings(buf, list(names))
        self._prefix = bytes(buf[12:])

    def encode(self, stamp_ns: int, times_ns, positions, velocities=None) -> bytes:
        buf = bytearray(_HEADER)
        buf += _stamp(stamp_ns)
        buf += self._prefix
        _align(buf, 4)
        n = len(times_ns)
        buf += _U32.pack(n)
        pos = np.ascontiguousarray(positions, dtype=np.float64)
        vel = None if velocities is None else np.ascontiguousarray(velocities, dtype=np.float64)
        for k in range(n):
            _sequence(buf, pos[k])
            _sequence(buf, None if vel is None else vel[k])
            _align(buf, 4)
            buf += _EMPTY                             # accelerations
            buf += _EMPTY                             # effort
            buf += _stamp(times_ns[k])                # time_from_start (int32 sec, uint32 nanosec)
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
