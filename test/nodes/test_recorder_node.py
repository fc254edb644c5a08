"""Recorder: raw subscriptions -> rosbag2 (mcap) readable by rosbags; counts match what was
published; a bag stays valid after SIGINT, and after SIGKILL up to the last checkpoint; the
recorder accounts per topic for what it received and wrote and the largest receive gap, on
/diagnostics and in accounting.yaml (the message accounting of `hil report`)."""
import os
import signal

import yaml

import pytest
from diagnostic_msgs.msg import DiagnosticArray
from sensor_msgs.msg import JointState
from std_msgs.msg import String

from hil_nodes import qos
from hil_nodes.recorder.bag import message_counts, read_messages
from hil_nodes.recorder.bag_recovery import recover_bag
from hil_nodes.recorder.node import RecorderNode
from rig import start

N = 200


STAMP_STEP_NS = 2_500_000


def _publish_joint_states(ros, pub, n=N):
    for i in range(n):
        msg = JointState(name=['slider_1'], position=[i * 1e-3])
        msg.header.stamp.nanosec = STAMP_STEP_NS * (i + (i >= 10))     # one sample missing after the 10th
        pub.publish(msg)
        ros.spin_for(0.001)


def _recorder_values(diags):
    for d in reversed(diags):
        for st in d.status:
            if st.name == 'recorder: bag' and any(kv.key == 'received' for kv in st.values):
                return {kv.key: kv.value for kv in st.values}
    return {}


def _accounting(bag):
    return yaml.safe_load((bag / 'accounting.yaml').read_text())


def _recorder_messages(diags):
    for d in reversed(diags):
        for st in d.status:
            if st.name == 'recorder: bag':
                values = {kv.key: kv.value for kv in st.values}
                if 'messages' in values:
                    return int(values['messages'])
    return -1


@pytest.mark.parametrize('poll_period', [0.02, 0.0], ids=['drained', 'served'])
def test_bag_counts_match_and_latched_topics_are_caught(ros, tmp_path, poll_period):
    bag = tmp_path / 'bag'
    mode_pub = ros.node.create_publisher(String, '/hil/mode', qos.latched())
    mode_pub.publish(String(data='IDLE'))
    js_pub = ros.node.create_publisher(JointState, '/joint_states', qos.command(N))
    rec = start(ros, RecorderNode, bag_path=str(bag), topics=['/joint_states', '/hil/mode'], discovery_period=0.05,
                poll_period=poll_period)
    diags = ros.collect(DiagnosticArray, '/diagnostics', 100)
    ros.bring_up('recorder')
    # a process of its own (no intra-process bus) on the wall clock: drained unless told not to
    assert (rec._polled is not None) == (poll_period > 0)
    ros.spin_until(lambda: len(rec._subs) == 2, 10, 'recorder subscriptions')
    ros.spin_until(lambda: ros.node.count_subscribers('/joint_states') >= 1, 10, 'match')
    _publish_joint_states(ros, js_pub)
    ros.spin_until(lambda: rec.bag.counts().get('/joint_states', 0) == N, 10, 'all messages written')
    ros.spin_until(lambda: _recorder_values(diags).get('messages') == str(N + 1), 10, 'status after the writes')
    status = _recorder_values(diags)
    assert status['received'] == str(N + 1) and status['not_written'] == '0'
    assert status['/joint_states'].startswith(f'received {N} written {N} largest_gap_ms ')
    assert (bag / 'accounting.yaml').exists()                     # checkpoints write it too
    assert ros.change_state('recorder', 'deactivate')
    assert ros.change_state('recorder', 'cleanup')
    counts = message_counts(bag)
    assert counts == {'/joint_states': N, '/hil/mode': 1}
    positions = [m.position[0] for t, _, m in read_messages(bag, ['/joint_states'])]
    assert positions == [i * 1e-3 for i in range(N)]
    acc = _accounting(bag)
    assert acc['final'] is True and acc['write_errors'] == 0
    js = acc['topics']['/joint_states']
    assert (js['received'], js['written']) == (N, N)
    # receive times in the bag's clock: the largest gap is the largest step of the record stamps
    stamps = [t for _, t, _ in read_messages(bag, ['/joint_states'])]
    # each message keeps its own receipt time, drained or not (a drain's time would be shared by
    # every message it took)
    assert all(b > a for a, b in zip(stamps, stamps[1:]))
    assert js['largest_gap_s'] == max(b - a for a, b in zip(stamps, stamps[1:])) * 1e-9
    assert js['first_s'] == stamps[0] * 1e-9 and js['last_s'] == stamps[-1] * 1e-9
    # the header stamps read from the bytes: the one missing sample is a gap of two steps
    assert js['largest_stamp_gap_s'] == pytest.approx(2 * STAMP_STEP_NS * 1e-9, abs=1e-12)
    mode = acc['topics']['/hil/mode']
    assert (mode['received'], mode['written'], mode['largest_gap_s']) == (1, 1, None)
    assert mode['largest_stamp_gap_s'] is None                   # a String has no header


