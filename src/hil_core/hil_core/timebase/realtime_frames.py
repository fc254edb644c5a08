"""Which frames of the wall-time grid the real-time time base must have produced by now.

In real time the time base produces a frame when that frame's reference comes in, with its
reader clock ``lead`` frames ahead of the wall clock (``hil_nodes.timebase.node``). A frame's
message is first needed by the drives ``lead`` frames after the frame's time, so a frame can
wait for its own reference for up to ``wait`` (at most the lead) without anything reaching the
robot late. Producing it the moment its wall time has passed (``wait`` = 0) is what the time
base did before: a reference one frame late then made it produce the *next* frame too, before
that frame's reference existed, so the reader saw the writer one pose too close (W-R off its
default) and the time-base control bent the interpolation time for a delay the lead already
absorbed. In the one-process graph the sensor chain takes 1-2 ms of the 2.5 ms frame and that
was rare; with one process per node it takes 1.7 ms at the median and 5.5 ms at p99, and W-R
was off in 10-14 % of the frames.

The rule is the same in lockstep and real time for the reader clock and the delay (the reader
clock is the frame's time plus the lead, whenever the frame is computed): only the moment of
computation moves.
"""
from __future__ import annotations


def due_frame(now_ns: int, frame_ns: int, wait_ns: int = 0, reference_ns: int | None = None) -> int:
    """The latest frame time (a multiple of ``frame_ns``) to be produced at ``now_ns``.

    * ``reference_ns`` None (a timer tick, no reference flowing): every frame whose time has
      passed, the wall grid instant at or before now;
    * a reference came in, stamped ``reference_ns``: its own frame (never beyond now), and
      every frame that waited ``wait_ns`` past its time for a reference that did not come.
    """
    if frame_ns <= 0 or wait_ns < 0:
        raise ValueError(f'frame_ns must be > 0 and wait_ns >= 0 (got {frame_ns}, {wait_ns})')
    wall = now_ns // frame_ns * frame_ns
    if reference_ns is None:
        return wall
    waited = (now_ns - wait_ns) // frame_ns * frame_ns
    return max(waited, min(reference_ns // frame_ns * frame_ns, wall))
