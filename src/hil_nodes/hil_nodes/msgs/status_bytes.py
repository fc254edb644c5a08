"""CDR bytes of a one-status ``diagnostic_msgs/DiagnosticArray``, written directly: every node's
status on /diagnostics (``framework.base``), published as serialized bytes.

Why: a status is built and published between two frames of the one-process graph, and at twice
the pace that gap is a few hundred microseconds. Building the message (a KeyValue object per
value) and rclpy's serialization of it took about half of a cycle status's 120-190 us alone
(calibration 0.85 s) and proportionally more in the running graph, where a status cost
0.45-0.75 ms and made the next frame late. These bytes are written with ``struct`` from the
values as text (``convert.value_text``, the same text as the message's); rclpy publishes bytes
as they are (``Publisher.publish`` takes a serialized message). The layout is
``hil_nodes.msgs.cdr_encode``'s (plain CDR, little endian, XCDR1), padding zeroed. Oracle:
rclpy's ``deserialize_message`` reads the bytes back as ``convert.status_array``'s message, and
they have its true length (``cdr_encode.serialize_trimmed``; test/nodes/test_status_bytes.py).
"""
from __future__ import annotations

import struct

from hil_nodes.msgs.convert import value_text

_U32 = struct.Struct('<I')
_STAMP = struct.Struct('<4siI')       # encapsulation header, stamp (sec, nanosec)
# frame_id '' (length 1, its NUL, padding to 4) and a sequence of one status
_EMPTY_FRAME_ONE_STATUS = b'\x01\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00'
_HEADER = b'\x00\x01\x00\x00'
# a string's NUL and the padding to 4 after it, by the length of its bytes % 4
_PAD = (b'\x00\x00\x00\x00', b'\x00\x00\x00', b'\x00\x00', b'\x00')


def status_array_bytes(sec: int, nanosec: int, level, name: str, message: str, hardware_id: str,
                       values: dict) -> bytes:
    """The CDR bytes of ``convert.status_array(Time(sec, nanosec), level, name, message,
    hardware_id, values)``; ``level`` an int or the message's one byte."""
    # every string starts 4-aligned: the level byte is padded to 4, and each string (length,
    # bytes, NUL) is padded to 4 after it, except the message's last field (no trailing padding)
    parts = [_STAMP.pack(_HEADER, sec, nanosec), _EMPTY_FRAME_ONE_STATUS,
             bytes((level[0] if isinstance(level, bytes) else level, 0, 0, 0))]
    append, pack = parts.append, _U32.pack
    strings = [name, message, hardware_id]
    for key, value in values.items():
        strings.append(str(key))
        strings.append(value_text(value))
    last = len(strings) - 1
    for i, text in enumerate(strings):
        if i == 3:
            append(pack(len(values)))            # the KeyValue sequence, after hardware_id
        b = text.encode()
        append(pack(len(b) + 1))
        append(b)
        pad = _PAD[len(b) % 4]
        append(pad if i != last else b'\x00')
    if not values:
        parts[-1] = _PAD[len(hardware_id.encode()) % 4]     # hardware_id padded: the count follows
        append(pack(0))
    return b''.join(parts)
