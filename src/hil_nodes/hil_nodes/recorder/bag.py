"""rosbag2 (mcap) writing with Foxglove's SDK (``foxglove-sdk``, whose MCAP writer is Foxglove's
Rust ``mcap`` crate), reading and recovery with Foxglove's Python ``mcap`` and ``rosbags`` (no
rosbag2 needed here; lab machines replay the same bags with ``ros2 bag play``).

The file is what rosbag2's mcap storage plugin writes (``rosbag2_storage_mcap/src/mcap_storage.cpp``,
read at ros2/rosbag2 commit 25304dd, rolling of 2024-10-16, the newest snapshot at hand, with no
kilted branch: ``create_topic``, ``write_lock_free``, ``update_metadata``, the writer options of
``open_impl``; ``ros_distro`` as ``sequential_writer.cpp`` sets it): profile ``ros2``; one schema per
message type, named 'pkg/msg/Type', encoding ``ros2msg``, whose data is the full definition text
(each dependency after a line of 80 '=' and 'MSG: pkg/Type', from rosbags' Kilted typestore);
one channel per topic, message encoding ``cdr``, with the metadata ``offered_qos_profiles`` (a
YAML list, one profile per publisher seen, :func:`offered_qos`) and ``topic_type_hash`` (the
type's RIHS01 hash); log time = the recorder's receipt time; no chunk compression, no chunk CRC
and no data-section CRC, a summary CRC (rosbag2's options ``noChunkCRC`` and ``Compression::None``
over the mcap library's defaults); at the close a metadata record 'rosbag2' with
``serialized_metadata``. ``metadata.yaml`` (version 9, ``ros_distro: kilted``,
``type_description_hash`` per topic) lies beside it, so ``ros2 bag play`` replays latched topics
(/tf_static, /robot_description, /hil/mode) as transient local. What foxglove-sdk decides and
cannot be set: publish time = log time (it has no publish time to write), the sequence is a
per-channel count from 1, the header's library field is foxglove's own ('foxglove-sdk-python/...
mcap-rust/...'), and a topic's schema and channel records are written with its first message
(a topic with none is in metadata.yaml, with its count 0, but not in the mcap file).

Cost (bench/bag_writer.py, 3600 messages a second, calibration 0.343 s): a write is one call into
the Rust writer (``BaseChannel.log`` of the channel, which is what ``foxglove.Channel.log`` calls
after its checks for JSON and str messages, skipped here: bytes are all the recorder writes) plus
our counts for metadata.yaml, 0.44 us at p50; with the checkpoints 2.7 ms of CPU per second of
recording, a quarter of Foxglove's pure-Python ``mcap`` writer measured beside it (2.30 us,
11 ms: it builds each record with seven small writes and a dataclass), and a chunk's close
39 us at p50 (its 149 us). The record, the chunk and its message index are built in Rust, on
the calling thread (the SDK starts no thread for an MCAP file, and ``log`` keeps the GIL: no
thread switch). One ``foxglove.Context`` per bag: channels are the context's, so two bags of
one process never share one.

Crash safety: the writer appends only (``disable_seeking``: a chunk is built in memory and
written whole when it closes; with seeking the Rust writer would stream a chunk into the file
under a placeholder header and patch it at the close, so a kill would leave a chunk no reader
can delimit), and a killed run leaves a prefix of the file it would have written. A closed chunk
of ``CHUNK_BYTES`` is larger than the writer's 8 KiB file buffer, so it goes to the OS at once;
its message index waits in that buffer until the next chunk or ``CheckpointWriter.flush()``,
which calls ``MCAPWriter.flush()``: the Rust writer's ``flush`` closes the pending chunk
(``finish_chunk``: the chunk and its message indexes written) and flushes the buffer to the OS
(no fsync: a kill of the process loses nothing flushed, a power cut may). The recorder calls it
at every checkpoint, before ``rewrite_metadata()``. A run killed at any moment leaves a file
without summary and footer, which ``hil_nodes.recorder.bag_recovery.recover_bag`` makes readable
up to its last complete chunk.

Errors: ``Channel.log`` returns nothing and the SDK only logs a write that failed (a chunk that
could not be written: a full disk), after which its writer refuses every record; the failure
shows at the next ``flush`` (the next checkpoint), raised here as ``OSError``, and every later
``write`` raises ``OSError`` too, so the recorder counts what it could not write.
"""
from __future__ import annotations

import functools
import json
import pathlib
from collections import defaultdict
from typing import Any, Iterator, NamedTuple

