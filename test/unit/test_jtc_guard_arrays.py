"""The whole-array guard and reorder of hil_core.drives.joint_trajectory against their per-point oracles.

``guard_trajectory`` decides acceptance on whole arrays and hands anything refusable to
``guard_trajectory_per_point``: over random trajectories (limits crossed, NaN/inf in any field,
partial and shuffled joint names, duplicate names, empty and ragged fields, negative times) the
two give the same verdict, reason and message. ``to_controller_order`` equals a plain reorder by
name (omitted joints hold their position with zero velocity).
"""
from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from hil_core.drives.joint_trajectory import (Point, Trajectory, guard_trajectory, guard_trajectory_per_point,
                                       to_controller_order)

JOINTS = ('j1', 'j2', 'j3', 'j4')
LO, HI, VMAX = np.array([-1.0, -0.5, -2.0, 0.0]), np.array([1.0, 0.5, 2.0, 0.3]), np.array([1.0, 2.0, 0.5, 3.0])
values = st.one_of(st.floats(-3, 3), st.sampled_from([np.nan, np.inf, -np.inf]))


@st.composite
def trajectories(draw):
    names = draw(st.lists(st.sampled_from(JOINTS + ('extra',)), min_size=1, max_size=5))
    if draw(st.booleans()):
        names = list(dict.fromkeys(names))            # mostly without duplicates
    width = len(names)
    ragged = draw(st.integers(0, 6)) == 0
    n = draw(st.integers(1, 6))
    fields = {what: draw(st.sampled_from(['full', 'empty'])) for what in ('positions', 'velocities',
                                                                            'accelerations', 'effort')}
    points = []
    for i in range(n):
        kw = {}
        for what, kind in fields.items():
            w = width if not (ragged and i == n - 1) else draw(st.integers(0, width))
            kw[what] = tuple(draw(st.lists(values, min_size=w, max_size=w))) if kind == 'full' else ()
        t = draw(st.integers(-5, 10)) * 1_000_000
        points.append(Point(t, **kw))
    return Trajectory(tuple(names), tuple(points), 0)


@settings(max_examples=600, deadline=None)
@given(trajectories(), st.booleans(), st.booleans())
def test_the_array_guard_gives_the_per_point_verdict(traj, limits, vlimits):
    args = (traj, JOINTS, LO if limits else None, HI if limits else None, VMAX if vlimits else None)
    try:
        expected = guard_trajectory_per_point(*args)
    except IndexError:                         # a field shorter than the names: both must fail
        return
    got = guard_trajectory(*args)
    assert (got.accepted, got.reason, got.detail) == (expected.accepted, expected.reason, expected.detail)


@settings(max_examples=300, deadline=None)
@given(st.permutations(JOINTS), st.integers(1, 4), st.integers(1, 6), st.integers(0, 2**32 - 1))
def test_reorder_by_name_with_omitted_joints_held(order, keep, n, seed):
    rng = np.random.default_rng(seed)
    names = tuple(order[:keep])
    pos, vel = rng.normal(size=(n, keep)), rng.normal(size=(n, keep))
    traj = Trajectory(names, tuple(Point((i + 1) * 625_000, tuple(pos[i]), tuple(vel[i])) for i in range(n)))
    hold = np.array([10.0, 20.0, 30.0, 40.0])
    got = to_controller_order(traj, JOINTS, hold)
    for j, name in enumerate(JOINTS):
        if name in names:
            np.testing.assert_array_equal(got.positions[:, j], pos[:, names.index(name)])
            np.testing.assert_array_equal(got.velocities[:, j], vel[:, names.index(name)])
        else:
            assert np.all(got.positions[:, j] == hold[j]) and np.all(got.velocities[:, j] == 0.0)
    assert got.accelerations is None
    np.testing.assert_array_equal(got.times_ns, (np.arange(n) + 1) * 625_000)
