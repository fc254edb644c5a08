"""hil_core.supervision.clock_bound: the offset real time across hosts tolerates, and the refusal.

The bound is checked against the drives' own acceptance rather than its formula: a command
shaped as the time base sends it (stamp s, points at T/4 ... 2T, docs/timebase.md) judged by the
JTC port (``jtc_validate``, rule 6: a trajectory that ends in the past is refused) at the drives'
clock, for latencies within the design (below one frame) and an offset at the bound; and the
same command refused once the offset eats the whole lead."""
import pytest

from hil_core.drives.joint_trajectory import JtcSettings, Trajectory, jtc_validate
from hil_core.supervision.clock_bound import offset_bound, refusal
from hil_core.supervision.clock_offset import OffsetEstimate

T = 0.0025            # seed 000: the high-level frame, 400 Hz
NS = 1_000_000_000


def _command(stamp_ns: int) -> Trajectory:
    """The time base's message of a frame: eight points at T/4 ... 2T after its stamp."""
    times = [(i + 1) * T / 4 for i in range(8)]
    return Trajectory.from_arrays(['j'], stamp_ns, times, [[0.001 * i] for i in range(8)], [[0.0]] * 8)


def _arrival_frame(arrival_ns: int, frame_ns: int) -> int:
    """The drives' frame a command arriving at ``arrival_ns`` (their clock) is applied in."""
    return arrival_ns // frame_ns * frame_ns


def test_hexafloat_bound_is_half_its_frame():
    assert offset_bound(T) == pytest.approx(0.00125, abs=1e-15)
    assert offset_bound(T, lead_frames=2) == pytest.approx(0.0025, abs=1e-15)
    for bad in ((0.0, 1), (-T, 1), (T, 0)):
        with pytest.raises(ValueError):
            offset_bound(*bad)


@pytest.mark.parametrize('theta_sign', [+1, -1])
def test_at_the_bound_the_drives_accept_and_follow_every_command_on_time(theta_sign):
    """Offset at the bound, latencies from half a frame to just under a frame: accepted, and the
    drives' frame of arrival lies inside the command's points (no late command, no frame that
    starts before the command)."""
    frame_ns = int(T * NS)
    theta = theta_sign * int(offset_bound(T) * NS)
    settings = JtcSettings(('j',), allow_nonzero_velocity_at_trajectory_end=True)
    s = 4000 * frame_ns
    for latency in range(frame_ns // 2, frame_ns, 25_000):
        arrival = s + latency + theta
        assert jtc_validate(_command(s), settings, arrival).accepted, (latency, theta)
        frame = _arrival_frame(arrival, frame_ns)
        assert s <= frame and frame + frame_ns <= s + 2 * frame_ns, (latency, theta)


def test_an_offset_that_eats_the_lead_is_refused_by_the_drives():
    """The JTC's own rule, beyond the bound: ahead by the lead plus what a latency of a frame
    leaves, the command ends in the past on the drives' clock."""
    frame_ns = int(T * NS)
    settings = JtcSettings(('j',), allow_nonzero_velocity_at_trajectory_end=True)
    s = 4000 * frame_ns
    latency = frame_ns - 1
    theta = 2 * frame_ns - latency + 1
    verdict = jtc_validate(_command(s), settings, s + latency + theta)
    assert not verdict.accepted and verdict.reason == 'ends_in_past'
    assert theta * 1e-9 > offset_bound(T)


def _est(offset_s: float) -> OffsetEstimate:
    return OffsetEstimate(offset_s, 0.0004, 9, 0.0001, 0.0006)


def test_within_the_bound_nothing_is_refused():
    bound = offset_bound(T)
    assert refusal('chain', {'hardware': _est(bound), 'model': _est(-bound)}, bound, T) == ''
    assert refusal('chain', {}, bound, T) == ''


def test_beyond_the_bound_the_reason_names_parts_offset_and_bound():
    bound = offset_bound(T)
    reason = refusal('chain', {'hardware': _est(0.005), 'model': _est(0.0002)}, bound, T)
    assert reason.startswith('real time refused: ')
    assert "part hardware's clock is 5.000 ms ahead of part chain's (median of 9, rtt 0.400 ms)" in reason
    assert 'model' not in reason
    assert 'tolerates 1.250 ms' in reason and 'lead of 2.5 ms at 2.5 ms frames' in reason
    behind = refusal('hardware', {'chain': _est(-0.0013)}, bound, T)
    assert "part chain's clock is 1.300 ms behind part hardware's" in behind


def test_an_unmeasured_clock_is_refused():
    reason = refusal('hardware', {'chain': None}, offset_bound(T), T)
    assert 'the clock of part chain could not be measured' in reason
