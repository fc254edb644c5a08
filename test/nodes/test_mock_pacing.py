"""The mock drives' real-time pace (hil_sim.mock_hardware.pacing): after a stall of the process
they make up the frames it kept them from, up to MAX_CATCHUP_S of them, as hardware with its own
clock would have run them; a longer backlog is skipped and counted."""
import pytest

from hil_sim.mock_hardware.pacing import MAX_CATCHUP_S, FramePacing


@pytest.mark.parametrize('frame_ns, frames', [(2_500_000, 10), (1_000_000, 25), (100_000, 250),
                                               (3_000_000, 9), (50_000_000, 1)])
def test_the_catch_up_bound_is_25_ms_of_frames_and_at_least_one(frame_ns, frames):
    assert MAX_CATCHUP_S == 0.025
    assert FramePacing(frame_ns).max_catchup == frames


def test_at_pace_1_a_stall_within_the_bound_is_made_up_frame_by_frame():
    p, t = FramePacing(2_500_000), 10 * 2_500_000
    assert p.grid_due(t + 100, t) == (0, 0)              # the frame of t is published already
    assert p.grid_due(t + 2_500_000 + 50_000, t) == (0, 1)
    assert p.grid_due(t + 6 * 2_500_000 + 50_000, t) == (0, 6)     # 15 ms: all six
    assert p.grid_due(t + 10 * 2_500_000, t) == (0, 10)
    assert p.grid_due(t - 2_500_000, t) == (0, 0)        # a clock behind the frame: nothing


def test_at_pace_1_a_longer_backlog_skips_its_oldest_frames():
    p, t = FramePacing(2_500_000), 0
    assert p.grid_due(13 * 2_500_000 + 50_000, t) == (3, 10)
    assert FramePacing(1_000_000).grid_due(40 * 1_000_000, 0) == (15, 25)


def test_at_another_pace_a_backlog_over_four_frames_slips_the_scaled_clock(monkeypatch):
    """x2: simulated time is the drives' own scaled clock; a stall's backlog beyond
    MAX_SCALED_BACKLOG frames is not made up (its frames would go out before the chain has their
    commands): the clock slips, and the frames after it are due on the new pace."""
    from hil_sim.mock_hardware import pacing
    wall = [0.0]
    monkeypatch.setattr(pacing.time, 'monotonic', lambda: wall[0])
    p, T = FramePacing(2_500_000), 0.0025
    assert p.scaled_due(0, T, 2.0) == (0, 1)            # the first frame at once
    wall[0] += 3 * T / 2 + T / 8                         # three frames of wall at x2: three due
    assert p.scaled_due(1, T, 2.0) == (0, 3)
    wall[0] += 10 * T / 2                                # a stall of ten frames: four, six slipped
    assert p.scaled_due(4, T, 2.0) == (6, pacing.MAX_SCALED_BACKLOG)
    wall[0] += T / 2                                     # then one a frame again, from the slip
    assert p.scaled_due(8, T, 2.0) == (0, 1)
