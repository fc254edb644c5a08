"""hil_nodes.msgs.convert message builders."""
import pytest
from hypothesis import given, settings, strategies as st


def test_refilled_trajectory_messages_equal_freshly_built_ones():
    """convert.TrajectoryMessages refills one message per point count (the generated message
    classes are slow to construct); every refill equals a message built from scratch."""
    import numpy as np

    from hil_nodes.msgs.convert import TrajectoryMessages, joint_trajectory
    rng = np.random.default_rng(3)
    names = [f'slider_{i}' for i in range(1, 7)]
    writer = TrajectoryMessages(names, 0.000625)
    for k, n, first in ((0, 4, 5), (1, 8, 1), (2, 8, 1), (3, 4, 1)):
        pos, vel = rng.normal(size=(n, 6)), rng.normal(size=(n, 6))
        stamp = 1_700_000_000_123_456_789 + k * 2_500_000
        fresh = joint_trajectory(names, stamp, (np.arange(n) + first) * 0.000625, pos, vel)
        assert writer.fill(stamp, pos, vel, first_index=first) == fresh


@settings(max_examples=300, deadline=None)
@given(st.permutations(['a', 'b', 'c', 'd']), st.lists(st.floats(allow_infinity=True, allow_nan=True), min_size=4,
                                                       max_size=4), st.booleans())
def test_joint_positions_in_any_order_equal_a_lookup_by_name(order, values, duplicate):
    """The fast path (the robot's joints in its order) and the general one give the positions
    of the asked names, and refuse NaN/inf and duplicates alike."""
    import math

    from sensor_msgs.msg import JointState

    from hil_nodes.msgs.convert import joint_positions
    names = list(order)
    if duplicate:
        names[-1] = names[0]
    msg = JointState(name=names, position=values)
    want = ['a', 'b', 'c', 'd']
    if duplicate:
        with pytest.raises(ValueError, match='duplicate|missing'):
            joint_positions(msg, want)
        return
    if not all(math.isfinite(v) for v in values):
        with pytest.raises(ValueError, match='non-finite'):
            joint_positions(msg, want)
        return
    assert joint_positions(msg, want).tolist() == [values[names.index(n)] for n in want]


def test_joint_order_checks_a_tuple_once_and_every_other_input_each_time():
    """``JointOrder``: the same names tuple, once accepted in the robot's order, gives the positions
    as ``positions_by_name`` does; bad positions are refused with its words; another order, a
    list or a names tuple with a duplicate goes the whole way each time."""
    from hil_nodes.msgs import convert
    names = ['j1', 'j2', 'j3']
    order = convert.JointOrder(names)
    got = ('j1', 'j2', 'j3')
    for k in range(3):
        q = order.positions(got, [1.0 + k, 2.0, 3.0])
        assert q.dtype == float and q.tolist() == [1.0 + k, 2.0, 3.0]
    assert order._accepted is got
    with pytest.raises(ValueError, match='non-finite'):
        order.positions(got, [1.0, float('nan'), 3.0])
    with pytest.raises(ValueError, match='3 joint names but 2 positions'):
        order.positions(got, [1.0, 2.0])
    assert order.positions(('j3', 'j1', 'j2'), [3.0, 1.0, 2.0]).tolist() == [1.0, 2.0, 3.0]
    assert order._accepted is got                     # a reordered tuple is not the accepted one
    as_list = ['j1', 'j2', 'j3']
    assert order.positions(as_list, [4.0, 5.0, 6.0]).tolist() == [4.0, 5.0, 6.0]
    assert order._accepted is got                     # a list may change: never taken as checked
    with pytest.raises(ValueError, match='duplicate'):
        order.positions(('j1', 'j1', 'j3'), [1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match='missing'):
        order.positions(('j1', 'j2', 'j4'), [1.0, 2.0, 3.0])
