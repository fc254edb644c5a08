"""hil_nodes.recorder.bag.CheckpointWriter on foxglove-sdk's MCAP writer: what the file holds and
what a killed recorder leaves.

* A bag with a message on a topic of each type the systems record reads the same with rosbags
  and with the ``mcap`` reader (bytes, times, decoded fields, equal to what was written); the file
  was written by foxglove-sdk (its header's library), each channel carries ``topic_type_hash`` (the
  RIHS01 hash rosidl generated) and ``offered_qos_profiles``; publish time = log time, sequence a
  per-channel count from 1 (as bag.py says foxglove writes them); a topic without messages is in
  metadata.yaml with 0 and not in the file; metadata.yaml and the 'rosbag2' record count what
  was written.
* Two bags written at once in one process keep their own channels and messages.
* A process SIGKILLed after a checkpoint (the bag neither closed nor flushed again, messages
  written after the checkpoint): its metadata.yaml is the checkpoint's, and ``recover_bag``
  gives back every message up to the checkpoint and what followed only as a prefix of the
  recording.
* A write that fails (the file size limit: a full disk) shows at the next flush as OSError,
  later writes raise OSError, metadata.yaml stays the last good checkpoint's, and the file
  recovers to a prefix of the recording.
"""
import os
import pathlib
import signal
import subprocess
import sys
import textwrap

import pytest
import yaml
from mcap.reader import make_reader
from mcap_ros2.decoder import DecoderFactory
from rosbags.rosbag2 import Reader

from hil_nodes.recorder.bag import CheckpointWriter, message_counts, read_messages, typestore
from hil_nodes.recorder.bag_recovery import recover_bag

from bag_samples import sample
from test_bag_writer import LATCHED, RECORDED_TYPES, T0, VOLATILE, plain, read_rosbags_raw, rosidl_hash


def mcap_file(path) -> pathlib.Path:
    return next(pathlib.Path(path).glob('*.mcap'))


def meta(path):
    return yaml.safe_load((pathlib.Path(path) / 'metadata.yaml').read_text())['rosbag2_bagfile_information']


def test_every_recorded_type_reads_back_with_its_hash_and_qos(tmp_path):
    written = []                             # (topic, time, bytes) in writing order
    bag = CheckpointWriter(tmp_path / 'bag')
    for i, msgtype in enumerate(RECORDED_TYPES):
        bag.add_topic(f'/topic_{i}', msgtype, [LATCHED] if i == 0 else [VOLATILE, LATCHED])
    bag.add_topic('/silent', 'std_msgs/msg/String', [VOLATILE])
    for k in range(1, 301):
        i = k % len(RECORDED_TYPES)
        topic, msgtype = f'/topic_{i}', RECORDED_TYPES[i]
        t = T0 + 1_000_000 * k - (500_000 if i == 3 else 0)     # one topic received out of order
        data = sample(msgtype, k)
        bag.write(topic, t, data)
        written.append((topic, t, data))
        if k == 150:
            bag.checkpoint()
    bag.close()
    counts = {f'/topic_{i}': sum(1 for w in written if w[0] == f'/topic_{i}') for i in range(len(RECORDED_TYPES))}
    assert bag.counts() == {**counts, '/silent': 0}

    # the file: foxglove-sdk's, each channel as rosbag2 writes it
    store = typestore()
    with mcap_file(tmp_path / 'bag').open('rb') as fh:
        reader = make_reader(fh, decoder_factories=[DecoderFactory()])
        header = reader.get_header()
        s = reader.get_summary()
        decoded = [(ch.topic, m.log_time, m.publish_time, m.sequence, m.data, d)
                   for _, ch, m, d in reader.iter_decoded_messages(log_time_order=False)]
        records = [r for r in reader.iter_metadata() if r.name == 'rosbag2']
    assert header.profile == 'ros2' and header.library.startswith('foxglove-sdk-python/')
    assert sorted(c.topic for c in s.channels.values()) == sorted(counts)      # not /silent
    for channel in s.channels.values():
        msgtype = RECORDED_TYPES[int(channel.topic.split('_')[-1])]
        schema = s.schemas[channel.schema_id]
        assert (schema.name, schema.encoding, channel.message_encoding) == (msgtype, 'ros2msg', 'cdr')
        assert schema.data.decode() == store.generate_msgdef(msgtype, ros_version=2)[0]
        assert channel.metadata['topic_type_hash'] == rosidl_hash(msgtype)
        durability = [p['durability'] for p in yaml.safe_load(channel.metadata['offered_qos_profiles'])]
        assert durability == (['transient_local'] if channel.topic == '/topic_0' else ['volatile', 'transient_local'])
    assert len(s.schemas) == len(set(RECORDED_TYPES))                 # one schema per type
    assert dict(s.statistics.channel_message_counts) == {c.id: counts[c.topic] for c in s.channels.values()}

    # messages: in file order as written, publish time = log time, sequence per channel from 1
    assert [(topic, t, data) for topic, t, _, _, data, _ in decoded] == written
    assert all(pub == t for _, t, pub, _, _, _ in decoded)
    for topic in counts:
        assert [seq for tp, _, _, seq, _, _ in decoded if tp == topic] == list(range(1, counts[topic] + 1))

    # rosbags reads the same, in time order; decoded alike by both readers
    by_time = sorted(written, key=lambda w: w[1])
    assert read_rosbags_raw(tmp_path / 'bag') == by_time
    by_rosbags = {(topic, t): plain(msg) for topic, t, msg in read_messages(tmp_path / 'bag')}
    assert by_rosbags == {(topic, t): plain(d) for topic, t, _, _, _, d in decoded}
    assert message_counts(tmp_path / 'bag') == counts

    # metadata.yaml and the 'rosbag2' record: what was written
    info = meta(tmp_path / 'bag')
    assert len(records) == 1 and yaml.safe_load(records[0].metadata['serialized_metadata']) == info
    assert info['message_count'] == len(written) and info['ros_distro'] == 'kilted'
    assert info['starting_time']['nanoseconds_since_epoch'] == by_time[0][1]
    assert info['duration']['nanoseconds'] == by_time[-1][1] - by_time[0][1]
    topics = {e['topic_metadata']['name']: e for e in info['topics_with_message_count']}
    assert {name: e['message_count'] for name, e in topics.items()} == {**counts, '/silent': 0}
    for name, e in topics.items():
        msgtype = 'std_msgs/msg/String' if name == '/silent' else RECORDED_TYPES[int(name.split('_')[-1])]
        assert e['topic_metadata']['type_description_hash'] == rosidl_hash(msgtype)
    with Reader(tmp_path / 'bag') as reader:
        assert reader.message_count == len(written)
    assert recover_bag(tmp_path / 'bag') is False