@pytest.mark.parametrize('poll_period', [0.02, 0.0], ids=['drained', 'served'])
def test_a_latched_state_heard_before_activation_is_where_the_recording_starts(ros, tmp_path, poll_period):
    """The graph configures every node before it activates any: the recorder's discovery timer
    subscribes while it is configured, and a latched publisher's last message (the robot
    description, the static frames) comes at once, before the recording. It is written at
    activation (the make demo bag had both topics with 0 messages, which a replay needs), and a
    latched topic without any message is flagged by the accounting."""
    bag = tmp_path / 'bag'
    desc = ros.node.create_publisher(String, '/robot_description', qos.latched())
    desc.publish(String(data='<robot name="r"/>'))
    ros.node.create_publisher(String, '/never', qos.latched())          # latched, never published
    rec = start(ros, RecorderNode, bag_path=str(bag), topics=['/robot_description', '/never'],
                discovery_period=0.05, poll_period=poll_period)
    assert ros.change_state('recorder', 'configure')
    ros.spin_until(lambda: '/robot_description' in rec._held, 10, 'the latched message heard while configured')
    assert rec.bag.counts().get('/robot_description', 0) == 0          # not recorded yet
    assert ros.change_state('recorder', 'activate')
    assert rec.bag.counts()['/robot_description'] == 1
    assert ros.change_state('recorder', 'deactivate') and ros.change_state('recorder', 'cleanup')
    assert [m.data for _, _, m in read_messages(bag, ['/robot_description'])] == ['<robot name="r"/>']
    topics = _accounting(bag)['topics']
    assert topics['/robot_description']['latched'] and topics['/never']['latched']
    from hil_core import accounting
    rows = {r.topic: r for r in accounting.account(accounting.topic_counts(_accounting(bag)), 1.0)}
    assert rows['/robot_description'].flags == () and rows['/never'].flags == ('no_latched',)
    assert not accounting.clean(list(rows.values()))
    assert any('/never' in line and 'NO MESSAGE of a latched topic' in line
               for line in accounting.summary_lines(list(rows.values())))


def test_a_topic_that_only_a_subscriber_holds_is_recorded_once_a_publisher_comes(ros, tmp_path):
    """joystick/wrench without an operator: the admittance's subscription puts the topic in the
    graph, nobody publishes. The recorder does not subscribe to it (the graph check skips it:
    no publisher, and without listing the whole graph: that ran every discovery_period in the
    frame loop's thread for a topic that never came), and records it from the first message of a
    publisher that comes later."""
    from geometry_msgs.msg import WrenchStamped
    bag = tmp_path / 'bag'
    ros.node.create_subscription(WrenchStamped, '/joystick/wrench', lambda msg: None, 10)
    rec = start(ros, RecorderNode, bag_path=str(bag), topics=['/joystick/wrench'], discovery_period=0.05)
    ros.bring_up('recorder')
    ros.spin_until(lambda: '/joystick/wrench' in dict(rec.get_topic_names_and_types()), 10, 'the topic in its graph')
    listed = []                      # the whole graph listed: only once a wanted topic has a publisher
    listing = rec.get_topic_names_and_types
    rec.get_topic_names_and_types = lambda: listed.append(1) or listing()
    rec._discover()
    assert rec._subs == {} and rec.bag.counts() == {} and listed == []
    pub = ros.node.create_publisher(WrenchStamped, '/joystick/wrench', 10)
    ros.spin_until(lambda: pub.get_subscription_count() >= 2, 10, 'the recorder subscribed')
    assert listed
    sent = [WrenchStamped() for _ in range(3)]
    for i, msg in enumerate(sent):
        msg.wrench.force.x = float(i + 1)
        pub.publish(msg)
    ros.spin_until(lambda: rec.bag.counts().get('/joystick/wrench', 0) == len(sent), 10, 'every push written')
    assert ros.change_state('recorder', 'deactivate') and ros.change_state('recorder', 'cleanup')
    assert [m.wrench.force.x for _, _, m in read_messages(bag, ['/joystick/wrench'])] == [1.0, 2.0, 3.0]


