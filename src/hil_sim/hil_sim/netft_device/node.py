"""A mock ATI Net F/T box: a UDP server on loopback speaking the RDT protocol byte for byte.

It streams RDT records at a configured rate (up to 7 kHz, the Net F/T maximum) to the client
that sent "start real-time streaming" (0x0002), honours stop (0x0000), the sample count of
the request and "set software bias" (0x0042), and serves one client at a time like the real
box (a start from another address while streaming is ignored and counted). As on the box,
``rdt_sequence`` starts again at 1 (``first_sequence``) with every start request, and
``ft_sequence`` counts internal samples from power-up. The load comes from a
``hil_core.ft.load_profiles.LoadProfile``.

Faults, from a seeded generator so a scenario is repeatable: drops, reorders (a record swapped
with the next), corrupt lengths and stray records (an extra datagram with a random
``rdt_sequence``) with given probabilities; and on call, while streaming:
``restart_numbering()`` (the numbering starts again without a request), ``set_rate_factor(f)``
(records go out at f times the configured rate, as a box whose RDT output rate differs from
what the driver was told) and ``override_counts(counts, n)`` (the next n records carry these
raw counts, e.g. 0xFFFFFFFF = -1 on every axis, or the int32 rails).

Library use (tests, bench): ``dev = NetFTDevice(...); dev.start(); ... dev.stop()``.
Script: ``python -m hil_sim.netft_device.node --port 49152 --rate 1600 --drop 0.01``.
"""
from __future__ import annotations

import argparse
import select
import socket
import threading
import time

import numpy as np

from hil_core.ft import netft_protocol as rdt
from hil_core.ft.load_profiles import LoadProfile

MAX_RATE = 7000.0


