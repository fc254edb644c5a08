"""Is real time held? The supervisor's judgement of the health figures every node reports.

Inputs are the cumulative counters of three kinds of status, each received at a few Hz:

* ``cycle`` (every node's ``<node>: cycle`` status, ``hil_core.supervision.timing.CycleHealth``):
  ``cycles``, ``late`` (overran or missed its deadline), ``skipped``;
* ``hardware`` (the mock or real drives): ``frames``, ``late_commands`` (frames held for want of
  a command), ``realtime_overruns`` (frames a real-time mock had to drop);
* ``timebase``: ``servo_cycles``, ``saturated_cycles`` (time-base factor at its bound),
  ``factor_off_cycles`` (factor more than 2 steps from 1), ``frames``, ``distance_off_frames``
  (integer W-R distance not the default).

Per node the judge keeps the samples of the last ``window`` seconds (receipt time, the
watcher's clock) and looks at the increase of each counter over that window:

* a **fraction** (late cycles per cycle, late frames per frame, factor-off servo cycles, W-R
  off frames) is judged once its denominator grew by ``min_samples`` in the window and the
  window's samples span at least ``min_span`` seconds (so a transient of a few hundred
  milliseconds, the start of a run, is not a verdict: only a sustained share is): WARN at
  ``warn_fraction``, FAULT at ``fault_fraction``;
* time-base **saturation** is judged as time: saturated servo cycles times the servo period
  (estimated as ``frame_period`` x frames / servo cycles): WARN at ``saturation_warn_s``,
  FAULT at ``saturation_fault_s`` within the window.

A counter that goes down (the node was re-configured or restarted) restarts that node's window.
Pure logic: the caller passes the clock readings.
"""
from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass, field

from hil_core.config_check import valid_config
from hil_core.supervision.status_names import is_cycle_status

OK, WARN, FAULT = 0, 1, 2

CYCLE, HARDWARE, TIMEBASE = 'cycle', 'hardware', 'timebase'
_KEYS = {
    CYCLE: ('cycles', 'late', 'skipped'),
    HARDWARE: ('frames', 'late_commands', 'realtime_overruns'),
    TIMEBASE: ('servo_cycles', 'saturated_cycles', 'factor_off_cycles', 'frames', 'distance_off_frames'),
}


@dataclass(frozen=True)
class HealthConfig:
    window: float = 3.0               # s of the watcher's clock
    warn_fraction: float = 0.01
    fault_fraction: float = 0.10
    min_samples: int = 100
    min_span: float = 1.5             # s the window's samples must cover before anything is judged
    saturation_warn_s: float = 0.1
    saturation_fault_s: float = 1.0
    frame_period: float = 0.0025      # s, one frame (= the time base's move time)

    def problem(self) -> str | None:
        for name in ('window', 'warn_fraction', 'fault_fraction', 'saturation_warn_s', 'saturation_fault_s',
                     'frame_period'):
            value = getattr(self, name)
            if not (math.isfinite(value) and value > 0):
                return f'{name} must be positive and finite, got {value}'
        if not (math.isfinite(self.min_span) and 0.0 <= self.min_span <= self.window):
            return f'min_span must be within [0, window ({self.window})], got {self.min_span}'
        if self.min_samples < 1:
            return f'min_samples must be at least 1, got {self.min_samples}'
        if not self.warn_fraction <= self.fault_fraction <= 1.0:
            return (f'fractions must satisfy warn ({self.warn_fraction}) <= fault ({self.fault_fraction}) <= 1')
        if self.saturation_warn_s > self.saturation_fault_s:
            return (f'saturation_warn_s ({self.saturation_warn_s}) exceeds saturation_fault_s '
                    f'({self.saturation_fault_s})')
        if self.saturation_fault_s > self.window:
            return (f'saturation_fault_s ({self.saturation_fault_s}) exceeds the window ({self.window}): '
                    'it could never be reached')
        return None


@dataclass(frozen=True)
class Finding:
    node: str
    what: str          # 'late_cycles', 'late_frames', 'saturation', 'factor_off', 'distance_off'
    value: float       # fraction, or seconds for saturation
    level: int
    text: str


@dataclass
class Assessment:
    level: int = OK
    findings: list[Finding] = field(default_factory=list)

    @property
    def reason(self) -> str:
        """'real time not held: ...' with the findings at or above WARN, the worst first."""
        if not self.findings:
            return ''
        texts = [f.text for f in sorted(self.findings, key=lambda f: -f.level)]
        head = 'real time not held' if self.level >= FAULT else 'real time at risk'
        return f'{head}: ' + ', '.join(texts)


