"""/tf in a bag carries the Hexaslide platform transform equal to the FK pose, as a lab tool reads it.

The kinematics node (lockstep, hexaslide_scaled) gets joint states of known poses; the recorder
writes /tf, /tf_static, /robot_description and /kinematics/tcp_pose. Read back with rosbags:
every joint sample has a hexapod_base -> tcp transform at its stamp, equal to an independent
cold forward kinematics solve within 1e-9 (and bit-equal to the node's own tcp_pose); the
static F/T frame and the latched robot description are in; metadata.yaml offers /tf_static and
/robot_description as transient local; the TFMessage type hash is the one of tf2_msgs.
"""
import numpy as np
import yaml
from sensor_msgs.msg import JointState
from tf2_msgs.msg import TFMessage

from hil_core import hexaslide as hx
from hil_nodes import qos, topics
from hil_nodes.recorder.bag import message_counts, read_messages
from hil_nodes.msgs.convert import ns_to_stamp
from hil_nodes.kinematics.node import KinematicsNode
from hil_nodes.recorder.node import RecorderNode
from rig import start

TF_HASH = 'RIHS01_e369d0f05a23ae52508854b66f6aa0437f3449d652e8cbf22d5abe85d020f087'   # tf2_msgs/msg/TFMessage
GEOM = hx.load_geometry('hexaslide_scaled')
FRAME_NS = 2_500_000
N = 40
RECORDED = ['/tf', '/tf_static', '/robot_description', '/kinematics/tcp_pose']


