"""hil_nodes.recorder.bag.CheckpointWriter writes rosbag2 mcap with foxglove-sdk's MCAP writer.

* A bag reads the same with rosbags' Reader (``read_messages``) and with the ``mcap`` reader and
  ``mcap_ros2``'s decoder: the same messages, bytes and decoded fields, in the same order (ties
  and out-of-order receipt times across topics included), equal to what was written.
* Every channel carries ``topic_type_hash`` equal to the RIHS01 hash that rosidl generated for the
  type (share/<pkg>/msg/<Type>.json of the installed messages, the hash a publisher advertises) and
  to rosbags' (each type the systems record), and ``offered_qos_profiles``; a latched topic's
  transient-local profile survives in metadata.yaml, also after a recovery.
* metadata.yaml: version 9, ``ros_distro: kilted``, per-topic counts, start and duration counted
  here, after a checkpoint and after the close; the mcap's 'rosbag2' metadata record says the same.
* A killed run: a bag cut at any of several byte offsets of its file is recovered with exactly the
  messages of the chunks complete before the cut (the chunk boundaries of the finished file are
  the oracle); a snapshot of the file taken while writing is a prefix of the finished file and
  recovers at least everything up to the last checkpoint.
"""
import dataclasses
import json
import os
import pathlib
import shutil
import sys

import numpy as np
import pytest
import yaml
from bag_samples import sample
from mcap.data_stream import ReadDataStream
from mcap.reader import make_reader
from mcap.records import Chunk, Message
from mcap.stream_reader import breakup_chunk
from mcap_ros2.decoder import DecoderFactory
from rosbags.interfaces import Qos, QosDurability, QosHistory, QosLiveliness, QosReliability, QosTime
from rosbags.rosbag2 import Reader

from hil_nodes.recorder.bag import CheckpointWriter, message_counts, read_messages, typestore
from hil_nodes.recorder.bag_recovery import recover_bag

TOPICS = {'/ft_sensor/wrench': 'geometry_msgs/msg/WrenchStamped', '/joint_states': 'sensor_msgs/msg/JointState',
          '/hil/mode': 'std_msgs/msg/String', '/tf_static': 'tf2_msgs/msg/TFMessage'}
# the types of the topics the systems record (config/systems/*.yaml record_topics, types in topics.py)
RECORDED_TYPES = ['sensor_msgs/msg/JointState', 'tf2_msgs/msg/TFMessage', 'std_msgs/msg/String',
                  'trajectory_msgs/msg/JointTrajectory', 'geometry_msgs/msg/WrenchStamped',
                  'geometry_msgs/msg/PoseStamped', 'diagnostic_msgs/msg/DiagnosticArray',
                  'std_msgs/msg/Float64MultiArray', 'nav_msgs/msg/Odometry']
_ZERO = QosTime(0, 0)
LATCHED = Qos(QosHistory.KEEP_LAST, 1, QosReliability.RELIABLE, QosDurability.TRANSIENT_LOCAL, _ZERO, _ZERO,
              QosLiveliness.AUTOMATIC, _ZERO, False)
VOLATILE = Qos(QosHistory.KEEP_LAST, 10, QosReliability.BEST_EFFORT, QosDurability.VOLATILE, _ZERO, _ZERO,
               QosLiveliness.AUTOMATIC, _ZERO, False)
T0 = 1_795_000_000_000_000_000


def rosidl_hash(msgtype: str) -> str:
    """The RIHS01 hash rosidl generated for a type (the type description JSON installed with the
    messages: the venv's share/ here, /opt/ros/kilted/share on a lab machine)."""
    pkg, _, name = msgtype.split('/')
    prefixes = [*os.environ.get('AMENT_PREFIX_PATH', '').split(os.pathsep), sys.prefix]
    for prefix in filter(None, prefixes):
        path = pathlib.Path(prefix) / 'share' / pkg / 'msg' / f'{name}.json'
        if path.exists():
            hashes = json.loads(path.read_text())['type_hashes']
            return next(h['hash_string'] for h in hashes if h['type_name'] == msgtype)
    raise FileNotFoundError(f'no type description of {msgtype} under {prefixes}')


