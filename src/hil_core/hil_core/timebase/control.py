"""Medium level (seed 000 section 4.2): time-base control.

The time constant used by the low-level interpolation for one servo cycle is
``Ts * (1 + n * step)`` with an integer step count n (step = 1 % of the servo period, 6.25 us
of 0.625 ms, by default). The servo period itself never changes, so the servo-loop dynamics are
untouched; only the speed at which the motion curve is consumed changes, and with it the moment
the next move starts and reads the buffer.

Controlled variable: the W-R index distance. The PMAC of the paper only sees integer indices;
here every reference carries its stamp, so the engine measures the same distance with
sub-pose resolution (how many poses the servo output trails the writer, minus the fixed
internal lag of blending and spline): exactly ``default_distance`` in default conditions,
insensitive to arrival jitter, and moved by writer clock drift, dropped frames or underruns.

Control law, once per servo cycle, error e = distance - default (e > 0: reader behind, speed up):

* |e| within ``deadband`` (half of what one step changes in one cycle): n returns towards 0 by
  one step per cycle, the aggressiveness level resets;
* otherwise n moves by one step per cycle towards ``sign(e) * min(needed, limit)``, where
  ``needed`` is the step count that would cancel e within ``patience`` cycles. The limit starts
  at ``gentle_steps`` (a few steps suffice when only the phase is off) and rises by
  ``gentle_steps`` whenever e grows after a correction or stays ``patience`` cycles without
  improving, up to ``max_steps``. So the total distortion is bounded by ``max_steps * step``
  and its change per cycle by ``step``: the servo velocity changes by at most ``step * |v|``.
"""
from __future__ import annotations

import math


class TimeBaseControl:
    def __init__(self, default_distance: int = 2, step: float = 0.01, gentle_steps: int = 2,
                 max_steps: int = 10, patience: int = 4, enabled: bool = True,
                 cycles_per_move: int = 4):
        if default_distance < 1:
            raise ValueError(f'default_distance must be >= 1, got {default_distance}')
        if not 0.0 < step < 0.5:
            raise ValueError(f'step must be in (0, 0.5), got {step}')
        if not 1 <= gentle_steps <= max_steps:
            raise ValueError(f'need 1 <= gentle_steps <= max_steps, got {gentle_steps}, {max_steps}')
        if max_steps * step >= 1.0:
            raise ValueError(f'max_steps * step must stay below 1 (time must advance), got {max_steps * step}')
        if patience < 1:
            raise ValueError(f'patience must be >= 1, got {patience}')
        self.default_distance = int(default_distance)
        self.step = float(step)
        self.gentle_steps = int(gentle_steps)
        self.max_steps = int(max_steps)
        self.patience = int(patience)
        self.enabled = bool(enabled)
        self.per_step_cycle = self.step / cycles_per_move   # distance change of 1 step in 1 cycle
        self.deadband = 0.5 * self.per_step_cycle
        self.n = 0
        self.level = 0
        self._stuck = 0
        self._prev = 0.0

    @property
    def factor(self) -> float:
        """Interpolation time per servo cycle over the servo period (1 = true time)."""
        return 1.0 + self.n * self.step

    @property
    def limit(self) -> int:
        return min(self.max_steps, self.gentle_steps * (self.level + 1))

    def update(self, distance: float) -> int:
        """One servo cycle: returns the step count n to use for the next cycle."""
        if not self.enabled:
            self.n = 0
            return 0
        e = float(distance) - self.default_distance
        if abs(e) <= self.deadband:
            self.n -= (self.n > 0) - (self.n < 0)
            self.level = 0
            self._stuck = 0
        else:
            outside_before = abs(self._prev) > self.deadband
            worse = outside_before and abs(e) > abs(self._prev) + 1e-12
            self._stuck = 0 if abs(e) < abs(self._prev) - 1e-12 else self._stuck + 1
            if worse or self._stuck >= self.patience:
                self.level = min(self.level + 1, self.max_steps // self.gentle_steps)
                self._stuck = 0
            needed = math.ceil(abs(e) / (self.patience * self.per_step_cycle) - 1e-9)
            target = min(needed, self.limit) * (1 if e > 0 else -1)
            self.n += (target > self.n) - (target < self.n)
        self._prev = e
        return self.n
