"""Real-time timers start on the frame grid (hil_nodes.grid_timer): the F/T source reads each
publish-grid instant just after it, and the mock drives integrate and publish the frame that just
ended just after the instant its joint state is stamped with, whatever the phase of activation.
A timer at a random phase made the F/T sample of instant t reach the time base after it had moved
on to t + T (a frame late, every frame), and the drives' joint states up to a frame late (the
kinematics node judged 93 % of its cycles late and the supervisor stopped a real-time run)."""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from hil_nodes import ft_sources, grid_timer
from hil_sim import mock_hardware

PERIOD = 2_500_000
NOWS = [1_000_000_000, 1_000_000_001, 1_002_499_999, 1_001_300_000, 1_000_200_000]


class FakeNode:
    def __init__(self, now_ns, **params):
        self.now_ns = now_ns
        self.p = SimpleNamespace(publish_rate=400.0, lockstep=False, **params)
        self.timers = []

    def get_clock(self):
        return SimpleNamespace(now=lambda: SimpleNamespace(nanoseconds=self.now_ns))

    def create_timer(self, period, callback, clock=None):
        self.timers.append((period, callback, clock))
        return object()


def _start(monkeypatch, now_ns) -> list:
    slept = []
    monkeypatch.setattr(grid_timer.time, 'sleep', slept.append)
    return slept


@pytest.mark.parametrize('now_ns', NOWS)
def test_the_delay_reaches_the_next_grid_instant_plus_the_offset(now_ns):
    start = now_ns + grid_timer.delay_to_grid(now_ns, PERIOD)
    assert (start - grid_timer.GRID_OFFSET_NS) % PERIOD == 0                 # on the grid + offset
    assert 0 <= start - now_ns < PERIOD                                      # the next such instant


@pytest.mark.parametrize('now_ns', NOWS)
def test_the_ft_source_timer_starts_on_the_grid(monkeypatch, now_ns):
    slept = _start(monkeypatch, now_ns)
    node = FakeNode(now_ns)
    source = ft_sources.SimSource.__new__(ft_sources.SimSource)
    source.node, source.timer = node, None
    source._start_aligned_timer()
    start = now_ns + round(slept[0] * 1e9)
    assert (start - grid_timer.GRID_OFFSET_NS) % PERIOD == 0
    assert [t[0] for t in node.timers] == [pytest.approx(0.0025)]


@pytest.mark.parametrize('now_ns', NOWS)
def test_the_real_time_drives_integrate_on_the_grid(monkeypatch, now_ns):
    slept = _start(monkeypatch, now_ns)
    node = FakeNode(now_ns, frame_period=0.0025, time_scale=1.0)
    node.sim_clock, node._frame_timer, node._realtime_tick = False, None, lambda: None
    mock_hardware.MockHardwareNode._start_frame_timer(node)
    start = now_ns + round(slept[0] * 1e9)
    assert (start - grid_timer.DRIVES_OFFSET_NS) % PERIOD == 0
    assert node.timers[0][0] == pytest.approx(0.0025) and node.timers[0][2] is not None   # steady clock


def test_a_scaled_pace_keeps_its_own_timer(monkeypatch):
    slept = _start(monkeypatch, NOWS[1])
    node = FakeNode(NOWS[1], frame_period=0.0025, time_scale=2.0)
    node.sim_clock, node._frame_timer, node._realtime_tick = True, None, lambda: None
    mock_hardware.MockHardwareNode._start_frame_timer(node)
    assert slept == [] and node.timers[0][0] == pytest.approx(0.00125)
