"""rosbag2 (mcap) writing and reading with ``rosbags`` (no rosbag2 needed here; lab machines
replay the same bags with ``ros2 bag play``).

Crash safety: ``CheckpointWriter.checkpoint()`` closes the pending mcap chunk, flushes it to
the OS and rewrites ``metadata.yaml``; the recorder calls it periodically. A run killed between
checkpoints leaves a file without mcap footer: ``recover_bag`` truncates it after the last
complete record, appends a footer and rewrites metadata.yaml from a scan, so everything up to
the last flushed chunk can be read again. (The checkpoint uses the mcap storage object of
rosbags' Writer, pinned in constraints.txt.)

Each topic's ``offered_qos_profiles`` (one per publisher seen when the topic was added,
:func:`offered_qos`) go into metadata.yaml, so ``ros2 bag play`` replays latched topics
(/tf_static, /robot_description, /hil/mode) as transient local.
"""
from __future__ import annotations

import itertools
import json
import pathlib
import struct
from collections import defaultdict
from io import BytesIO
from typing import Any, Iterator

from rosbags.rosbag2 import Reader, Writer
from rosbags.interfaces import Qos, QosDurability, QosHistory, QosLiveliness, QosReliability, QosTime
from rosbags.rosbag2.enums import StoragePlugin
from rosbags.rosbag2.metadata import dump_qos_v9
from rosbags.rosbag2.storage_mcap import McapReader, PendingChunk
from rosbags.typesys import Stores, get_typestore

_MAGIC = b'\x89MCAP0\r\n'
_TYPESTORE = None


def typestore():
    """The ROS 2 Kilted typestore (standard message definitions) of rosbags."""
    global _TYPESTORE
    if _TYPESTORE is None:
        _TYPESTORE = get_typestore(Stores.ROS2_KILTED)
    return _TYPESTORE


# mcap chunk size: a chunk is closed (and its index written) when it grows past this. rosbags'
# 1 MiB took 2 ms to close inside a checkpoint in a running graph; a quarter of it closes in the
# recorder's write, which in real time comes after the graph's own deliveries (intra_process).
CHUNK_BYTES = 2**18


def _close_chunk(storage) -> None:
    """rosbags' ``McapWriter.close_chunk`` (same records, same bytes: tested against it), with
    each channel's message index packed at once. rosbags writes it with two Python calls per
    message: 2-7 ms at every checkpoint of a 400 Hz graph (3600 messages per second), long
    enough to make frames late once a second in real time."""
    chunk = storage.chunk
    size = chunk.bio.tell()
    compressed = storage.compressor(chunk.bio.getvalue())
    comp = storage.compression.encode()
    rec = BytesIO()
    rec.write(struct.pack(f'<QQQII{len(comp)}sQ', chunk.message_start_time, chunk.message_end_time, size, 0,
                          len(comp), comp, len(compressed)))
    rec.write(compressed)
    chunk_start = storage.bio.tell()
    _record(storage.bio, 0x06, rec.getbuffer())
    chunk_end = storage.bio.tell()
    offsets = []
    for cid, msgs in chunk.msgs.items():        # message index: (timestamp, offset) per message
        offsets.append((cid, storage.bio.tell()))
        body = struct.pack(f'<HI{2 * len(msgs)}Q', cid, 16 * len(msgs), *itertools.chain.from_iterable(msgs))
        _record(storage.bio, 0x07, body)
    index = BytesIO()
    index.write(struct.pack('<QQQQI', chunk.message_start_time, chunk.message_end_time, chunk_start,
                            chunk_end - chunk_start, 10 * len(offsets)))
    for cid, offset in offsets:
        index.write(struct.pack('<HQ', cid, offset))
    index.write(struct.pack(f'<QI{len(comp)}sQQ', storage.bio.tell() - chunk_end, len(comp), comp,
                            len(compressed), size))
    storage.chunks.append(index)
    storage.chunk = PendingChunk(2**63 - 1, 0, BytesIO(), defaultdict(list))


_MESSAGE = struct.Struct('<BQHIQQ')        # opcode, record length, channel, sequence, log and publish time