def _same_pose(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return max(np.abs(a[:3] - b[:3]).max(), min(np.abs(a[3:] - b[3:]).max(), np.abs(a[3:] + b[3:]).max()))


def test_tf_in_the_bag_is_the_fk_pose(ros, tmp_path):
    bag = tmp_path / 'bag'
    kin = start(ros, KinematicsNode, lockstep=True, tf_frames_rate=100.0)
    ros.bring_up('kinematics')
    rec = start(ros, RecorderNode, bag_path=str(bag), topics=RECORDED, discovery_period=0.05)
    ros.bring_up('recorder')
    ros.spin_until(lambda: len(rec._subs) == len(RECORDED), 15, 'recorder subscribed to every topic')
    assert {str(i.topic_type_hash) for i in ros.node.get_publishers_info_by_topic(topics.TF)} == {TF_HASH}

    pub = ros.node.create_publisher(JointState, topics.JOINT_STATES, qos.joint_state_broadcaster(100))
    ros.spin_until(lambda: pub.get_subscription_count() >= 1, 15, 'kinematics subscribed')
    truth = hx.random_poses(GEOM, N, rng=4)
    q = hx.inverse_kinematics(GEOM, truth).q
    for i in range(N):
        msg = JointState(name=list(GEOM.joint_names), position=[float(v) for v in q[i]])
        msg.header.stamp = ns_to_stamp((i + 1) * FRAME_NS)
        pub.publish(msg)
    ros.spin_until(lambda: rec.bag.counts().get('/tf', 0) >= N, 20, 'every /tf message recorded')
    ros.spin_until(lambda: all(rec.bag.counts().get(t, 0) for t in ('/tf_static', '/robot_description')),
                   10, 'the latched topics recorded')
    assert ros.change_state('recorder', 'deactivate') and ros.change_state('recorder', 'cleanup')

    counts = message_counts(bag)
    assert counts['/tf'] == N and counts['/kinematics/tcp_pose'] == N
    assert counts['/tf_static'] == 1 and counts['/robot_description'] == 1
    fk = hx.ForwardKinematics(GEOM, tol=1e-13, max_iter=100)
    platform, legs, sliders = {}, 0, 0
    for _, _, m in read_messages(bag, ['/tf']):
        for t in m.transforms:
            stamp = t.header.stamp.sec * 10**9 + t.header.stamp.nanosec
            x = [t.transform.translation.x, t.transform.translation.y, t.transform.translation.z,
                 t.transform.rotation.x, t.transform.rotation.y, t.transform.rotation.z, t.transform.rotation.w]
            if (t.header.frame_id, t.child_frame_id) == ('hexapod_base', 'tcp'):
                platform[stamp] = np.array(x)
            legs += t.child_frame_id.startswith('leg_')
            sliders += t.child_frame_id.startswith('slider_')
    assert sorted(platform) == [(i + 1) * FRAME_NS for i in range(N)]
    worst = 0.0
    for i in range(N):
        fk.reset()
        res = fk.solve(q[i])
        assert res.converged
        worst = max(worst, _same_pose(platform[(i + 1) * FRAME_NS], res.pose))
        assert _same_pose(platform[(i + 1) * FRAME_NS], truth[i]) < 1e-8
    assert worst < 1e-9, worst
    tcp = {m.header.stamp.sec * 10**9 + m.header.stamp.nanosec: m.pose
           for _, _, m in read_messages(bag, ['/kinematics/tcp_pose'])}
    for stamp, p in tcp.items():
        assert list(platform[stamp]) == [p.position.x, p.position.y, p.position.z, p.orientation.x,
                                         p.orientation.y, p.orientation.z, p.orientation.w]
    # display frames: 100 Hz of sample time over 0.1 s of samples at 400 Hz -> every 4th sample
    assert legs == sliders == 6 * len(range(0, N, 4))
    static = [t for _, _, m in read_messages(bag, ['/tf_static']) for t in m.transforms]
    assert [(t.header.frame_id, t.child_frame_id) for t in static] == [('tcp', 'ft_sensor')]
    desc = [m.data for _, _, m in read_messages(bag, ['/robot_description'])]
    assert desc[0].startswith('<?xml') and '<ros2_control' in desc[0]

    meta = yaml.safe_load((bag / 'metadata.yaml').read_text())['rosbag2_bagfile_information']
    topic_meta = {t['topic_metadata']['name']: t['topic_metadata'] for t in meta['topics_with_message_count']}
    assert topic_meta['/tf']['type_description_hash'] == TF_HASH
    durability = {name: [p['durability'] for p in tm['offered_qos_profiles']] for name, tm in topic_meta.items()}
    assert durability['/tf_static'] == ['transient_local'] and durability['/robot_description'] == ['transient_local']
    assert durability['/tf'] == ['volatile']
    assert kin.counters['published'] == N


def test_tf_message_is_the_tf2_msgs_type():
    """The venv's tf2_msgs (interfaces/tf2_msgs, built by make tf2-msgs) has tf2_msgs' definition."""
    from rosbags.typesys import Stores, get_typestore
    assert get_typestore(Stores.ROS2_KILTED).hash_rihs01('tf2_msgs/msg/TFMessage') == TF_HASH
    fields = TFMessage.get_fields_and_field_types()
    assert fields == {'transforms': 'sequence<geometry_msgs/TransformStamped>'}


def test_space_plant_tf_chain_ends_at_the_inertial_ee_pose(ros):
    """world -> satellite (every sample) -> iiwa_link_0 (static mount) -> joint frames (at
    tf_frames_rate) -> iiwa_link_ee (static) composes to the node's inertial EE pose (eq. 12)."""
    from geometry_msgs.msg import PoseStamped
    from nav_msgs.msg import Odometry

    from hil_core.maths import tf_frames as tf
    from hil_core.iiwa.kinematics import JOINT_NAMES
    from hil_nodes.msgs.convert import pose_to_array, stamp_to_ns
    from hil_nodes.space_plant.node import SpacePlantNode
    node = start(ros, SpacePlantNode, lockstep=True, tf_frames_rate=250.0)
    tfs = ros.collect(TFMessage, topics.TF, qos.tf())
    static = ros.collect(TFMessage, topics.TF_STATIC, qos.tf_static())
    odom = ros.collect(Odometry, topics.SPACE_SATELLITE_ODOM, qos.joint_states(True))
    ee = ros.collect(PoseStamped, topics.SPACE_EE_POSE, qos.joint_states(True))
    pub = ros.node.create_publisher(JointState, topics.JOINT_STATES, qos.joint_state_broadcaster(100))
    ros.bring_up('space_plant')
    ros.spin_until(lambda: pub.get_subscription_count() >= 1 and static, 15, 'matched, static frames in')
    q = np.array([-0.458149, 1.151219, 0.012566, 1.179319, -1.102175, -0.04468, 2.457249])
    n = 12
    for k in range(n):
        msg = JointState(name=list(JOINT_NAMES), position=[float(v) for v in q + 0.002 * k])
        msg.header.stamp = ns_to_stamp((k + 1) * 1_000_000)
        pub.publish(msg)
        ros.spin_until(lambda: len(ee) > k, 10, f'sample {k}')
    ros.spin_until(lambda: len(tfs) >= n, 10, 'every /tf message')
    statics = {(t.header.frame_id, t.child_frame_id): t for m in static for t in m.transforms}
    assert set(statics) == {('satellite', 'iiwa_link_0'), ('iiwa_link_7', 'iiwa_link_ee')}

    def tup(t):
        r, p = t.transform.rotation, t.transform.translation
        return (t.header.frame_id, t.child_frame_id, np.array([p.x, p.y, p.z]), np.array([r.x, r.y, r.z, r.w]))
    sat = {stamp_to_ns(o.header.stamp): pose_to_array(o.pose.pose) for o in odom}
    ee_at = {stamp_to_ns(m.header.stamp): pose_to_array(m.pose) for m in ee}
    checked = 0
    for m in tfs:
        by_child = {t.child_frame_id: tup(t) for t in m.transforms}
        stamp = stamp_to_ns(m.transforms[0].header.stamp)
        world_sat = by_child['satellite']
        assert world_sat[0] == 'world' and _same_pose(np.r_[world_sat[2], world_sat[3]], sat[stamp]) == 0.0
        if 'iiwa_link_1' not in by_child:
            continue
        chain = tf.compose(world_sat, tup(statics[('satellite', 'iiwa_link_0')]))
        for i in range(1, 8):
            chain = tf.compose(chain, by_child[f'iiwa_link_{i}'])
        chain = tf.compose(chain, tup(statics[('iiwa_link_7', 'iiwa_link_ee')]))
        assert _same_pose(np.r_[chain[2], chain[3]], ee_at[stamp]) < 1e-12
        checked += 1
    assert checked == 3                       # 250 Hz of 1 kHz samples over 12 ms: samples 1, 5, 9
    assert node.frames == n
