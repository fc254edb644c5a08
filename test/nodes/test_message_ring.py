"""hil_nodes.msgs.message_ring: a refilled message equals the one the converters build, and a ring
hands a message out again only ``depth`` publishes later (a published message belongs to its
subscribers until then)."""
import numpy as np
import pytest
from geometry_msgs.msg import PoseStamped, WrenchStamped
from hypothesis import given, settings, strategies as st

from hil_nodes.msgs import convert
from hil_nodes.msgs.convert import fill_pose_stamped, fill_wrench_stamped
from hil_nodes.msgs.message_ring import MessageRing

finite = st.floats(-1e6, 1e6, allow_nan=False)
stamps = st.integers(0, 2**40)


@settings(max_examples=200, deadline=None)
@given(st.lists(finite, min_size=6, max_size=6), stamps, stamps)
def test_refilled_wrench_equals_a_new_one(w, stamp_ns, old_stamp):
    want = WrenchStamped(wrench=convert.array_to_wrench(np.array(w)))
    want.header.stamp, want.header.frame_id = convert.ns_to_stamp(stamp_ns), 'ft_sensor'
    msg = WrenchStamped()
    fill_wrench_stamped(msg, old_stamp, 'other', np.arange(6.0))      # a message used before
    fill_wrench_stamped(msg, stamp_ns, 'ft_sensor', np.array(w))
    assert msg == want


@settings(max_examples=200, deadline=None)
@given(st.lists(finite, min_size=7, max_size=7), stamps, st.booleans())
def test_refilled_pose_equals_a_new_one(p, stamp_ns, as_message):
    want = PoseStamped(pose=convert.array_to_pose(np.array(p)))
    want.header.stamp, want.header.frame_id = convert.ns_to_stamp(stamp_ns), 'base'
    msg = PoseStamped()
    fill_pose_stamped(msg, np.int64(3), 'x', np.ones(7))
    fill_pose_stamped(msg, convert.ns_to_stamp(stamp_ns) if as_message else np.int64(stamp_ns), 'base', np.array(p))
    assert msg == want


def test_a_ring_reuses_a_message_only_depth_publishes_later():
    ring = MessageRing(PoseStamped, depth=4)
    handed = [ring.next() for _ in range(9)]
    assert all(handed[i] is not handed[i + k] for i in range(5) for k in range(1, 4))
    assert all(handed[i] is handed[i + 4] for i in range(5))
    assert len({id(m) for m in handed}) == 4
    with pytest.raises(ValueError, match='at least 2'):
        MessageRing(PoseStamped, depth=1)
