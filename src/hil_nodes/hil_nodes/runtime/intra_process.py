"""Intra-process delivery for the one-process container (rclcpp's intra-process communication,
for rclpy, which has none).

Why: in one process every DDS delivery costs a take, a deserialization and an executor event per
subscriber (~0.05 CPU-s per s for a 400 Hz stream here, `hil bench rclpy_costs`), and the
Hexafloat graph has ~16 subscriptions to 400 Hz streams (the recorder alone 8): about 0.8 CPU-s
per s before any node does any work, more than the real-time budget of the whole graph. With
this bus a message published inside the process goes to the subscriptions inside the process as
a Python call; DDS carries it only when a subscriber outside the process has matched (the `hil`
command, `ros2 topic echo`, rviz, a recorder in another process).

Rules (those of rclcpp's intra-process communication, where they apply):
* a subscription of a topic that has a publisher in this process is served by the bus and has
  no DDS reader; one that has none (its producer runs in another process) keeps its DDS reader,
  and switches over when a publisher appears in the process (and back when it is destroyed);
* DDS carries a message only when a reader outside the process has matched, or when the topic's
  subscriptions in the process are DDS readers (``fall_back_to_dds``). A latched state (transient
  local, depth up to ``STATE_DEPTH``: /robot_description, markers, the history of /hil/mode) is
  always written: a viewer that matches later (discovery takes 0.25-2.3 s) gets it from the DDS
  history. A transient-local stream (deeper: the lockstep streams and commands) is not: writing a
  message into DDS history that nobody reads was 17 % of the container's CPU in lockstep (py-spy,
  2026-11-26: a publish is serialization). Instead it keeps its last ``REPLAY`` messages, and a
  reader outside the process that matches later gets them first, in order, when one of the
  matched readers is transient local (a lockstep consumer in another process waits for the frame
  it missed: the chain never runs more than a frame or two ahead of it), at the stream's next
  publish or at the spin loop's next graph check (``replay_to_outside_readers``, every 0.5 s),
  whichever comes first: a chain that waits for that reader publishes nothing meanwhile.
  ``REPLAY`` is below ``MessageRing.RING``, so no replayed message has been refilled since;
* a transient-local subscription served late gets the publisher's last message (the latched
  state). In one process nothing subscribes late on a stream: the supervisor configures every
  node (every subscription exists) before it activates any producer;
* a message belongs to its subscribers once published: the publisher must not change it (a
  publisher that reuses message objects keeps a ring of them, longer than one executor
  callback's output; publishing the same object twice in a row is refused), and subscribers only
  read it. A raw (serialized) subscription, the recorder's, gets its serialized bytes;
* delivery is deferred, not nested: ``publish`` queues, and the spin loop delivers after the
  executor callback that published has returned (``drain``), in publish order; a
  drain gives the executor its turn back after ``DRAIN_BUDGET``. Raw subscriptions (the
  recorder) come after the graph's own deliveries, at the end of each drain, serialized then:
  the chain F/T -> time base does not wait behind the recorder, and a drain's recorded
  messages are written in one run, in publish order (in a lockstep run that took a recorded
  message's delivery and write from 12.7 to 8.5 us here: the recorder's code stays in the
  CPU's caches). Its receipt time is the publish time (``published_ns``): on the wall clock
  the system time, on simulated time (lockstep, and real time at another pace: ``sim_clock``)
  the last ``/clock`` published in the process before the message, which is the recorder's
  clock when the message would have reached it in publish order (stamped with the clock at
  the end of the drain instead, a lockstep bag once had 9197 of 12531 trajectories ending in
  the past by a JTC's rule). Every callback
  runs to completion before the next starts, as it does on an executor: no callback can re-enter
  a node that is half way through its own;
* a publisher of the same topic outside the process (a node in another process, ``ros2 topic
  pub``, a test injecting bad input) is found by a graph check every half second
  (``fall_back_to_dds``): that topic then goes over DDS in the process too, so every publisher
  is heard (as before the bus, at its cost).
  Topics that many nodes publish by design (statuses, heartbeats, events: ``topics.SHARED_TOPICS``,
  a few per second each) stay on DDS (heartbeats also reach the process's own readers by call:
  ``runtime.local_beats``).

The bus is off unless the process hosts more than one node (``enable``); a node alone in its
process (``--isolated``, ``ros2 run``, the tests) creates plain rclpy publishers and subscriptions.
"""
from __future__ import annotations

