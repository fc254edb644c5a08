"""Real-time F/T sources read each publish-grid instant just after it (hil_nodes.ft_sources):
the timer is created on the grid plus GRID_READ_OFFSET_NS, whatever the phase of activation.
A timer at a random phase published the sample of instant t up to a period later, and the time
base then produced frame t + T before the reference of t was in (a frame late, every frame)."""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from hil_nodes import ft_sources


class FakeNode:
    def __init__(self, now_ns):
        self.now_ns = now_ns
        self.p = SimpleNamespace(publish_rate=400.0, lockstep=False)
        self.timers = []

    def get_clock(self):
        return SimpleNamespace(now=lambda: SimpleNamespace(nanoseconds=self.now_ns))

    def create_timer(self, period, callback):
        self.timers.append(period)
        return object()


@pytest.mark.parametrize('now_ns', [1_000_000_000, 1_000_000_001, 1_002_499_999, 1_001_300_000])
def test_the_timer_starts_just_after_a_grid_instant(monkeypatch, now_ns):
    slept = []
    monkeypatch.setattr(ft_sources.time, 'sleep', slept.append)
    node = FakeNode(now_ns)
    source = ft_sources.SimSource.__new__(ft_sources.SimSource)
    source.node, source.timer = node, None
    source._start_aligned_timer()
    period = 2_500_000
    start = now_ns + round(slept[0] * 1e9)
    assert (start - ft_sources.GRID_READ_OFFSET_NS) % period == 0          # on the grid + offset
    assert 0 <= start - now_ns - ft_sources.GRID_READ_OFFSET_NS < period    # the next instant
    assert node.timers == [pytest.approx(0.0025)]
