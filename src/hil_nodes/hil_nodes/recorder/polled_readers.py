"""Raw DDS readers that no message wakes: drained by their owner's timer.

A subscription an executor serves costs two thread wake-ups per message in the receiving
process (Fast DDS's receive thread, then the executor's), and on this 2-core machine the
wake-ups, not the Python, are most of it (perf: the kernel's task switching was a third of such
a process). Raw 400 Hz WrenchStamped topics from another process, read in a process of their
own (``bench/rclpy_costs.py``): one topic 0.034 CPU-s per s served by the EventsExecutor, 0.026
drained every 20 ms; four topics 0.060 and 0.038. The recorder has no deadline: in a
process of its own (one process per node) it records the eight 400 Hz streams of the Hexafloat
graph, 3200 messages a second, and is the biggest subscriber of the graph.

The readers live on a node of their own that is never added to an executor, so rclpy registers
no new-message callback on them; ``drain()`` takes what their histories hold. Each message keeps
the time its reader received it (``received_timestamp`` of the DDS sample: the system clock), so
a drain period adds nothing to the receipt times the recorder writes. The history depth must
cover the drain period (the recorder's 1000 is 2.5 s of a 400 Hz stream); a message pushed out
of a full history is lost and shows in the recorder's accounting as published but not recorded.
"""
from __future__ import annotations

from typing import Callable

import rclpy
from rclpy.qos import QoSProfile

# (raw CDR bytes, receipt time on the system clock in ns)
Deliver = Callable[[bytes, int], None]


class PolledReaders:
    def __init__(self, context, name: str):
        # a hidden name (leading underscore): `ros2 node list` leaves it out
        self.node = rclpy.create_node(f'_{name}_readers', context=context, start_parameter_services=False,
                                      enable_rosout=False)
        self._readers: dict[str, tuple] = {}

    def add(self, msg_type, topic: str, qos: QoSProfile, deliver: Deliver) -> None:
        sub = self.node.create_subscription(msg_type, topic, _never_called, qos, raw=True)
        self._readers[topic] = (sub, msg_type, deliver)

    def remove(self, topic: str) -> None:
        entry = self._readers.pop(topic, None)
        if entry is not None:
            self.node.destroy_subscription(entry[0])

    def drain(self) -> int:
        """Take every message the readers hold, oldest first per topic; returns how many."""
        n = 0
        for sub, msg_type, deliver in list(self._readers.values()):
            with sub.handle:
                while True:
                    taken = sub.handle.take_message(msg_type, True)
                    if taken is None:
                        break
                    deliver(taken[0], taken[1]['received_timestamp'])
                    n += 1
        return n

    def destroy(self) -> None:
        for topic in list(self._readers):
            self.remove(topic)
        self.node.destroy_node()


def _never_called(_msg) -> None:     # the node is never spun: rclpy needs a callback all the same
    raise AssertionError('a polled reader was served by an executor')