import functools
import time
from collections import deque
from typing import Any, Callable

from rclpy.qos import DurabilityPolicy, QoSProfile

from hil_nodes.msgs.cdr_encode import prepare, serialize_exact
from hil_nodes.topics import CLOCK, SHARED_TOPICS, resolve

DRAIN_BUDGET = 0.005     # wall s of deliveries before the executor gets its turn again
_monotonic = time.monotonic

# rclpy's own publishers (parameter events) and the log stay plain rclpy entities
_EXCLUDED_PREFIXES = ('/parameter_events', '/rosout')


class _Topic:
    __slots__ = ('name', 'publishers', 'subscriptions', 'callbacks', 'raw_callbacks', 'targets', 'last',
                 'last_sent', 'on_dds', 'is_clock')

    def __init__(self, name: str):
        self.name = name                                      # the resolved name (namespace, remapping)
        self.is_clock = False                                 # the process's /clock (set by its publisher)
        self.publishers: list[IntraPublisher] = []          # (hil_nodes.runtime.intra_publisher)
        self.subscriptions: list[IntraSubscription] = []    # (hil_nodes.runtime.intra_subscription)
        self.last = None                                      # the last message published
        self.last_sent = None                                 # or the last (port, payload) a chain port sent
        self.on_dds = False                                   # publishers outside the process too: DDS only
        self.callbacks: list[Callable[[Any], None]] = []      # served subscriptions, by message
        self.raw_callbacks: list[Callable[[bytes], None]] = []   # served subscriptions, serialized
        # served subscriptions as a chain port delivers to them (hil_nodes.runtime.chain_port):
        # (chain input or None, message callback), in subscription order
        self.targets: list[tuple[Callable | None, Callable]] = []


class _Unwritten:
    """A chain port's payload whose CDR bytes the recorder gets: written at its delivery, after
    the graph's own (module docstring), not in the sending stage's frame."""

    __slots__ = ('port', 'payload')

    def __init__(self, port, payload):
        self.port, self.payload = port, payload

    def write(self) -> bytes:
        data = self.port.encode(self.payload)
        return data if data is not None else serialize_exact(self.port.message(self.payload))