def classify(name: str, values: dict[str, float]) -> str | None:
    """Which kind of health status this is, from its name and keys (None: not one)."""
    if is_cycle_status(name):
        return CYCLE
    if all(k in values for k in _KEYS[TIMEBASE]):
        return TIMEBASE
    if all(k in values for k in ('frames', 'late_commands')):
        return HARDWARE
    return None


def numeric_values(pairs) -> dict[str, float]:
    """Key/value strings -> floats, dropping what does not parse as a finite number."""
    out = {}
    for key, text in pairs:
        try:
            value = float(text)
        except (TypeError, ValueError):
            continue
        if math.isfinite(value):
            out[key] = value
    return out


def _pct(fraction: float) -> str:
    return f'{100.0 * fraction:.3g}%'


class HealthJudge:
    """Sliding windows of counters per (node, kind) and their verdict (module docstring)."""

    def __init__(self, config: HealthConfig):
        self.cfg = valid_config(config)
        self._windows: dict[tuple[str, str], deque] = {}
        self.resets = 0
        # whether any window has yet spanned min_span: before that the verdict OK says nothing (a
        # run that ended or stopped for another reason within its first window was never judged)
        self.judged = False

    def clear(self) -> None:
        """Forget every sample (e.g. at the end of a bring-up: judge the run, not its start)."""
        self._windows.clear()
        self.judged = False

    def observe(self, node: str, kind: str, now: float, values: dict[str, float]) -> None:
        keys = _KEYS[kind]
        sample = tuple(float(values.get(k, 0.0)) for k in keys)
        if not all(math.isfinite(v) for v in sample) or not math.isfinite(now):
            return
        win = self._windows.setdefault((node, kind), deque())
        if win and (now < win[-1][0] or any(a < b for a, b in zip(sample, win[-1][1]))):
            win.clear()          # restarted counters or a clock going back: start over
            self.resets += 1
        win.append((now, sample))

    def _deltas(self, now: float):
        cut = now - self.cfg.window
        for (node, kind), win in self._windows.items():
            while len(win) > 1 and win[1][0] <= cut:   # keep one sample at or before the cut
                win.popleft()
            if len(win) >= 2 and win[-1][0] >= cut and win[-1][0] - win[0][0] >= self.cfg.min_span:
                first, last = win[0][1], win[-1][1]
                yield node, kind, dict(zip(_KEYS[kind], (b - a for a, b in zip(first, last))))

    def _fraction(self, node, what, num, den, text) -> Finding | None:
        if den < self.cfg.min_samples or num <= 0:
            return None
        frac = num / den
        level = FAULT if frac >= self.cfg.fault_fraction else WARN if frac >= self.cfg.warn_fraction else OK
        if level == OK:
            return None
        return Finding(node, what, frac, level, text.format(pct=_pct(frac), node=node))

    def assess(self, now: float) -> Assessment:
        found: list[Finding] = []
        for node, kind, d in self._deltas(now):
            self.judged = True
            if kind == CYCLE:
                found.append(self._fraction(node, 'late_cycles', d['late'] + d['skipped'],
                                            d['cycles'] + d['skipped'], '{pct} of {node} cycles late'))
            elif kind == HARDWARE:
                found.append(self._fraction(node, 'late_frames', d['late_commands'] + d['realtime_overruns'],
                                            d['frames'] + d['realtime_overruns'], '{pct} of frames late ({node})'))
            else:
                found.append(self._fraction(node, 'factor_off', d['factor_off_cycles'], d['servo_cycles'],
                                            'time-base factor off by more than 2 steps in {pct} of servo cycles'))
                found.append(self._fraction(node, 'distance_off', d['distance_off_frames'], d['frames'],
                                            'W-R away from its default in {pct} of frames'))
                found.append(self._saturation(node, d))
        found = [f for f in found if f is not None]
        return Assessment(max((f.level for f in found), default=OK), found)

    def _saturation(self, node: str, d: dict[str, float]) -> Finding | None:
        if d['servo_cycles'] <= 0 or d['frames'] <= 0 or d['saturated_cycles'] <= 0:
            return None
        servo_period = self.cfg.frame_period * d['frames'] / d['servo_cycles']
        seconds = d['saturated_cycles'] * servo_period
        level = FAULT if seconds >= self.cfg.saturation_fault_s else WARN if seconds >= self.cfg.saturation_warn_s \
            else OK
        if level == OK:
            return None
        return Finding(node, 'saturation', seconds, level, f'time-base saturated for {seconds:.1f} s')
