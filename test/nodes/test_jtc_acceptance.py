"""hil_core.drives.joint_trajectory: the Kilted JTC acceptance rules, one test per rule, and the guard.

Expected outcomes are the rules of ``validate_trajectory_msg`` (ros2_controllers ``kilted``) as
read from its source (STYLE.md section 2 table; docs/lab_ros2_control.md): each test builds a
message that breaks exactly one rule, or two to show which one is checked first.
"""
import math

import pytest

from hil_core.drives.joint_trajectory import (FLOAT_EPSILON, JTC_REASONS, JtcSettings, Point, Trajectory,
                                       guard_trajectory, jtc_validate, to_controller_order)

J = ('slider_1', 'slider_2', 'slider_3')
MS = 1_000_000
NOW = 50 * MS
STAMP = 49 * MS


def pt(t_ms, pos=(0.0, 0.0, 0.0), vel=(), acc=(), eff=()):
    return Point(int(round(t_ms * MS)), tuple(pos), tuple(vel), tuple(acc), tuple(eff))


def traj(points, names=J, stamp=STAMP):
    return Trajectory(tuple(names), tuple(points), stamp)


GOOD = traj([pt(1), pt(2), pt(3)])
S = JtcSettings(J)


def check(t, settings=S, now=NOW):
    return jtc_validate(t, settings, now)


def test_defaults_are_the_parameter_file_defaults():
    s = JtcSettings(J)
    assert (s.allow_partial_joints_goal, s.allow_nonzero_velocity_at_trajectory_end,
            s.allow_integration_in_goal_trajectories, s.command_interfaces) == (False, False, False, ('position',))
    assert FLOAT_EPSILON == pytest.approx(1.1920929e-07, rel=1e-7)
    assert list(JTC_REASONS.values()) == list(range(1, 10))


def test_a_good_message_is_accepted_in_any_joint_order():
    assert check(GOOD)
    assert check(traj([pt(1, (1, 2, 3))], names=J[::-1]))


def test_rule_1_joint_count_unless_partial_goals_are_allowed():
    partial = traj([pt(1, (0.0, 0.0))], names=J[:2])
    v = check(partial)
    assert (v.accepted, v.reason, v.rule) == (False, 'joint_count', 1)
    assert check(partial, JtcSettings(J, allow_partial_joints_goal=True))
    # more names than joints fails rule 1 too (before the unknown-name rule)
    assert check(traj([pt(1, (0, 0, 0, 0))], names=J + ('x',))).reason == 'joint_count'


def test_rule_2_empty_joint_names():
    v = check(traj([pt(1, ())], names=()), JtcSettings(J, allow_partial_joints_goal=True))
    assert (v.reason, v.rule) == ('empty_joint_names', 2)
    assert check(traj([pt(1, ())], names=())).reason == 'joint_count'   # rule 1 comes first


def test_rule_3_empty_points():
    assert check(traj([])).reason == 'empty_points'


def test_rule_4_unknown_name_and_duplicates_are_not_checked():
    assert check(traj([pt(1)], names=('slider_1', 'slider_2', 'slider_9'))).reason == 'unknown_joint'
    # a duplicated name with the right count passes the JTC (the guard refuses it)
    dup = traj([pt(1)], names=('slider_1', 'slider_1', 'slider_2'))
    assert check(dup)
    assert guard_trajectory(dup, J).reason == 'duplicate_joint'


def test_rule_5_nonzero_end_velocity_against_float_epsilon():
    just_below = traj([pt(1, vel=(0, 0, 0)), pt(2, vel=(0.0, 0.9 * FLOAT_EPSILON, 0.0))])
    above = traj([pt(1, vel=(0, 0, 0)), pt(2, vel=(0.0, 0.0, -1.1 * FLOAT_EPSILON))])
    assert check(just_below)
    v = check(above)
    assert (v.reason, v.rule) == ('nonzero_end_velocity', 5)
    assert 'slider_3' in v.detail
    assert check(above, JtcSettings(J, allow_nonzero_velocity_at_trajectory_end=True))
    # only the last point counts, empty velocities pass, and fabs(NaN) > eps is false
    assert check(traj([pt(1, vel=(5, 5, 5)), pt(2, vel=(0, 0, 0))]))
    assert check(traj([pt(1), pt(2)]))
    assert check(traj([pt(1, vel=(0, 0, 0)), pt(2, vel=(math.nan, 0, 0))]))


def test_rule_6_ends_in_the_past_exactly_at_the_nanosecond():
    ends_at = STAMP + 3 * MS
    assert check(GOOD, now=ends_at)                         # end == now: not in the past
    v = check(GOOD, now=ends_at + 1)
    assert (v.reason, v.rule) == ('ends_in_past', 6)
    assert check(traj(GOOD.points, stamp=0), now=10**18)   # stamp 0 = start now: never past
    # rule 5 is checked before rule 6
    both = traj([pt(1, vel=(1, 1, 1))])
    assert check(both, now=10**18).reason == 'nonzero_end_velocity'


