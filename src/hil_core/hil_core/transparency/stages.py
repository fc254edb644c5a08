"""Stage-by-stage transparency of a HIL chain: where delay is added and gain lost.

Every stage of the chain (``design.STAGES``: raw force, filtered force, admittance reference,
safe reference, servo setpoints, joint states, TCP pose) becomes one signal on a common uniform
grid, on one DOF:

* a force stage gives its ideal motion (the admittance model driven by that force,
  ``ideal_response``); the F/T filter stage is ideal(filtered) against ideal(raw): the model is
  linear, so that is the filter's response (weighted by the model, which also keeps the sensor
  noise the filter removes out of the comparison);
* a motion stage is its displacement about home (translation, or rotation-vector component).

Each transition (stage to the next present stage) and each cumulative pair (first stage to
stage i) is measured with ``pairs.compare`` on the same impulse segments; a phase fit without
intercept is linear in the phase, so when every stage is measured on the same segments the
stage delays add up to the end-to-end delay. Segments that a gap touches (or, for an ideal
motion, that start within the model's settling time after a gap in its force) are left out.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from hil_core.transparency.frf import find_impulses, segment_starts
from hil_core.admittance.ideal_response import ideal_response
from hil_core.transparency.design import CONTRIBUTION, FORCE, KINDS, LABELS, STAGE_KEYS, ChainDesign
from hil_core.transparency.pairs import PairResult, amplitude_ratio, compare
from hil_core.transparency.series import (Gaps, find_gaps, nominal_period, resample, uniform_grid,
                                          unique_stamps, usable)
from hil_core.transparency.validity import (AMPLITUDE_TOLERANCE, DELAY_TOLERANCE_S, GAIN_TOLERANCE_DB,
                                            VERDICT_BAND_HZ, Figure)

SEED_SEGMENT_SECONDS = 7500 * 0.000625   # 4.6875 s (seed 000: 7500 samples of 0.625 ms)
BANDS_HZ = (7.0, 11.0)
SETTLE_TIME_CONSTANTS = 5.0              # after a force gap the ideal motion is wrong for 5 tau


@dataclass(frozen=True)
class StageInput:
    key: str                     # one of design.STAGE_KEYS
    topic: str
    times: np.ndarray            # stamps (s)
    values: np.ndarray           # force stage: (N, 6) wrenches; motion stage: (N, 7) poses
    period: float | None = None  # designed sample period (None: median stamp interval)

    @property
    def kind(self) -> str:
        return KINDS[self.key]


@dataclass(frozen=True)
class StageSignal:
    key: str
    topic: str
    kind: str
    times: np.ndarray            # stamps inside the window
    raw: np.ndarray              # the stage's own quantity at its stamps (force or displacement)
    on_grid: np.ndarray          # that quantity on the grid
    ok: np.ndarray               # grid points usable for it
    motion: np.ndarray           # motion on the grid (ideal motion for a force stage)
    motion_ok: np.ndarray
    gaps: Gaps
    count: int
    expected: int

    @property
    def complete(self) -> bool:
        return self.gaps.count == 0 and self.count >= self.expected - 1

    def completeness(self) -> dict:
        return {'topic': self.topic, 'count': self.count, 'expected': self.expected,
                'period_ms': self.gaps.nominal_period * 1e3, 'gaps': self.gaps.count,
                'largest_gap_ms': self.gaps.largest * 1e3, 'missing_samples': self.gaps.missing_samples,
                'complete': self.complete}


@dataclass(frozen=True)
class Transition:
    src: str
    dst: str
    what: str                    # the designed contribution's name
    designed_delay_s: float
    result: PairResult
    amplitude: Figure            # time-domain, gap-tolerant gain (output vs input shifted by the design)
    holds: bool | None           # None: cannot tell
    why: str

    def as_dict(self) -> dict:
        return {'from': self.src, 'to': self.dst, 'what': self.what,
                'designed_delay_ms': self.designed_delay_s * 1e3, 'designed_gain_db': 0.0,
                'holds': self.holds, 'why': self.why, 'amplitude_ratio': self.amplitude.as_dict(),
                **self.result.as_dict()}


@dataclass
class ChainResult:
    axis: int
    fs: float
    grid: np.ndarray
    starts: np.ndarray
    segment_len: int
    impulsive: bool
    stages: list[StageSignal]
    transitions: list[Transition]
    cumulative: list[Transition]     # first stage -> each later stage
    design: ChainDesign
    findings: dict = field(default_factory=dict)

    def stage(self, key: str) -> StageSignal | None:
        return next((s for s in self.stages if s.key == key), None)

    @property
    def end_to_end(self) -> Transition | None:
        return self.cumulative[-1] if self.cumulative else None

    def delay_sum(self, band: float = max(BANDS_HZ)) -> tuple[float | None, float | None]:
        """(sum of the stage delays, end-to-end delay) in s, None if a figure is not valid."""
        parts = [t.result.band(band) for t in self.transitions]
        total = self.end_to_end.result.band(band) if self.end_to_end else None
        s = sum(p.delay.value for p in parts) if parts and all(p is not None and p.delay.valid for p in parts) else None
        e = total.delay.value if total is not None and total.delay.valid else None
        return s, e


def displacement(poses: np.ndarray, home: np.ndarray, axis: int) -> np.ndarray:
    """Displacement about home on one DOF: translation, or rotation-vector component."""
    poses = np.asarray(poses, float)
    if axis < 3:
        return poses[:, axis] - home[axis]
    from hil_core.maths.rotations import quat_conjugate, quat_multiply, quat_to_rotvec
    rel = quat_multiply(quat_conjugate(np.broadcast_to(home[3:7], poses[:, 3:7].shape)), poses[:, 3:7])
    return quat_to_rotvec(rel)[:, axis - 3]


def settle_time(model) -> float:
    """SETTLE_TIME_CONSTANTS x the slowest time constant of the model (0 if unknown)."""
    A = getattr(model, 'A', None)
    if A is None:
        return 0.0
    re = np.real(np.linalg.eigvals(np.asarray(A, float)))
    slowest = float(np.max(re)) if re.size else -np.inf
    return SETTLE_TIME_CONSTANTS / -slowest if slowest < 0 else float('inf')


def _signal(model, s: StageInput, grid, start, end, axis, settle) -> StageSignal | None:
    t, v = unique_stamps(s.times, s.values)
    sel = (t >= start - 1e-9) & (t <= end + 1e-9) & np.all(np.isfinite(v), axis=1)
    t, v = t[sel], v[sel]
    if t.size < 3:
        return None
    period = nominal_period(t, s.period)
    gaps = find_gaps(t, period)
    ok = usable(t, grid, gaps)
    expected = int(np.floor((min(end, grid[-1]) - max(start, grid[0])) / period + 1e-6)) + 1
    home = np.asarray(model.home, float)
    if s.kind == FORCE:
        raw = v[:, axis]
        ideal = ideal_response(model, t, v)
        motion = resample(t, displacement(ideal.poses, home, axis), grid)
        motion_ok = usable(t, grid, gaps, settle)
    else:
        raw = displacement(v, home, axis)
        motion, motion_ok = resample(t, raw, grid), ok
    return StageSignal(s.key, s.topic, s.kind, t, raw, resample(t, raw, grid), ok, motion, motion_ok,
                       gaps, int(t.size), expected)


def _holds(result: PairResult, amplitude: Figure, designed_delay: float) -> tuple[bool | None, str]:
    band = result.band(VERDICT_BAND_HZ) or result.widest
    wide = result.widest
    if wide is not None and wide.delay.valid and band is not None and band.gain_dev_db.valid:
        d = wide.delay.value
        if abs(d - designed_delay) > DELAY_TOLERANCE_S:
            return False, f'delay {d * 1e3:.2f} ms, designed {designed_delay * 1e3:.2f} ms'
        if band.gain_dev_db.value > GAIN_TOLERANCE_DB:
            return False, (f'gain {band.gain_db.value:+.2f} dB (deviation {band.gain_dev_db.value:.2f} dB '
                           f'> {GAIN_TOLERANCE_DB:g} dB to {band.f_max:g} Hz)')
        return True, 'as designed'
    if amplitude.valid and abs(amplitude.value - 1.0) > AMPLITUDE_TOLERANCE:
        return False, f'amplitude ratio {amplitude.value:.2f} (time domain; frequency figures not measurable)'
    reason = wide.validity.reason() if wide is not None else result.reason
    if amplitude.valid:
        return None, f'frequency figures not measurable ({reason}); amplitude ratio {amplitude.value:.2f}'
    return None, f'not measurable: {reason}'


def _pair(a: StageSignal, b: StageSignal, design: ChainDesign, grid, fs, starts, seg, bands) -> Transition:
    # Frequency figures in motion (force stages through the model): the model is linear, so
    # ideal(filtered) / ideal(raw) is the filter's response, weighted where the motion is, and
    # the stage responses multiply to the cumulative ones (delays add up).
    x, y = a.motion, b.motion
    ok = a.motion_ok & b.motion_ok
    # Time-domain ratio at the output's own samples: forces against forces, else motion.
    if b.kind == FORCE:
        ax, ax_ok = a.on_grid, a.ok
    else:
        ax, ax_ok = a.motion, a.motion_ok
    missing = [s.topic for s in (a, b) if s.gaps.count]
    why = ('no complete segment: gaps in ' + ', '.join(missing)) if missing else 'no complete segment'
    result = compare(x, y, ok, fs, starts, seg, bands, incomplete_reason=why)
    d = design.delay_between(a.key, b.key)
    amp = amplitude_ratio(grid, ax, ax_ok, b.times, b.raw, d)
    i, j = STAGE_KEYS.index(a.key), STAGE_KEYS.index(b.key)
    what = ' + '.join(CONTRIBUTION[k] for k in STAGE_KEYS[i + 1:j + 1])
    holds, reason = _holds(result, amp, d)
    return Transition(a.key, b.key, what, d, result, amp, holds, reason)


def analyse_chain(model, inputs: list[StageInput], design: ChainDesign, start: float, end: float,
                  axis: int = 0, grid_period: float | None = None,
                  segment_seconds: float = SEED_SEGMENT_SECONDS, pre_seconds: float = 0.05,
                  impulse_fraction: float = 0.5, bands=BANDS_HZ) -> ChainResult:
    """Stage and cumulative figures of the chain on [start, end]; the first input must be a
    force stage (segments are found on its impulses). Raises ValueError when the record is
    shorter than one segment."""
    inputs = sorted(inputs, key=lambda s: STAGE_KEYS.index(s.key))
    if not inputs or inputs[0].kind != FORCE:
        raise ValueError('the chain starts with a force stage')
    T = grid_period or design.frame_period_s
    grid = uniform_grid(start, end, T)
    fs = 1.0 / T
    seg = int(round(segment_seconds * fs))
    if seg > grid.size:
        raise ValueError(f'record of {grid.size * T:.2f} s is shorter than one segment of {segment_seconds:.2f} s')
    settle = settle_time(model)
    stages = [s for s in (_signal(model, i, grid, start, end, axis, settle) for i in inputs) if s is not None]
    first = stages[0]
    force = np.where(first.ok, first.on_grid, 0.0)
    peak = float(np.max(np.abs(force))) if force.size else 0.0
    onsets = find_impulses(force, impulse_fraction * peak, seg) if peak > 0 else np.array([], int)
    starts = segment_starts(onsets, grid.size, seg, pre=int(round(pre_seconds * fs)))
    impulsive = starts.size > 0
    if not impulsive:
        starts = np.arange(0, grid.size - seg + 1, seg)
    transitions = [_pair(a, b, design, grid, fs, starts, seg, bands) for a, b in zip(stages, stages[1:])]
    cumulative = [_pair(first, b, design, grid, fs, starts, seg, bands) for b in stages[1:]]
    result = ChainResult(axis, fs, grid, starts, seg, impulsive, stages, transitions, cumulative, design)
    result.findings = findings(result)
    return result


def findings(r: ChainResult) -> dict:
    """Where the chain first lost messages and where it first departed from its design."""
    out = {}
    incomplete = next((s for s in r.stages if not s.complete), None)
    if incomplete is not None:
        out['first_incomplete_stage'] = incomplete.key
        out['first_incomplete'] = (f'{LABELS[incomplete.key]} ({incomplete.topic}): {incomplete.count} of '
                                   f'{incomplete.expected} expected samples, {incomplete.gaps.count} gap(s) '
                                   f'up to {incomplete.gaps.largest * 1e3:.1f} ms')
    failing = next((t for t in r.transitions if t.holds is False), None)
    if failing is not None:
        out['first_failing_stage'] = failing.dst
        out['first_failing'] = f'{LABELS[failing.src]} -> {LABELS[failing.dst]} ({failing.what}): {failing.why}'
    for t in r.transitions:
        wide = t.result.widest
        problems = [p for p in wide.validity.problems if not p.startswith('coherence')] if wide else []
        if problems:
            out['first_not_following_stage'] = t.dst
            out['first_not_following'] = (f'{LABELS[t.src]} -> {LABELS[t.dst]} ({t.what}): output does not follow '
                                          f'its input ({"; ".join(problems)})')
            break
    for t in r.transitions:
        if _attenuates(t):
            out['attenuating_stage'] = t.dst
            out['attenuating'] = f'{LABELS[t.src]} -> {LABELS[t.dst]} ({t.what}): {t.why}'
            break
    s, e = r.delay_sum()
    out['delay_sum_ms'] = None if s is None else s * 1e3
    out['end_to_end_delay_ms'] = None if e is None else e * 1e3
    return out


def _attenuates(t: Transition) -> bool:
    band = t.result.band(VERDICT_BAND_HZ) or t.result.widest
    if band is not None and band.gain_db.valid:
        return band.gain_db.value < -GAIN_TOLERANCE_DB
    return t.amplitude.valid and t.amplitude.value < 1.0 - AMPLITUDE_TOLERANCE


def stage_label(key: str) -> str:
    return LABELS.get(key, key)
