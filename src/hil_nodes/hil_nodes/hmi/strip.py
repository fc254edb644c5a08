"""Strip chart buffers of the HIL panel: the last ``span`` seconds of a signal, appended at the
panel rate, read as numpy arrays for a uPlot chart. A bounded deque: memory and the cost of a
redraw do not grow with the length of a run."""
from __future__ import annotations

import math
from collections import deque

import numpy as np


class StripChart:
    def __init__(self, span: float, max_points: int = 2000):
        if not span > 0:
            raise ValueError(f'span must be > 0, got {span}')
        self.span = float(span)
        self._t: deque = deque(maxlen=max_points)
        self._v: deque = deque(maxlen=max_points)

    def append(self, t: float, value: float) -> None:
        """Add a sample; a time going backwards (a new run, a replay jump) starts the chart anew."""
        if self._t and t < self._t[-1]:
            self.clear()
        self._t.append(float(t))
        self._v.append(float(value) if value is not None and math.isfinite(value) else math.nan)
        while self._t and self._t[0] < t - self.span:
            self._t.popleft()
            self._v.popleft()

    def clear(self) -> None:
        self._t.clear()
        self._v.clear()

    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        return np.fromiter(self._t, float, len(self._t)), np.fromiter(self._v, float, len(self._v))

    def __len__(self) -> int:
        return len(self._t)
