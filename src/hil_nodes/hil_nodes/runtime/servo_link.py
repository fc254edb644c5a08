"""A control law closed inside the drives' loop, in one process: what a ros2_control controller
is to the controller manager's update loop (docs/hybrid5.md, "Real time").

Why: hybrid5's computed-torque law runs at 10 kHz (seed 003: on the robot's FPGA). Over
messages a cycle costs a /joint_states publish, a callback and an effort publish between two
nodes: ~600 cycles per wall second here, so in real time every frame of the drives came late
(the real-time targets were missed). A controller node whose law must run at the drives' step rate offers it here under
its command topic; mock drives of the same process that emulate a forward command controller on
that topic take it when they run in real time, and call it once per plant step with the joints
they measured, instead of holding the last command over the frame. The law's outputs go through
the drives' own command checks and watchdog, as a command message would.

Only in real time and in one process: across processes a 10 kHz loop cannot close, and in
lockstep every cycle stays a frame of messages (deterministic, one cycle per frame, as the
seed's loop). A node alone in its process offers the law to nobody and keeps its message loop.
"""
from __future__ import annotations

from typing import Any, Protocol

import numpy as np

from hil_nodes.runtime.intra_process import NODE_DESTROYED


class ServoLaw(Protocol):
    def attach(self) -> None:
        """The drives took the law: the node stops computing from joint-state messages."""

    def detach(self) -> None:
        """The drives let it go (deactivated): the node's message loop resumes."""

    def cycle(self, t_ns: int, position: np.ndarray) -> np.ndarray | None:
        """The command of the plant step starting at ``t_ns`` from the joint positions the
        encoders measured (None: no command for this step, the drives' own stop)."""

    def frame_done(self, t_ns: int) -> None:
        """The frame ending at ``t_ns`` is integrated: publish what is published once a frame."""


_OFFERED: dict[str, tuple[ServoLaw, Any]] = {}     # topic -> (law, the node that offered it)


def offer(topic: str, law: ServoLaw, owner: Any = None) -> None:
    """Offer ``law`` on ``topic``; it goes when ``owner`` (a node) is destroyed, deactivated or not."""
    _OFFERED[topic] = (law, owner)


def withdraw(topic: str, law: ServoLaw) -> None:
    if topic in _OFFERED and _OFFERED[topic][0] is law:
        del _OFFERED[topic]


def offered(topic: str) -> ServoLaw | None:
    entry = _OFFERED.get(topic)
    return None if entry is None else entry[0]


def _withdraw_all_of(node) -> None:
    for topic in [t for t, (_, owner) in _OFFERED.items() if owner is node]:
        del _OFFERED[topic]


NODE_DESTROYED.append(_withdraw_all_of)       # a node destroyed without deactivation takes its law along
