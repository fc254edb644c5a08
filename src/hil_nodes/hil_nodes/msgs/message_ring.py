"""Message objects built once and refilled for every publish, for the 400 Hz streams.

rclpy's generated message classes cost ~3-5 us per object to construct, and a WrenchStamped is
six objects (header, stamp, wrench, two vectors, the message), a PoseStamped five: in a running
one-process graph (cold caches between frames) the F/T node spent ~60 us of its 170 us per
frame building its two messages (cProfile inside the callback, 2026-11-26). Refilling the fields
of an existing message costs a fraction of that (``hil_nodes.msgs.convert``'s ``fill_*``).

A published message belongs to its subscribers: in one process they get the object itself
(hil_nodes.runtime.intra_process), and the recorder serializes it after the graph's deliveries. So a
publisher keeps a ring of ``RING`` messages and refills one only ``RING`` publishes after it
went out: far more than a frame's deliveries, and every in-graph subscriber of these streams
turns the message into arrays on receipt (it keeps no message object). The ring of the time
base's trajectories (``convert.TrajectoryMessages``) follows the same rule.
"""
from __future__ import annotations

from typing import Callable, Generic, TypeVar

M = TypeVar('M')


class MessageRing(Generic[M]):
    RING = 16

    def __init__(self, factory: Callable[[], M], depth: int = RING):
        if depth < 2:
            raise ValueError('a message ring needs at least 2 messages (one object is never published twice '
                             'in a row)')
        self._messages = [factory() for _ in range(depth)]
        self._turn = 0

    def next(self) -> M:
        """The message to refill now (the one published ``depth`` publishes ago)."""
        self._turn = (self._turn + 1) % len(self._messages)
        return self._messages[self._turn]

