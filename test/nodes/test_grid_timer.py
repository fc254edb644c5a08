"""Real-time timers start on the frame grid (hil_nodes.runtime.grid_timer): the F/T source reads each
publish-grid instant just after it, and the mock drives integrate and publish the frame that just
ended just after the instant its joint state is stamped with, whatever the phase of activation.
A timer at a random phase made the F/T sample of instant t reach the time base after it had moved
on to t + T (a frame late, every frame), and the drives' joint states up to a frame late (the
kinematics node judged 93 % of its cycles late and the supervisor stopped a real-time run)."""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from hil_nodes.ft_sensor import sources as ft_sources
from hil_nodes.runtime import grid_timer
from hil_sim.mock_hardware import node as mock_hardware

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

    def create_loop_timer(self, period, callback):      # (IntraProcessNode's: steady clock)
        self.timers.append((period, callback, 'steady'))
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


class GridNode(FakeNode):
    def __init__(self, now_ns):
        super().__init__(now_ns)
        self.destroyed = []

    def create_timer(self, period, callback, clock=None):
        handle = SimpleNamespace(period=period, callback=callback, clock=clock)
        self.timers.append(handle)
        return handle

    def destroy_timer(self, timer):
        self.destroyed.append(timer)


def test_one_process_runs_its_grid_callbacks_from_one_timer_in_offset_order(monkeypatch):
    """SharedGrid: the drives (50 us) and the F/T source (200 us) of one process are one executor
    wake-up a frame, the drives first, whichever activates first; the timer moves when its host
    leaves and goes with the last callback."""
    slept = _start(monkeypatch, NOWS[1])
    monkeypatch.setattr(grid_timer, 'GRIDS', {})
    ft, drives, calls = GridNode(NOWS[1]), GridNode(NOWS[1]), []
    steady = object()
    ft_entry = grid_timer.create_grid_timer(ft, 0.0025, lambda: calls.append('ft'), shared=True)
    assert len(ft.timers) == 1 and (NOWS[1] + round(slept[-1] * 1e9) - grid_timer.GRID_OFFSET_NS) % PERIOD == 0
    drives_entry = grid_timer.create_grid_timer(drives, 0.0025, lambda: calls.append('drives'), clock=steady,
                                                offset_ns=grid_timer.DRIVES_OFFSET_NS, shared=True)
    # the earlier offset takes the timer over, on its node, its clock and its phase
    assert ft.destroyed == [ft.timers[0]] and len(drives.timers) == 1 and drives.timers[0].clock is steady
    assert (NOWS[1] + round(slept[-1] * 1e9) - grid_timer.DRIVES_OFFSET_NS) % PERIOD == 0
    drives.timers[0].callback()
    assert calls == ['drives', 'ft']
    drives_entry.leave_grid()                   # the host leaves: the F/T source keeps its beat
    assert drives.destroyed == [drives.timers[0]] and len(ft.timers) == 2
    ft.timers[1].callback()
    assert calls == ['drives', 'ft', 'ft']
    grid_timer.GRIDS[PERIOD].drop_node(ft)      # (a node destroyed with its callback still on)
    assert ft.destroyed[-1] is ft.timers[1] and grid_timer.GRIDS[PERIOD].entries == []
    ft_entry.leave_grid()                       # leaving twice is harmless


def test_without_the_bus_each_grid_timer_is_its_own(monkeypatch):
    _start(monkeypatch, NOWS[0])
    monkeypatch.setattr(grid_timer, 'GRIDS', {})
    node = GridNode(NOWS[0])
    handle = grid_timer.create_grid_timer(node, 0.0025, lambda: None, shared=False)
    assert handle is node.timers[0] and grid_timer.GRIDS == {}
