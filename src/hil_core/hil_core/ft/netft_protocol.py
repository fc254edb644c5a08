"""ATI Net F/T Raw Data Transfer (RDT) protocol over UDP (port 49152, network byte order).

Request, 8 bytes: ``uint16 0x1234 | uint16 command | uint32 sample_count``
(command 0x0002 start real-time streaming, 0x0000 stop, 0x0042 set software bias in the
sensor; ``sample_count`` 0 = stream until stopped).

Response ("RDT record"), 36 bytes: ``uint32 rdt_sequence | uint32 ft_sequence | uint32 status |
int32 Fx Fy Fz Tx Ty Tz`` with forces and torques in counts (``counts_per_force`` /
``counts_per_torque`` from the sensor's calibration, 1e6 by default on a Net F/T).

``rdt_sequence`` counts the UDP records the box sent (it wraps at 2**32); ``ft_sequence``
counts internal samples. Loss and reordering on the wire are told from ``rdt_sequence`` only,
by :class:`SequenceTracker`.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass

import numpy as np

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


class SequenceTracker:
    """Count lost, out-of-order and duplicate RDT records from ``rdt_sequence`` (mod 2**32).

    The forward distance ``d = (seq - last) mod 2**32`` read as a signed 32-bit number tells:
    ``d == 1`` in order; ``d > 1`` a gap of ``d - 1`` lost records (remembered, up to
    ``window`` of them); ``d <= 0`` a late record: if it was one we counted as lost it is
    *recovered* (lost -1, out_of_order +1), otherwise a duplicate. A jump back by more than
    ``window`` means the box restarted its counter: resynchronise (``resyncs`` +1).
    Late records are reported as not ``accept``-able: their sample is older than one already
    processed and must not be fed to a causal filter.
    """

    def __init__(self, window: int = 4096):
        self.window = int(window)
        self.reset()

    def reset(self) -> None:
        self.last: int | None = None
        self.received = 0
        self.lost = 0
        self.out_of_order = 0
        self.duplicates = 0
        self.resyncs = 0
        self._missing: set[int] = set()

    def restart(self) -> None:
        """A new stream (start re-sent): forget the last sequence, keep the totals."""
        self.last = None
        self._missing.clear()

    def update(self, seq: int) -> bool:
        """Register one record; True if it is newer than everything before (process it)."""
        seq = int(seq) & 0xFFFFFFFF
        self.received += 1
        if self.last is None:
            self.last = seq
            return True
        d = (seq - self.last) & 0xFFFFFFFF
        if d >= 0x80000000:
            d -= 0x100000000
        if d >= 1:
            if d > 1:
                self.lost += d - 1
                for k in range(1, min(d, self.window + 1)):
                    self._missing.add((self.last + k) & 0xFFFFFFFF)
                self._forget_old(seq)
            self.last = seq
            return True
        if d < -self.window:
            self.resyncs += 1
            self._missing.clear()
            self.last = seq
            return True
        if seq in self._missing:
            self._missing.discard(seq)
            self.lost -= 1
            self.out_of_order += 1
        else:
            self.duplicates += 1
        return False

    def _forget_old(self, newest: int) -> None:
        if len(self._missing) > self.window:
            self._missing = {s for s in self._missing if ((newest - s) & 0xFFFFFFFF) <= self.window}