import foxglove
import yaml
from foxglove.mcap import MCAPWriteOptions
from rosbags.interfaces import Qos, QosDurability, QosHistory, QosLiveliness, QosReliability, QosTime
from rosbags.rosbag2 import Reader
from rosbags.rosbag2.metadata import dump_qos_v9
from rosbags.typesys import Stores, get_typestore

from hil_nodes.topics import at_root, namespace, strip_namespace

ROS_DISTRO = 'kilted'                  # the distribution of the typestore and of the lab's rosbag2
PROFILE = 'ros2'
_TYPESTORE = None


def typestore():
    """The ROS 2 Kilted typestore (standard message definitions) of rosbags."""
    global _TYPESTORE
    if _TYPESTORE is None:
        _TYPESTORE = get_typestore(Stores.ROS2_KILTED)
    return _TYPESTORE


# mcap chunk size: the writer closes a chunk (its records and its message index written) at the
# first write after it grew past this, inside that write. At 64 KiB the 400 Hz graph closes 9
# chunks a second, 39 us each at p50 (bench/bag_writer.py). The stall of a close grows with the
# chunk and the CPU per second does not change (the bench's frames, thread CPU: 16 KiB 36 closes
# a second of 22 us, 64 KiB 9 of 38 us, 256 KiB 3 of 94 us, the same CPU per second within 5 %).
# The writer keeps an index entry per chunk for the summary until the close.
CHUNK_BYTES = 2**16


class Topic(NamedTuple):
    """A recorded topic: its channel id and what rosbag2's metadata says of it. The id is the
    file's channel id in a bag read back; a ``CheckpointWriter`` numbers its topics in the order
    of ``add_topic`` (the file's ids are foxglove's, given at a topic's first message)."""
    id: int
    topic: str
    msgtype: str
    offered_qos_profiles: list      # v9 form (dicts), as in metadata.yaml
    type_hash: str                  # RIHS01_...


def _write_options(chunk_bytes: int) -> MCAPWriteOptions:
    """foxglove-sdk's writer options: rosbag2's (no compression, no chunk CRC, no data-section
    CRC), append only (``disable_seeking``: see the module's crash safety)."""
    return MCAPWriteOptions(compression=None, profile=PROFILE, chunk_size=int(chunk_bytes),
                            calculate_chunk_crcs=False, calculate_data_section_crc=False, disable_seeking=True)


@functools.lru_cache(maxsize=None)
def _definition(msgtype: str) -> tuple[bytes, str]:
    """(ros2msg definition text, RIHS01 hash) of a type of the typestore."""
    store = typestore()
    text, _ = store.generate_msgdef(msgtype, ros_version=2)
    return text.encode(), store.hash_rihs01(msgtype)


class _Refused(dict):
    """The per-topic log functions of a bag that takes no more messages: every topic raises."""

    def __init__(self, error: Exception):
        super().__init__()
        self.error = error

    def __missing__(self, topic):
        raise self.error