def test_a_topic_with_latched_and_volatile_publishers_is_recorded_from_both(ros, tmp_path):
    """/hil/events in lockstep: the planner's and the drives' events latched, every node's
    stop-in-place fault volatile. The recorder asks for what all of them offer (rosbag2's rule):
    a latched request would match the latched publisher only."""
    bag = tmp_path / 'bag'
    latched = ros.node.create_publisher(DiagnosticArray, '/hil/events', qos.command(50, lockstep=True))
    volatile = ros.node.create_publisher(DiagnosticArray, '/hil/events', qos.command(50))
    rec = start(ros, RecorderNode, bag_path=str(bag), topics=['/hil/events'], discovery_period=0.05)
    ros.bring_up('recorder')
    ros.spin_until(lambda: latched.get_subscription_count() >= 1 and volatile.get_subscription_count() >= 1,
                   10, 'the recorder matched by both publishers')
    sent = []
    for i, pub in enumerate([latched, volatile, latched, volatile]):
        msg = DiagnosticArray()
        msg.header.frame_id = f'event {i}'
        pub.publish(msg)
        sent.append(msg.header.frame_id)
    ros.spin_until(lambda: rec.bag.counts().get('/hil/events', 0) == len(sent), 10, 'every event written')
    assert ros.change_state('recorder', 'deactivate') and ros.change_state('recorder', 'cleanup')
    assert sorted(m.header.frame_id for _, _, m in read_messages(bag, ['/hil/events'])) == sent


def test_refuses_existing_bag_path_and_missing_path(ros, tmp_path):
    start(ros, RecorderNode, 'recorder')
    assert not ros.change_state('recorder', 'configure')   # bag_path is required
    (tmp_path / 'exists').mkdir()
    rec2 = start(ros, RecorderNode, 'recorder2', bag_path=str(tmp_path / 'exists'))
    assert not ros.change_state('recorder2', 'configure')
    assert rec2.bag is None


def _spawn_recording(ros, tmp_path, name):
    bag = tmp_path / name
    proc = ros.spawn('hil_nodes.recorder.node', ros_args=['-p', f'bag_path:={bag}', '-p', 'topics:=[/joint_states]',
                                                     '-p', 'checkpoint_period:=0.1', '-p', 'discovery_period:=0.05'])
    ros.bring_up('recorder', timeout=20)
    diags = ros.collect(DiagnosticArray, '/diagnostics', 100)
    # a history for every message: the burst of N must not overwrite samples a recorder process
    # slowed by a loaded machine has not acknowledged yet (reliable keep-last drops them)
    js_pub = ros.node.create_publisher(JointState, '/joint_states', qos.command(N))
    ros.wait_for_subscribers('/joint_states', 1, 20)
    _publish_joint_states(ros, js_pub)
    ros.spin_until(lambda: _recorder_messages(diags) == N, 20, 'checkpoint with every message')
    return proc, bag


def test_bag_valid_after_sigint(ros, tmp_path):
    proc, bag = _spawn_recording(ros, tmp_path, 'sigint')
    os.killpg(proc.proc.pid, signal.SIGINT)
    proc.proc.wait(20)
    assert message_counts(bag) == {'/joint_states': N}
    assert recover_bag(bag) is False   # closed properly: nothing to repair
    acc = _accounting(bag)
    assert acc['final'] is True and acc['topics']['/joint_states']['written'] == N


