"""Seeded reference faults: reproducible per (seed, frame), rates as asked, spikes of the asked size."""
import numpy as np
import pytest

from hil_core.fault_injection import ReferenceFaultInjector, ReferenceFaults

POSE = np.array([0.0, 0.0, 0.15, 0.0, 0.0, 0.0, 1.0])


def _run(inj, n=20000):
    """Items delivered, each with the step (input frame) that delivered it."""
    out = []
    for k in range(n):
        out += [(*item, k) for item in inj.step(k, POSE)]
    return out


def test_decisions_depend_only_on_seed_and_frame():
    f = ReferenceFaults(drop_prob=0.05, duplicate_prob=0.05, spike_prob=0.05, late_prob=0.05)
    a, b = ReferenceFaultInjector(f, seed=3), ReferenceFaultInjector(f, seed=3)
    ka = [a.decide(k)[0] for k in range(500)]
    kb = [b.decide(k)[0] for k in reversed(range(500))][::-1]
    assert ka == kb
    assert ka != [ReferenceFaultInjector(f, seed=4).decide(k)[0] for k in range(500)]


def test_rates_spike_size_and_late_order():
    f = ReferenceFaults(drop_prob=0.02, duplicate_prob=0.03, spike_prob=0.04, late_prob=0.05,
                        spike_magnitude=0.02, late_frames=3)
    inj = ReferenceFaultInjector(f, seed=1)
    out = _run(inj)
    n = 20000
    assert abs(inj.counts['drop'] / n - 0.02) < 0.005
    assert abs(inj.counts['duplicate'] / n - 0.03) < 0.005
    assert abs(inj.counts['late'] / n - 0.05) < 0.006
    spikes = [p for k, p, _, kind, _ in out if kind == 'spike']
    assert spikes and np.allclose([np.linalg.norm(p[:3] - POSE[:3]) for p in spikes], 0.02)
    late = [(k, step) for k, _, _, kind, step in out if kind == 'late']
    assert late and all(step == k + 3 for k, step in late)     # delivered 3 frames late, after frame k + 3
    assert all(k == step for k, _, _, kind, step in out if kind != 'late')


def test_no_fault_before_start_frame_and_bad_specs_refused():
    inj = ReferenceFaultInjector(ReferenceFaults(drop_prob=1.0, start_frame=100), seed=0)
    assert all(inj.decide(k)[0] == 'ok' for k in range(100)) and inj.decide(100)[0] == 'drop'
    with pytest.raises(ValueError):
        ReferenceFaults(drop_prob=1.5)
    with pytest.raises(ValueError):
        ReferenceFaults(drop_prob=0.6, late_prob=0.6)
    with pytest.raises(ValueError):
        ReferenceFaults(spike_magnitude=float('nan'))