def messages():
    """(topic, receipt time, CDR) in recording order: F/T at 1600 Hz, joint states at 400 Hz
    received out of order with the F/T stream (stamped 0.3 ms earlier) and on ties, a mode string."""
    store = typestore()
    T = store.types
    cdr = lambda msg, topic: bytes(store.serialize_cdr(msg, TOPICS[topic]))          # noqa: E731
    out = [('/tf_static', T0, cdr(T['tf2_msgs/msg/TFMessage'](transforms=[]), '/tf_static')),
           ('/hil/mode', T0, cdr(T['std_msgs/msg/String'](data='RUNNING'), '/hil/mode'))]
    header = T['std_msgs/msg/Header']
    stamp = T['builtin_interfaces/msg/Time']
    vec = T['geometry_msgs/msg/Vector3']
    for k in range(6000):
        t = T0 + 625_000 * (k + 1)
        h = header(stamp=stamp(sec=t // 10**9, nanosec=t % 10**9), frame_id='ft_sensor')
        w = T['geometry_msgs/msg/WrenchStamped'](header=h, wrench=T['geometry_msgs/msg/Wrench'](
            force=vec(x=float(k), y=-0.5 * k, z=1e-3 * k), torque=vec(x=0.0, y=0.0, z=float(k % 7))))
        out.append(('/ft_sensor/wrench', t, cdr(w, '/ft_sensor/wrench')))
        if k % 4 == 3:
            js = T['sensor_msgs/msg/JointState'](header=h, name=[f'j{i}' for i in range(6)],
                                                 position=np.arange(6, dtype=np.float64) * k * 1e-4,
                                                 velocity=np.zeros(6), effort=np.ones(6))
            tie = k % 8 == 3                                   # the same receipt time as the wrench
            out.append(('/joint_states', t if tie else t - 300_000, cdr(js, '/joint_states')))
        if k == 3000:
            out.append(('/hil/mode', t, cdr(T['std_msgs/msg/String'](data='RETURNING_HOME'), '/hil/mode')))
    return out


QOS = {'/tf_static': [LATCHED], '/hil/mode': [LATCHED, VOLATILE]}


def write_bag(path, msgs, chunk_bytes=None, checkpoint_at=(), snapshot_at=None, snapshot=None):
    kwargs = {} if chunk_bytes is None else {'chunk_bytes': chunk_bytes}
    bag = CheckpointWriter(path, **kwargs)
    for topic, msgtype in TOPICS.items():
        bag.add_topic(topic, msgtype, QOS.get(topic, [VOLATILE]))
    for i, (topic, t, data) in enumerate(msgs):
        if i in checkpoint_at:
            bag.checkpoint()
        if i == snapshot_at:                    # what the OS has of a run killed now
            shutil.copytree(path, snapshot)
        bag.write(topic, t, data)
    bag.close()
    return bag


def plain(value):
    """A message (rosbags dataclass or mcap_ros2 slotted object) as nested plain values."""
    if dataclasses.is_dataclass(value):              # rosbags: 'pkg/msg/Type' in __msgtype__
        return {'type': value.__msgtype__.replace('/msg/', '/'),
                **{f.name: plain(getattr(value, f.name)) for f in dataclasses.fields(value) if f.name != '__msgtype__'}}
    if hasattr(value, '__slots__') and hasattr(value, '_type'):     # mcap_ros2: 'pkg/Type' in _type
        return {'type': value._type, **{name: plain(getattr(value, name)) for name in value.__slots__}}
    if isinstance(value, np.ndarray):
        return [plain(v) for v in value.tolist()]
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, (bytes, bytearray)):
        return list(value)
    return value


def read_mcap(path):
    """(topic, log time, bytes, decoded) of every message, with the mcap reader in log-time order."""
    mcap = next(pathlib.Path(path).glob('*.mcap'))
    with mcap.open('rb') as fh:
        reader = make_reader(fh, decoder_factories=[DecoderFactory()])
        return [(ch.topic, m.log_time, m.data, decoded) for _, ch, m, decoded in reader.iter_decoded_messages()]


def read_rosbags_raw(path):
    with Reader(pathlib.Path(path)) as reader:
        return [(c.topic, t, bytes(raw)) for c, t, raw in reader.messages()]


def summary(path):
    with next(pathlib.Path(path).glob('*.mcap')).open('rb') as fh:
        return make_reader(fh).get_summary()


def chunks(mcap: pathlib.Path):
    """[(end offset of the chunk record, its messages as (topic, time, bytes))] of a finished file."""
    with mcap.open('rb') as fh:
        s = make_reader(fh).get_summary()
        out = []
        for index in s.chunk_indexes:
            fh.seek(index.chunk_start_offset + 9)                       # past opcode and length
            chunk = Chunk.read(ReadDataStream(fh))
            out.append((index.chunk_start_offset + index.chunk_length,
                        [(s.channels[r.channel_id].topic, r.log_time, r.data) for r in breakup_chunk(chunk)
                         if isinstance(r, Message)]))
        return out


def meta(path):
    return yaml.safe_load((pathlib.Path(path) / 'metadata.yaml').read_text())['rosbag2_bagfile_information']


def test_a_bag_reads_the_same_with_rosbags_and_mcap(tmp_path):
    msgs = messages()
    write_bag(tmp_path / 'bag', msgs, checkpoint_at=(1, 2, 5000))
    assert len(summary(tmp_path / 'bag').chunk_indexes) > 3
    by_rosbags = list(read_messages(tmp_path / 'bag'))
    raw = read_rosbags_raw(tmp_path / 'bag')
    by_mcap = read_mcap(tmp_path / 'bag')
    assert len(by_rosbags) == len(raw) == len(by_mcap) == len(msgs)
    assert [(topic, t) for topic, t, _ in by_rosbags] == [(topic, t) for topic, t, _, _ in by_mcap]
    assert raw == [(topic, t, data) for topic, t, data, _ in by_mcap]
    for (_, _, a), (_, _, _, b) in zip(by_rosbags, by_mcap):
        assert plain(a) == plain(b)
    # what was written, in time order (a stable sort: ties keep their recording order)
    assert raw == sorted(msgs, key=lambda m: m[1])
    forces = [m.wrench.force.x for _, _, m in read_messages(tmp_path / 'bag', ['/ft_sensor/wrench'])]
    assert forces == [float(k) for k in range(6000)]
    # from a bag time on: exactly the messages at or after it
    start = sorted(t for _, t, _ in raw)[len(raw) // 2]
    later = list(read_messages(tmp_path / 'bag', start_ns=start))
    assert [(topic, t) for topic, t, _ in later] == [(topic, t) for topic, t, _ in by_rosbags if t >= start]


def test_channels_carry_the_type_hash_and_the_offered_qos(tmp_path):
    bag = CheckpointWriter(tmp_path / 'bag')
    for k, msgtype in enumerate(RECORDED_TYPES):
        bag.add_topic(f'/topic_{k}', msgtype, [LATCHED] if k == 0 else [VOLATILE, LATCHED])
        bag.write(f'/topic_{k}', T0 + k, sample(msgtype, k))     # (a channel is written with its first message)
    bag.close()
    store = typestore()
    with next((tmp_path / 'bag').glob('*.mcap')).open('rb') as fh:
        reader = make_reader(fh)
        assert reader.get_header().profile == 'ros2'
        s = reader.get_summary()
    assert len(s.channels) == len(RECORDED_TYPES)
    for channel in s.channels.values():
        msgtype = RECORDED_TYPES[int(channel.topic.split('_')[-1])]
        schema = s.schemas[channel.schema_id]
        assert (schema.name, schema.encoding, channel.message_encoding) == (msgtype, 'ros2msg', 'cdr')
        assert channel.metadata['topic_type_hash'] == rosidl_hash(msgtype) == store.hash_rihs01(msgtype)
        durability = [p['durability'] for p in yaml.safe_load(channel.metadata['offered_qos_profiles'])]
        assert durability == (['transient_local'] if channel.topic == '/topic_0' else ['volatile', 'transient_local'])
    # the definition text of rosbag2's schemas: the type, then each dependency after a separator
    js = next(s.schemas[c.schema_id] for c in s.channels.values() if c.topic == '/topic_0').data.decode()
    assert js.startswith('std_msgs/Header header\n') and '=' * 80 + '\nMSG: std_msgs/Header\n' in js
    assert '=' * 80 + '\nMSG: builtin_interfaces/Time\nint32 sec\nuint32 nanosec\n' in js


def check_metadata(info, written):
    """metadata.yaml's content for the messages ``written``, counted here."""
    counts = {topic: sum(1 for m in written if m[0] == topic) for topic in TOPICS}
    times = [t for _, t, _ in written]
    assert info['version'] == 9 and info['ros_distro'] == 'kilted' and info['storage_identifier'] == 'mcap'
    assert info['message_count'] == len(written) == info['files'][0]['message_count']
    assert info['starting_time']['nanoseconds_since_epoch'] == min(times)
    assert info['duration']['nanoseconds'] == max(times) - min(times)
    topics = {e['topic_metadata']['name']: e for e in info['topics_with_message_count']}
    assert {name: e['message_count'] for name, e in topics.items()} == counts
    for name, e in topics.items():
        assert e['topic_metadata']['type'] == TOPICS[name]
        assert e['topic_metadata']['type_description_hash'] == rosidl_hash(TOPICS[name])
    durability = {name: [p['durability'] for p in e['topic_metadata']['offered_qos_profiles']]
                  for name, e in topics.items()}
    assert durability['/tf_static'] == ['transient_local']
    assert durability['/hil/mode'] == ['transient_local', 'volatile']
    return counts


def test_metadata_says_kilted_and_counts_what_was_written(tmp_path):
    msgs = messages()
    bag = CheckpointWriter(tmp_path / 'bag')
    for topic, msgtype in TOPICS.items():
        bag.add_topic(topic, msgtype, QOS.get(topic, [VOLATILE]))
    for topic, t, data in msgs[:4000]:
        bag.write(topic, t, data)
    bag.checkpoint()
    assert bag.counts() == check_metadata(meta(tmp_path / 'bag'), msgs[:4000])
    for topic, t, data in msgs[4000:]:
        bag.write(topic, t, data)
    bag.close()
    check_metadata(meta(tmp_path / 'bag'), msgs)
    with next((tmp_path / 'bag').glob('*.mcap')).open('rb') as fh:
        records = [r for r in make_reader(fh).iter_metadata() if r.name == 'rosbag2']
    assert len(records) == 1 and yaml.safe_load(records[0].metadata['serialized_metadata']) == meta(tmp_path / 'bag')
    with Reader(tmp_path / 'bag') as reader:
        assert reader.message_count == len(msgs)
        qos = {c.topic: [p.durability for p in c.ext.offered_qos_profiles] for c in reader.connections}
        assert qos['/tf_static'] == [QosDurability.TRANSIENT_LOCAL]
    with pytest.raises(ValueError):
        bag.write('/hil/mode', T0, msgs[1][2])        # closed: an error the recorder counts


@pytest.mark.parametrize('chunk_bytes', [4096, None])
def test_a_cut_bag_recovers_the_messages_of_its_complete_chunks(tmp_path, chunk_bytes):
    msgs = messages()
    write_bag(tmp_path / 'bag', msgs, chunk_bytes=chunk_bytes, checkpoint_at=(2, 3000))
    mcap = tmp_path / 'bag' / 'bag.mcap'
    data = mcap.read_bytes()
    extents = chunks(mcap)
    assert len(extents) > 3 and sum(len(m) for _, m in extents) == len(msgs)
    ends = [end for end, _ in extents]
    data_end = summary(tmp_path / 'bag').chunk_indexes[-1].chunk_start_offset   # (inside the last chunk)
    cuts = [4, 30, ends[0] - 1, ends[0], ends[0] + 20, ends[1] + 1, (ends[1] + ends[2]) // 2, ends[2], data_end,
            ends[-1], len(data) - 40]
    assert cuts == sorted(cuts)
    for cut in cuts:
        bag = tmp_path / f'cut_{cut}'
        shutil.copytree(tmp_path / 'bag', bag)
        (bag / 'bag.mcap').write_bytes(data[:cut])
        (bag / 'metadata.yaml').unlink()
        assert recover_bag(bag) is True
        expected = [m for end, ms in extents if end <= cut for m in ms]
        key = lambda m: (m[1], m[0], m[2])                            # noqa: E731
        assert sorted(read_rosbags_raw(bag), key=key) == sorted(expected, key=key), cut
        assert sorted(((t, tm, d) for t, tm, d, _ in read_mcap(bag)), key=key) == sorted(expected, key=key)
        counts = {topic: n for topic, n in ((t, sum(1 for m in expected if m[0] == t)) for t in TOPICS) if n}
        assert message_counts(bag) == counts
        info = meta(bag)
        assert info['message_count'] == len(expected) and info['ros_distro'] == 'kilted'
        if '/tf_static' in counts:                      # the latched profile survives the recovery
            tf = next(e for e in info['topics_with_message_count'] if e['topic_metadata']['name'] == '/tf_static')
            assert [p['durability'] for p in tf['topic_metadata']['offered_qos_profiles']] == ['transient_local']
            assert tf['topic_metadata']['type_description_hash'] == rosidl_hash(TOPICS['/tf_static'])
        assert recover_bag(bag) is False                # repaired: a finished file
    assert recover_bag(tmp_path / 'bag') is False


def test_a_snapshot_of_a_running_bag_recovers_up_to_its_last_checkpoint(tmp_path):
    msgs = messages()
    write_bag(tmp_path / 'bag', msgs, checkpoint_at=(2, 4000), snapshot_at=5500, snapshot=tmp_path / 'killed')
    final = (tmp_path / 'bag' / 'bag.mcap').read_bytes()
    killed = (tmp_path / 'killed' / 'bag.mcap').read_bytes()
    assert final.startswith(killed)                     # the writer only appends: a kill leaves a prefix
    assert meta(tmp_path / 'killed')['message_count'] == 4000        # the checkpoint's metadata
    assert recover_bag(tmp_path / 'killed') is True
    recovered = read_rosbags_raw(tmp_path / 'killed')
    expected = [m for end, ms in chunks(tmp_path / 'bag' / 'bag.mcap') if end <= len(killed) for m in ms]
    assert len(recovered) == len(expected) and 4000 <= len(recovered) < 5500
    key = lambda m: (m[1], m[0], m[2])                                # noqa: E731
    assert sorted(recovered, key=key) == sorted(msgs[:len(recovered)], key=key)
    assert meta(tmp_path / 'killed')['message_count'] == len(recovered)


def test_a_finished_bag_without_metadata_gets_it_back(tmp_path):
    msgs = messages()[:500]
    write_bag(tmp_path / 'bag', msgs)
    before = meta(tmp_path / 'bag')
    (tmp_path / 'bag' / 'metadata.yaml').unlink()
    assert recover_bag(tmp_path / 'bag') is True
    assert meta(tmp_path / 'bag') == before
