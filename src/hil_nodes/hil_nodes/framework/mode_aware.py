"""The input side of a mode-aware command producer driven by the drives' joint states (the
scripted ``reference_source``, the hybrid controller; docs/CONTRACTS.md "Mode-aware command
producers").

Lockstep: frame k is computed only when both ``/joint_states`` and ``/hil/frame`` stamped t_k are
in (``hil_core.supervision.lockstep.FrameSync``), with the mode the frame carries, so the output
is a function of message content only. Real time: every joint state is computed at once with
the latest mode the node knows (none before the first ``/hil/frame``: nothing is computed).

``JointFramePairing`` is a plain object the node owns: it is handed each message (and, in real
time, the node's mode) and calls ``compute(t_ns, mode, joint_state)`` for every frame that is
ready; the node keeps its mode and its ``active`` gate.
"""
from __future__ import annotations

from typing import Callable

from hil_core.supervision.lockstep import FrameSync
from hil_nodes.msgs.convert import stamp_to_ns


class JointFramePairing:
    """Joint states and frames paired for ``compute`` (the module docstring)."""

    def __init__(self, lockstep: bool, compute: Callable[[int, str, object], None]):
        self.lockstep = lockstep
        self._compute = compute
        self.sync = FrameSync(('joints', 'frame'))

    def joints(self, msg, mode: str | None) -> None:
        """A ``/joint_states`` message; ``mode``: the node's latest mode (real time)."""
        key = stamp_to_ns(msg.header.stamp)
        if self.lockstep:
            self._release(self.sync.put('joints', key, msg))
        elif mode is not None:
            self._compute(key, mode, msg)

    def frame(self, msg) -> None:
        """A ``/hil/frame`` message (lockstep: it may complete a frame)."""
        if self.lockstep:
            self._release(self.sync.put('frame', stamp_to_ns(msg.stamp), msg))

    def _release(self, frames) -> None:
        for key, parts in frames:
            self._compute(key, parts['frame'].frame_id, parts['joints'])
