"""hil_nodes.msgs.cdr_arrays: the chain streams' CDR bytes written from arrays are the recorder's
bytes of the same message (``serialize_exact``: hil_nodes.msgs.cdr_encode, itself checked against
rclpy), and rclpy's ``deserialize_message`` reads them back as that message, for any content,
frame id and joint names (hypothesis). (rclpy's own bytes differ in padding: rmw_fastrtps does
not clear it.)"""
from __future__ import annotations

import numpy as np
from hypothesis import given, settings, strategies as st
from rclpy.serialization import deserialize_message

from hil_nodes.msgs import convert
from hil_nodes.msgs.cdr_arrays import JointStateBytes, JointTrajectoryBytes, StampedDoubles
from hil_nodes.msgs.cdr_encode import serialize_exact

STAMPS = st.integers(min_value=0, max_value=2**31 * 1_000_000_000 - 1)
FLOATS = st.floats(allow_nan=True, allow_infinity=True, width=64)
NAMES = st.text(alphabet=st.characters(min_codepoint=33, max_codepoint=0x2FF), max_size=12)


def rows(n, m):
    return st.lists(st.lists(FLOATS, min_size=m, max_size=m), min_size=n, max_size=n).map(
        lambda r: np.array(r, dtype=np.float64).reshape(n, m))


@settings(max_examples=60, deadline=None)
@given(stamp=STAMPS, frame=NAMES, values=st.lists(FLOATS, min_size=7, max_size=7))
def test_stamped_doubles_are_rclpys_pose_and_wrench_bytes(stamp, frame, values):
    from geometry_msgs.msg import PoseStamped, WrenchStamped
    pose, wrench = PoseStamped(), WrenchStamped()
    convert.fill_pose_stamped(pose, stamp, frame, values)
    convert.fill_wrench_stamped(wrench, stamp, frame, values[:6])
    for msg, count in ((pose, 7), (wrench, 6)):
        got = StampedDoubles(frame, count).encode(stamp, np.array(values[:count]))
        assert got == serialize_exact(msg)
        assert same(deserialize_message(got, type(msg)), msg)


def same(a, b) -> bool:
    """Message equality field by field, NaN equal to NaN (rclpy's == compares floats as floats;
    comparing rclpy's serialized bytes is no good either: it leaves padding bytes uncleared)."""
    import math
    if hasattr(a, 'get_fields_and_field_types'):
        return type(a) is type(b) and all(same(getattr(a, f), getattr(b, f)) for f in a.get_fields_and_field_types())
    if isinstance(a, float) or isinstance(b, float):
        return (math.isnan(a) and math.isnan(b)) or a == b
    if isinstance(a, (list, tuple)) or hasattr(a, 'typecode') or isinstance(a, np.ndarray):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return a == b


def test_a_wrong_number_of_values_is_refused():
    import pytest
    with pytest.raises(ValueError, match='6 values, the message has 7'):
        StampedDoubles('base', 7).encode(0, np.zeros(6))


@settings(max_examples=60, deadline=None)
@given(data=st.data(), stamp=STAMPS, n=st.integers(1, 9), effort=st.booleans())
def test_joint_states_are_rclpys_bytes(data, stamp, n, effort):
    from sensor_msgs.msg import JointState
    names = data.draw(st.lists(NAMES, min_size=n, max_size=n))
    q, v, e = (data.draw(rows(1, n))[0] for _ in range(3))
    msg = JointState(name=names, position=q.tolist(), velocity=v.tolist(), effort=e.tolist() if effort else [])
    msg.header.stamp = convert.ns_to_stamp(stamp)
    got = JointStateBytes(names).encode(stamp, q, v, e if effort else None)
    assert got == serialize_exact(msg)
    back = deserialize_message(got, JointState)
    assert list(back.name) == names and back.header.stamp == msg.header.stamp
    np.testing.assert_array_equal(np.array(back.position), q)


@settings(max_examples=60, deadline=None)
@given(data=st.data(), stamp=STAMPS, n_points=st.integers(1, 16), n=st.integers(1, 7), velocities=st.booleans(),
       first=st.integers(1, 8))
