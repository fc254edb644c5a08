"""Sample stamps of a Net F/T stream, and its rate anomalies.

A record carries no time, only its position (``netft_sequence``). Sample k is stamped
``t_k = t_j + (p_k - p_j) * s`` after the previous sample j: uniform at the configured period
``dt``, so lost records leave gaps of the right length and the filter sees the spacing it was
designed for. The spacing ``s`` follows the arrival clock (the newest record of a burst should
be stamped at its arrival) but only within ``dt * (1 +- slew)``: enough for two quartz clocks
(100 ppm) and for scheduling jitter, which it averages out, and never a stamp that goes back.

What this clock cannot follow is a rate anomaly, and it is diagnosed rather than hidden (the
driver used to clamp stamps to 1 ns apart):

* **ahead**: the newest stamp runs more than ``tolerance`` ahead of the arrival time, i.e.
  the stream delivered more records than the elapsed time allows (a burst, a box set to a
  higher rate than the driver was told). Its records are refused;
* **rate**: over at least ``rate_window`` (2 s) of arrival time the record rate (positions per
  second, losses included) differs from the configured one by more than ``rate_tolerance``
  (10 %). Refused as well: the filters are designed for the configured rate. The window is
  long because a burst's arrival is read late by up to tens of ms on a loaded machine (a 0.5 s
  window gave false alarms under load ~4).

Refusal lasts until the rate is right over a window that starts after the last time stamps
ran ahead; the next accepted burst is then stamped back from its arrival (``anchored``),
after the last stamp given. A clock persistently behind the arrivals by more than
``tolerance`` (a box that paused without losing numbers) jumps forward (``jumps``).
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass

import numpy as np


@dataclass
class ClockResult:
    stamps: np.ndarray | None      # (N,) int64 ns; None = refused (rate anomaly)
    lead_ns: int                   # newest stamp - arrival (> 0: records ahead of the wall clock)
    jump_ns: int = 0               # forward jump of this burst's stamps (0: none)
    anomaly: str | None = None     # set while the stream is anomalous


class SampleClock:
    def __init__(self, rate_hz: float, tolerance: float = 0.05, slew: float = 0.01,
                 rate_window: float = 2.0, rate_tolerance: float = 0.1, lag_window: float = 0.2):
        if rate_hz <= 0 or tolerance <= 0 or not 0 < slew < 0.5 or rate_window <= 0 or rate_tolerance <= 0:
            raise ValueError('SampleClock needs positive rate, tolerance, rate_window, rate_tolerance '
                             'and a slew in (0, 0.5)')
        self.rate = float(rate_hz)
        self.dt = 1e9 / self.rate
        self.tolerance_ns = tolerance * 1e9
        self.slew = float(slew)
        self.rate_window_ns = rate_window * 1e9
        self.rate_tolerance = float(rate_tolerance)
        self.lag_window_ns = lag_window * 1e9
        self.refused = self.jumps = self.anomalies = 0
        self.anomaly: str | None = None
        self.measured_rate = float('nan')
        self._last_stamp: int | None = None
        self._last_pos = 0
        self._anchored = False
        self._since = 0                                  # arrival of the last sign of the anomaly
        self._history: deque = deque()                   # (arrival ns, newest position)
        self._lags: deque = deque()                      # (arrival ns, arrival - newest stamp)

    def restart(self) -> None:
        """A discontinuity in positions (a new stream): the next burst anchors on its arrival."""
        self._anchored = False
        self._history.clear()
        self._lags.clear()

    # --- rate over a window of arrival time ------------------------------------------------------
    def _measure(self, arrival: int, newest: int) -> None:
        h = self._history
        h.append((arrival, newest))
        while len(h) > 2 and h[1][0] <= arrival - self.rate_window_ns:
            h.popleft()                                  # keep one entry at least a window old
        t0, p0 = h[0]
        if arrival - t0 >= self.rate_window_ns:
            self.measured_rate = (newest - p0) * 1e9 / (arrival - t0)
        else:
            self.measured_rate = float('nan')

    def _rate_wrong(self) -> bool:
        r = self.measured_rate / self.rate
        return r == r and (r > 1.0 + self.rate_tolerance or r < 1.0 / (1.0 + self.rate_tolerance))

    def _flag(self, arrival: int, why: str, ahead: bool = False) -> None:
        if self.anomaly is None:
            self.anomalies += 1
        if ahead:
            self._since = arrival
        self.anomaly = why
        self._anchored = False
        self._lags.clear()

    def _describe(self, lead: float | None = None) -> str:
        measured = (f'records arrive at {self.measured_rate:.0f} Hz' if self.measured_rate == self.measured_rate
                    else 'rate not measured yet')
        ahead = f'; stamps would run {lead * 1e-6:.1f} ms ahead of their arrival' if lead is not None else ''
        return (f'Net F/T rate anomaly: {measured}, configured sample_rate {self.rate:.0f} Hz{ahead}: '
                'records refused (check the RDT output rate of the box)')

    # --- stamping --------------------------------------------------------------------------------
    def stamp(self, positions, arrival_ns: int, continuous: bool = True) -> ClockResult:
        """Stamps for one burst of records (increasing positions) that arrived at ``arrival_ns``;
        ``continuous`` False: the first one starts a new stream."""
        pos = np.asarray(positions, dtype=np.int64)
        arrival = int(arrival_ns)
        if not continuous:
            self.restart()
        self._measure(arrival, int(pos[-1]))
        if self._rate_wrong():
            self._flag(arrival, self._describe())
        if self.anomaly is not None:
            # over, once the rate is right over a window that starts after the last time the
            # stamps ran ahead
            if (self.measured_rate != self.measured_rate or self._rate_wrong()
                    or self._history[0][0] < self._since):
                return self._refuse(pos, arrival)
            self.anomaly = None
        # offsets in float, absolute stamps in int64: a float64 of 1.8e18 ns is 256 ns coarse
        if self._anchored:
            span = (pos[-1] - self._last_pos) * self.dt
            err = arrival - self._last_stamp - span
            s = self.dt * (1.0 + min(max(err / span, -self.slew), self.slew))
            stamps = self._last_stamp + np.rint((pos - self._last_pos) * s).astype(np.int64)
        else:
            stamps = arrival - np.rint((pos[-1] - pos) * self.dt).astype(np.int64)
            step = int(round(self.dt))                   # at least a period after the last stamp
            if self._last_stamp is not None and stamps[0] < self._last_stamp + step:
                stamps += self._last_stamp + step - int(stamps[0])
        lead = int(stamps[-1]) - arrival
        if lead > self.tolerance_ns:
            self._flag(arrival, self._describe(lead), ahead=True)
            return self._refuse(pos, arrival, lead)
        jump = self._catch_up(arrival, -lead)
        stamps += jump
        self._anchored = True
        self._last_stamp, self._last_pos = int(stamps[-1]), int(pos[-1])
        return ClockResult(stamps, lead + jump, jump)

    def _catch_up(self, arrival: int, lag: int) -> int:
        """Forward jump when every burst of the last lag_window was later than tolerance."""
        self._lags.append((arrival, lag))
        while self._lags and self._lags[0][0] < arrival - self.lag_window_ns:
            self._lags.popleft()
        if arrival - self._lags[0][0] < 0.5 * self.lag_window_ns:
            return 0                                     # too short a history to tell
        low = min(v for _, v in self._lags)
        if low <= self.tolerance_ns:
            return 0
        self.jumps += 1
        self._lags.clear()
        return int(low)

    def _refuse(self, pos, arrival: int, lead: int = 0) -> ClockResult:
        self.refused += int(pos.size)
        self._last_pos = int(pos[-1])
        return ClockResult(None, lead, 0, self.anomaly)