class CheckpointWriter:
    """A rosbag2 (mcap) writer that can be made readable at any moment (``checkpoint``)."""

    def __init__(self, path: str | pathlib.Path, chunk_bytes: int = CHUNK_BYTES):
        self.path = pathlib.Path(path)
        self.chunk_bytes = int(chunk_bytes)
        self.path.mkdir(parents=True)            # a new directory: an existing bag is never overwritten
        self.mcap = self.path / f'{self.path.name}.mcap'
        self.context = foxglove.Context()        # this bag's channels only
        try:
            self.writer = foxglove.open_mcap(self.mcap, allow_overwrite=False, context=self.context,
                                             writer_options=_write_options(self.chunk_bytes))
        except RuntimeError as exc:              # foxglove's errors (FoxgloveError) are RuntimeErrors
            raise OSError(f'cannot create {self.mcap}: {exc}') from exc
        self.connections: dict[str, Topic] = {}
        self._channels: dict[str, foxglove.Channel] = {}
        self._log: dict = {}                      # topic -> the log function of its channel
        self._counts: dict[str, int] = {}
        self._start, self._end = 2**63 - 1, 0
        self.closed = False
        self.failed = False                      # the writer failed: nothing more reaches the file

    def add_topic(self, topic: str, msgtype: str, offered_qos_profiles=()) -> None:
        """``msgtype`` like 'sensor_msgs/msg/JointState'; ``offered_qos_profiles``: rosbags
        ``Qos`` of the topic's publishers (:func:`offered_qos`)."""
        if self.closed:
            raise ValueError('the bag is closed')
        if topic in self.connections:
            return
        definition, type_hash = _definition(msgtype)
        qos = dump_qos_v9(list(offered_qos_profiles))
        channel = foxglove.Channel(
            topic, message_encoding='cdr', context=self.context,
            schema=foxglove.Schema(name=msgtype, encoding='ros2msg', data=definition),
            metadata={'offered_qos_profiles': yaml.safe_dump(qos, sort_keys=False, default_flow_style=False),
                      'topic_type_hash': type_hash})
        self.connections[topic] = Topic(len(self.connections) + 1, topic, msgtype, qos, type_hash)
        self._channels[topic] = channel
        self._log[topic] = channel.base.log         # log(bytes, log_time ns)
        self._counts[topic] = 0

    def write(self, topic: str, timestamp_ns: int, data: bytes) -> None:
        """``data``: the CDR bytes (a bytes-like object: the Rust side takes ``bytes`` only, any
        other, such as rosbags' ``serialize_cdr`` memoryview, is copied first)."""
        t = int(timestamp_ns)
        log = self._log[topic]
        try:
            log(data, t)
        except TypeError:
            log(bytes(data), t)
        self._counts[topic] += 1
        if t < self._start:
            self._start = t
        if t > self._end:
            self._end = t

    def counts(self) -> dict[str, int]:
        return dict(self._counts)

    def checkpoint(self) -> None:
        """Close the pending chunk, flush to the OS, rewrite metadata.yaml."""
        self.flush()
        self.rewrite_metadata()

    def flush(self) -> None:
        """Close the pending chunk and flush the file to the OS (the first step of a checkpoint)."""
        if not self.closed:
            try:
                self.writer.flush()
            except RuntimeError as exc:
                raise self._failed(exc) from exc

    def _failed(self, exc: Exception) -> OSError:
        """The writer failed (a write of the file did): every later write raises."""
        error = OSError(f'cannot write {self.mcap}: {exc}')
        self._log = _Refused(error)
        self.failed = True
        return error

    def rewrite_metadata(self) -> None:
        """Rewrite metadata.yaml for what was flushed (the second step of a checkpoint); after a
        failed flush the last one stays (``recover_bag`` rewrites it from what the file holds)."""
        if not (self.closed or self.failed):
            write_yaml(self.path / 'metadata.yaml', {'rosbag2_bagfile_information': self._info()})

    def _info(self) -> dict:
        counts = {c.id: self._counts[t] for t, c in self.connections.items()}
        return bag_info(self.mcap.name, self.connections.values(), counts, self._start, self._end)

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        self._log = _Refused(ValueError('the bag is closed'))
        info = self._info()
        error = None
        try:
            self.writer.write_metadata('rosbag2', {'serialized_metadata': json.dumps(info, separators=(',', ':'))})
        except RuntimeError as exc:
            error = exc
        try:            # always: a writer left open is closed when collected, and one that fails
            self.writer.close()        # then (at the interpreter's exit) makes the SDK panic
        except RuntimeError as exc:
            error = error or exc
        for channel in self._channels.values():
            channel.close()
        if error is not None:
            raise OSError(f'cannot write {self.mcap}: {error}') from error
        write_yaml(self.path / 'metadata.yaml', {'rosbag2_bagfile_information': info})


def bag_info(file_name: str, topics, counts: dict[int, int], start: int, end: int) -> dict:
    """rosbag2's BagMetadata (version 9) of one mcap file, as in metadata.yaml. Topics by name:
    the writer's and the file's numbering differ (``Topic``), the yaml of a bag is the same
    whether the writer wrote it or it was rebuilt from the file."""
    total = sum(counts.values())
    if not total:
        start = end = 0
    duration = {'nanoseconds': max(0, end - start)}
    return {
        'version': 9, 'storage_identifier': 'mcap', 'relative_file_paths': [file_name],
        'duration': duration, 'starting_time': {'nanoseconds_since_epoch': start}, 'message_count': total,
        'topics_with_message_count': [
            {'topic_metadata': {'name': t.topic, 'type': t.msgtype, 'serialization_format': 'cdr',
                                'offered_qos_profiles': t.offered_qos_profiles, 'type_description_hash': t.type_hash},
             'message_count': counts.get(t.id, 0)} for t in sorted(topics, key=lambda t: t.topic)],
        'compression_format': '', 'compression_mode': '',
        'files': [{'path': file_name, 'starting_time': {'nanoseconds_since_epoch': start}, 'duration': duration,
                   'message_count': total}],
        'custom_data': None, 'ros_distro': ROS_DISTRO,
    }


