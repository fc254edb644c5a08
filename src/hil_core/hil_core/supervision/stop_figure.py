"""The hardware side's own stops, measured where they happen: the peak second difference of the
joint positions at the frame rate, ``(p[k+1] - 2 p[k] + p[k-1]) / T^2``, over the frames the drives
ran on their own (holding past the last command, braking on their watchdog; docs/supervisor.md
"Hardware-side watchdog").

That is the figure the planner bounds by a_max (the second difference of its frame poses) and
the fault matrix judges from a bag; a part on another host has no bag of its own (the chain's
records the joint states only while the link carries them), so the drives keep the figure and
report it in their status. The frame before the trip is kept, so the step into the brake counts.
Frames that are not one period apart (skipped real-time frames) are not differenced across.
Pure: no ROS, numpy only where it judges.
"""
from __future__ import annotations

import numpy as np


class StopPeak:
    """``frame(t_ns, positions, stopping)`` at every published frame, ``stopping`` when the step
    that led to it was the drives' own; ``peak`` is the largest |second difference| / T^2 over the
    joints centred on the frames such a step started from (0.0 before any)."""

    def __init__(self, period_ns: int):
        if period_ns <= 0:
            raise ValueError(f'period_ns must be > 0, got {period_ns}')
        self.period_ns = int(period_ns)
        self._inv_t2 = 1.0 / (period_ns * 1e-9) ** 2
        self.peak = 0.0
        self.frames = 0            # second differences judged
        # the last two frames (stamp, positions): plain attributes, nothing allocated per frame
        self._t0 = self._t1 = None
        self._p0 = self._p1 = None

    def frame(self, t_ns: int, positions, stopping: bool) -> None:
        t1 = self._t1
        if (stopping and self._t0 is not None and t1 is not None
                and t_ns - t1 == self.period_ns and t1 - self._t0 == self.period_ns):
            d2 = (np.asarray(positions, float) - 2.0 * np.asarray(self._p1, float)
                  + np.asarray(self._p0, float)) * self._inv_t2
            peak = float(np.abs(d2).max()) if d2.size else 0.0
            if np.isfinite(peak):
                self.peak = max(self.peak, peak)
                self.frames += 1
        if t1 is not None and t_ns <= t1:        # a repeat of the same frame (t_0 re-published)
            self._p1 = positions
            return
        self._t0, self._p0 = t1, self._p1
        self._t1, self._p1 = t_ns, positions
