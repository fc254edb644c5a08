"""hil_core.drives.plants.plain_trajectory: the drives' fast acceptance decides a plain trajectory on
whole arrays exactly as the full check (JTC rules, guard, reordering) would, and leaves
everything else to it.

Oracle: ``TrajectoryFollower.accept`` on the same trajectory. Properties: the fast path accepts
only what the full check accepts, with the same entry to the last bit; it accepts every plain
trajectory the full check accepts (so the common command never takes the slow path); the
compiled kernel and its numpy twin agree; the message reader gives what the Trajectory reader
gives. Joints are reordered between controller and hardware and every joint has its own limits,
so an index mix-up cannot pass."""
import dataclasses
import math

import numpy as np
import pytest
import yaml
from hypothesis import example, given, settings, strategies as st

from hil_core.data_paths import config_file, urdf_file
from hil_core.drives.joint_trajectory import Point, Trajectory
from hil_core.drives.plants.controllers import TrajectoryFollower, controller_spec
from hil_core.drives.plants.description import HardwareInfo, parse_ros2_control
from hil_core.drives.plants.plain_trajectory import plain_from_trajectory

CONTROLLERS = yaml.safe_load(config_file('controllers.yaml').read_text())
HEXA = parse_ros2_control(urdf_file('hexafloat_scaled.urdf').read_text())
NAMES = HEXA.joint_names
LO = (-0.125, -0.11, -0.10, -0.09, -0.08, -0.07)
HI = (0.10, 0.09, 0.08, 0.07, 0.06, 0.05)
VMAX = (1.0, 0.9, 0.8, 0.7, 0.6, 0.5)
NOW = 50 * 10**9


def _hardware() -> HardwareInfo:
    joints = tuple(dataclasses.replace(j, command={'position': (LO[i], HI[i])}, velocity_limit=VMAX[i])
                   for i, j in enumerate(HEXA.joints))
    return dataclasses.replace(HEXA, joints=joints)


def follower(end_velocity_allowed: bool) -> TrajectoryFollower:
    config = yaml.safe_load(yaml.safe_dump(CONTROLLERS))
    params = config['hexapod_controller']['ros__parameters']
    params['joints'] = [NAMES[i] for i in (3, 0, 5, 1, 4, 2)]       # controller order != hardware order
    params['allow_nonzero_velocity_at_trajectory_end'] = end_velocity_allowed
    return TrajectoryFollower(controller_spec(config, 'hexapod_controller'), _hardware(), np.zeros(6))


FOLLOWERS = {allowed: follower(allowed) for allowed in (True, False)}

values = st.one_of(st.floats(-0.13, 0.11), st.sampled_from([0.0, -0.125, 0.1, 0.05, math.nan, math.inf]))
velocities = st.one_of(st.floats(-1.05, 1.05), st.sampled_from([0.0, 1e-8, 0.5, 0.95, math.nan, -math.inf]))


@st.composite
def trajectories(draw):
    names = list(draw(st.permutations(NAMES)))
    edit = draw(st.sampled_from(['none'] * 6 + ['drop', 'duplicate', 'unknown']))
    if edit == 'drop':
        names.pop()
    elif edit == 'duplicate':
        names[-1] = names[0]
    elif edit == 'unknown':
        names[-1] = 'elbow'
    n = len(names)
    m = draw(st.integers(1, 8))
    steps = draw(st.lists(st.sampled_from([625_000] * 8 + [0, -1, 1]), min_size=m, max_size=m))
    start = draw(st.sampled_from([0, 625_000, -625_000]))
    times = list(np.cumsum([start] + steps[1:]))
    with_velocities = draw(st.sampled_from(['all', 'all', 'none', 'some', 'short']))
    points = []
    for i in range(m):
        pos = tuple(draw(st.lists(values, min_size=n, max_size=n)))
        if with_velocities == 'all' or (with_velocities == 'some' and i % 2 == 0):
            vel = tuple(draw(st.lists(velocities, min_size=n, max_size=n)))
        elif with_velocities == 'short':
            vel = (0.0,) * (n - 1)
        else:
            vel = ()
        acc = (0.0,) * n if draw(st.integers(0, 20)) == 0 else ()
        eff = (0.0,) * n if draw(st.integers(0, 20)) == 0 else ()
        points.append(Point(int(times[i]), pos, vel, acc, eff))
    stamp = draw(st.sampled_from([0, NOW - 10**6, NOW - 5_000_000, NOW - 6_000_000, NOW + 10**6]))
    return Trajectory(tuple(names), tuple(points), stamp)


