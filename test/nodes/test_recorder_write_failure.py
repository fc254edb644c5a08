"""Recorder: a bag whose writer fails (foxglove-sdk's MCAP writer: a failed write of the file, a
full disk, shows only at its next flush, as a RuntimeError: test_bag_foxglove_writer shows it
with a real size limit) does not stop the node: the checkpoint reports ERROR, every later message
is counted as a write error (accounting.yaml ``write_errors``, the status' ``not_written``), the
messages before the failure stay in the bag, and the recorder still deactivates and closes."""
import yaml
from diagnostic_msgs.msg import DiagnosticArray
from sensor_msgs.msg import JointState

from hil_nodes import qos
from hil_nodes.recorder.bag import read_messages
from hil_nodes.recorder.bag_recovery import recover_bag
from hil_nodes.recorder.node import RecorderNode
from rig import ERROR, latest_values, start, statuses

BEFORE, AFTER = 30, 12


FAILED = 'FoxgloveError: MCAP error: attempted another write after a write method failed'


class FailedWriter:
    """The bag's foxglove writer as the SDK's is once a write of the file failed: flush and
    write_metadata raise (its message, its exception type), close closes the file and raises."""

    def __init__(self, writer):
        self.writer = writer

    def flush(self):
        raise RuntimeError(FAILED)

    def write_metadata(self, name, metadata):
        raise RuntimeError(FAILED)

    def close(self):
        self.writer.close()
        raise RuntimeError(FAILED)


def publish(ros, pub, first, n):
    for i in range(first, first + n):
        pub.publish(JointState(name=['slider_1'], position=[i * 1e-3]))
        ros.spin_for(0.001)


def test_a_failed_flush_reports_and_counts_later_messages_as_write_errors(ros, tmp_path):
    bag = tmp_path / 'bag'
    pub = ros.node.create_publisher(JointState, '/joint_states', qos.command(100))
    rec = start(ros, RecorderNode, bag_path=str(bag), topics=['/joint_states'], discovery_period=0.05,
                poll_period=0.0, checkpoint_period=0.1)
    diags = ros.collect(DiagnosticArray, '/diagnostics', 200)
    ros.bring_up('recorder')
    ros.spin_until(lambda: ros.node.count_subscribers('/joint_states') >= 1, 10, 'match')
    publish(ros, pub, 0, BEFORE)
    ros.spin_until(lambda: rec.bag.counts().get('/joint_states', 0) == BEFORE, 10, 'written before the failure')
    ros.spin_until(lambda: latest_values(diags, 'recorder: bag', 'messages').get('messages') == str(BEFORE), 10,
                   'a checkpoint with them')

    rec.bag.writer = FailedWriter(rec.bag.writer)
    ros.spin_until(lambda: rec.bag.failed, 10, 'the next checkpoint')
    ros.spin_until(lambda: statuses(diags, name='recorder: bag', level=ERROR, text='cannot write the bag'), 10,
                   'the failure reported')
    publish(ros, pub, BEFORE, AFTER)
    ros.spin_until(lambda: rec.write_errors == AFTER, 10, 'later messages refused')
    ros.spin_until(lambda: latest_values(diags, 'recorder: bag', 'not_written').get('not_written') == str(AFTER), 10,
                   'the status counts them')
    assert statuses(diags, name='recorder: bag', level=ERROR, text=f'{AFTER} received message(s) not written')
    assert rec.bag.counts() == {'/joint_states': BEFORE}

    assert ros.change_state('recorder', 'deactivate')
    assert ros.change_state('recorder', 'cleanup')
    assert rec.bag.closed
    ros.spin_until(lambda: statuses(diags, name='recorder: bag', level=ERROR, text='cannot close the bag'), 10,
                   'the failed close reported')
    acc = yaml.safe_load((bag / 'accounting.yaml').read_text())
    assert acc['final'] is True and acc['write_errors'] == AFTER
    js = acc['topics']['/joint_states']
    assert (js['received'], js['written']) == (BEFORE + AFTER, BEFORE)
    # the metadata.yaml of the last checkpoint before the failure; the file holds those messages
    meta = yaml.safe_load((bag / 'metadata.yaml').read_text())['rosbag2_bagfile_information']
    assert meta['message_count'] == BEFORE
    recover_bag(bag)
    assert [m.position[0] for _, _, m in read_messages(bag)] == [i * 1e-3 for i in range(BEFORE)]
