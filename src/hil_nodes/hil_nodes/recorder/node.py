"""Recorder node: raw (serialized) subscriptions to a topic list -> rosbag2 (mcap) via foxglove-sdk's MCAP writer.

Messages are written as received (CDR bytes, no deserialization), time-stamped with the node
clock (sim time in simulation, so a lockstep bag has the simulation's time axis). In a process of
its own on the wall clock the readers are drained every ``poll_period`` instead of waking the
process per message (``hil_nodes.recorder.polled_readers``; each message keeps its DDS receipt time):
with one process per node the recorder's CPU went from 0.20 to 0.10 CPU-s per s. Topics are
subscribed as soon as they appear in the graph, with the reliability/durability every publisher
offers (rosbag2's rule) so latched topics (/hil/mode, /robot_description) are caught too. The bag is checkpointed every
``checkpoint_period`` wall seconds, closed on deactivate/shutdown/SIGINT; a bag left by a killed
recorder is repaired with ``hil_nodes.recorder.bag_recovery.recover_bag`` (``hil report`` does it automatically).

Accounting (what the report's per-topic message accounting starts from): per topic, the
messages received and written and the largest gap between receive times (in the bag's clock),
counted while the recorder is active. They are published in
its /diagnostics status and written to ``accounting.yaml`` in the bag directory at every
checkpoint and at close (``final: true``); ``hil_core.accounting`` turns them, with the designed
rates and the producers' counts, into the run's per-topic table.

Cost (``bench/bag_writer.py``: the recorded Hexafloat frame at 400 Hz without the graph,
calibration 0.343 s): a write is 0.44 us at p50 (the serialization before it 9 us in a running
real-time graph, ``hil_nodes.msgs.cdr_encode``), 2.7 ms of CPU per simulated second with the
checkpoints; the writer closes a chunk every 64 KiB inside a write, 39 us at p50; a whole
checkpoint (the pending chunk closed and flushed, metadata.yaml rewritten;
``hil_nodes.recorder.bag``) at most 0.4 ms, plus 0.4 ms for the accounting. Writes stay in the
subscription callback: a writer thread would not run in parallel (the GIL) and would add a
thread switch of up to the interpreter's 5 ms switch interval to the executor instead.
"""
from __future__ import annotations

import importlib
import pathlib
import sys
from collections import deque

from rclpy.clock import Clock, ClockType
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy

from hil_core.accounting import Tally, header_stamp_ns
from hil_nodes.recorder.bag import CheckpointWriter, offered_qos, write_accounting
from hil_nodes.framework.base import ERROR, OK, WARN, HilLifecycleNode
from hil_nodes.recorder import params
from hil_nodes.runtime.intra_process import BUS
from hil_nodes.recorder.polled_readers import PolledReaders
from hil_nodes.runtime.runner import main_for
from hil_nodes.topics import namespace


POLLED = 'polled'      # a topic read by the recorder's PolledReaders (no rclpy subscription of its own)


def message_class(type_name: str):
    """'pkg/msg/Name' -> the rclpy message class."""
    pkg, kind, name = type_name.split('/')
    return getattr(importlib.import_module(f'{pkg}.{kind}'), name)


def _starts_with_header(cls) -> bool:
    """A message class whose serialized form starts with a header stamp (its first field a
    std_msgs/Header, or a Header itself): the recorder reads the stamp from the bytes."""
    fields = list(cls.get_fields_and_field_types().items())
    return bool(fields) and (fields[0][1] == 'std_msgs/Header'
                             or (cls.__name__ == 'Header' and fields[0][1] == 'builtin_interfaces/Time'))


