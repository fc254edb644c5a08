"""A lab's subscribers hear the suite's driver outputs in real time, reliable or best effort.

REP-2003 asks sensor drivers to publish so that both kinds of subscriber match: rviz2 and
``ros2 topic echo`` subscribe reliable by default, a controller best effort. Here a real-time
Hexafloat run (one process, the default layout) is watched from this test's process with both
kinds of subscription on the F/T wrench, the joint states, the TCP pose and /tf. Required: every
one of them matches and receives, and a reliable one misses nothing from its first message to its
last (the 2.5 ms grid of the stamps has no hole; a volatile subscriber cannot get what was
published before it matched).
"""
from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
from geometry_msgs.msg import PoseStamped, WrenchStamped
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
from tf2_msgs.msg import TFMessage

from hil_nodes import topics

FRAME_NS = 2_500_000
TOPICS = {topics.FT_WRENCH: WrenchStamped, topics.JOINT_STATES: JointState,
          topics.KINEMATICS_TCP_POSE: PoseStamped, topics.TF: TFMessage}
QOS = {'reliable': QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.VOLATILE),
       'best_effort': QoSProfile(depth=1000, reliability=ReliabilityPolicy.BEST_EFFORT,
                                 durability=DurabilityPolicy.VOLATILE)}


def _stamp(msg) -> int:
    header = msg.transforms[0].header if isinstance(msg, TFMessage) else msg.header
    return header.stamp.sec * 1_000_000_000 + header.stamp.nanosec


def test_reliable_and_best_effort_subscribers_hear_every_driver_output(ros):
    got = {(topic, kind): [] for topic in TOPICS for kind in QOS}
    for (topic, kind), stamps in got.items():
        ros.node.create_subscription(TOPICS[topic], topic, lambda m, s=stamps: s.append(_stamp(m)), QOS[kind])
    cmd = [sys.executable, '-m', 'hil_nodes.cli.main', 'run', 'hexafloat', '--realtime', '--duration', '5',
           '--scenario', 'impulse_3hz', '--domain-id', str(ros.domain_id), '--quiet']
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env={**os.environ, 'ROS_AUTOMATIC_DISCOVERY_RANGE': 'LOCALHOST'})
    try:
        ros.spin_until(lambda: proc.poll() is not None, 180, 'the real-time run to end')
    finally:
        if proc.poll() is None:
            proc.kill()
    out = proc.stdout.read()
    assert proc.returncode == 0, out
    for (topic, kind), stamps in got.items():
        assert len(stamps) > 400, f'{topic} ({kind}): {len(stamps)} messages'       # > 1 s of 400 Hz
        if kind == 'reliable':
            s = np.unique(np.array(stamps))
            steps = np.diff(s)
            assert np.all(steps == FRAME_NS), (f'{topic} (reliable): {int(np.sum(steps // FRAME_NS - 1))} '
                                               f'message(s) missing between {len(s)} received')
