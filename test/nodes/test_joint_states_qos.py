"""Every /joint_states subscription hears joint_state_broadcaster (the QoS of a lab's ros2_control).

A plain publisher with joint_state_broadcaster's QoS on a lab (reliable + volatile,
``qos.joint_state_broadcaster()``) sends N joint states to each consumer node (kinematics,
space_plant, hybrid_controller, recorder), in lockstep and in real time: the publisher must
match the node's subscription and every message must reach the node's callback (counted by
wrapping the callback before configure). A negative control shows the failure the issue found:
a transient-local subscription (the old lockstep stream QoS) gets nothing from this publisher.
"""
import pytest
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState

from hil_core.hexaslide import JOINT_NAMES as HEXA
from hil_core.hybrid5 import JOINT_NAMES as HYB
from hil_core.iiwa.kinematics import JOINT_NAMES as IIWA
from hil_nodes import qos, topics
from hil_nodes.msgs.convert import ns_to_stamp
from rig import build

N = 120
IIWA_Q0 = [-0.458149, 1.151219, 0.012566, 1.179319, -1.102175, -0.04468, 2.457249]


def _node(kind, ros, lockstep, tmp_path):
    if kind == 'kinematics':
        from hil_nodes.kinematics.node import KinematicsNode
        return build(ros, KinematicsNode, lockstep=lockstep), list(HEXA), [0.0] * 6, '_on_joints'
    if kind == 'space_plant':
        from hil_nodes.space_plant.node import SpacePlantNode
        return build(ros, SpacePlantNode, lockstep=lockstep), list(IIWA), IIWA_Q0, '_on_joints'
    if kind == 'hybrid_controller':
        from hil_nodes.hybrid_controller.node import HybridControllerNode
        return (build(ros, HybridControllerNode, lockstep=lockstep), list(HYB),
                [1.0404, 1.0404, 1.0404, 0.0, 0.0], '_on_joints')
    from hil_nodes.recorder.node import RecorderNode
    return (build(ros, RecorderNode, lockstep=lockstep, bag_path=str(tmp_path / 'bag'), topics=['/joint_states']),
            list(HEXA), [0.0] * 6, '_write')


@pytest.mark.parametrize('lockstep', [True, False], ids=['lockstep', 'realtime'])
@pytest.mark.parametrize('kind', ['kinematics', 'space_plant', 'hybrid_controller', 'recorder'])
def test_every_message_of_a_joint_state_broadcaster_is_delivered(ros, tmp_path, kind, lockstep):
    node, names, q, callback = _node(kind, ros, lockstep, tmp_path)
    received = []
    inner = getattr(node, callback)

    def counting(*args):
        received.append(args[-1])
        return inner(*args)
    setattr(node, callback, counting)          # the subscription is created in configure/activate
    ros.add_node(node)
    pub = ros.node.create_publisher(JointState, topics.JOINT_STATES, qos.joint_state_broadcaster())
    ros.bring_up(node.get_name())
    ros.spin_until(lambda: pub.get_subscription_count() >= 1, 15, 'publisher matched the node')
    for i in range(N):
        msg = JointState(name=names, position=[float(v) + 1e-6 * i for v in q], velocity=[0.0] * len(q))
        msg.header.stamp = ns_to_stamp(1_000_000 * (i + 1))
        pub.publish(msg)
        ros.spin_until(lambda: len(received) >= i + 1, 10, f'joint state {i} delivered')
    ros.spin_for(0.1)
    assert len(received) == N


def test_a_transient_local_subscription_hears_nothing_from_it(ros):
    """The failure this file guards against: durability mismatch, 0 messages."""
    got = []
    old = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL)
    ros.node.create_subscription(JointState, '/js_probe', got.append, old)
    fine = []
    ros.node.create_subscription(JointState, '/js_probe', fine.append, qos.joint_states(lockstep=True))
    pub = ros.node.create_publisher(JointState, '/js_probe', qos.joint_state_broadcaster())
    ros.spin_until(lambda: pub.get_subscription_count() >= 1, 10, 'the volatile subscription matched')
    for i in range(20):
        pub.publish(JointState(name=['a'], position=[float(i)]))
        ros.spin_until(lambda: len(fine) >= i + 1, 10, 'delivered to the volatile subscription')
    ros.spin_for(0.2)
    assert (len(fine), len(got), pub.get_subscription_count()) == (20, 0, 1)


@pytest.mark.parametrize('lockstep', [True, False])
def test_the_profile_never_asks_for_transient_local(lockstep):
    p = qos.joint_states(lockstep)
    assert p.durability == DurabilityPolicy.VOLATILE
    assert p.reliability == (ReliabilityPolicy.RELIABLE if lockstep else ReliabilityPolicy.BEST_EFFORT)
