"""The publisher of the one-process container's intra-process delivery
(``hil_nodes.runtime.intra_process``, whose module docstring gives the rules): the process's own
subscribers by call, DDS only when a reader outside the process matched (a latched state always; a
transient-local stream keeps its last ``REPLAY`` messages for a reader that matches later)."""
from __future__ import annotations

import time
from collections import deque

from rclpy.publisher import Publisher
from rclpy.qos import DurabilityPolicy

from hil_nodes.msgs.message_ring import MessageRing
from hil_nodes.runtime.intra_process import BUS, IntraProcessBus, _Topic
from hil_nodes.topics import CLOCK

REPLAY = MessageRing.RING // 2   # a transient-local stream's messages kept for a reader outside (module doc)
STATE_DEPTH = 20         # a transient-local history this deep or less is a state (/hil/mode: 20), always written
_monotonic_ns = time.monotonic_ns
# how long a publisher trusts its count of readers outside the process (wall ns): asking rmw at
# every send cost about 11 calls a frame through pybind11 and the rmw's locks; a reader that
# matches meanwhile gets its first message at most this much later (DDS discovery alone takes
# longer), never a gap after it
OUTSIDE_READERS_TTL_NS = 20_000_000


class IntraPublisher:
    """A publisher of this process: local subscribers by call, DDS only when matched outside
    (a latched state always; a transient-local stream replays its last messages: module doc)."""

    def __init__(self, node, inner, lifecycle: bool, latched: bool, bus: IntraProcessBus = BUS,
                 depth: int = 1):
        self.inner = inner
        self.topic = inner.topic_name
        # the clock, under whatever namespace remapping the process has (resolved once, here)
        self.is_clock = self.topic == node.resolve_topic_name(CLOCK)
        self.lifecycle = lifecycle
        self.latched = latched
        self._node = node
        self._always = latched and depth <= STATE_DEPTH        # a latched state
        self.replay = deque(maxlen=REPLAY) if latched and depth > 1 else None
        self._bus = bus
        self.bus_topic: _Topic | None = None
        self._outside, self._outside_until = 0, 0
        bus.add_publisher(self)

    def send(self, port, payload) -> None:
        """A chain port's payload (hil_nodes.runtime.chain_port): to the process's subscriptions
        as the bus's ``send`` says, and as a message to DDS only when ``publish`` would write one."""
        inner = self.inner
        if self.lifecycle and not inner.is_activated:
            return
        topic = self.bus_topic
        if topic.on_dds:                       # the process's own readers are DDS ones: a message
            self.publish(port.message(payload))
            return
        msg = self._bus.send(topic, port, payload)
        if self._always or self.outside_readers():
            self.replay_if_read()
            _dds_publish(inner, msg if msg is not None else port.message(payload))
        elif self.replay is not None:
            self.replay.append(msg if msg is not None else _Unsent(port, payload))

    def publish(self, msg) -> None:
        inner = self.inner
        if self.lifecycle and not inner.is_activated:
            return                             # as LifecyclePublisher.publish: nothing goes out
        topic = self.bus_topic
        self._bus.queue(topic, msg)
        # (the lifecycle check is done above for every DDS write below)
        if self._always or topic.on_dds:       # a latched state; the process's own readers are DDS ones
            _dds_publish(inner, msg)
        elif self.outside_readers():           # a reader outside the process
            self.replay_if_read()
            _dds_publish(inner, msg)
        elif self.replay is not None:
            self.replay.append(msg)

    def outside_readers(self) -> int:
        """Readers matched outside the process (``get_subscription_count``), asked again at most
        every ``OUTSIDE_READERS_TTL_NS``."""
        if _monotonic_ns() >= self._outside_until:
            return self.get_subscription_count()
        return self._outside

    def get_subscription_count(self) -> int:
        """rclpy's, and the count ``outside_readers`` trusts is this one from now on (a caller
        that waited for a reader to match gets its next message out)."""
        self._outside = self.inner.get_subscription_count()
        self._outside_until = _monotonic_ns() + OUTSIDE_READERS_TTL_NS
        return self._outside

    def replay_if_read(self) -> None:
        """A reader outside matched: the kept messages go first (history only for a transient-local one)."""
        replay = self.replay
        if replay and self.inner.get_subscription_count():
            if self._outside_wants_history():
                for old in replay:
                    _dds_publish(self.inner, old.message() if isinstance(old, _Unsent) else old)
            replay.clear()

    def _outside_wants_history(self) -> bool:
        """A matched reader is transient local (a volatile one would not get history from DDS)."""
        return any(info.qos_profile.durability == DurabilityPolicy.TRANSIENT_LOCAL
                   for info in self._node.get_subscriptions_info_by_topic(self.topic))

    def readers(self) -> int:
        """Readers of the topic: matched outside the process (``get_subscription_count``, DDS)
        and served inside it."""
        topic = self.bus_topic
        inside = 0 if topic is None else len(topic.callbacks) + len(topic.raw_callbacks)
        return self.inner.get_subscription_count() + inside

    def __getattr__(self, name: str):
        return getattr(self.inner, name)


_dds_publish = Publisher.publish


class _Unsent:
    """A chain port's payload kept for replay, made a message only if a reader outside asks."""
    __slots__ = ('port', 'payload')

    def __init__(self, port, payload):
        self.port, self.payload = port, payload

    def message(self):
        return self.port.message(self.payload)


def reader_count(publisher) -> int:
    """Readers of a publisher's topic, in the process and outside (a plain rclpy publisher: its
    matched subscriptions): whether a message only a viewer reads is worth building."""
    readers = getattr(publisher, 'readers', None)
    return readers() if readers is not None else publisher.get_subscription_count()