def test_bag_of_killed_recorder_readable_up_to_last_checkpoint(ros, tmp_path):
    proc, bag = _spawn_recording(ros, tmp_path, 'sigkill')
    proc.kill()
    assert recover_bag(bag) is True
    assert message_counts(bag) == {'/joint_states': N}
    acc = _accounting(bag)                     # from the last checkpoint
    assert acc['final'] is False and acc['topics']['/joint_states']['written'] == N


def test_checkpoint_steps_follow_the_trigger_topic_and_fall_back_to_the_timer(ros, tmp_path):
    """checkpoint_after: a due checkpoint is taken one step per message of the trigger topic
    (flush, metadata, accounting, status: in one process each lands right after a frame's chain);
    steps the topic did not trigger are taken at the next checkpoint time."""
    bag = tmp_path / 'bag'
    js_pub = ros.node.create_publisher(JointState, '/joint_states', qos.command(N))
    trigger = ros.node.create_publisher(String, '/trigger', qos.command(100))
    rec = start(ros, RecorderNode, bag_path=str(bag), topics=['/joint_states', '/trigger'], discovery_period=0.05,
                checkpoint_period=60.0, checkpoint_after='/trigger')
    ros.bring_up('recorder')
    ros.spin_until(lambda: len(rec._subs) == 2, 10, 'recorder subscriptions')
    ros.spin_until(lambda: ros.node.count_subscribers('/trigger') >= 1, 10, 'match')
    _publish_joint_states(ros, js_pub, 20)
    ros.spin_until(lambda: rec.bag.counts().get('/joint_states', 0) == 20, 10, 'joint states written')
    rec._checkpoint_due()                                  # the timer's call: four steps due
    assert len(rec._steps) == 4 and not (bag / 'accounting.yaml').exists()
    for left in (3, 2, 1, 0):
        trigger.publish(String(data='frame'))
        ros.spin_until(lambda: len(rec._steps) == left, 10, f'{4 - left} step(s) after the trigger')
        if left == 2:
            assert not (bag / 'accounting.yaml').exists()  # flush and metadata only so far
    assert _accounting(bag)['topics']['/joint_states']['written'] == 20
    assert _accounting(bag)['topics']['/trigger']['written'] == 3       # written at the third step
    _publish_joint_states(ros, js_pub, 10)
    ros.spin_until(lambda: rec.bag.counts().get('/joint_states', 0) == 30, 10, 'more joint states')
    rec._checkpoint_due()
    assert len(rec._steps) == 4 and _accounting(bag)['topics']['/joint_states']['written'] == 20
    rec._checkpoint_due()                                  # no trigger came: taken at the next time
    assert len(rec._steps) == 4 and _accounting(bag)['topics']['/joint_states']['written'] == 30
    meta = yaml.safe_load((bag / 'metadata.yaml').read_text())['rosbag2_bagfile_information']
    counts = {t['topic_metadata']['name']: t['message_count'] for t in meta['topics_with_message_count']}
    assert counts['/joint_states'] == 30                  # the metadata of the flushed file


def test_a_process_exit_writes_what_the_drained_readers_still_hold(ros, tmp_path):
    """SIGINT ends a recorder process without a deactivation (hil_nodes.runtime.runner calls
    ``process_exit``): messages received since the last drain are written before the bag closes."""
    bag = tmp_path / 'bag'
    js_pub = ros.node.create_publisher(JointState, '/joint_states', qos.command(N))
    rec = start(ros, RecorderNode, bag_path=str(bag), topics=['/joint_states'], discovery_period=0.05,
                poll_period=1.0)
    ros.bring_up('recorder')
    assert rec._polled is not None
    rec._own_timers[-1].cancel()          # the drain timer: no drain before the process exit
    ros.spin_until(lambda: len(rec._subs) == 1, 10, 'recorder reader')
    probe = ros.collect(JointState, '/joint_states', qos.command(1000))   # in the same participant
    ros.spin_until(lambda: ros.node.count_subscribers('/joint_states') >= 2, 10, 'match')
    _publish_joint_states(ros, js_pub, 50)
    ros.spin_until(lambda: len(probe) == 50, 10, 'delivery')
    assert rec.bag.counts().get('/joint_states', 0) == 0        # nothing drained yet
    rec.process_exit()
    assert message_counts(bag) == {'/joint_states': 50}
