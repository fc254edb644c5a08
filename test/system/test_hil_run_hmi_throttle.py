"""`hil run hexafloat --hmi` (one process for the graph, lockstep paced at real time): the HMI's
readers are on the view throttle's copies and on none of the 400 Hz streams, so the container
writes no stream into DDS for it; the copies go out at most at the view rate over 3 s of their own
send times (30 Hz, the HMI's view_rate, the throttle's default), the joint states with every slider
and /hmi/tf with the platform and every leg frame of the Hexaslide, as the HMI draws them."""
import os

import pytest
from hilrun import BackgroundRun
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
from std_msgs.msg import String
from tf2_msgs.msg import TFMessage

from hil_nodes import qos, topics
from hil_nodes.hmi.params import PARAMS as HMI_PARAMS

pytestmark = pytest.mark.slow

VIEW_RATE = next(p.default for p in HMI_PARAMS if p.name == 'view_rate')
SUB = QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.VOLATILE)


def _readers(node, topic: str) -> set[str]:
    return {info.node_name for info in node.get_subscriptions_info_by_topic(topics.resolve(topic))}


def test_the_hmi_reads_the_throttled_copies_only(ros, domain_id):
    run = BackgroundRun('hexafloat', '--lockstep', '--time-scale', '1.0', '--duration', '12', '--hmi', '--hmi-port', '0',
                        domain_id=domain_id)
    try:
        modes = ros.collect(String, topics.HIL_MODE, qos.latched(20))
        states, sent = [], []       # the joint state copies and their DDS source timestamps (ns)
        ros.node.create_subscription(JointState, topics.HMI_JOINT_STATES,
                                     lambda m, info: (states.append(m), sent.append(info['source_timestamp'])), SUB)
        tf = ros.collect(TFMessage, topics.HMI_TF, SUB)
        run.wait_for_mode(ros, modes, 'RUNNING')
        ros.spin_until(lambda: states and tf, timeout=60, what='the throttled copies')
        # the HMI's readers (its node and its polled readers' node: names with 'hmi') on every copy,
        # on none of the full-rate streams
        node = ros.node
        ros.spin_until(lambda: all(any('hmi' in n for n in _readers(node, c)) for c in topics.VIEW_STREAMS.values()),
                       timeout=30, what="the HMI's readers on the copies")
        for stream in topics.VIEW_STREAMS:
            assert not any('hmi' in n for n in _readers(node, stream)), (stream, _readers(node, stream))

        n0 = len(states)
        ros.spin_for(3.5)
        assert modes[-1].data == 'RUNNING', ([m.data for m in modes], run.output())
    finally:
        run.stop()
    # at most the view rate over a window of 3 s of the throttle's own send times (+1: a tick at
    # each end; by receipt, a late delivery to this process counted earlier copies in its window),
    # and heard (the lockstep graph paced at real time publishes 400 joint states a second)
    window_ns = 3_000_000_000
    first = sent[n0]
    n = sum(1 for t in sent[n0:] if first <= t <= first + window_ns)
    assert sent[-1] - first >= window_ns, 'fewer than 3 s of copies heard'
    assert 0 < n <= VIEW_RATE * window_ns * 1e-9 + 1, (n, [round((t - first) * 1e-6, 1) for t in sent[n0:]])
    assert set(states[-1].name) == {f'slider_{i}' for i in range(1, 7)}
    frames = {t.child_frame_id for msg in tf for t in msg.transforms}
    assert {'tcp', *(f'leg_{i}' for i in range(1, 7))} <= frames, frames      # the platform, the legs
