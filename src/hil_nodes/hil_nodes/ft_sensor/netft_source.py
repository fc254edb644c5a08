"""``NetFTSource``: the ATI Net F/T input of the ft_sensor node (parameter ``source: netft``).

The RDT client (``hil_core.ft.netft_client``) runs in a thread: start streaming on activate,
stop on deactivate; a receive timeout reports a silent sensor and re-requests the stream with
exponential backoff. Per burst of records:

* the sequence tracker keeps lost, late, duplicate and stray records and numbering resets
  apart (strays and resets are reported, never counted as lost packets);
* sample stamps come from the record positions at ``sample_rate`` through a
  ``hil_core.ft.netft_clock.SampleClock``: uniform, following the arrival clock within 1 %,
  never clamped. A rate anomaly (records ahead of the wall clock, or a record rate off the
  configured one) is an ERROR that names the measured rate, and its records are refused;
* records with implausible raw counts (an int32 rail, 0xFFFFFFFF on every axis) are refused
  before scaling, like lost ones, and reported;
* the rest goes to ``node.ingest`` (status error bit = flagged sample).
"""
from __future__ import annotations

import threading
import time

import numpy as np

from hil_core.ft import netft_protocol as rdt
from hil_core.ft.netft_client import NetFTClient
from hil_core.ft.netft_clock import SampleClock
from hil_core.ft.netft_sequence import RESET, STRAY
from hil_core.ft.signal_chain import counts_to_si


class NetFTSource:
    def __init__(self, node):
        self.node = node
        p = node.p
        self.client = NetFTClient(p.sensor_ip, p.sensor_port, timeout=min(p.receive_timeout, 0.05))
        self.client.open()
        self.clock = SampleClock(p.sample_rate)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.silent = False
        self.status_word = 0
        self.implausible = 0
        self.fault: str | None = None        # a standing input fault for the periodic status

    def activate(self) -> None:
        self._stop.clear()
        self.client.start()
        self.clock.restart()
        self._thread = threading.Thread(target=self._run, name='netft_rx', daemon=True)
        self._thread.start()

    def deactivate(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(2.0)
            self._thread = None
        self.client.stop()

    def hardware_bias(self) -> None:
        self.client.hardware_bias()

    def figures(self) -> dict:
        tr, c = self.client.tracker, self.clock
        return dict(lost_packets=tr.lost, out_of_order_packets=tr.out_of_order, duplicates=tr.duplicates,
                    stray_packets=tr.strays, sequence_resets=tr.resets, implausible_counts=self.implausible,
                    rate_refused=c.refused, record_rate_hz=c.measured_rate, stamp_jumps=c.jumps,
                    status_word=f'0x{self.status_word:08x}')

    def _run(self) -> None:
        p = self.node.p
        backoff = p.receive_timeout
        last_rx = time.monotonic()
        while not self._stop.is_set():
            burst = self.client.receive()
            if burst.bad_length:
                self.node.report_bad_packets(burst.bad_length)
            if len(burst) == 0:
                if time.monotonic() - last_rx >= p.receive_timeout:
                    self.silent = True
                    self.node.report_silent(time.monotonic() - last_rx)
                    if self._stop.wait(backoff):
                        break
                    backoff = min(2.0 * backoff, p.reconnect_backoff_max)
                    self.client.start()          # re-request the stream (the box may have rebooted)
                continue
            last_rx = time.monotonic()
            self.silent = False
            backoff = p.receive_timeout
            if np.any(burst.kind == STRAY):
                self.node.report_input_error(f'{int(np.sum(burst.kind == STRAY))} stray RDT record(s) '
                                             '(a sequence number that is not the stream\'s) ignored')
            idx = np.flatnonzero(burst.accepted)
            if idx.size:
                # arrival on the node clock: when the burst was drained, not after its bookkeeping
                now = self.node.get_clock().now().nanoseconds - int((time.monotonic() - burst.arrival) * 1e9)
                self._process(burst, idx, now)

    def _process(self, burst, idx, now: int) -> None:
        p = self.node.p
        if np.any(burst.kind[idx] == RESET):
            self.node.report_input_error('the Net F/T started a new numbering (rdt_sequence reset): '
                                         'reported, not counted as lost packets')
        # one stretch per stream: a start or reset begins a new one (unknown time in between)
        cuts = np.flatnonzero(~burst.continuous[idx])
        for seg in np.split(idx, cuts[cuts > 0]):
            res = self.clock.stamp(burst.positions[seg], now, continuous=bool(burst.continuous[seg[0]]))
            if res.stamps is None:
                self.fault = res.anomaly
                self.node.report_input_error(res.anomaly)
                continue
            self.fault = None
            if res.jump_ns:
                self.node.report_input_error(f'Net F/T records late by {res.jump_ns * 1e-6:.1f} ms for a while '
                                             '(the sensor paused?): sample stamps moved forward')
            bad = burst.implausible[seg]
            if np.any(bad):
                self.implausible += int(bad.sum())
                self.node.report_input_error(f'{int(bad.sum())} RDT record(s) with implausible raw counts '
                                             '(an int32 rail or 0xFFFFFFFF on every axis) refused')
            good = seg[~bad]
            if good.size == 0:
                continue
            self.status_word = int(burst.status[good[-1]])
            flagged = (burst.status[good] & rdt.STATUS_ERROR_BIT) != 0
            si = counts_to_si(burst.counts[good], p.counts_per_force, p.counts_per_torque)
            self.node.ingest(res.stamps[~bad], si, flagged)

    def close(self) -> None:
        if self._thread is not None:
            self.deactivate()
        self.client.close()
