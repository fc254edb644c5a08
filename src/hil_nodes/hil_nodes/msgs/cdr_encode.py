"""CDR bytes of the recorder's 400 Hz message types, written directly from the rclpy message.

Why: in one process the recorder gets every stream's messages from the intra-process bus and
must serialize them for the bag. rclpy's ``serialize_message`` converts the whole Python message
into C structures first: 26 us per message on average in a running Hexafloat graph (5 us for a
WrenchStamped on an idle machine), and about 3600 messages per second are recorded, 0.1 CPU-s
per s. These encoders write the same bytes with ``struct`` from the message's fields.

The layout is plain CDR, little endian, as rmw_fastrtps writes it (XCDR1): the encapsulation
header ``00 01 00 00``; every primitive aligned to its size counted from the end of that header;
a string as a uint32 length (terminating NUL included), its bytes and the NUL; a sequence as a
uint32 count and its elements; no padding after the last field (the length is the true one, as
``serialize_exact`` below gives it for any type). Padding bytes are zeros.

``encode(msg)`` returns None for a type without an encoder here (the caller falls back to
rclpy). Oracles: rclpy's own ``serialize_message`` / ``deserialize_message`` and rosbags'
serializer (test/unit/test_cdr_encode.py, hypothesis over contents, names and lengths).
"""
from __future__ import annotations

import struct

from rclpy.serialization import serialize_message

_HEADER = b'\x00\x01\x00\x00'
_U32 = struct.Struct('<I')
_TIME = struct.Struct('<iI')
_D3 = struct.Struct('<3d')
_D4 = struct.Struct('<4d')
_D6 = struct.Struct('<6d')
_D7 = struct.Struct('<7d')
_ZEROS = bytes(8)


def _align(buf: bytearray, n: int) -> None:
    r = (len(buf) - 4) % n                      # offsets count from the end of the header
    if r:
        buf += _ZEROS[:n - r]


def _string(buf: bytearray, s: str) -> None:
    _align(buf, 4)
    b = s.encode()
    buf += _U32.pack(len(b) + 1)
    buf += b
    buf += b'\x00'


def _header(buf: bytearray, header) -> None:
    stamp = header.stamp
    buf += _TIME.pack(stamp.sec, stamp.nanosec)   # offset 0: aligned
    _string(buf, header.frame_id)


def _strings(buf: bytearray, values) -> None:
    _align(buf, 4)
    buf += _U32.pack(len(values))
    for s in values:
        _string(buf, s)


def _doubles(buf: bytearray, values) -> None:
    """A float64[] (rclpy gives an array.array('d'), rosbags-like callers a numpy array)."""
    _align(buf, 4)
    buf += _U32.pack(len(values))
    if len(values):
        _align(buf, 8)
        buf += values.tobytes() if hasattr(values, 'tobytes') else struct.pack(f'<{len(values)}d', *values)


def _vector3(buf: bytearray, v) -> None:
    _align(buf, 8)
    buf += _D3.pack(v.x, v.y, v.z)


def wrench_stamped(msg) -> bytes:
    buf = bytearray(_HEADER)
    _header(buf, msg.header)
    f, t = msg.wrench.force, msg.wrench.torque
    _align(buf, 8)
    buf += _D6.pack(f.x, f.y, f.z, t.x, t.y, t.z)
    return bytes(buf)


def pose_stamped(msg) -> bytes:
    buf = bytearray(_HEADER)
    _header(buf, msg.header)
    p, q = msg.pose.position, msg.pose.orientation
    _align(buf, 8)
    buf += _D7.pack(p.x, p.y, p.z, q.x, q.y, q.z, q.w)
    return bytes(buf)


def joint_state(msg) -> bytes:
    buf = bytearray(_HEADER)
    _header(buf, msg.header)
    _strings(buf, msg.name)
    _doubles(buf, msg.position)
    _doubles(buf, msg.velocity)
    _doubles(buf, msg.effort)
    return bytes(buf)


