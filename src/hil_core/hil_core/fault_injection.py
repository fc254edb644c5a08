"""Seeded faults on a per-frame reference stream (the `faults` scenario of the Hexafloat HIL).

The decision for frame k depends only on (seed, k): a run is reproducible whatever else
happened before, and the same frames are hit in one process or isolated. Faults, per frame:

* ``drop``: the reference is not delivered;
* ``duplicate``: it is delivered twice;
* ``spike``: its position jumps by ``spike_magnitude`` in a random direction (a numeric glitch
  of the model computer: seed 000 4.1.3 says ASC must deal with spikes);
* ``late``: it is held back and delivered after the reference of frame k + ``late_frames``
  (out of order, as a congested link would).

Spikes are applied to the pose only; drop/duplicate/late act on the whole frame.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class ReferenceFaults:
    drop_prob: float = 0.0
    duplicate_prob: float = 0.0
    spike_prob: float = 0.0
    spike_magnitude: float = 0.01      # m
    late_prob: float = 0.0
    late_frames: int = 2
    start_frame: int = 0               # no fault before this frame (e.g. let homing finish)

    def __post_init__(self):
        for name in ('drop_prob', 'duplicate_prob', 'spike_prob', 'late_prob'):
            p = getattr(self, name)
            if not 0.0 <= p <= 1.0:
                raise ValueError(f'{name} must be a probability in [0, 1], got {p}')
        if self.drop_prob + self.duplicate_prob + self.late_prob > 1.0:
            raise ValueError('drop_prob + duplicate_prob + late_prob must not exceed 1')
        if not (np.isfinite(self.spike_magnitude) and self.spike_magnitude >= 0):
            raise ValueError('spike_magnitude must be finite and >= 0')
        if self.late_frames < 1:
            raise ValueError('late_frames must be >= 1')


class ReferenceFaultInjector:
    """Apply ``ReferenceFaults`` to frame-indexed items; ``step`` returns what to deliver now."""

    def __init__(self, faults: ReferenceFaults, seed: int = 0):
        self.faults = faults
        self.seed = int(seed)
        self._held: dict[int, list] = {}     # release frame -> items held back
        self.counts = dict.fromkeys(('drop', 'duplicate', 'spike', 'late', 'ok'), 0)

    def decide(self, k: int) -> tuple[str, np.ndarray]:
        """Fault kind of frame k and the spike direction (unit vector), from (seed, k) only."""
        f = self.faults
        rng = np.random.default_rng([self.seed, int(k)])
        u, s = rng.random(2)
        direction = rng.normal(size=3)
        direction /= max(np.linalg.norm(direction), 1e-12)
        if k < f.start_frame:
            return 'ok', direction
        if u < f.drop_prob:
            return 'drop', direction
        if u < f.drop_prob + f.duplicate_prob:
            return 'duplicate', direction
        if u < f.drop_prob + f.duplicate_prob + f.late_prob:
            return 'late', direction
        return ('spike' if s < f.spike_prob else 'ok'), direction

    def step(self, k: int, pose: np.ndarray, payload=None) -> list[tuple[int, np.ndarray, object, str]]:
        """Items (frame, pose, payload, kind) to deliver now for input frame k, in order."""
        kind, direction = self.decide(k)
        self.counts[kind] += 1
        pose = np.array(pose, dtype=float)
        out = []
        if kind == 'spike':
            pose[:3] += self.faults.spike_magnitude * direction
            out.append((k, pose, payload, 'spike'))
        elif kind == 'duplicate':
            out += [(k, pose, payload, 'ok'), (k, pose.copy(), payload, 'duplicate')]
        elif kind == 'late':
            self._held.setdefault(k + self.faults.late_frames, []).append((k, pose, payload, 'late'))
        elif kind == 'ok':
            out.append((k, pose, payload, 'ok'))
        out += self._held.pop(k, [])
        return out
