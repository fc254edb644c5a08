"""Seeded writer faults and a pure simulation of the writer + timebase pipeline.

The faults are those of seed 000 section 4.3 and the HIL loop: references that arrive late or
early with respect to the reader's move starts, dropped or duplicated references, and a writer
whose clock jitters and drifts ("a fixed CPU clock resolution ... causes a slight
overestimation of the waiting time of the control threads"). :func:`writer_events` is a pure
function of its seed, so tests, the bench and scenarios see the same faults every run.

:func:`simulate` plays the events against a :class:`TimeBaseEngine` the way the real-time node
does: the reader ticks every move time on its own clock, applies every reference that arrived
by then, and produces that frame's servo points.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from .engine import TimeBaseEngine


@dataclass(frozen=True)
class FaultSpec:
    """Fault rates are per reference; durations in writer periods."""
    jitter: float = 0.0        # std of the arrival time (periods), the writer clock jitter
    drift: float = 0.0         # relative writer period error (+0.002: writer 0.2 % slower)
    latency: float = 0.0       # constant transport latency (periods)
    late_prob: float = 0.0
    late_max: float = 1.0      # a late reference arrives up to this much later
    early_prob: float = 0.0
    early_max: float = 0.5
    drop_prob: float = 0.0
    dup_prob: float = 0.0

    def __post_init__(self):
        for name in ('late_prob', 'early_prob', 'drop_prob', 'dup_prob'):
            p = getattr(self, name)
            if not 0.0 <= p <= 1.0:
                raise ValueError(f'{name} must be a probability, got {p}')
        for name in ('jitter', 'latency', 'late_max', 'early_max'):
            if not getattr(self, name) >= 0.0:
                raise ValueError(f'{name} must be >= 0')
        if not -0.5 < self.drift < 0.5:
            raise ValueError(f'drift must be in (-0.5, 0.5), got {self.drift}')


@dataclass(frozen=True)
class WriterEvents:
    arrival: np.ndarray   # (E,) s, sorted
    stamp: np.ndarray     # (E,) s, the time the reference represents
    index: np.ndarray     # (E,) writer cycle of the reference
    kind: np.ndarray      # (E,) 'ok' | 'late' | 'early' | 'dup'
    dropped: np.ndarray   # writer cycles never delivered


def writer_events(n: int, period: float, spec: FaultSpec = FaultSpec(), seed: int = 0,
                  t0: float = 0.0) -> WriterEvents:
    """References 1..n of a writer started at ``t0`` (reference 0 is the start pose)."""
    rng = np.random.default_rng(seed)
    k = np.arange(1, n + 1)
    stamp = t0 + k * period * (1.0 + spec.drift)
    arrival = stamp + period * (spec.latency + spec.jitter * rng.standard_normal(n))
    kind = np.full(n, 'ok', dtype=object)
    u = rng.random(n)
    late = u < spec.late_prob
    early = (u >= spec.late_prob) & (u < spec.late_prob + spec.early_prob)
    arrival[late] += period * spec.late_max * rng.random(late.sum())
    arrival[early] -= period * spec.early_max * rng.random(early.sum())
    kind[late], kind[early] = 'late', 'early'
    dropped = rng.random(n) < spec.drop_prob
    dup = (rng.random(n) < spec.dup_prob) & ~dropped
    keep = ~dropped
    arr = [arrival[keep], arrival[dup] + period * rng.random(dup.sum())]
    stm = [stamp[keep], stamp[dup]]
    idx = [k[keep], k[dup]]
    knd = [kind[keep], np.full(dup.sum(), 'dup', dtype=object)]
    arrival, stamp, index, kind = (np.concatenate(a) for a in (arr, stm, idx, knd))
    order = np.argsort(arrival, kind='stable')
    return WriterEvents(arrival[order], stamp[order], index[order], kind[order], k[dropped])


def simulate(engine: TimeBaseEngine, reference: Callable[[np.ndarray], np.ndarray],
             events: WriterEvents, n_frames: int, period: float, t0: float = 0.0) -> dict:
    """Run the reader for ``n_frames`` ticks at ``period`` (its own clock) from ``t0``.

    ``reference(stamps) -> (N, 7)`` gives the pose content of each reference. Returns arrays
    per servo point: ``time``, ``q``, ``qd``, ``ref_stamp``, ``delay``, ``factor``,
    ``distance``; per frame: ``underruns``; and the write results.
    """
    cfg = engine.cfg
    engine.start(reference(np.array([t0]))[0], t0)
    poses = reference(events.stamp) if len(events.stamp) else np.zeros((0, 7))
    n_pts = cfg.servo_per_move
    offs = np.arange(1, n_pts + 1) * cfg.servo_period
    # the compiled engine's frame arrays are overwritten by the next frame: copy them here
    out = {'time': np.empty((n_frames, n_pts)), 'ref_stamp': np.empty((n_frames, n_pts)),
           'factor': np.empty((n_frames, n_pts)), 'distance': np.empty((n_frames, n_pts), dtype=int),
           'q': None, 'qd': None}
    underruns, results, e = np.empty(n_frames, dtype=int), [], 0
    for k in range(n_frames):
        tick = t0 + k * period
        while e < len(events.arrival) and events.arrival[e] <= tick:
            results.append(engine.write(poses[e], events.stamp[e]))
            e += 1
        fr = engine.step_frame()
        if out['q'] is None:
            n_joints = fr.positions.shape[1]
            out['q'], out['qd'] = np.empty((n_frames, n_pts, n_joints)), np.empty((n_frames, n_pts, n_joints))
        out['time'][k] = tick + offs
        out['q'][k] = fr.positions
        out['qd'][k] = fr.velocities
        out['ref_stamp'][k] = fr.ref_stamps
        out['factor'][k] = fr.factors
        out['distance'][k] = fr.distances
        underruns[k] = fr.underruns
    res = {key: v.reshape((n_frames * n_pts,) + v.shape[2:]) for key, v in out.items() if v is not None}
    res['delay'] = res['time'] - res['ref_stamp']
    res['underruns'] = underruns
    res['writes'] = results
    return res
