"""The force joystick in the ft_sensor node over DDS: a joystick wrench (topics.JOYSTICK_WRENCH)
is added to the sensor's load before the signal chain, limited in magnitude and rate, and
released after joystick_timeout; what the node publishes is that ramp through the
Butterworth filter, computed here independently (closed-form ramp, scipy's butter + sosfilt).
A base-frame push is turned into the sensor's axes by the TCP orientation; NaN/inf and an
unknown frame are refused with a status and change nothing; a real sensor (netft) ignores the
joystick unless joystick_in_hardware."""
import socket

import numpy as np
from diagnostic_msgs.msg import DiagnosticArray
from geometry_msgs.msg import PoseStamped, WrenchStamped
from rclpy.qos import QoSProfile, ReliabilityPolicy
from scipy import signal

from hil_nodes import topics
from hil_nodes.ft_sensor.node import FtSensorNode
from hil_nodes.msgs.convert import array_to_wrench, ns_to_stamp, stamp_to_ns, wrench_to_array
from rig import NodeRig, build, statuses
from rosutil import PUB_RELIABLE, SUB_RELIABLE

DT = 625_000                       # 1.6 kHz samples
FS = 1600.0
JOY = dict(joystick_force_max=50.0, joystick_torque_max=5.0, joystick_force_rate=200.0,
           joystick_torque_rate=20.0, joystick_timeout=0.3)


class Rig(NodeRig):
    """ft_sensor in lockstep on the mock source; the test is the sensor (zero load, sent frame
    by frame) and the joystick."""

    def __init__(self, ros, **params):
        params = dict(lockstep=True, use_sim_time=True, source='mock', **params)
        super().__init__(ros, build(ros, FtSensorNode, **params), outputs=[topics.FT_WRENCH],
                         inputs=[topics.MOCK_FT_WRENCH, topics.JOYSTICK_WRENCH])
        self.sensor = ros.node.create_publisher(WrenchStamped, topics.MOCK_FT_WRENCH, PUB_RELIABLE)
        self.joy = ros.node.create_publisher(WrenchStamped, topics.JOYSTICK_WRENCH, 10)
        self.pose = ros.node.create_publisher(PoseStamped, topics.KINEMATICS_TCP_POSE, PUB_RELIABLE)
        self.out = ros.collect(WrenchStamped, topics.FT_WRENCH, SUB_RELIABLE)
        self.diag = ros.collect(DiagnosticArray, topics.DIAGNOSTICS, 100)
        self.t = 0

    def processed(self):
        return sum(self.node.chain.counters.values())

    def samples(self, n_frames):
        """Zero-load samples, 4 per frame, each frame waited through the node."""
        for _ in range(n_frames):
            start = self.processed()
            for _ in range(4):
                self.t += DT
                msg = WrenchStamped(wrench=array_to_wrench(np.zeros(6)))
                msg.header.stamp = ns_to_stamp(self.t)
                self.sensor.publish(msg)
            self.ros.spin_until(lambda: self.processed() >= start + 4, timeout=10, what='samples processed')

    def push(self, wrench, frame=''):
        """Publish a joystick wrench and wait until the node took (or refused) it."""
        j = self.node.joystick
        seen = j.accepted + j.refused
        msg = WrenchStamped(wrench=array_to_wrench(np.asarray(wrench, float)))
        msg.header.frame_id = frame
        self.joy.publish(msg)
        self.ros.spin_until(lambda: j.accepted + j.refused > seen, timeout=10, what='joystick input taken')

    def published(self):
        return (np.array([stamp_to_ns(m.header.stamp) for m in self.out]),
                np.array([wrench_to_array(m.wrench) for m in self.out]))


def _ramp(tau, peak, rate, timeout):
    """The applied magnitude tau s after the input (closed form): up at ``rate`` to ``peak``,
    from the first sample past ``timeout`` down at ``rate`` to 0."""
    up = np.minimum(rate * tau, peak)
    at_release = min(rate * timeout, peak)
    down = np.maximum(at_release - rate * (tau - timeout), 0.0)
    return np.where(tau <= timeout + 1e-12, up, down)