class NetFTDevice:
    def __init__(self, host: str = '127.0.0.1', port: int = 0, rate: float = 1600.0,
                 profile: LoadProfile | None = None, counts_per_force: float = 1e6,
                 counts_per_torque: float = 1e6, drop: float = 0.0, reorder: float = 0.0,
                 corrupt: float = 0.0, status_word: int = 0, first_sequence: int = 1, seed: int = 0,
                 max_rate: float = MAX_RATE, stray: float = 0.0):
        # max_rate: the Net F/T limit; only the bench lifts it, to find this machine's UDP limit
        if not 0.0 < rate <= max_rate:
            raise ValueError(f'rate {rate} Hz must be in (0, {max_rate}] (Net F/T maximum {MAX_RATE})')
        for name, p in (('drop', drop), ('reorder', reorder), ('corrupt', corrupt), ('stray', stray)):
            if not 0.0 <= p < 1.0:
                raise ValueError(f'{name} probability {p} must be in [0, 1)')
        self.rate = float(rate)
        self.profile = profile or LoadProfile([], seed=seed)
        self.scale = np.array([counts_per_force] * 3 + [counts_per_torque] * 3)
        self.p_drop, self.p_reorder, self.p_corrupt, self.p_stray = drop, reorder, corrupt, stray
        self.max_rate = float(max_rate)
        self.status_word = int(status_word)
        self.rng = np.random.default_rng(seed)
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind((host, int(port)))
        self.address = self.sock.getsockname()
        self.first_sequence = int(first_sequence) & 0xFFFFFFFF
        self.next_sequence = self.first_sequence
        self.bias_counts = np.zeros(6, dtype=np.int64)
        self.client = None
        self.remaining = 0            # records left to send, -1 = until stopped
        self.produced = 0             # records generated (sent + dropped), the sample clock
        self.counters = dict(sent=0, dropped=0, reordered=0, corrupted=0, starts=0, stops=0,
                             biases=0, refused_clients=0, bad_requests=0, strays=0, renumbered=0,
                             overridden=0)
        # the pace: record number n_base is due at t_base, then ``pace`` records per second
        self._t_base = 0.0
        self._n_base = 0
        self._pace = self.rate
        self._override: tuple[np.ndarray, int] | None = None
        self._held: bytes | None = None
        self._overtaken = False
        self._running = threading.Event()
        self._thread: threading.Thread | None = None
        self.lock = threading.Lock()

    # --- life cycle ------------------------------------------------------------------------------
    def start(self) -> 'NetFTDevice':
        self._running.set()
        self._thread = threading.Thread(target=self._serve, name='netft_device', daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._running.clear()
        if self._thread is not None:
            self._thread.join(5.0)
        self.sock.close()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    @property
    def streaming(self) -> bool:
        return self.client is not None

    # --- faults on call ------------------------------------------------------------------------
    def restart_numbering(self, first: int | None = None) -> None:
        """The next record is numbered ``first`` (default ``first_sequence``): a box that
        started a new stream without being asked (a reboot, or a start from someone else)."""
        with self.lock:
            self.next_sequence = (self.first_sequence if first is None else int(first)) & 0xFFFFFFFF
            self.counters['renumbered'] += 1

    def set_rate_factor(self, factor: float) -> None:
        """Send records at ``factor`` x the configured rate from now on (1 = back to normal)."""
        if not 0.0 < factor * self.rate <= self.max_rate:
            raise ValueError(f'rate {factor * self.rate} Hz must be in (0, {self.max_rate}]')
        with self.lock:
            self._t_base, self._n_base = time.monotonic(), self.produced
            self._pace = self.rate * float(factor)

    def override_counts(self, counts, n: int) -> None:
        """The next ``n`` records carry these 6 raw counts (int32, as on the wire)."""
        c = np.asarray(counts, dtype=np.int64).reshape(6)
        with self.lock:
            self._override = (c, int(n)) if n > 0 else None

    # --- protocol ----------------------------------------------------------------------------------
    def _wrench_counts(self, k: np.ndarray) -> np.ndarray:
        raw = np.rint(self.profile.sample(k / self.rate) * self.scale).astype(np.int64)
        return np.clip(raw - self.bias_counts, rdt.INT32_MIN, rdt.INT32_MAX)

    def _handle(self, data: bytes, addr) -> None:
        try:
            command, count = rdt.unpack_request(data)
        except rdt.ProtocolError:
            self.counters['bad_requests'] += 1
            return
        with self.lock:
            if command == rdt.CMD_START_REALTIME:
                if self.client is not None and addr != self.client:
                    self.counters['refused_clients'] += 1   # one client at a time
                    return
                self.counters['starts'] += 1
                if self.client is None:
                    self._t_base, self._n_base = time.monotonic(), self.produced
                self.next_sequence = self.first_sequence     # every request starts a new stream
                self.client = addr
                self.remaining = count if count > 0 else -1
            elif command == rdt.CMD_STOP:
                if addr == self.client:
                    self.counters['stops'] += 1
                    self.client = None
                    self._flush_held()
            elif command == rdt.CMD_SET_SOFTWARE_BIAS:
                self.counters['biases'] += 1
                self.bias_counts = self.bias_counts + self._wrench_counts(np.array([self.produced]))[0]
            else:
                self.counters['bad_requests'] += 1

    def _flush_held(self) -> None:
        if self._held is not None and self.client is not None:
            self.sock.sendto(self._held, self.client)
            self.counters['sent'] += 1
            # counted only when a well-formed newer record really went out first
            self.counters['reordered'] += int(self._overtaken)
        self._held = None
        self._overtaken = False

    def _emit_due(self) -> None:
        with self.lock:
            if self.client is None:
                return
            due = self._n_base + int((time.monotonic() - self._t_base) * self._pace) - self.produced
            if self.remaining >= 0:
                due = min(due, self.remaining)
            if due <= 0:
                return
            due = min(due, 2000)       # after a long stall catch up in bounded bursts
            k = self.produced + np.arange(due)
            counts = self._wrench_counts(k)
            u = self.rng.random((due, 5))     # drop, corrupt, corruption kind, reorder, stray
            for i in range(due):
                seq = self.next_sequence
                self.next_sequence = (seq + 1) & 0xFFFFFFFF
                self.produced += 1
                if self.remaining > 0:
                    self.remaining -= 1
                if u[i, 0] < self.p_drop:
                    self.counters['dropped'] += 1
                    continue
                if self._override is not None:
                    counts[i] = self._override[0]
                    self.counters['overridden'] += 1
                    left = self._override[1] - 1
                    self._override = (self._override[0], left) if left > 0 else None
                pkt = rdt.pack_record(seq, self.produced - 1, self.status_word, counts[i])
                if u[i, 4] < self.p_stray:      # an extra datagram, numbered at random
                    self.sock.sendto(rdt.pack_record(int(self.rng.integers(0, 2 ** 32)), self.produced - 1,
                                                     self.status_word, counts[i]), self.client)
                    self.counters['strays'] += 1
                if u[i, 1] < self.p_corrupt:
                    self.counters['corrupted'] += 1
                    pkt = pkt[:int(self.rng.integers(1, 36))] if u[i, 2] < 0.5 else pkt + b'\x00' * 4
                corrupted = u[i, 1] < self.p_corrupt
                if (self._held is None and u[i, 3] < self.p_reorder and not corrupted
                        and self.counters['sent'] > 0):   # a receiver cannot tell a reordered first record
                    self._held = pkt             # goes out after the next record
                    continue
                self.sock.sendto(pkt, self.client)
                self.counters['sent'] += 1
                if self._held is not None and not corrupted:
                    self._overtaken = True
                    self._flush_held()
            if self.remaining == 0:
                self._flush_held()
                self.client = None

    def _serve(self) -> None:
        period = 1.0 / self.rate
        while self._running.is_set():
            wait = min(0.001, period) if self.client is not None else 0.05
            ready, _, _ = select.select([self.sock], [], [], wait)
            if ready:
                try:
                    data, addr = self.sock.recvfrom(2048)
                except OSError:
                    continue
                self._handle(data, addr)
            self._emit_due()


def main(args: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description='Mock ATI Net F/T (RDT over UDP) on this machine.')
    ap.add_argument('--host', default='127.0.0.1')
    ap.add_argument('--port', type=int, default=rdt.RDT_PORT)
    ap.add_argument('--rate', type=float, default=1600.0, help='records per second (<= 7000)')
    ap.add_argument('--drop', type=float, default=0.0)
    ap.add_argument('--reorder', type=float, default=0.0)
    ap.add_argument('--corrupt', type=float, default=0.0)
    ap.add_argument('--stray', type=float, default=0.0, help='probability of an extra, randomly numbered record')
    ap.add_argument('--seed', type=int, default=0)
    ap.add_argument('--profile', default='', help='YAML scenario file with a "components" list')
    ns = ap.parse_args(args)
    profile = None
    if ns.profile:
        import yaml
        with open(ns.profile) as fh:
            spec = yaml.safe_load(fh) or {}
        profile = LoadProfile(spec.get('components', []), seed=int(spec.get('seed', ns.seed)))
    dev = NetFTDevice(ns.host, ns.port, ns.rate, profile, drop=ns.drop, reorder=ns.reorder,
                      corrupt=ns.corrupt, stray=ns.stray, seed=ns.seed).start()
    print(f'netft_device: RDT on {dev.address[0]}:{dev.address[1]} at {ns.rate:g} Hz', flush=True)
    try:
        while True:
            time.sleep(1.0)
    except KeyboardInterrupt:
        pass
    finally:
        dev.stop()
        print('netft_device: ' + ', '.join(f'{k}={v}' for k, v in dev.counters.items()), flush=True)
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
