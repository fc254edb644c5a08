"""ATI Net F/T Raw Data Transfer (RDT) protocol over UDP (port 49152, network byte order).

Request, 8 bytes: ``uint16 0x1234 | uint16 command | uint32 sample_count``
(command 0x0002 start real-time streaming, 0x0000 stop, 0x0042 set software bias in the
sensor; ``sample_count`` 0 = stream until stopped).

Response ("RDT record"), 36 bytes: ``uint32 rdt_sequence | uint32 ft_sequence | uint32 status |
int32 Fx Fy Fz Tx Ty Tz`` with forces and torques in counts (``counts_per_force`` /
``counts_per_torque`` from the sensor's calibration, 1e6 by default on a Net F/T).

``rdt_sequence`` is the position of a record in one output stream (from 1 with every request,
wrapping at 2**32); ``ft_sequence`` counts internal samples from power-up (ATI manual 10.1).
Loss, reordering, strays and resets are told from ``rdt_sequence`` by
:class:`hil_core.ft.netft_sequence.SequenceTracker` (re-exported here).

Counts are signed int32. Two raw patterns are refused before any scaling
(:func:`implausible_counts`): a value on an int32 rail (what a saturated or clipped value
becomes, whatever the calibration makes of it in newtons) and all six axes at 0xFFFFFFFF
(-1 count, about 0 N: the word of a failed read, which would pass every force threshold).
"""
from __future__ import annotations

import struct
from dataclasses import dataclass

import numpy as np

from hil_core.ft.netft_sequence import SequenceTracker  # noqa: F401  (re-export)

RDT_PORT = 49152
HEADER = 0x1234
CMD_STOP = 0x0000
CMD_START_REALTIME = 0x0002
CMD_SET_SOFTWARE_BIAS = 0x0042
REQUEST_SIZE = 8
RECORD_SIZE = 36
STATUS_ERROR_BIT = 0x80000000   # Net F/T: most significant status bit set = an error condition
INT32_MIN, INT32_MAX = -2 ** 31, 2 ** 31 - 1

_REQUEST = struct.Struct('>HHI')
_RECORD = struct.Struct('>III6i')
_RECORD_DTYPE = np.dtype([('rdt', '>u4'), ('ft', '>u4'), ('status', '>u4'), ('counts', '>i4', (6,))])


class ProtocolError(ValueError):
    """A datagram that is not a valid RDT request or record."""


def pack_request(command: int, sample_count: int = 0) -> bytes:
    """The 8-byte RDT request."""
    if not 0 <= command <= 0xFFFF:
        raise ValueError(f'RDT command {command!r} does not fit in uint16')
    if not 0 <= sample_count <= 0xFFFFFFFF:
        raise ValueError(f'sample_count {sample_count!r} does not fit in uint32')
    return _REQUEST.pack(HEADER, command, sample_count)


def unpack_request(data: bytes) -> tuple[int, int]:
    """(command, sample_count) of an RDT request; ProtocolError if malformed (device side)."""
    if len(data) != REQUEST_SIZE:
        raise ProtocolError(f'RDT request must be {REQUEST_SIZE} bytes, got {len(data)}')
    header, command, count = _REQUEST.unpack(data)
    if header != HEADER:
        raise ProtocolError(f'RDT request header 0x{header:04x} != 0x{HEADER:04x}')
    return command, count


@dataclass(frozen=True)
class RdtRecord:
    rdt_sequence: int
    ft_sequence: int
    status: int
    counts: tuple[int, int, int, int, int, int]


def pack_record(rdt_sequence: int, ft_sequence: int, status: int, counts) -> bytes:
    """The 36-byte RDT record (device side and tests); counts are clipped to int32."""
    c = [int(min(max(int(v), INT32_MIN), INT32_MAX)) for v in counts]
    if len(c) != 6:
        raise ValueError(f'an RDT record carries 6 counts, got {len(c)}')
    return _RECORD.pack(rdt_sequence & 0xFFFFFFFF, ft_sequence & 0xFFFFFFFF, status & 0xFFFFFFFF, *c)


def parse_record(data: bytes) -> RdtRecord:
    """Parse one datagram; ProtocolError if its length is not 36 bytes."""
    if len(data) != RECORD_SIZE:
        raise ProtocolError(f'RDT record must be {RECORD_SIZE} bytes, got {len(data)}')
    rdt, ft, status, *counts = _RECORD.unpack(data)
    return RdtRecord(rdt, ft, status, tuple(counts))


def parse_records(datagrams: list[bytes]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Vectorised parse of a burst of valid datagrams: (rdt_seq, ft_seq, status, counts (N, 6))."""
    buf = np.frombuffer(b''.join(datagrams), dtype=_RECORD_DTYPE)
    return (buf['rdt'].astype(np.int64), buf['ft'].astype(np.int64), buf['status'].astype(np.int64),
            buf['counts'].astype(np.int64))


def implausible_counts(counts) -> np.ndarray:
    """(N,) bool: records whose raw counts (N, 6) cannot be a measurement: any axis on an int32
    rail, or every axis at -1 (0xFFFFFFFF)."""
    c = np.asarray(counts, dtype=np.int64).reshape(-1, 6)
    return np.any((c == INT32_MIN) | (c == INT32_MAX), axis=1) | np.all(c == -1, axis=1)