def test_two_bags_in_one_process_keep_their_own_channels(tmp_path):
    a, b = CheckpointWriter(tmp_path / 'a'), CheckpointWriter(tmp_path / 'b')
    for bag in (a, b):
        bag.add_topic('/hil/status', 'std_msgs/msg/String')
    b.add_topic('/only_b', 'std_msgs/msg/String')
    for k in range(1, 51):
        a.write('/hil/status', T0 + k, sample('std_msgs/msg/String', k))
        b.write('/hil/status', T0 + k, sample('std_msgs/msg/String', 1000 + k))
        if k % 5 == 0:
            b.write('/only_b', T0 + k, sample('std_msgs/msg/String', 2000 + k))
    a.close()
    b.write('/hil/status', T0 + 99, sample('std_msgs/msg/String', 99))     # a closed, b goes on
    b.close()
    assert [m.data for _, _, m in read_messages(tmp_path / 'a')] == [f'status {k}' for k in range(1, 51)]
    assert read_rosbags_raw(tmp_path / 'b') == sorted(
        [('/hil/status', T0 + k, sample('std_msgs/msg/String', 1000 + k)) for k in range(1, 51)]
        + [('/only_b', T0 + k, sample('std_msgs/msg/String', 2000 + k)) for k in range(5, 51, 5)]
        + [('/hil/status', T0 + 99, sample('std_msgs/msg/String', 99))], key=lambda m: m[1])
    assert message_counts(tmp_path / 'a') == {'/hil/status': 50}


# the recording of the child processes below: message k (from 1) on /joint_states or
# /hil/status at T0 + k ms, 1000-byte strings, so that chunks of 4 KiB close between checkpoints
CHILD = textwrap.dedent('''
    import os, sys
    from hil_nodes.recorder.bag import CheckpointWriter, typestore
    T0 = {t0}
    store = typestore()
    def message(k):
        msg = store.types['std_msgs/msg/String'](data=str(k).rjust(1000, '.'))
        return ('/joint_states' if k % 3 else '/hil/status'), T0 + k * 1_000_000, \\
            bytes(store.serialize_cdr(msg, 'std_msgs/msg/String'))
    ''')