def test_joint_trajectories_are_rclpys_bytes(data, stamp, n_points, n, velocities, first):
    names = data.draw(st.lists(NAMES, min_size=n, max_size=n))
    pos = data.draw(rows(n_points, n))
    vel = data.draw(rows(n_points, n)) if velocities else None
    period = 1.0 / 1600
    times = (np.arange(n_points) + first) * period
    msg = convert.joint_trajectory(names, stamp, times, pos, vel)
    times_ns = np.array([convert.duration_ns(float(t)) for t in times], dtype=np.int64)
    got = JointTrajectoryBytes(names).encode(stamp, times_ns, pos, vel)
    assert got == serialize_exact(msg)
    from trajectory_msgs.msg import JointTrajectory
    back = deserialize_message(got, JointTrajectory)
    assert [convert.stamp_to_ns(p.time_from_start) for p in back.points] == times_ns.tolist()
    np.testing.assert_array_equal(np.array([p.positions for p in back.points]), pos)


def test_a_trajectory_layout_written_once_serves_every_message_of_the_stream():
    """The template of a layout is reused: messages of one layout (point count) with the same or
    other point times (the iiwa's braking tail: stop times on a 10 ms grid that follow the
    velocities) and of another layout, in any order, each come out as their own message's bytes."""
    names = [f'j{i}' for i in range(6)]
    enc = JointTrajectoryBytes(names)
    rng = np.random.default_rng(3)
    full = np.array([convert.duration_ns(t) for t in np.arange(1, 9) / 1600], dtype=np.int64)
    tail = np.array([1_000_000, 11_000_000, 31_000_000, 51_000_000], dtype=np.int64)
    for times in (full, full[4:], full, tail, full[4:], tail + 20_000_000, full + 7 * 10**9):
        pos, vel = rng.normal(size=(len(times), 6)), rng.normal(size=(len(times), 6))
        stamp = int(rng.integers(0, 2**40))
        msg = convert.joint_trajectory(names, stamp, times * 1e-9, pos, vel)
        assert enc.encode(stamp, times, pos, vel) == serialize_exact(msg)


@settings(max_examples=40, deadline=None)
@given(data=st.data(), stamp=STAMPS, n=st.integers(1, 8))
def test_tf_messages_are_the_recorders_bytes(data, stamp, n):
    from tf2_msgs.msg import TFMessage
    from hil_nodes.msgs.cdr_arrays import TfBytes
    transforms = [(data.draw(NAMES), data.draw(NAMES), data.draw(rows(1, 3))[0], data.draw(rows(1, 4))[0])
                  for _ in range(n)]
    msg = convert.tf_message(convert.ns_to_stamp(stamp), transforms)
    got = TfBytes().encode(stamp, transforms)
    assert got == serialize_exact(msg)
    assert same(deserialize_message(got, TFMessage), msg)


@settings(max_examples=40, deadline=None)
@given(data=st.data(), n=st.integers(0, 20))
def test_float64_vectors_read_back_as_the_message(data, n):
    from std_msgs.msg import Float64MultiArray
    from hil_nodes.msgs.cdr_arrays import Float64ArrayBytes
    values = data.draw(rows(1, n))[0] if n else np.zeros(0)
    msg = Float64MultiArray(data=values.tolist())
    got = Float64ArrayBytes().encode(values)
    assert len(got) == len(serialize_exact(msg))      # (rclpy leaves padding bytes uncleared)
    assert same(deserialize_message(got, Float64MultiArray), msg)


@settings(max_examples=40, deadline=None)
@given(data=st.data(), stamp=STAMPS, frame=NAMES, child=NAMES)
def test_odometry_reads_back_as_the_message(data, stamp, frame, child):
    from nav_msgs.msg import Odometry
    pose, twist = data.draw(rows(1, 7))[0], data.draw(rows(1, 6))[0]
    msg = Odometry()
    msg.header.stamp, msg.header.frame_id, msg.child_frame_id = convert.ns_to_stamp(stamp), frame, child
    msg.pose.pose, msg.twist.twist = convert.array_to_pose(pose), convert.array_to_twist(twist)
    got = StampedDoubles(frame, 85, strings=(child,)).encode(stamp, np.concatenate((pose, np.zeros(36), twist,
                                                                                     np.zeros(36))))
    assert len(got) == len(serialize_exact(msg))
    assert same(deserialize_message(got, Odometry), msg)
