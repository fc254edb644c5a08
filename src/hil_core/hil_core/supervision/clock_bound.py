"""How far apart the hosts' clocks may be for a run in real time across hosts, and the decision
to refuse one (docs/realtime.md, "Clocks across hosts"; the offsets: ``clock_offset``).

In real time at pace 1 every node runs on its own host's system clock and no ``/clock`` crosses
the link, so a stamp made on one host is judged on another's clock. The time base stamps each
command with its frame's time ``s`` and sends the points of ``[s, s + 2T]`` (its reader runs
``lead_frames`` = 1 frame ahead); the drives take a command in the frame it arrives in, on their
clock, and follow the time base's cubic exactly while that frame lies within its points: an
arrival, read on the drives' clock, in ``[s, s + 2T)``. With the command's latency ``L`` (designed
below one frame: ``frame_wait``) and an offset ``theta`` (the drives' clock minus the chain's) the
drives read the arrival at ``s + L + theta``:

* ``theta > 0`` (drives ahead): at ``L + theta >= 2T`` the drives run out of points (a late
  command), beyond they refuse it as ending in the past (a JTC's rule 6) and brake;
* ``theta < 0`` (drives behind): at ``L + theta < 0`` the command starts in the drives' future
  and the JTC bends the motion from the robot's state towards its first point (nothing refused,
  the setpoints leave the time base's cubic: the transparency suffers).

The offset's sign is not known beforehand, and a slow command (``L`` near ``T``) has a frame
of margin on the late side while a fast one has ``L`` on the early side. Half the lead either
way keeps every command of latency ``T/2 <= L < T`` exactly followed for any ``|theta|`` up to
it, with half a frame left before a late command; the same half frame is what the nodes'
one-frame deadlines leave a stamp from another host (a joint state's age at the kinematics, a
wrench's at a model on a third host). Hence::

    bound = lead_frames * T / 2          (Hexafloat: 1.25 ms at T = 2.5 ms)

Lockstep and real time at another pace run on the drives' ``/clock``: no bound applies.
"""
from __future__ import annotations

from collections.abc import Mapping

from hil_core.supervision.clock_offset import OffsetEstimate

LEAD_FRAMES = 1        # the time base's lead_frames default (docs/timebase.md)


def offset_bound(frame_period: float, lead_frames: int = LEAD_FRAMES) -> float:
    """The largest |offset| in s between two hosts' clocks that real time across them tolerates
    (the module docstring). ValueError for a frame period or lead that cannot be one."""
    if not frame_period > 0.0:
        raise ValueError(f'frame_period must be > 0 s, got {frame_period}')
    if int(lead_frames) < 1:
        raise ValueError(f'lead_frames must be >= 1, got {lead_frames}')
    return int(lead_frames) * float(frame_period) / 2.0


def refusal(part: str, estimates: Mapping[str, OffsetEstimate | None], bound: float,
            frame_period: float) -> str:
    """'' when every other part's clock is measured and within ``bound`` of this part's, else
    why real time is refused, naming the parts, the offsets and the bound. ``estimates``: per
    other part, its clock minus this one's (None: not measured)."""
    problems = []
    for other, est in estimates.items():
        if est is None:
            problems.append(f'the clock of part {other} could not be measured (no answer to the clock pings)')
        elif abs(est.offset_s) > bound:
            side = 'ahead of' if est.offset_s > 0 else 'behind'
            problems.append(f"part {other}'s clock is {abs(est.offset_s) * 1e3:.3f} ms {side} part {part}'s "
                            f'(median of {est.samples}, rtt {est.rtt_s * 1e3:.3f} ms)')
    if not problems:
        return ''
    return (f'real time refused: {"; ".join(problems)}; real time across hosts tolerates '
            f'{bound * 1e3:.3f} ms (half the time base\'s lead of {2 * bound * 1e3:g} ms at {frame_period * 1e3:g} ms '
            'frames, docs/realtime.md): bring the hosts\' clocks together (chrony, PTP) or run --lockstep')