def expected_message(k: int):
    store = typestore()
    msg = store.types['std_msgs/msg/String'](data=str(k).rjust(1000, '.'))
    return ('/joint_states' if k % 3 else '/hil/status'), T0 + k * 1_000_000, bytes(
        store.serialize_cdr(msg, 'std_msgs/msg/String'))


def run_child(body: str, *args) -> subprocess.Popen:
    """A Python process that runs ``CHILD`` and ``body`` with ``args``, importing what this one does."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    return subprocess.Popen([sys.executable, '-c', CHILD.format(t0=T0) + textwrap.dedent(body), *map(str, args)],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


@pytest.mark.parametrize('chunk_bytes', [4096, 2**20])
def test_a_killed_recorder_recovers_up_to_its_last_checkpoint(tmp_path, chunk_bytes):
    """57 messages of 1 KiB after the checkpoint: in chunks of 4 KiB they close chunks of their
    own (a prefix of them is in the file); in chunks of 1 MiB no chunk closes but by the flush, so
    the file holds exactly what the checkpoint did."""
    checkpointed, after = 200, 57
    child = run_child('''
        bag = CheckpointWriter(sys.argv[1], chunk_bytes=int(sys.argv[4]))
        for topic in ('/joint_states', '/hil/status'):
            bag.add_topic(topic, 'std_msgs/msg/String')
        for k in range(1, int(sys.argv[2]) + int(sys.argv[3]) + 1):
            bag.write(*message(k))
            if k == int(sys.argv[2]):
                bag.checkpoint()
        print('written', flush=True)
        import time
        time.sleep(600)
    ''', tmp_path / 'bag', checkpointed, after, chunk_bytes)
    try:
        assert child.stdout.readline().strip() == 'written', child.stderr.read()
        child.send_signal(signal.SIGKILL)               # not closed, no checkpoint after the first
    finally:
        child.kill()
        child.wait(timeout=30)
    assert child.returncode == -signal.SIGKILL
    assert meta(tmp_path / 'bag')['message_count'] == checkpointed           # the checkpoint's
    with mcap_file(tmp_path / 'bag').open('rb') as fh:                       # no footer: not readable
        with pytest.raises(Exception):
            make_reader(fh).get_summary().statistics.message_count
    assert recover_bag(tmp_path / 'bag') is True
    recovered = read_rosbags_raw(tmp_path / 'bag')
    n = len(recovered)
    assert checkpointed <= n < checkpointed + after      # the chunks closed after it, not the open one
    if chunk_bytes == 2**20:
        assert n == checkpointed
    assert recovered == [expected_message(k) for k in range(1, n + 1)]
    assert meta(tmp_path / 'bag')['message_count'] == n
    assert message_counts(tmp_path / 'bag') == {
        '/joint_states': sum(1 for k in range(1, n + 1) if k % 3), '/hil/status': n // 3}
    assert recover_bag(tmp_path / 'bag') is False


def test_a_failed_write_shows_at_the_flush_and_refuses_later_writes(tmp_path):
    child = run_child('''
        import resource, signal
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)          # EFBIG instead of the signal
        resource.setrlimit(resource.RLIMIT_FSIZE, (120_000, 120_000))
        bag = CheckpointWriter(sys.argv[1], chunk_bytes=4096)
        for topic in ('/joint_states', '/hil/status'):
            bag.add_topic(topic, 'std_msgs/msg/String')
        good = None
        for k in range(1, 301):
            try:
                bag.write(*message(k))
            except OSError:
                print('write refused', k, flush=True)
                break
            if k % 20 == 0:
                try:
                    bag.checkpoint()
                    good = k
                except OSError:
                    print('flush failed', k, good, flush=True)
        try:
            bag.close()
        except OSError:
            print('close failed', flush=True)
    ''', tmp_path / 'bag')
    out, err = child.communicate(timeout=120)
    lines = out.splitlines()
    assert child.returncode == 0, err
    failed = [line.split() for line in lines if line.startswith('flush failed')]
    refused = [line.split() for line in lines if line.startswith('write refused')]
    assert len(failed) == 1 and refused and lines[-1] == 'close failed', out
    at, good = int(failed[0][2]), int(failed[0][3])
    assert int(refused[0][2]) == at + 1                  # the first write after the failed flush
    assert 0 < good < at and meta(tmp_path / 'bag')['message_count'] == good   # the last good checkpoint
    assert recover_bag(tmp_path / 'bag') is True
    recovered = read_rosbags_raw(tmp_path / 'bag')
    assert good <= len(recovered) < at
    assert recovered == [expected_message(k) for k in range(1, len(recovered) + 1)]