def _write_message(writer, connection, timestamp: int, data: bytes) -> None:
    """rosbags' ``Writer.write`` and ``McapWriter.write`` for a connection of this writer: the same
    record, index entry and counts (tested byte for byte). rosbags first looks the connection up
    in a list of dataclasses and builds the record from five small writes: 7 us per message in a
    running graph, 3600 messages a second."""
    storage, cid = writer.storage, connection.id
    chunk = storage.chunk
    storage.message_start_time = min(timestamp, storage.message_start_time)
    storage.message_end_time = max(timestamp, storage.message_end_time)
    storage.channel_stats[cid] += 1
    chunk.message_start_time = min(timestamp, chunk.message_start_time)
    chunk.message_end_time = max(timestamp, chunk.message_end_time)
    bio = chunk.bio
    chunk.msgs[cid].append((timestamp, bio.tell()))
    bio.write(_MESSAGE.pack(0x05, 22 + len(data), cid, 0, timestamp, timestamp))
    bio.write(data)
    if bio.tell() > 2**20:                  # rosbags' own limit (CHUNK_BYTES closes earlier)
        storage.close_chunk()
    writer.counts[cid] += 1
    writer.min_timestamp = min(timestamp, writer.min_timestamp)
    writer.max_timestamp = max(timestamp, writer.max_timestamp)


def _record(bio, op: int, body) -> None:
    bio.write(struct.pack('<BQ', op, len(body)))
    bio.write(body)


class CheckpointWriter:
    """A rosbags Writer (rosbag2 v9, mcap) that can be made readable at any moment."""

    def __init__(self, path: str | pathlib.Path, fast: bool = True, chunk_bytes: int = CHUNK_BYTES):
        self.path = pathlib.Path(path)
        self.chunk_bytes = int(chunk_bytes)
        self.fast = bool(fast)                   # (False: rosbags' own writing, the test oracle)
        self.writer = Writer(self.path, version=9, storage_plugin=StoragePlugin.MCAP)
        self.writer.open()
        if fast:
            storage = self.writer.storage
            storage.close_chunk = lambda: _close_chunk(storage)
        self.connections: dict[str, Any] = {}
        self.closed = False

    def add_topic(self, topic: str, msgtype: str, offered_qos_profiles=()) -> None:
        """``msgtype`` like 'sensor_msgs/msg/JointState'; ``offered_qos_profiles``: rosbags
        ``Qos`` of the topic's publishers (:func:`offered_qos`)."""
        if topic not in self.connections:
            self.connections[topic] = self.writer.add_connection(
                topic, msgtype, typestore=typestore(), offered_qos_profiles=list(offered_qos_profiles))

    def write(self, topic: str, timestamp_ns: int, data: bytes) -> None:
        if self.fast:
            _write_message(self.writer, self.connections[topic], int(timestamp_ns), data)
        else:
            self.writer.write(self.connections[topic], int(timestamp_ns), data)
        storage = self.writer.storage
        if storage.chunk.bio.tell() > self.chunk_bytes:
            storage.close_chunk()

    def counts(self) -> dict[str, int]:
        return {t: self.writer.counts.get(c.id, 0) for t, c in self.connections.items()}

    def checkpoint(self) -> None:
        """Close the pending chunk, flush to the OS, rewrite metadata.yaml."""
        self.flush()
        self.rewrite_metadata()

    def flush(self) -> None:
        """Close the pending chunk and flush the file to the OS (the first step of a checkpoint)."""
        if self.closed:
            return
        storage = self.writer.storage
        if storage.chunk.bio.tell():
            storage.close_chunk()
        storage.bio.flush()

    def rewrite_metadata(self) -> None:
        """Rewrite metadata.yaml for what was flushed (the second step of a checkpoint)."""
        if self.closed:
            return
        w = self.writer
        mcap = _mcap_file(self.path)
        _dump_metadata(self.path, mcap, {c.id: c for c in w.connections}, dict(w.counts),
                       w.min_timestamp, w.max_timestamp, sum(w.counts.values()))

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self.writer.close()