def test_push_ramps_is_clipped_filtered_and_released(ros):
    rig = Rig(ros, **JOY).up()
    rig.samples(40)                                        # 0.1 s of zero load
    t_rx = rig.t
    rig.push([0.0, 300.0, 0.0, 0.0, 0.0, 1.0])             # 300 N -> clipped to 50 N along +y
    rig.samples(100)
    rig.push([float('nan'), 10.0, 0.0, 0.0, 0.0, 0.0])     # refused: the 50 N target holds
    rig.push([0.0, 0.0, float('inf'), 0.0, 0.0, 0.0])
    rig.push([0.0, 10.0, 0.0, 0.0, 0.0, 0.0], frame='somewhere_else')
    rig.samples(240)                                       # up to t_rx + 0.85 s: ramped down and released
    ros.spin_until(lambda: len(rig.out) >= 380, timeout=20, what='all frames published')

    n = rig.t // DT
    stamps = np.arange(1, n + 1) * DT
    tau = np.maximum(stamps - t_rx, 0) * 1e-9
    load = np.zeros((n, 6))
    load[:, 1] = _ramp(tau, 50.0, 200.0, 0.3)
    load[:, 5] = _ramp(tau, 1.0, 20.0, 0.3)
    sos = signal.butter(2, 40.0, fs=FS, output='sos')
    expected = signal.sosfilt(sos, load, axis=0)           # filter state starts at the first sample (0)
    got_t, got = rig.published()
    idx = got_t // DT - 1
    assert np.array_equal(got_t, stamps[3::4])             # every frame, stamped with its sample time
    np.testing.assert_allclose(got, expected[idx], atol=1e-6)
    assert got[:, 1].max() > 49.0 and abs(got[-1, 1]) < 1e-6      # reached the limit, then released
    refusals = [s.message for s in statuses(rig.diag, name='ft_sensor: joystick')]
    assert any('non-finite' in m for m in refusals) and any("'somewhere_else' refused" in m for m in refusals)
    assert rig.node.joystick.refused == 3 and rig.node.joystick.accepted == 1


def test_a_push_in_base_axes_is_turned_into_the_sensor_axes(ros):
    rig = Rig(ros, use_tcp_pose=True, output_frame='sensor', joystick_force_rate=1e5, joystick_timeout=5.0).up()
    ros.wait_for_subscribers(topics.KINEMATICS_TCP_POSE)
    pose = PoseStamped()
    c = np.cos(np.pi / 4)
    pose.pose.orientation.z, pose.pose.orientation.w = c, c          # sensor turned 90 deg about base z
    rig.pose.publish(pose)
    ros.spin_until(lambda: abs(rig.node.R[1, 0] - 1.0) < 1e-9, timeout=10, what='the TCP orientation')
    rig.samples(8)
    rig.push([10.0, 0.0, 0.0, 0.0, 0.0, 2.0], frame='hexapod_base')
    rig.samples(120)                                       # 0.3 s: the 40 Hz filter has settled
    _, got = rig.published()
    # base +x is the sensor's -y when the sensor's x points along base y (R = Rz(90 deg))
    np.testing.assert_allclose(got[-1], [0.0, -10.0, 0.0, 0.0, 0.0, 2.0], atol=1e-4)


def test_a_real_sensor_ignores_the_joystick_unless_allowed(ros):
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:       # a port nobody streams from
        s.bind(('127.0.0.1', 0))
        port = s.getsockname()[1]
    node = build(ros, FtSensorNode, source='netft', sensor_ip='127.0.0.1', sensor_port=port, lockstep=False)
    rig = NodeRig(ros, node, inputs=[topics.JOYSTICK_WRENCH]).up()
    diag = ros.collect(DiagnosticArray, topics.DIAGNOSTICS, 100)
    joy = ros.node.create_publisher(WrenchStamped, topics.JOYSTICK_WRENCH, 10)
    assert not rig.node.joystick_on
    msg = WrenchStamped(wrench=array_to_wrench(np.array([20.0, 0, 0, 0, 0, 0])))
    ros.spin_until(lambda: joy.publish(msg) or statuses(diag, name='ft_sensor: joystick', text='ignored'),
                   timeout=10, what='the joystick refused on a real sensor')
    st = statuses(diag, name='ft_sensor: joystick', text='ignored')[-1]
    assert "source netft is a real sensor and 'joystick_in_hardware' is false" in st.message
    assert rig.node.joystick.accepted == 0 and rig.node.joystick.idle