def write_yaml(target: pathlib.Path, data) -> None:
    """Replace ``target`` atomically (a reader never sees half a file). Written as JSON, which is
    YAML 1.2 (rosbag2's yaml-cpp, rosbags and yaml.safe_load read it): 0.5 ms per checkpoint where
    PyYAML took 4-5 ms even with libyaml's emitter, a stall of the executor that runs the
    recorder (in the one-process container, every node's) once per checkpoint."""
    tmp = target.with_name(target.name + '.tmp')
    tmp.write_text(json.dumps(data, separators=(',', ':')))       # compact: 5x faster than indent=1
    tmp.replace(target)


def _qos_time(duration) -> QosTime:
    ns = int(duration.nanoseconds)
    return QosTime(ns // 1_000_000_000, ns % 1_000_000_000)


def offered_qos(endpoint_infos) -> list:
    """rosbags ``Qos`` of each publisher (rclpy ``TopicEndpointInfo``, as returned by
    ``get_publishers_info_by_topic``), for metadata.yaml's ``offered_qos_profiles``."""
    out = []
    for info in endpoint_infos:
        p = info.qos_profile
        out.append(Qos(QosHistory[p.history.name], int(p.depth), QosReliability[p.reliability.name],
                       QosDurability[p.durability.name], _qos_time(p.deadline), _qos_time(p.lifespan),
                       QosLiveliness[p.liveliness.name], _qos_time(p.liveliness_lease_duration),
                       bool(p.avoid_ros_namespace_conventions)))
    return out


def write_accounting(path: str | pathlib.Path, data: dict) -> None:
    """Write ``accounting.yaml`` (the recorder's per-topic counts) into a bag directory."""
    write_yaml(pathlib.Path(path) / 'accounting.yaml', data)


def bag_namespace(path: str | pathlib.Path) -> str:
    """The namespace of the run a bag recorded ('' = the root): ``namespace`` of the run manifest
    ``hil_run.yaml`` (written by `hil run`), else of the recorder's ``accounting.yaml`` (a bag of
    ``ros2 launch``), else the root."""
    for name in ('hil_run.yaml', 'accounting.yaml'):
        file = pathlib.Path(path) / name
        try:
            data = yaml.safe_load(file.read_text()) if file.is_file() else None
        except (OSError, yaml.YAMLError):
            data = None
        if isinstance(data, dict) and 'namespace' in data:
            return namespace(data.get('namespace'))
    return ''


def read_accounting(path: str | pathlib.Path) -> dict:
    """The recorder's ``accounting.yaml`` of a bag ({} without one), its topics by their names at
    the root (``topics.strip_namespace``), as the report and the accounting key them."""
    file = pathlib.Path(path) / 'accounting.yaml'
    data = (yaml.safe_load(file.read_text()) if file.exists() else None) or {}
    ns = bag_namespace(path)
    if ns and isinstance(data.get('topics'), dict):
        data['topics'] = {strip_namespace(t, ns): v for t, v in data['topics'].items()}
    return data


def read_messages(path: str | pathlib.Path, topics: list[str] | None = None,
                  start_ns: int | None = None) -> Iterator[tuple[str, int, Any]]:
    """Yield (topic, bag timestamp ns, deserialized message) in time order (rosbags' Reader). Topics
    are named as at the root: a bag of a run under a namespace (``bag_namespace``) has
    ``/rig_a/ft_sensor/wrench``, read as ``/ft_sensor/wrench``; ``topics`` picks by those names
    (a relative one, ``topics.FT_WRENCH``, as at the root too). ``start_ns``: only the messages
    from that bag time on (the earlier ones are not deserialized: rosbags' pure-Python CDR
    reading is most of the cost)."""
    store = typestore()
    ns = bag_namespace(path)
    wanted = None if topics is None else {at_root(t) for t in topics}
    with Reader(pathlib.Path(path)) as reader:
        names = {c.id: strip_namespace(c.topic, ns) for c in reader.connections}
        conns = [c for c in reader.connections if wanted is None or names[c.id] in wanted]
        if not conns:       # (rosbags reads every connection when given none)
            return
        for conn, timestamp, raw in reader.messages(connections=conns, start=start_ns):
            yield names[conn.id], timestamp, store.deserialize_cdr(raw, conn.msgtype)


def message_counts(path: str | pathlib.Path) -> dict[str, int]:
    """Messages per topic (named as at the root, as ``read_messages``)."""
    counts: dict[str, int] = defaultdict(int)
    ns = bag_namespace(path)
    with Reader(pathlib.Path(path)) as reader:
        for conn, _, _ in reader.messages():
            counts[strip_namespace(conn.topic, ns)] += 1
    return dict(counts)
