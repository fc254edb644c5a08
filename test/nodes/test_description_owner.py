"""One description owner: with robot_state_publisher running (hardware mode: the system files set
``publish_description: false`` and ``tf_joint_frames: false``), the kinematics node and the space
plant publish only what it cannot; with their defaults (mock mode) they stand in for it.

Kinematics (Hexaslide): no /robot_description publisher, /tf without the URDF's slider frames but
with the platform from FK and the legs, /tf_static with the F/T sensor frame alone. Space plant:
/tf_static with the satellite's mount alone, no arm joint frames on /tf.
"""
from sensor_msgs.msg import JointState
from tf2_msgs.msg import TFMessage

from hil_core import hexaslide as hx
from hil_nodes import qos, topics
from hil_nodes.kinematics.node import KinematicsNode
from hil_nodes.msgs.convert import ns_to_stamp
from hil_nodes.space_plant.node import SpacePlantNode
from rig import start

GEOM = hx.load_geometry('hexaslide_scaled')


def _children(msgs) -> set[str]:
    return {t.child_frame_id for m in msgs for t in m.transforms}


def _kinematics_frames(ros, **params):
    statics = ros.collect(TFMessage, topics.TF_STATIC, qos.tf_static())
    tf = ros.collect(TFMessage, topics.TF, qos.tf())
    start(ros, KinematicsNode, lockstep=True, tf_frames_rate=400.0, **params)
    ros.bring_up('kinematics')
    pub = ros.node.create_publisher(JointState, topics.JOINT_STATES, qos.joint_state_broadcaster(10))
    ros.spin_until(lambda: pub.get_subscription_count() >= 1, 15, 'kinematics subscribed')
    msg = JointState(name=list(GEOM.joint_names), position=[0.0] * 6)
    msg.header.stamp = ns_to_stamp(2_500_000)
    pub.publish(msg)
    ros.spin_until(lambda: tf and statics, 15, '/tf and /tf_static')
    return _children(tf), _children(statics), ros.node.count_publishers(topics.ROBOT_DESCRIPTION)


def test_kinematics_beside_robot_state_publisher_publishes_only_what_it_cannot(ros):
    frames, static, description = _kinematics_frames(ros, publish_description=False, tf_joint_frames=False)
    assert description == 0
    assert 'tcp' in frames and {f'leg_{i}' for i in range(1, 7)} <= frames
    assert not any(f.startswith('slider_') for f in frames)
    assert static == {'ft_sensor'}


def test_kinematics_alone_stands_in_for_robot_state_publisher(ros):
    frames, static, description = _kinematics_frames(ros)
    assert description == 1
    assert {f'slider_{i}_link' for i in range(1, 7)} <= frames and 'tcp' in frames
    assert 'ft_sensor' in static


def test_the_space_plant_beside_robot_state_publisher_publishes_the_satellite_alone(ros):
    got = {}
    for joint_frames in (False, True):
        statics = ros.collect(TFMessage, topics.TF_STATIC, qos.tf_static())
        node = start(ros, SpacePlantNode, lockstep=True, tf_joint_frames=joint_frames)
        ros.bring_up(node.get_name())
        ros.spin_until(lambda: statics, 15, '/tf_static')
        got[joint_frames] = (_children(statics), node._tf.rate)
        ros.change_state(node.get_name(), 'deactivate')
        ros.change_state(node.get_name(), 'cleanup')
        ros.executor.remove_node(node)
        node.destroy_node()
    assert got[False] == ({'iiwa_link_0'}, 0.0)                         # the mount, no joint frames
    assert {'iiwa_link_0'} < got[True][0] and got[True][1] > 0          # + the URDF's fixed joints
