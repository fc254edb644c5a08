"""A bag left by a killed recorder made readable again, and metadata.yaml rebuilt from an mcap file
(the writing side is ``hil_nodes.recorder.bag``).

A run killed at any moment leaves an mcap file without summary and footer (the writer appends
only: a prefix of the file it would have written). :func:`recover_bag` copies every record up to
the first incomplete one into a new, indexed file through Foxglove's Python ``mcap`` writer
(chunks re-cut, indexes and summary rebuilt, the 'rosbag2' metadata record added), as the
``mcap recover`` command of Foxglove's CLI does (go/cli/mcap/cmd/recover.go): the Python package
reads records (``StreamReader``) but has no recovery of its own, so that loop is written here.
"""
from __future__ import annotations

import json
import os
import pathlib
import struct
from collections import defaultdict
from typing import Iterator

import yaml
from mcap.exceptions import McapError
from mcap.reader import make_reader
from mcap.records import Channel, Header, Message, Schema
from mcap.stream_reader import StreamReader
from mcap.writer import LIBRARY_IDENTIFIER, CompressionType, Writer

from hil_nodes.recorder.bag import CHUNK_BYTES, PROFILE, Topic, bag_info, typestore, write_yaml

LIBRARY = f'hil_nodes.recorder; {LIBRARY_IDENTIFIER}'       # a recovered file that had no header


def _new_writer(stream, chunk_bytes: int) -> Writer:
    """A Python mcap writer with rosbag2's storage defaults (no compression, no chunk CRC): the
    recovery's, which copies each message's publish time and sequence as they were."""
    return Writer(stream, chunk_size=int(chunk_bytes), compression=CompressionType.NONE, enable_crcs=False)


def _topic(channel: Channel, schema: Schema | None) -> Topic:
    """A Topic from an mcap channel (a bag of an older writer has no ``topic_type_hash``: the
    typestore's, if it knows the type)."""
    msgtype = schema.name if schema is not None else ''
    type_hash = channel.metadata.get('topic_type_hash', '')
    if not type_hash and msgtype:
        try:
            type_hash = typestore().hash_rihs01(msgtype)
        except KeyError:
            type_hash = ''
    qos = yaml.safe_load(channel.metadata.get('offered_qos_profiles', '') or '[]') or []
    return Topic(channel.id, channel.topic, msgtype, qos if isinstance(qos, list) else [], type_hash)


def _mcap_file(path: pathlib.Path) -> pathlib.Path:
    files = sorted(path.glob('*.mcap'))
    if not files:
        raise FileNotFoundError(f'no .mcap file in {path}')
    return files[0]


def _summary(mcap: pathlib.Path):
    """The summary section of a finished mcap file, None if the file has no valid footer."""
    with mcap.open('rb') as fh:
        try:
            return make_reader(fh).get_summary()
        except (McapError, struct.error, ValueError, OSError):
            return None


def recover_bag(path: str | pathlib.Path) -> bool:
    """Make a bag left by a killed run readable; True if it had to be repaired.

    Every record up to the first incomplete one (the kill's cut) is copied into a new file through
    the mcap writer (chunks re-cut, indexes and summary rebuilt, the 'rosbag2' metadata record
    added) that replaces the old one; metadata.yaml is rewritten from what was recovered. As
    ``mcap recover`` (Foxglove's CLI, go/cli/mcap/cmd/recover.go): the Python package reads
    records (``StreamReader``) but has no recovery of its own."""
    path = pathlib.Path(path)
    mcap = _mcap_file(path)
    if _summary(mcap) is not None:                # a finished file
        if (path / 'metadata.yaml').exists():
            return False
        write_metadata(path)
        return True
    tmp = mcap.with_name(mcap.name + '.recovering')
    with mcap.open('rb') as src, tmp.open('wb') as dst:
        info = _copy_complete_records(src, dst, mcap.name)
    tmp.replace(mcap)
    write_yaml(path / 'metadata.yaml', {'rosbag2_bagfile_information': info})
    return True


def _complete_records(src) -> Iterator:
    """The records of a (possibly cut) mcap file, in file order, up to the first incomplete one
    (the records of a chunk only if the whole chunk is there: the reader reads a chunk whole
    before it yields what is in it)."""
    try:
        yield from StreamReader(src).records
    except (McapError, struct.error, ValueError):   # EndOfFile (a McapError), a cut field, a cut string
        return


def _copy_complete_records(src, dst, file_name: str) -> dict:
    """Write every complete schema, channel and message of ``src`` to ``dst`` (a finished mcap
    file); its rosbag2 metadata."""
    writer = _new_writer(dst, CHUNK_BYTES)
    started = False
    schemas: dict[int, tuple[int, Schema]] = {}      # old id -> (new id, record)
    topics: dict[int, Topic] = {}                    # old channel id -> Topic with the new id
    counts: dict[int, int] = defaultdict(int)
    start, end = 2**63 - 1, 0
    for record in _complete_records(src):
        if isinstance(record, Header):
            writer.start(profile=record.profile or PROFILE, library=record.library or LIBRARY)
            started = True
        elif not started:
            break
        elif isinstance(record, Schema) and record.id not in schemas:
            schemas[record.id] = (writer.register_schema(record.name, record.encoding, record.data), record)
        elif isinstance(record, Channel) and record.id not in topics:
            new_schema, schema = schemas.get(record.schema_id, (0, None))
            cid = writer.register_channel(record.topic, record.message_encoding, new_schema, dict(record.metadata))
            topics[record.id] = _topic(record, schema)._replace(id=cid)
        elif isinstance(record, Message) and record.channel_id in topics:
            cid = topics[record.channel_id].id
            writer.add_message(cid, record.log_time, record.data, record.publish_time, record.sequence)
            counts[cid] += 1
            start, end = min(start, record.log_time), max(end, record.log_time)
    if not started:
        writer.start(profile=PROFILE, library=LIBRARY)
    info = bag_info(file_name, topics.values(), counts, start, end)
    writer.flush()
    writer.add_metadata('rosbag2', {'serialized_metadata': json.dumps(info, separators=(',', ':'))})
    writer.finish()
    dst.flush()
    os.fsync(dst.fileno())
    return info


def write_metadata(path: str | pathlib.Path) -> None:
    """(Re)write metadata.yaml of a bag directory from its (complete) mcap file: the counts and
    times of its summary's statistics (a scan of its messages if it has none)."""
    path = pathlib.Path(path)
    mcap = _mcap_file(path)
    with mcap.open('rb') as fh:
        reader = make_reader(fh)
        summary = reader.get_summary()
        if summary is None:
            raise ValueError(f'{mcap} has no summary: recover_bag() it first')
        topics = [_topic(c, summary.schemas.get(c.schema_id)) for c in summary.channels.values()]
        stats = summary.statistics
        if stats is not None:
            counts, start, end = dict(stats.channel_message_counts), stats.message_start_time, stats.message_end_time
        else:
            counts, start, end = defaultdict(int), 2**63 - 1, 0
            for _, channel, message in reader.iter_messages(log_time_order=False):
                counts[channel.id] += 1
                start, end = min(start, message.log_time), max(end, message.log_time)
    info = bag_info(mcap.name, topics, counts, start, end)
    write_yaml(path / 'metadata.yaml', {'rosbag2_bagfile_information': info})