def _scan_records(data: bytes, start: int) -> int:
    """Offset just past the last complete top-level mcap record (before any footer)."""
    pos = start
    good = start
    while pos + 9 <= len(data):
        op = data[pos]
        (length,) = struct.unpack_from('<Q', data, pos + 1)
        end = pos + 9 + length
        if op == 0x02 or end > len(data) or op == 0:
            break
        pos = end
        if op in (0x06, 0x07, 0x03, 0x04, 0x0F):  # chunk, message index, schema, channel, data end
            good = pos
    return good


def _mcap_file(path: pathlib.Path) -> pathlib.Path:
    files = sorted(path.glob('*.mcap'))
    if not files:
        raise FileNotFoundError(f'no .mcap file in {path}')
    return files[0]


def recover_bag(path: str | pathlib.Path) -> bool:
    """Make a bag left by a killed run readable; True if it had to be repaired."""
    path = pathlib.Path(path)
    mcap = _mcap_file(path)
    data = mcap.read_bytes()
    if data.endswith(_MAGIC) and len(data) > 37 and (path / 'metadata.yaml').exists():
        return False
    header_len = 8 + 9 + struct.unpack_from('<Q', data, 9)[0]
    cut = _scan_records(data, header_len)
    footer = b'\x02' + struct.pack('<Q', 20) + struct.pack('<QQI', 0, 0, 0) + _MAGIC
    with mcap.open('r+b') as fh:
        fh.truncate(cut)
        fh.seek(cut)
        fh.write(footer)
    write_metadata(path)
    return True


def write_metadata(path: str | pathlib.Path) -> None:
    """(Re)write metadata.yaml of a bag directory from a scan of its (complete) mcap file."""
    path = pathlib.Path(path)
    mcap = _mcap_file(path)
    counts: dict[int, int] = defaultdict(int)
    start, end, total = 2**63 - 1, 0, 0
    reader = McapReader(mcap)
    reader.open()
    try:
        channels = {c.id: c for c in reader.connections}
        for conn, ts, _ in reader.messages(reader.connections):
            counts[conn.id] += 1
            start, end = min(start, ts), max(end, ts)
            total += 1
    finally:
        reader.close()
    _dump_metadata(path, mcap, channels, counts, start, end, total)


def _dump_metadata(path, mcap, channels, counts, start, end, total) -> None:
    if not total:
        start = end = 0
    info = {
        'version': 9, 'storage_identifier': 'mcap', 'relative_file_paths': [mcap.name],
        'duration': {'nanoseconds': max(0, end - start)},
        'starting_time': {'nanoseconds_since_epoch': start}, 'message_count': total,
        'topics_with_message_count': [
            {'topic_metadata': {'name': c.topic, 'type': c.msgtype, 'serialization_format': 'cdr',
                                'offered_qos_profiles': dump_qos_v9(list(getattr(c.ext, 'offered_qos_profiles', []))),
                                'type_description_hash': c.digest},
             'message_count': counts.get(cid, 0)} for cid, c in sorted(channels.items())],
        'compression_format': '', 'compression_mode': '',
        'files': [{'path': mcap.name, 'starting_time': {'nanoseconds_since_epoch': start},
                   'duration': {'nanoseconds': max(0, end - start)}, 'message_count': total}],
        'custom_data': None, 'ros_distro': 'rosbags',
    }
    _write_yaml(path / 'metadata.yaml', {'rosbag2_bagfile_information': info})


def _write_yaml(target: pathlib.Path, data) -> None:
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
    _write_yaml(pathlib.Path(path) / 'accounting.yaml', data)


def read_messages(path: str | pathlib.Path, topics: list[str] | None = None) -> Iterator[tuple[str, int, Any]]:
    """Yield (topic, bag timestamp ns, deserialized message) in time order."""
    store = typestore()
    with Reader(pathlib.Path(path)) as reader:
        conns = [c for c in reader.connections if topics is None or c.topic in topics]
        for conn, timestamp, raw in reader.messages(connections=conns):
            yield conn.topic, timestamp, store.deserialize_cdr(raw, conn.msgtype)


def message_counts(path: str | pathlib.Path) -> dict[str, int]:
    counts: dict[str, int] = defaultdict(int)
    with Reader(pathlib.Path(path)) as reader:
        for conn, _, _ in reader.messages():
            counts[conn.topic] += 1
    return dict(counts)