class IntraProcessBus:
    """Process-wide registry of the topics published and subscribed inside this process."""

    def __init__(self):
        self.enabled = False
        self._topics: dict[str, _Topic] = {}
        self._queue: deque = deque()
        self._raw_queue: deque = deque()     # (raw callbacks, message or payload, publish time ns or None)
        self.published_ns: int | None = None # publish time of the raw delivery in progress (None: unknown)
        self.sim_clock = False               # simulated time: raw receipt times from /clock (module docstring)
        self.clock_ns: int | None = None     # the last /clock published in the process (sim_clock; None: none yet)

    def enable(self, on: bool = True) -> None:
        self.enabled = on

    def _topic(self, name: str) -> _Topic:
        topic = self._topics.get(name)
        if topic is None:
            topic = self._topics[name] = _Topic(name)
        return topic

    # --- registration ------------------------------------------------------------------------
    def _serve_all(self, topic: _Topic) -> None:
        by_bus = bool(topic.publishers) and not topic.on_dds
        for sub in topic.subscriptions:
            sub.serve(by_bus)
        self._rebuild(topic)

    def add_publisher(self, pub: IntraPublisher) -> None:
        topic = self._topic(pub.topic)
        topic.publishers.append(pub)
        pub.bus_topic = topic
        topic.is_clock = topic.is_clock or pub.is_clock
        if len(topic.publishers) == 1:
            self._serve_all(topic)

    def remove_publisher(self, pub: IntraPublisher) -> None:
        topic = self._topics.get(pub.topic)
        if topic is None or pub not in topic.publishers:
            return
        topic.publishers.remove(pub)
        if not topic.publishers:
            topic.on_dds = False               # (checked again when a producer comes back)
            self._serve_all(topic)

    def add_subscription(self, sub: IntraSubscription) -> None:
        topic = self._topic(sub.topic)
        topic.subscriptions.append(sub)
        sub.serve(bool(topic.publishers) and not topic.on_dds)
        self._rebuild(topic)
        last = topic.last
        if last is None and topic.last_sent is not None:      # a chain port's last payload, as a message
            port, payload = topic.last_sent
            last = port.message(payload)
        if sub.served and sub.latched and last is not None:
            if sub.raw:
                self._queue_raw([sub.callback], last)
            else:
                self._queue.append((sub.callback, last))

    def remove_subscription(self, sub: IntraSubscription) -> None:
        topic = self._topics.get(sub.topic)
        if topic is None or sub not in topic.subscriptions:
            return
        topic.subscriptions.remove(sub)
        self._rebuild(topic)

    @staticmethod
    def _rebuild(topic: _Topic) -> None:
        # lists replaced, never changed in place: a delivery loop in progress keeps its own
        served = [s for s in topic.subscriptions if s.served]
        topic.callbacks = [s.callback for s in served if not s.raw]
        topic.raw_callbacks = [s.callback for s in served if s.raw]
        topic.targets = [(s.chain_input, s.callback) for s in served if not s.raw]
        if topic.raw_callbacks:                # (loading rosbags' types takes ~0.2 s: not mid-run)
            for pub in topic.publishers:
                prepare(pub.inner.msg_type)

    # --- delivery ----------------------------------------------------------------------------
    def queue(self, topic: _Topic, msg) -> None:
        if msg is topic.last:
            raise ValueError(f'{topic.name}: the same message object published twice in a row; in one '
                             f'process its subscribers share it: publish a new (or another pooled) message')
        topic.last, topic.last_sent = msg, None
        if self.sim_clock and topic.is_clock:
            self.clock_ns = msg.clock.sec * 1_000_000_000 + msg.clock.nanosec
        self._queue.extend([(cb, msg) for cb in topic.callbacks])
        if topic.raw_callbacks:                # the recorder
            self._queue_raw(topic.raw_callbacks, msg)

    def send(self, topic: _Topic, port, payload):
        """A chain port's ``payload`` to the topic's subscriptions in the process, queued as
        ``queue`` queues a message: a chain input gets the payload itself, a subscription without
        one the message (built once, only then), a raw one (the recorder) the CDR bytes, written
        from the payload when the recorder's turn comes (``port.encode``, after the graph's own
        deliveries: the sending stage's frame does not pay for the recording). Returns the
        message if one was built."""
        topic.last, topic.last_sent = None, (port, payload)
        msg = None
        q = self._queue
        for chain_input, callback in topic.targets:
            if chain_input is not None:
                q.append((chain_input, payload))
            else:
                if msg is None:
                    msg = port.message(payload)
                q.append((callback, msg))
        if topic.raw_callbacks:
            if port.encode is not None:           # written when the recorder's turn comes
                self._queue_raw(topic.raw_callbacks, _Unwritten(port, payload))
            else:
                self._queue_raw(topic.raw_callbacks, msg if msg is not None else port.message(payload))
        return msg

    def _queue_raw(self, callbacks, msg) -> None:
        # after the graph's own deliveries, with the publish time (module docstring)
        self._raw_queue.append((callbacks, msg, self.clock_ns if self.sim_clock else time.time_ns()))

    def pending(self) -> int:
        return len(self._queue) + len(self._raw_queue)

    def drain(self, budget_s: float = DRAIN_BUDGET) -> int:
        """Deliver the queued messages in order, and those their callbacks publish, until the
        queue is empty or ``budget_s`` of wall time has passed: a lockstep chain that feeds itself
        entirely inside the process (drives -> ... -> drives) must not keep timers, services and
        DDS readers (heartbeats, the supervisor's checks, the hil command) from running."""
        q, raw, n = self._queue, self._raw_queue, 0
        end = _monotonic() + budget_s
        while q:
            cb, msg = q.popleft()
            n += 1
            try:
                cb(msg)
            except Exception as exc:           # its node stops in place (liveness.fail_in_place)
                self._failed(cb, exc)
            if not n % 16 and _monotonic() > end:
                break
        while raw:                             # all of them, whatever the budget: never starved
            n += 1
            self._deliver_raw(raw.popleft())
        return n

    def _deliver_raw(self, item) -> None:
        callbacks, msg, self.published_ns = item
        # (the message, or a chain port's payload, is its subscribers' once published: unchanged since)
        data = msg.write() if type(msg) is _Unwritten else serialize_exact(msg)
        for cb in callbacks:
            try:
                cb(data)
            except Exception as exc:
                self._failed(cb, exc)
        self.published_ns = None

    def _failed(self, cb, exc: Exception) -> None:
        """A delivery raised: the node of the subscription stops in place, skipped from now on
        (a node that cannot, e.g. a plain rclpy one: the exception goes on, as on an executor)."""
        for topic in self._topics.values():
            for sub in topic.subscriptions:
                if cb is sub.callback or cb is sub.chain_input:
                    fail = getattr(sub.node, 'fail_in_place', None)
                    if fail is None:
                        raise exc
                    fail(exc, f'its delivery of {topic.name}')
                    return
        raise exc

    def defer(self, callback: Callable[[Any], None], msg) -> None:
        """``callback(msg)`` at the next drain, in order with the messages queued (a delivery that
        is not a topic's: runtime.local_beats)."""
        self._queue.append((callback, msg))

    def clear(self) -> None:
        self._queue.clear()
        self._raw_queue.clear()

    def replay_to_outside_readers(self) -> None:
        """Streams whose kept messages a reader outside has matched for since their last publish
        (module doc): they go out now, not at a next publish that may wait for that reader."""
        for topic in self._topics.values():
            for pub in topic.publishers:
                if pub.replay and not (pub.lifecycle and not pub.inner.is_activated):
                    pub.replay_if_read()

    def fall_back_to_dds(self, node) -> list[tuple[str, int]]:
        """Served topics that have publishers outside the process too (a node in another process,
        ``ros2 topic pub``, a test injecting input): their subscriptions go back to DDS readers,
        which hear every publisher (the process's own ones then write to DDS, as they have a
        reader). rclpy's EventsExecutor cannot pass a message's publisher id to a callback
        (``SystemError``), so a bus-and-DDS mix could not drop the process's own messages.
        Returns the topics switched now, (topic, publishers outside)."""
        found = []
        for name, topic in self._topics.items():
            if not topic.publishers or topic.on_dds or not any(s.served for s in topic.subscriptions):
                continue
            foreign = node.count_publishers(name) - len(topic.publishers)
            if foreign > 0:
                topic.on_dds = True
                self._serve_all(topic)
                found.append((name, foreign))
        return found


BUS = IntraProcessBus()

def eligible(topic: str, namespace: str = '') -> bool:
    """Whether a resolved ``topic`` of a node in ``namespace`` goes through the bus (not a
    shared topic, not rclpy's own)."""
    return BUS.enabled and topic not in _shared(namespace) and not topic.startswith(_EXCLUDED_PREFIXES)


@functools.lru_cache(maxsize=None)
def _shared(namespace: str) -> frozenset:
    """SHARED_TOPICS resolved in a namespace (once per namespace: entities are made at configure)."""
    return frozenset(resolve(t, namespace) for t in SHARED_TOPICS)


def is_latched(qos: QoSProfile) -> bool:
    return qos.durability == DurabilityPolicy.TRANSIENT_LOCAL


NODE_DESTROYED: list[Callable[[Any], None]] = []   # called with a node of the process being destroyed