PLAIN = Trajectory(NAMES, tuple(Point(625_000 * (i + 1), (0.005 * i,) * 6, (0.02,) * 6) for i in range(8)),
                   NOW - 2_500_000)


@settings(max_examples=1500, deadline=None)
@given(trajectories(), st.booleans())
@example(PLAIN, True)
def test_fast_path_accepts_exactly_what_the_full_check_accepts(traj, end_velocity_allowed):
    f = FOLLOWERS[end_velocity_allowed]
    plain = plain_from_trajectory(traj)
    full = f.accept(traj, NOW)
    if plain is None:
        return
    fast = f.accept_plain(plain, NOW)
    twin = f._plain.accept_numpy(plain, NOW)
    assert (fast is None) == (twin is None)
    if full.accepted:
        assert fast is not None, 'a plain trajectory the full check accepts must not take the slow path'
    else:
        assert fast is None, f'fast path accepted what the full check refused: {full.reason}'
        return
    for got, numpy_got, want in zip(fast.entry, twin, full.entry):
        if want is None:
            assert got is None and numpy_got is None
        else:
            assert got.dtype == want.dtype and np.array_equal(got, want) and np.array_equal(numpy_got, want)


def test_the_streamed_command_is_plain_and_reordered_to_hardware():
    f = FOLLOWERS[True]
    entry = f.accept_plain(plain_from_trajectory(PLAIN), NOW).entry
    assert entry[0][0] == 0.000625 and entry[1].shape == (8, 6)
    assert np.array_equal(entry[1][:, 0], [0.005 * i for i in range(8)])


@pytest.mark.parametrize('change', ['accelerations', 'effort', 'ragged'])
def test_what_is_not_plain_goes_to_the_full_check(change):
    points = list(PLAIN.points)
    if change == 'ragged':
        points[3] = dataclasses.replace(points[3], velocities=())
    else:
        points[3] = dataclasses.replace(points[3], **{change: (0.0,) * 6})
    assert plain_from_trajectory(dataclasses.replace(PLAIN, points=tuple(points))) is None


def test_a_hostile_stream_of_name_orders_does_not_grow_the_cache():
    f = follower(True)
    for k in range(100):
        f._plain.columns(tuple(f'j{k}_{i}' for i in range(6)))
    assert len(f._plain._columns) <= 8


@settings(max_examples=200, deadline=None)
@given(trajectories())
def test_the_message_reader_gives_what_the_trajectory_reader_gives(traj):
    from builtin_interfaces.msg import Duration
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

    from hil_nodes.msgs.convert import ns_to_stamp, plain_trajectory_from_msg, trajectory_from_msg
    msg = JointTrajectory(joint_names=list(traj.joint_names))
    msg.header.stamp = ns_to_stamp(traj.stamp_ns)
    for p in traj.points:
        sec, nsec = divmod(p.time_from_start_ns, 10**9)
        msg.points.append(JointTrajectoryPoint(positions=list(p.positions), velocities=list(p.velocities),
                                               accelerations=list(p.accelerations), effort=list(p.effort),
                                               time_from_start=Duration(sec=int(sec), nanosec=int(nsec))))
    got, want = plain_trajectory_from_msg(msg), plain_from_trajectory(trajectory_from_msg(msg))
    assert (got is None) == (want is None)
    if got is not None:
        assert got.joint_names == want.joint_names and got.stamp_ns == want.stamp_ns
        for a, b in ((got.times_ns, want.times_ns), (got.positions, want.positions),
                     (got.velocities, want.velocities)):
            assert (a is None and b is None) or np.array_equal(a, b, equal_nan=True)