def test_rule_7_strictly_increasing_times_first_point_unchecked():
    assert check(traj([pt(1), pt(1)])).reason == 'time_not_increasing'
    assert check(traj([pt(2), pt(1.5), pt(3)])).rule == 7
    # the first point's time is not checked: 0 and negative pass the JTC (the guard refuses < 0)
    assert check(traj([pt(0), pt(1)]))
    neg = traj([pt(-1), pt(1)])
    assert check(neg)
    assert guard_trajectory(neg, J).reason == 'negative_time'


def test_rule_8_point_sizes_and_integration():
    assert check(traj([pt(1, (0, 0))])).reason == 'point_size'
    assert check(traj([pt(1, vel=(0, 0))])).rule == 8
    assert check(traj([pt(1, acc=(0,))])).reason == 'point_size'
    assert check(traj([pt(1, ())])).reason == 'point_size'          # positions may not be empty
    integ = JtcSettings(J, allow_integration_in_goal_trajectories=True)
    assert check(traj([pt(1, (), vel=(0, 0, 0))]), integ)             # ...unless integrating
    assert check(traj([pt(1, ())]), integ).reason == 'point_size'     # but not all three empty
    assert check(traj([pt(1, (), vel=(0, 0))]), integ).reason == 'point_size'


def test_rule_9_effort_needs_an_effort_command_interface():
    e = traj([pt(1, eff=(1, 2, 3))])
    assert check(e).reason == 'effort_not_supported'
    assert check(e, JtcSettings(J, command_interfaces=('position', 'effort')))
    # effort sizes are not checked at all
    assert check(traj([pt(1, eff=(1,))]), JtcSettings(J, command_interfaces=('effort',)))


def test_rules_7_to_9_are_checked_point_by_point():
    # point 1 has a bad size, point 2 a bad time: the size of point 1 is reported
    t = traj([pt(1), pt(2, (0, 0)), pt(1.5)])
    assert check(t).reason == 'point_size'
    # point 1 has effort, point 2 a bad time: the effort of point 1 is reported
    t = traj([pt(1), pt(2, eff=(0, 0, 0)), pt(1.5)])
    assert check(t).reason == 'effort_not_supported'
    t = traj([pt(1), pt(0.5, eff=(0, 0, 0))], stamp=0)
    assert check(t).reason == 'time_not_increasing'


def test_nan_and_inf_pass_the_jtc_and_are_refused_by_the_guard():
    t = traj([pt(1, (math.nan, 0, 0)), pt(2, (0, math.inf, 0))])
    assert check(t)
    g = guard_trajectory(t, J)
    assert (g.accepted, g.reason, g.rule) == (False, 'non_finite', 0)


def test_guard_limits_in_controller_order():
    t = traj([pt(1, (0.30, 0.0, 0.0), vel=(0.0, 0.0, 2.0))], names=('slider_3', 'slider_2', 'slider_1'))
    lo, hi, vmax = (-0.2, -0.2, -0.2), (0.2, 0.2, 0.4), (1.0, 1.0, 3.0)
    # slider_3 = 0.30 is inside its own [-0.2, 0.4]; its velocity 0 is fine; slider_1's 2.0 > 1.0
    g = guard_trajectory(t, J, lo, hi, vmax)
    assert (g.reason, 'slider_1' in g.detail) == ('velocity_limit', True)
    g = guard_trajectory(t, J, lo, (0.2, 0.2, 0.25), (3.0, 3.0, 3.0))
    assert (g.reason, 'slider_3' in g.detail) == ('position_limit', True)
    assert guard_trajectory(t, J, lo, hi, (3.0, 3.0, 3.0))


def test_controller_order_sorts_and_fills_partial_goals():
    t = traj([pt(1, (3.0, 1.0), vel=(0.3, 0.1)), pt(2, (6.0, 2.0), vel=(0.6, 0.2))], names=('slider_3', 'slider_1'))
    o = to_controller_order(t, J, hold_positions=(9.0, 8.0, 7.0))
    assert o.positions.tolist() == [[1.0, 8.0, 3.0], [2.0, 8.0, 6.0]]
    assert o.velocities.tolist() == [[0.1, 0.0, 0.3], [0.2, 0.0, 0.6]]
    assert o.accelerations is None and o.times_ns.tolist() == [MS, 2 * MS]


def test_a_message_converts_exactly():
    """convert.trajectory_from_msg (what a node or a bag check feeds to jtc_validate)."""
    from hil_nodes.msgs.convert import joint_trajectory, trajectory_from_msg
    msg = joint_trajectory(J, 49 * MS + 7, [0.000625, 0.00125], [[1, 2, 3], [4, 5, 6]], [[0, 0, 0], [0.5, 0, 0]])
    t = trajectory_from_msg(msg)
    assert t == Trajectory(J, (Point(625_000, (1.0, 2.0, 3.0), (0.0, 0.0, 0.0)),
                               Point(1_250_000, (4.0, 5.0, 6.0), (0.5, 0.0, 0.0))), 49 * MS + 7)
    assert check(t).reason == 'nonzero_end_velocity'
