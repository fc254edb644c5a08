"""mock_iiwa over real DDS: lockstep pairing by arrival (1 ms frames, /clock owned), velocity
tracking, rejected commands brake smoothly, real-time mode advances without commands."""
import numpy as np
import pytest
from diagnostic_msgs.msg import DiagnosticArray
from rclpy.parameter import Parameter
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from hil_nodes import qos, topics
from hil_nodes.convert import stamp_to_ns
from hil_sim.mock_iiwa import SEED_Q0, MockIiwaNode


class Rig:
    def __init__(self, ros, **params):
        d = dict(lockstep=True, lockstep_timeout=5.0, status_period=0.1)
        d.update(params)
        self.ros = ros
        self.node = ros.add_node(MockIiwaNode(context=ros.context,
                                              parameter_overrides=[Parameter(k, value=v) for k, v in d.items()]))
        self.js = ros.collect(JointState, topics.JOINT_STATES, qos.stream(d['lockstep'], depth=2000))
        self.clock = ros.collect(Clock, topics.CLOCK, qos.stream(True, depth=2000))
        self.diag = ros.collect(DiagnosticArray, topics.DIAGNOSTICS, 100)
        self.pub = ros.node.create_publisher(Float64MultiArray, topics.VELOCITY_COMMANDS, qos.command(lockstep=True))
        ros.bring_up('mock_iiwa')
        ros.wait_for_subscribers(topics.VELOCITY_COMMANDS)
        ros.spin_until(lambda: self.js, 10, 'first joint state')

    def send(self, values):
        t = stamp_to_ns(self.js[-1].header.stamp)     # t_0 is re-published until the first command
        self.pub.publish(Float64MultiArray(data=[float(v) for v in values]))
        self.ros.spin_until(lambda: stamp_to_ns(self.js[-1].header.stamp) > t, 10, 'next frame')
        return self.js[-1]

    def errors(self):
        return [st.message for a in self.diag for st in a.status if st.name.split(': ')[0].strip('/') == 'mock_iiwa' and st.level == b'\x02']


def test_lockstep_one_frame_per_command_and_velocity_tracking(ros):
    rig = Rig(ros)
    first = rig.js[-1]
    assert stamp_to_ns(first.header.stamp) == 0
    np.testing.assert_allclose(first.position, SEED_Q0, atol=1e-12)
    assert len(first.effort) == 7 and np.abs(first.effort).max() > 1.0      # gravity load on the sensors
    ros.spin_for(0.3)                       # no command yet: time does not advance
    assert all(stamp_to_ns(m.header.stamp) == 0 for m in rig.js)
    cmd = np.array([0.1, -0.05, 0.1, 0.05, -0.1, 0.1, 0.2])
    for k in range(1, 301):
        js = rig.send(cmd)
        assert stamp_to_ns(js.header.stamp) == k * 1_000_000
        ros.spin_until(lambda: stamp_to_ns(rig.clock[-1].clock) == k * 1_000_000, 10, '/clock of the frame')
    np.testing.assert_allclose(js.velocity, cmd, atol=5e-3)


@pytest.mark.parametrize('bad', [[0.1] * 6, [0.1, np.nan, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0, 50.0]])
def test_bad_commands_are_rejected_and_joints_brake(ros, bad):
    rig = Rig(ros)
    cmd = np.full(7, 0.2)
    for _ in range(300):
        rig.send(cmd)
    v0 = np.array(rig.js[-1].velocity)
    for _ in range(150):
        rig.send(bad)                          # each still advances the frame (brakes)
    ros.spin_until(lambda: any('rejected' in m for m in rig.errors()), 10, 'rejection diagnostic')
    vel = np.array([m.velocity for m in rig.js[-151:]])
    assert np.abs(vel[-1]).max() < 0.25 * np.abs(v0).max()
    assert np.abs(np.diff(vel, axis=0)).max() < 0.05           # a ramp, not a jump
    rig.send(cmd)                                              # a valid command resumes
    assert rig.node._problem is None


def test_real_time_mode_advances_and_brakes_without_commands(ros):
    rig = Rig(ros, lockstep=False, command_timeout=0.05)
    ros.spin_until(lambda: stamp_to_ns(rig.js[-1].header.stamp) > 50_000_000, 20, 'sim time advancing')
    q = np.array(rig.js[-1].position)
    assert np.abs(q - SEED_Q0).max() < 2e-3          # holds still with gravity compensation
