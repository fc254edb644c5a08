"""A lab's subscribers hear the suite's driver outputs in real time, reliable or best effort.

REP-2003 asks sensor drivers to publish so that both kinds of subscriber match: rviz2 and
``ros2 topic echo`` subscribe reliable by default, a controller best effort. Here a real-time
Hexafloat run (one process, the default layout, at half the pace) is watched from this test's process with both
kinds of subscription on the F/T wrench, the joint states, the TCP pose and /tf. Required: every
one of them matches and receives, and a reliable one misses nothing from its first message to its
last: every message the run published in that window, as its bag holds them (a volatile
subscriber cannot get what was published before it matched). The scenario keeps the run going
whether or not the machine holds real time (the supervisor reports, does not stop): a frame the
drives skip is not published at all, so the bag, not the 2.5 ms grid, says what was sent.
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
from hil_nodes.recorder.bag import read_messages

# at the root, where the run is and as the bag is read back (hil_nodes.recorder.bag.read_messages)
TOPICS = {topics.ROOT.FT_WRENCH: WrenchStamped, topics.ROOT.JOINT_STATES: JointState,
          topics.ROOT.KINEMATICS_TCP_POSE: PoseStamped, topics.ROOT.TF: TFMessage}
QOS = {'reliable': QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.VOLATILE),
       'best_effort': QoSProfile(depth=1000, reliability=ReliabilityPolicy.BEST_EFFORT,
                                 durability=DurabilityPolicy.VOLATILE)}


def _stamp(msg) -> int:
    header = msg.transforms[0].header if hasattr(msg, 'transforms') else msg.header   # (rclpy's or the bag's)
    return header.stamp.sec * 1_000_000_000 + header.stamp.nanosec


def test_reliable_and_best_effort_subscribers_hear_every_driver_output(ros, tmp_path):
    got = {(topic, kind): [] for topic in TOPICS for kind in QOS}
    for (topic, kind), stamps in got.items():
        ros.node.create_subscription(TOPICS[topic], topic, lambda m, s=stamps: s.append(_stamp(m)), QOS[kind])
    # real time (the QoS of the wall-clock path: it depends on lockstep alone, not on the pace) at
    # half the pace: CI saw a run at pace 1 whose whole chain fell 50 ms behind for 2 s (1.2 CPU-s
    # per sim-s on a machine slowed by the host) and the drives refuse every late command
    cmd = [sys.executable, '-m', 'hil_nodes.cli.main', 'run', 'hexafloat', '--realtime', '--time-scale', '0.5',
           '--duration', '5', '--scenario', 'driver_qos', '--domain-id', str(ros.domain_id), '--quiet', '--record', str(tmp_path)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env={**os.environ, 'ROS_AUTOMATIC_DISCOVERY_RANGE': 'LOCALHOST'})
    try:
        ros.spin_until(lambda: proc.poll() is not None, 180, 'the real-time run to end')
    finally:
        if proc.poll() is None:
            proc.kill()
    out = proc.stdout.read()
    summary = dict(line.split(': ', 1) for line in out.splitlines() if ': ' in line and not line.startswith(' '))
    # The run must end by itself, unfaulted and clean; whether this machine held real time while the
    # suite ran beside it (exit 1 with "real time was not held" alone) is a timing, measured in bench/.
    assert summary.get('outcome') == 'done' and summary.get('faults') == '0', out
    assert summary.get('safety_events') == 'none', out
    assert proc.returncode == 0 or (proc.returncode == 1 and summary['realtime_held'].startswith('NO')), out
    # the machine's speed comes with the real-time verdict (hil_nodes.cli.calibration)
    assert float(summary['calibration'].split(' s ')[0]) > 0, summary.get('calibration')
    # and again as the graph stopped: the machine drifts within a run
    assert float(summary['calibration_after'].split(' s ')[0]) > 0, summary.get('calibration_after')
    bag = next(p for p in tmp_path.iterdir() if p.is_dir())
    published = {topic: [] for topic in TOPICS}
    for topic, _, msg in read_messages(bag, list(TOPICS)):
        published[topic].append(_stamp(msg))
    for (topic, kind), stamps in got.items():
        assert len(stamps) > 400, f'{topic} ({kind}): {len(stamps)} messages'       # > 1 s of 400 Hz
        if kind == 'reliable':
            sent = np.array(published[topic])
            window = sent[(sent >= min(stamps)) & (sent <= max(stamps))]
            missing = np.setdiff1d(window, np.array(stamps))
            assert len(window) > 400 and missing.size == 0, (
                f'{topic} (reliable): {missing.size} of the {len(window)} messages published while it '
                f'listened never arrived')
