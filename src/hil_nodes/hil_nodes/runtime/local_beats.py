"""Heartbeats inside the one-process container: to the process's own heartbeat readers by call,
into DDS only when a reader outside the process has matched.

Why: ``/hil/heartbeat`` has a producer in every node of every process, so it stays on DDS
(``topics.SHARED_TOPICS``): the intra-process bus serves one-producer streams, and a subscription
it serves has no DDS reader to hear the other processes. In the one-process graph that cost a DDS
publish (~100 us) per beat and a DDS take and executor event per beat at the supervisor: nine
nodes beating on two clocks, about 0.02 CPU-s per simulated second at twice the pace, a tenth of
the container.

A beat is idempotent (a reader records the time it heard a node), so the two ways may overlap:
the readers made in the process keep their DDS readers, for the beats of other processes, and
register their callback here (``listen``) for the beats of their own process, which the bus
delivers at its next drain (deferred, as every delivery inside the process). A beat goes into DDS
as well when more readers have matched the publisher than the process made: a node in another
process (the drives' watchdog when the drives run apart, a supervisor elsewhere) or ``ros2 topic
echo``; a reader in the process then hears that beat twice, which changes nothing. Without the bus
(a node alone in its process) every beat is published, as before.
"""
from __future__ import annotations

from typing import Any, Callable

from hil_nodes.runtime.intra_process import BUS, NODE_DESTROYED


class LocalBeats:
    def __init__(self):
        self.listeners: list[tuple[Any, Callable]] = []     # (node, callback), a DDS reader each

    def listen(self, node, callback: Callable) -> None:
        """``node`` made a DDS reader of ``/hil/heartbeat`` with ``callback``: the process's own
        beats reach ``callback`` by call."""
        self.listeners.append((node, callback))

    def stop(self, callback: Callable) -> None:
        """The reader of ``callback`` was destroyed."""
        self.listeners = [(n, cb) for n, cb in self.listeners if cb != callback]

    def forget(self, node) -> None:
        self.listeners = [(n, cb) for n, cb in self.listeners if n is not node]

    def publish(self, publisher, msg) -> None:
        """Send a heartbeat ``msg`` of ``publisher`` (a plain rclpy publisher of /hil/heartbeat)."""
        if not BUS.enabled:
            publisher.publish(msg)
            return
        for _, callback in self.listeners:
            BUS.defer(callback, msg)
        if publisher.get_subscription_count() > len(self.listeners):      # a reader outside
            publisher.publish(msg)


LOCAL_BEATS = LocalBeats()
NODE_DESTROYED.append(LOCAL_BEATS.forget)
