"""A ROS-free ATI Net F/T RDT client over UDP (used by the ft_sensor node, tests and bench).

The socket is ``connect``-ed to the sensor so datagrams from anyone else are filtered by the
kernel, and its receive buffer is enlarged (a 7 kHz stream must survive a scheduling hiccup
of the receiving thread). ``receive`` blocks up to ``timeout`` for the first datagram of a
burst and then drains what is queued without blocking, so the caller can run the signal
chain per block.

Each record of a burst is classified by the sequence tracker (in order, late, duplicate,
stray, start of a stream, reset), given a position (a continuous record index) when it is to
be processed, and checked for implausible raw counts. A forward gap is a loss only if the box
can have sent that many records since the last one (``max_rate``, 7 kHz for a Net F/T).
"""
from __future__ import annotations

import errno
import socket
import time
from dataclasses import dataclass

import numpy as np

from hil_core.ft import netft_protocol as rdt


@dataclass
class Burst:
    rdt_sequence: np.ndarray          # (N,) int64 of the well-formed records, arrival order
    status: np.ndarray                # (N,) int64
    counts: np.ndarray                # (N, 6) int64
    accepted: np.ndarray              # (N,) bool: to be processed (in order, or a stream's start)
    bad_length: int                   # datagrams of the wrong length in this burst (dropped)
    positions: np.ndarray = None      # (N,) int64 record index of accepted records, -1 otherwise
    continuous: np.ndarray = None     # (N,) bool: an accepted record continues the previous one
    kind: np.ndarray = None           # (N,) int8: netft_sequence kind (IN_ORDER, STRAY, ...)
    implausible: np.ndarray = None    # (N,) bool: raw counts that cannot be a measurement
    arrival: float = 0.0              # time.monotonic() when the burst was read

    def __len__(self) -> int:
        return int(self.rdt_sequence.shape[0])


class NetFTClient:
    def __init__(self, ip: str, port: int = rdt.RDT_PORT, timeout: float = 0.1,
                 rcvbuf: int = 4 * 1024 * 1024, max_burst: int = 4096, max_rate: float = 7000.0):
        self.address = (ip, int(port))
        self.timeout = float(timeout)
        self.rcvbuf = int(rcvbuf)
        self.max_burst = int(max_burst)
        self.tracker = rdt.SequenceTracker(max_rate=max_rate)
        self.bad_packets = 0
        self.sock: socket.socket | None = None

    def open(self) -> None:
        sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        try:  # FORCE variant needs CAP_NET_ADMIN; the plain one is capped by rmem_max
            sock.setsockopt(socket.SOL_SOCKET, getattr(socket, 'SO_RCVBUFFORCE', 33), self.rcvbuf)
        except OSError:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, self.rcvbuf)
        sock.connect(self.address)
        self.sock = sock

    def close(self) -> None:
        if self.sock is not None:
            self.sock.close()
            self.sock = None

    def local_port(self) -> int:
        return self.sock.getsockname()[1] if self.sock is not None else 0

    def send(self, command: int, sample_count: int = 0) -> None:
        if self.sock is None:
            self.open()
        try:
            self.sock.send(rdt.pack_request(command, sample_count))
        except OSError as exc:  # unreachable / refused: the receive timeout reports it
            if exc.errno not in (errno.ECONNREFUSED, errno.EHOSTUNREACH, errno.ENETUNREACH):
                raise

    def start(self, sample_count: int = 0) -> None:
        """Request real-time streaming; the tracker restarts its sequence, keeping its totals."""
        self.tracker.restart()
        self.send(rdt.CMD_START_REALTIME, sample_count)

    def stop(self) -> None:
        self.send(rdt.CMD_STOP)

    def hardware_bias(self) -> None:
        self.send(rdt.CMD_SET_SOFTWARE_BIAS)

    def socket_drops(self) -> int:
        """Datagrams the kernel dropped on this socket (full buffer), from /proc/net/udp."""
        if self.sock is None:
            return 0
        port = f'{self.local_port():04X}'
        try:
            with open('/proc/net/udp') as fh:
                for line in fh.readlines()[1:]:
                    parts = line.split()
                    if parts[1].endswith(':' + port):
                        return int(parts[-1])
        except OSError:
            pass
        return 0

    def receive(self) -> Burst:
        """One burst (possibly empty after ``timeout``)."""
        if self.sock is None:
            self.open()
        datagrams = []
        bad = 0
        self.sock.settimeout(self.timeout)
        try:
            datagrams.append(self.sock.recv(2048))
            self.sock.setblocking(False)
            while len(datagrams) < self.max_burst:
                datagrams.append(self.sock.recv(2048))
        except (BlockingIOError, socket.timeout, InterruptedError):
            pass
        except ConnectionRefusedError:  # ICMP port unreachable from an earlier send: nobody there
            pass
        arrival = time.monotonic()
        good = [d for d in datagrams if len(d) == rdt.RECORD_SIZE]
        bad = len(datagrams) - len(good)
        self.bad_packets += bad
        if not good:
            empty = np.zeros(0, dtype=np.int64)
            no = np.zeros(0, dtype=bool)
            return Burst(empty, empty, np.zeros((0, 6), dtype=np.int64), no, bad, empty, no,
                         np.zeros(0, dtype=np.int8), no, arrival)
        seq, _ft, status, counts = rdt.parse_records(good)
        n = len(good)
        accepted = np.zeros(n, dtype=bool)
        positions = np.full(n, -1, dtype=np.int64)
        continuous = np.zeros(n, dtype=bool)
        kind = np.zeros(n, dtype=np.int8)
        tr = self.tracker
        for i, s in enumerate(seq.tolist()):
            if tr.update(s, arrival):
                accepted[i], positions[i], continuous[i] = True, tr.position, tr.continuous
            kind[i] = tr.kind
        return Burst(seq, status, counts, accepted, bad, positions, continuous, kind,
                     rdt.implausible_counts(counts), arrival)
