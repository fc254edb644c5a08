"""hil_nodes.msgs.cdr_encode against two independent serializers: rclpy's (rmw_fastrtps' CDR, read
back with ``deserialize_message``) and rosbags' (the bytes, padding as zeros), over random
contents, frame names and sequence lengths (empty ones included)."""
import numpy as np
from geometry_msgs.msg import PoseStamped, TransformStamped, WrenchStamped
from hypothesis import given, settings, strategies as st
from rclpy.serialization import deserialize_message, serialize_message
from sensor_msgs.msg import JointState
from tf2_msgs.msg import TFMessage
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from hil_nodes.recorder.bag import typestore
from hil_nodes.msgs.cdr_encode import encode, serialize_exact, serialize_trimmed

STORE = typestore()
names = st.text(alphabet=st.characters(min_codepoint=33, max_codepoint=0x24F), max_size=13)
floats = st.floats(allow_nan=True, allow_infinity=True, width=64)
doubles = st.lists(floats, max_size=7)
sec = st.integers(-2**31, 2**31 - 1)
nanosec = st.integers(0, 999_999_999)


def header(msg, s, ns, frame):
    msg.header.stamp.sec, msg.header.stamp.nanosec, msg.header.frame_id = s, ns, frame
    return msg


def canonical(msg) -> bytes:
    """The message as rosbags writes it: rclpy's bytes read back and written again."""
    typename = f'{type(msg).__module__.split(".")[0]}/msg/{type(msg).__name__}'
    raw = serialize_trimmed(msg)
    return bytes(STORE.serialize_cdr(STORE.deserialize_cdr(raw, typename), typename))


def check(msg):
    data = encode(msg)
    assert data is not None and data == serialize_exact(msg)
    assert data == canonical(msg) and len(data) == len(serialize_trimmed(msg))
    back = deserialize_message(data, type(msg))
    assert canonical(back) == data             # rclpy reads it back as it was (NaN != NaN: as bytes)


@settings(max_examples=150, deadline=None)
@given(sec, nanosec, names, st.lists(floats, min_size=7, max_size=7))
def test_wrench_and_pose_stamped(s, ns, frame, v):
    w = header(WrenchStamped(), s, ns, frame)
    (w.wrench.force.x, w.wrench.force.y, w.wrench.force.z,
     w.wrench.torque.x, w.wrench.torque.y, w.wrench.torque.z) = v[:6]
    check(w)
    p = header(PoseStamped(), s, ns, frame)
    (p.pose.position.x, p.pose.position.y, p.pose.position.z, p.pose.orientation.x,
     p.pose.orientation.y, p.pose.orientation.z, p.pose.orientation.w) = v
    check(p)


@settings(max_examples=150, deadline=None)
@given(sec, nanosec, names, st.lists(names, max_size=7), doubles, doubles, doubles)
def test_joint_state(s, ns, frame, joint_names, q, v, e):
    check(header(JointState(name=joint_names, position=q, velocity=v, effort=e), s, ns, frame))


@settings(max_examples=100, deadline=None)
@given(sec, nanosec, names, st.lists(names, max_size=7),
       st.lists(st.tuples(doubles, doubles, doubles, doubles, sec, nanosec), max_size=9))
def test_joint_trajectory(s, ns, frame, joint_names, points):
    msg = header(JointTrajectory(joint_names=joint_names), s, ns, frame)
    for q, v, a, e, ps, pns in points:
        pt = JointTrajectoryPoint(positions=q, velocities=v, accelerations=a, effort=e)
        pt.time_from_start.sec, pt.time_from_start.nanosec = ps, pns
        msg.points.append(pt)
    check(msg)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(sec, nanosec, names, names, st.lists(floats, min_size=7, max_size=7)), max_size=5))
def test_tf_message(transforms):
    msg = TFMessage()
    for s, ns, frame, child, v in transforms:
        tr = header(TransformStamped(child_frame_id=child), s, ns, frame)
        t, r = tr.transform.translation, tr.transform.rotation
        t.x, t.y, t.z, r.x, r.y, r.z, r.w = v
        msg.transforms.append(tr)
    check(msg)


def test_numpy_sequences_and_other_types():
    """Sequences given as numpy arrays (as a node may fill them) encode alike; a type without an
    encoder is left to rclpy."""
    from std_msgs.msg import String
    js = JointState(name=['a', 'b'], position=np.array([1.0, 2.0]))
    assert encode(js) == canonical(js)
    assert encode(String(data='x')) is None and serialize_exact(String(data='x')) == serialize_message(String(data='x'))
