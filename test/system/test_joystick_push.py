"""A force-joystick push through the whole Hexafloat chain: `hil run hexafloat --lockstep` (mock
hardware, simulated sensor) and, once RUNNING, a joystick wrench of 30 N along base +y published
by the test as an operator's joystick would (20 Hz, geometry_msgs/WrenchStamped). The platform
moves along +y by the admittance model's static gain, F / k = 30 N / 5000 N/m = 6 mm
(config/admittance.yaml: 5000 N/m in every translation; seed 000 section 5.1), computed here
from the model's stiffness, not from the graph; the default load's impulses act along x only."""
import os

import numpy as np
import pytest
import yaml
from hilrun import BackgroundRun
from geometry_msgs.msg import PoseStamped, WrenchStamped
from rclpy.qos import QoSProfile, ReliabilityPolicy
from std_msgs.msg import String

from hil_nodes import qos, topics
from hil_nodes.msgs.convert import stamp_to_ns

pytestmark = pytest.mark.slow

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(__file__)))
PUSH = 30.0


def _stiffness_y() -> float:
    with open(os.path.join(ROOT, 'config', 'admittance.yaml')) as fh:
        return float(yaml.safe_load(fh)['admittance']['ros__parameters']['stiffness'][1])


def test_a_joystick_push_moves_the_platform_by_the_static_gain(ros, domain_id):
    # lockstep paced at real time, as an operator pushes: the joystick's timeout is sample time, and
    # a free-running lockstep run (several times real time) would see a 20 Hz wall-clock joystick
    # as gaps longer than joystick_timeout (released between messages)
    run = BackgroundRun('hexafloat', '--lockstep', '--time-scale', '1.0', '--duration', '14', domain_id=domain_id)
    try:
        modes = ros.collect(String, topics.HIL_MODE, qos.latched(20))
        poses = []
        ros.node.create_subscription(
            PoseStamped, topics.KINEMATICS_TCP_POSE,
            lambda m: poses.append((stamp_to_ns(m.header.stamp) * 1e-9, m.pose.position.x, m.pose.position.y)),
            QoSProfile(depth=500, reliability=ReliabilityPolicy.BEST_EFFORT))
        joy = ros.node.create_publisher(WrenchStamped, topics.JOYSTICK_WRENCH, 10)
        run.wait_for_mode(ros, modes, 'RUNNING')
        ros.spin_until(lambda: len(poses) > 50, timeout=60, what='TCP poses')
        before = np.array(poses[-40:])
        msg = WrenchStamped()
        msg.header.frame_id = 'hexapod_base'
        msg.wrench.force.y = PUSH
        pushing = {'from': None}

        def send():
            joy.publish(msg)
            if pushing['from'] is None and poses:
                pushing['from'] = poses[-1][0]          # sim time when the push began (at the latest)
        ros.node.create_timer(0.05, send)
        ros.spin_until(lambda: pushing['from'] is not None and poses[-1][0] > pushing['from'] + 3.5, timeout=240,
                       what='3.5 s of sim time pushed')
        assert modes[-1].data == 'RUNNING', ([m.data for m in modes], run.output())
    finally:
        run.stop()
    p = np.array(poses)
    t0 = pushing['from']
    settled = p[(p[:, 0] > t0 + 2.5) & (p[:, 0] <= t0 + 3.5)]
    expected = PUSH / _stiffness_y()                      # 6 mm
    assert len(settled) > 20
    dy = settled[:, 2].mean() - before[:, 2].mean()
    print(f"joystick push: y moved {dy * 1e3:.4f} mm (model {expected * 1e3:.4f} mm), ptp {np.ptp(settled[:, 2]) * 1e3:.4f} mm")
    assert abs(before[:, 2].mean()) < 0.1 * expected      # at home before the push
    assert dy == pytest.approx(expected, rel=0.1), f'y moved {dy * 1e3:.3f} mm, the model says {expected * 1e3:.3f} mm'
    assert np.ptp(settled[:, 2]) < 0.2 * expected         # settled, not oscillating