class RecorderNode(HilLifecycleNode, name='recorder', task='bag', params=params.PARAMS):
    """Statuses "recorder: bag": the bag being written."""

    def __init__(self, node_name: str | None = None, **kwargs):
        super().__init__(node_name, **kwargs)
        self.bag: CheckpointWriter | None = None
        self._subs = {}
        self._own_timers = []
        self.tallies: dict[str, Tally] = {}
        self._stamped: set[str] = set()       # recorded topics whose messages start with a header
        self.write_errors = 0
        self._steps: deque = deque()          # checkpoint steps still to take (checkpoint_after)
        self._polled: PolledReaders | None = None
        self._last_drain = False
        self._latched: set[str] = set()       # recorded topics with a transient-local publisher
        self._held: dict[str, bytes] = {}     # their last message received before activation
        self._wanted: frozenset[str] = frozenset()   # ``topics`` resolved in the node's namespace
        self._checkpoint_topic = ''           # ``checkpoint_after`` resolved

    def configure_node(self) -> None:
        path = pathlib.Path(self.p.bag_path).expanduser()
        if path.exists():
            raise ValueError(f"bag_path '{path}' exists already: choose a new directory")
        path.parent.mkdir(parents=True, exist_ok=True)
        self.bag = CheckpointWriter(path)
        # the names as the graph has them (namespace, remapping): the bag's topics are resolved
        # names, e.g. /rig_a/ft_sensor/wrench under --namespace /rig_a (topics.strip_namespace)
        self._wanted = frozenset(self.resolve_topic_name(t) for t in self.p.topics)
        self._checkpoint_topic = self.resolve_topic_name(self.p.checkpoint_after) if self.p.checkpoint_after else ''
        steady = Clock(clock_type=ClockType.STEADY_TIME)
        self._own_timers = [self.create_timer(self.p.discovery_period, self._discover, clock=steady),
                        self.create_timer(self.p.checkpoint_period, self._checkpoint_due, clock=steady)]
        self._steps.clear()
        # alone in its process (no intra-process bus) on the wall clock: the readers are drained,
        # not served (a DDS receipt time is a system-clock time, so not in sim time)
        if self.p.poll_period > 0 and not BUS.enabled and not self.get_parameter('use_sim_time').value:
            self._polled = PolledReaders(self.context, self.get_name())
            self._own_timers.append(self.create_timer(self.p.poll_period, self._drain, clock=steady))

    def _qos_for(self, topic: str) -> QoSProfile:
        """rosbag2's rule (rosbag2_transport qos.cpp, ``adapt_request_to_offers``): reliable and
        transient-local only when every publisher offers it, so that the subscription matches
        them all. /hil/events in lockstep has both (the planner's and the drives' latched events,
        every node's volatile stop-in-place fault): a latched request heard none of the volatile
        ones. Volatile misses what a latched publisher sent before it matched; the recorder is
        the first node activated, before any event."""
        infos = self.get_publishers_info_by_topic(topic)
        reliable = all(i.qos_profile.reliability == ReliabilityPolicy.RELIABLE for i in infos)
        latched = bool(infos) and all(i.qos_profile.durability == DurabilityPolicy.TRANSIENT_LOCAL for i in infos)
        return QoSProfile(depth=1000,
                          reliability=ReliabilityPolicy.RELIABLE if reliable else ReliabilityPolicy.BEST_EFFORT,
                          durability=DurabilityPolicy.TRANSIENT_LOCAL if latched else DurabilityPolicy.VOLATILE)

    def activate_node(self) -> None:
        # Subscribe now, not at the next timer tick: the supervisor configures every node (so
        # every publisher exists) before it activates any, and brings the recorder up first, so
        # the recording starts before the first frame of the run.
        self._discover()
        # A latched state that came while configured (the discovery timer subscribed, and the
        # publisher's last message came at once) is where the recording starts: the robot
        # description and the static frames, which a replay needs and nobody publishes again.
        now = self.now_ns()
        for topic, data in self._held.items():
            self._record(topic, data, now)
        self._held.clear()

    def _discover(self) -> None:
        if not self._bag_open():
            return
        wanted = self._wanted - set(self._subs)
        if not wanted:
            return
        # A topic may never come (joystick/wrench without an operator; the admittance's
        # subscription puts it in the graph all the same), and this runs every discovery_period
        # in the frame loop's thread: asking the graph for each missing topic's publishers costs
        # ~35 us here, listing every topic with its types ~0.4 ms plus ~0.1 ms for the
        # subscriber-only topic's endpoints (Hexafloat, one process, calibration 0.62 s).
        if not any(self.count_publishers(topic) for topic in wanted):
            return
        for topic, types in self.get_topic_names_and_types():
            if topic not in wanted or not self.get_publishers_info_by_topic(topic):
                continue
            type_name = types[0]
            try:
                cls = message_class(type_name)
                self.bag.add_topic(topic, type_name, offered_qos(self.get_publishers_info_by_topic(topic)))
            except (ImportError, AttributeError, KeyError, ValueError) as exc:
                self.status(ERROR, f'cannot record {topic} ({type_name}): {exc}')
                self._subs[topic] = None
                continue
            self.tallies.setdefault(topic, Tally())
            if self._qos_for(topic).durability == DurabilityPolicy.TRANSIENT_LOCAL:
                self._latched.add(topic)
            if _starts_with_header(cls):
                self._stamped.add(topic)
            if self._polled is not None:
                self._polled.add(cls, topic, self._qos_for(topic),
                                 lambda data, received_ns, t=topic: self._write(t, data, received_ns))
                self._subs[topic] = POLLED
                continue
            self._subs[topic] = self.create_subscription(
                cls, topic, lambda data, t=topic: self._write(t, data), self._qos_for(topic), raw=True)

    def _drain(self) -> None:
        if self._polled is not None:
            self._polled.drain()

    def _write(self, topic: str, data: bytes, received_ns: int = 0) -> None:
        if not self._bag_open():
            return
        if not (self.active or self._last_drain):   # (the last drain, at deactivation: received while active)
            if topic in self._latched:                # a latched state before activation: recorded then
                self._held[topic] = data
            return
        # receipt time on the node clock (``now_ns``): a drained message's DDS receipt time; in
        # one process the publish time (the intra-process bus delivers to the recorder after the
        # graph's own subscribers; ``published_ns`` is None when it has none: no /clock yet).
        # Sim time 0 is a time: a lockstep run's first frame is stamped 0.
        published = BUS.published_ns
        self._record(topic, data, received_ns or (published if published is not None else self.now_ns()))

    def _record(self, topic: str, data: bytes, now: int) -> None:
        tally = self.tallies[topic]
        # the header stamp too: samples missing show in the stamps, a late delivery only in `now`
        tally.receive(now, header_stamp_ns(data) if topic in self._stamped else None)
        try:
            self.bag.write(topic, now, data)
        except (OSError, ValueError, KeyError) as exc:   # disk full, closed file: counted, not fatal
            self.write_errors += 1
            if self.write_errors == 1:
                self.status(ERROR, f'cannot write {topic}: {exc}')
            return
        tally.written += 1
        if self._steps and topic == self._checkpoint_topic:
            self._steps.popleft()()

    def _checkpoint_due(self) -> None:
        if not self.p.checkpoint_after:
            return self._checkpoint()
        for step in list(self._steps):          # the trigger topic did not flow: take them now
            step()
        self._steps = deque(self._checkpoint_steps())

    def accounting(self, final: bool = False) -> dict:
        """The recorder's per-topic counts (the content of accounting.yaml)."""
        topics = {}
        for topic, tally in sorted(self.tallies.items()):
            c = tally.count()
            topics[topic] = {'received': c.received, 'written': c.written, 'largest_gap_s': c.largest_gap_s,
                             'first_s': c.first_s, 'last_s': c.last_s, 'largest_stamp_gap_s': c.largest_stamp_gap_s,
                             'latched': topic in self._latched}
        clock = 'sim' if self.get_parameter('use_sim_time').value else 'system'
        return {'final': bool(final), 'clock': clock, 'write_errors': self.write_errors,
                'namespace': namespace(self.get_namespace()), 'topics': topics}

    def _write_accounting(self, final: bool = False) -> None:
        try:
            write_accounting(self.bag.path, self.accounting(final))
        except OSError as exc:
            self.status(ERROR, f'cannot write accounting.yaml: {exc}')

    def _checkpoint(self) -> None:
        """The whole checkpoint at once (on the timer, at deactivation)."""
        self._steps.clear()
        for step in self._checkpoint_steps():
            step()

    def _checkpoint_steps(self) -> tuple:
        """Flush, metadata, accounting, status: each a no-op once the bag is closed."""
        return self._flush, self._rewrite_metadata, self._accounting_step, self._report

    def _bag_open(self) -> bool:
        return self.bag is not None and not self.bag.closed

    def _flush(self) -> None:
        if self._bag_open():
            try:
                self.bag.flush()
            except OSError as exc:     # a full disk: the writer's failure shows here; the bag
                self.status(ERROR, f'cannot write the bag: {exc}')   # refuses later writes (counted)

    def _rewrite_metadata(self) -> None:
        if self._bag_open():
            self.bag.rewrite_metadata()

    def _accounting_step(self) -> None:
        if self._bag_open():
            self._write_accounting()

    def _report(self) -> None:
        if self._bag_open():
            received = sum(t.received for t in self.tallies.values())
            written = sum(t.written for t in self.tallies.values())
            per_topic = {topic: (f'received {t.received} written {t.written} largest_gap_ms '
                                 f'{t.largest_gap_ns * 1e-6:.1f}') for topic, t in sorted(self.tallies.items())}
            level = ERROR if self.bag.failed else OK if received == written else WARN   # failed: the file takes no more
            self.status(level, ('recording' if self.active else 'paused') + ('' if level == OK else
                        f': {received - written} received message(s) not written'),
                        bag=self.p.bag_path, messages=written, received=received, not_written=received - written,
                        topics=len(self.tallies), **per_topic)

    def deactivate_node(self) -> None:
        self._drain_received()
        self._checkpoint()

    def _drain_received(self) -> None:
        """Write what the drained readers still hold: it was received while recording."""
        self._last_drain = True
        try:
            self._drain()
        finally:
            self._last_drain = False

    def _close_bag(self) -> None:
        if self._bag_open():
            try:
                self.bag.close()
            except OSError as exc:     # closed anyway (``recover_bag`` reads what it holds)
                self.status(ERROR, f'cannot close the bag: {exc}')
            self._write_accounting(final=True)

    def _close(self) -> None:
        self._close_bag()
        self.release(*(sub for sub in self._subs.values() if sub is not POLLED), self._polled, *self._own_timers)
        self._subs = {}
        self._polled = None
        self._own_timers = []

    def cleanup_node(self) -> None:
        self._close()

    def error_node(self) -> None:
        # the bag is closed (a file is what this node must leave safe), and with it what configure
        # created, as on_error leads to the unconfigured state without a cleanup
        self._close()

    def process_exit(self) -> None:
        # a SIGINT ends the process without a deactivation: the drained readers' last messages
        # first, unless rclpy is shut down already (its handles are gone: InvalidHandle)
        if self.active and self._polled is not None:
            try:
                self._drain_received()
            except RuntimeError as exc:
                print(f'recorder: the last {self.p.poll_period * 1e3:.0f} ms of messages not drained: {exc}',
                      file=sys.stderr)
        self._close_bag()


main = main_for(RecorderNode)

if __name__ == '__main__':
    main()
