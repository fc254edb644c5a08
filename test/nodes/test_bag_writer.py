"""hil_nodes.recorder.bag.CheckpointWriter: its message records and packed message index write the same
mcap file, byte for byte, and the same metadata as rosbags' own writing (the oracle), through
checkpoints, chunks closed by size (CHUNK_BYTES) and the close; the bag reads back with every
message, its metadata as YAML."""
import pathlib

from hil_nodes.recorder.bag import CheckpointWriter, message_counts, read_messages

TOPICS = {'/ft_sensor/wrench': 'geometry_msgs/msg/WrenchStamped', '/joint_states': 'sensor_msgs/msg/JointState',
          '/hil/mode': 'std_msgs/msg/String'}


def write(path: pathlib.Path, fast: bool) -> bytes:
    from geometry_msgs.msg import WrenchStamped
    from rclpy.serialization import serialize_message
    from sensor_msgs.msg import JointState
    from std_msgs.msg import String

    from hil_nodes.msgs.cdr_encode import serialize_exact
    bag = CheckpointWriter(path, fast=fast)
    for topic, msgtype in TOPICS.items():
        bag.add_topic(topic, msgtype)
    w, js = WrenchStamped(), JointState(name=['a', 'b'], position=[0.0, 0.0])
    t = 1_795_000_000_000_000_000
    bag.write('/hil/mode', t, serialize_message(String(data='RUNNING')))
    for k in range(14000):                      # > 1 MiB: a chunk closed by size on the way
        t += 625_000
        w.wrench.force.x = float(k)
        bag.write('/ft_sensor/wrench', t, serialize_exact(w))
        if k % 4 == 0:
            js.position = [k * 1e-3, -k * 1e-3]
            bag.write('/joint_states', t, serialize_exact(js) + bytes(100))
        if k in (1000, 1001, 9000):
            bag.checkpoint()                    # one of them with a single message pending
    bag.close()
    return next(path.glob('*.mcap')).read_bytes()


def test_packed_index_writes_the_same_file_as_rosbags(tmp_path):
    # (the same bag name: rosbag2 v9 keeps the metadata, file name included, inside the mcap)
    fast, oracle = write(tmp_path / 'fast' / 'bag', True), write(tmp_path / 'rosbags' / 'bag', False)
    assert len(fast) > 2**20 and fast == oracle
    assert message_counts(tmp_path / 'fast' / 'bag') == {'/hil/mode': 1, '/ft_sensor/wrench': 14000, '/joint_states': 3500}
    import yaml
    meta = yaml.safe_load((tmp_path / 'fast' / 'bag' / 'metadata.yaml').read_text())   # compact JSON is YAML
    assert meta == yaml.safe_load((tmp_path / 'rosbags' / 'bag' / 'metadata.yaml').read_text())
    assert meta['rosbag2_bagfile_information']['message_count'] == 17501
    forces = [m.wrench.force.x for topic, _, m in read_messages(tmp_path / 'fast' / 'bag', ['/ft_sensor/wrench'])]
    assert forces == [float(k) for k in range(14000)]