def joint_trajectory(msg) -> bytes:
    buf = bytearray(_HEADER)
    _header(buf, msg.header)
    _strings(buf, msg.joint_names)
    _align(buf, 4)
    buf += _U32.pack(len(msg.points))
    for pt in msg.points:
        _doubles(buf, pt.positions)
        _doubles(buf, pt.velocities)
        _doubles(buf, pt.accelerations)
        _doubles(buf, pt.effort)
        _align(buf, 4)
        d = pt.time_from_start
        buf += _TIME.pack(d.sec, d.nanosec)
    return bytes(buf)


def tf_message(msg) -> bytes:
    buf = bytearray(_HEADER)
    buf += _U32.pack(len(msg.transforms))
    for tr in msg.transforms:
        _align(buf, 4)
        _header(buf, tr.header)
        _string(buf, tr.child_frame_id)
        t, r = tr.transform.translation, tr.transform.rotation
        _align(buf, 8)
        buf += _D7.pack(t.x, t.y, t.z, r.x, r.y, r.z, r.w)
    return bytes(buf)


ENCODERS = {
    ('geometry_msgs', 'WrenchStamped'): wrench_stamped,
    ('geometry_msgs', 'PoseStamped'): pose_stamped,
    ('sensor_msgs', 'JointState'): joint_state,
    ('trajectory_msgs', 'JointTrajectory'): joint_trajectory,
    ('tf2_msgs', 'TFMessage'): tf_message,
}
_BY_CLASS: dict[type, object] = {}


def encoder_of(cls):
    """The encoder of an rclpy message class, or None."""
    enc = _BY_CLASS.get(cls, False)
    if enc is False:
        enc = _BY_CLASS[cls] = ENCODERS.get((cls.__module__.split('.')[0], cls.__name__))
    return enc


def encode(msg) -> bytes | None:
    """The CDR bytes of ``msg`` if its type has an encoder here, else None."""
    enc = encoder_of(type(msg))
    return None if enc is None else enc(msg)


_TRIMMERS: dict[type, object] = {}


def serialize_exact(msg) -> bytes:
    """The CDR bytes a DDS reader would take for ``msg``. rclpy's ``serialize_message`` returns
    rmw_fastrtps' *estimated* length, which counts alignment for empty sequences that the
    serializer never writes: a JointState or JointTrajectory with empty fields comes out with up
    to tens of bytes of garbage after its end (ros2 bag ignores them, rosbags refuses the
    message). For a type with sequences the true length comes from rosbags' generated size
    function, which reads the rclpy message as it is (1-7 us; names and layout are the same).
    The recorder's 400 Hz types are written directly (``encode``: 9 us per message in a running
    graph against 26 us)."""
    data = encode(msg)
    return serialize_trimmed(msg) if data is None else data


def serialize_trimmed(msg) -> bytes:
    """rclpy's ``serialize_message`` cut to the message's true length (padding bytes may hold
    anything: rmw_fastrtps does not clear them)."""
    data = serialize_message(msg)
    trim = _trimmer_of(type(msg))
    if trim is None:
        return data
    msgdef, store = trim
    return data[:4 + msgdef.getsize_cdr(0, msg, store)]


_UNKNOWN = object()


def _trimmer_of(cls):
    trim = _TRIMMERS.get(cls, _UNKNOWN)
    if trim is _UNKNOWN:
        trim = _TRIMMERS[cls] = _trimmer(cls)
    return trim


def _has_sequences(cls) -> bool:
    import importlib
    for ftype in cls.get_fields_and_field_types().values():
        if 'sequence<' in ftype:
            return True
        base = ftype.split('[')[0]
        if '/' in base:
            pkg, name = base.split('/')
            if _has_sequences(getattr(importlib.import_module(f'{pkg}.msg'), name)):
                return True
    return False


def _trimmer(cls):
    if not _has_sequences(cls):
        return None                            # fixed layout: the estimate is the length
    from hil_nodes.recorder.bag import typestore
    store = typestore()
    module = cls.__module__.split('.')         # e.g. sensor_msgs.msg._joint_state
    try:
        return store.get_msgdef(f'{module[0]}/msg/{cls.__name__}'), store
    except KeyError:
        return None                            # a type rosbags does not know: as rclpy gives it


def prepare(cls) -> None:
    """Look up what serializing ``cls`` needs now (loading rosbags' types takes ~0.2 s: not in
    the middle of a run)."""
    if encoder_of(cls) is None:
        _trimmer_of(cls)
