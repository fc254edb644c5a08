"""hil_core.drives.plants.controllers: the emulated JTC and forward_command_controller in front of a
plant refuse what the stock controller refuses (layer 'controller', the rule's reason), then what
the guard refuses (layer 'guard'), map the controller's joint order to the hardware's, and write
what the plant integrates. Rule tables: STYLE.md section 2 (Kilted)."""
import math

import numpy as np
import pytest
import yaml
from hypothesis import given, settings, strategies as st

from hil_core.data_paths import config_file, urdf_file
from hil_core.drives.joint_trajectory import Trajectory
from hil_core.drives.joint_trajectory_legacy import sample_knots
from hil_core.drives.plants.controllers import ForwardCommand, TrajectoryFollower, controller_spec
from hil_core.drives.plants.description import parse_ros2_control

CONTROLLERS = yaml.safe_load(config_file('controllers.yaml').read_text())
HEXA = parse_ros2_control(urdf_file('hexafloat_scaled.urdf').read_text())
HYB = parse_ros2_control(urdf_file('hybrid5.urdf').read_text())
NAMES = HEXA.joint_names
SUB = 0.000625


def follower(**settings):
    config = yaml.safe_load(yaml.safe_dump(CONTROLLERS))
    config['hexapod_controller']['ros__parameters'].update(settings)
    return TrajectoryFollower(controller_spec(config, 'hexapod_controller'), HEXA, np.zeros(6))


def traj(stamp_ns=0, names=NAMES, pos=0.01, vel=0.0, times=(1, 2, 3, 4), acc=None):
    rows = [[pos] * len(names)] * len(times)
    vels = None if vel is None else [[vel] * len(names)] * len(times)
    accs = None if acc is None else [[acc] * len(names)] * len(times)
    return Trajectory.from_arrays(names, stamp_ns, [SUB * t for t in times], rows, vels, accs)


@pytest.mark.parametrize('msg, layer, reason', [
    (traj(names=NAMES[:5]), 'controller', 'joint_count'),
    (traj(names=NAMES[:5] + ('elbow',)), 'controller', 'unknown_joint'),
    (traj(stamp_ns=1_000_000, times=(1,)), 'controller', 'ends_in_past'),        # ends at 1.000625 ms < 5 ms
    (traj(times=(1, 2, 2, 4)), 'controller', 'time_not_increasing'),
    (traj(names=NAMES[:5] + (NAMES[0],)), 'guard', 'duplicate_joint'),   # the JTC checks membership only
    (traj(pos=math.nan), 'guard', 'non_finite'),
    (traj(pos=0.5), 'guard', 'position_limit'),
    (traj(vel=1.5), 'guard', 'velocity_limit'),
    (traj(acc=0.0), 'guard', 'accelerations'),
])
def test_refusals_by_layer_and_rule(msg, layer, reason):
    got = follower().accept(msg, now_ns=5_000_000)
    assert (got.layer, got.reason) == (layer, reason), got.detail


def test_nonzero_end_velocity_is_refused_unless_the_yaml_allows_it():
    msg = traj(vel=0.1)
    assert follower().accept(msg, 0).accepted                     # controllers.yaml allows it
    got = follower(allow_nonzero_velocity_at_trajectory_end=False).accept(msg, 0)
    assert (got.layer, got.reason) == ('controller', 'nonzero_end_velocity')


def test_accepted_points_come_in_hardware_order_with_exact_times():
    msg = Trajectory.from_arrays(NAMES[::-1], 0, [SUB, 2 * SUB], [[1e-3 * (6 - j) for j in range(6)]] * 2,
                                 [[0.0] * 6] * 2)
    got = follower().accept(msg, 0)
    times, pos, vel = got.entry
    assert list(pos[0]) == [1e-3 * (j + 1) for j in range(6)] and vel.shape == (2, 6)
    assert list(times) == [0 + 625_000 * 1e-9, 0 + 1_250_000 * 1e-9]


def test_a_new_trajectory_starts_from_the_setpoint_or_from_the_measured_state():
    measured = {'position': np.full(6, 0.004), 'velocity': np.zeros(6)}
    for ifds, start in ((True, 0.0), (False, 0.004)):
        f = follower(interpolate_from_desired_state=ifds)
        f.apply(f.accept(traj(pos=0.01, vel=0.0), 0).entry, 0.0, 0.0, lambda: measured)
        p, _ = sample_knots(*f.knots, np.array([0.0, 4 * SUB, 1.0]))
        assert p[0, 0] == start and p[1, 0] == p[2, 0] == pytest.approx(0.01)   # then held as given


def test_a_stream_of_plain_commands_takes_the_compiled_replan_every_frame(monkeypatch):
    """The drives' real-time stream (an 8-point plain trajectory a frame, accepted by the compiled
    acceptance, whose arrays numba made) is made active by the compiled ``replan_knots``, never by
    its numpy oracle: once it fell back to the oracle every frame (a dtype identity test),
    slower than the code it replaced."""
    from hil_core.drives import joint_trajectory_legacy as legacy
    from hil_core.drives.plants.plain_trajectory import plain_from_trajectory

    def oracle(*args):
        raise AssertionError('replan_knots fell back to its numpy oracle')
    monkeypatch.setattr(legacy, 'replan_knots_numpy', oracle)
    for ifds in (True, False):
        f = follower(interpolate_from_desired_state=ifds)
        measured = {'position': np.zeros(6), 'velocity': np.zeros(6)}
        for k in range(20):
            now_ns = k * 4 * 625_000
            plain = plain_from_trajectory(traj(stamp_ns=now_ns, pos=1e-4 * k, vel=0.01, times=range(1, 9)))
            got = f.accept_plain(plain, now_ns)
            assert got is not None and got.accepted
            f.apply(got.entry, now_ns * 1e-9, now_ns * 1e-9, lambda: measured)
            assert f.knots[0].size == 9 and not f.braking


def test_hold_keeps_the_setpoint_and_brake_stops_within_the_deceleration():
    f = follower()
    t = np.arange(1, 41) * SUB
    f.knots = (np.r_[0.0, t], np.outer(np.r_[0.0, 0.1 * t], np.ones(6)), np.full((41, 6), 0.1))
    f.brake(0.01, np.full(6, 4.0), SUB)
    rows = f.commands(0.01, 400, SUB / 5)
    v = rows['velocity'][:, 0]
    assert v[0] == pytest.approx(0.1) and v[-1] == 0.0
    assert np.max(np.abs(np.diff(v))) <= 4.0 * SUB / 5 + 1e-12
    stop = rows['position'][-1, 0]
    assert stop == pytest.approx(0.1 * 0.01 + 0.1 ** 2 / (2 * 4.0), rel=1e-12)   # v^2 / 2d beyond
    f.hold(0.5)
    assert np.all(f.commands(0.5, 3, 0.01)['position'] == stop)


# --- forward_command_controller -------------------------------------------------------------------
def fcc(name='effort_controller', joints=None):
    config = yaml.safe_load(yaml.safe_dump(CONTROLLERS))
    if joints is not None:
        config[name]['ros__parameters']['joints'] = joints
    return ForwardCommand(controller_spec(config, name), HYB)


def test_forward_command_rules():
    c = fcc()
    assert np.all(np.isnan(c.commands(0.0, 2, 1e-4)['effort']))            # no command yet
    ok = c.accept([10.0, 20.0, 30.0, 1.0, 2.0])
    c.apply(ok.entry)
    assert list(c.commands(0.0, 1, 1e-4)['effort'][0]) == [10.0, 20.0, 30.0, 1.0, 2.0]
    bad = c.accept([10.0, math.nan, 30.0, 1.0, 2.0])
    assert (bad.layer, bad.reason) == ('controller', 'non_finite') and c.active
    assert c.accept([1.0, math.inf, 0.0]).reason == 'non_finite'            # finiteness before size
    beyond = c.accept([6000.0, 0.0, 0.0, 0.0, 0.0])
    assert (beyond.layer, beyond.reason) == ('guard', 'command_limit')
    assert list(c.command) == [10.0, 20.0, 30.0, 1.0, 2.0]                   # the last command persists
    size = c.accept([0.0] * 4)
    assert (size.layer, size.reason) == ('controller', 'size_mismatch') and not c.active
    assert np.all(np.isnan(c.command))                                      # reset to NaN on deactivate
    assert c.accept([0.0] * 5).reason == 'inactive'                         # no later command taken
    c.activate(0.0)
    assert c.active and c.accept([0.0] * 5).accepted


def test_forward_command_maps_the_controller_order_to_the_hardware_order():
    joints = list(HYB.joint_names[::-1])
    c = fcc(joints=joints)
    c.apply(c.accept([5.0, 4.0, 3.0, 2.0, 1.0]).entry)
    assert list(c.command) == [1.0, 2.0, 3.0, 4.0, 5.0]
    with pytest.raises(ValueError, match='are not the joints'):
        fcc(joints=joints[:4])


def test_controllers_yaml_types_and_refused_configurations():
    assert controller_spec(CONTROLLERS, 'hexapod_controller').trajectory
    # lbr_fri_ros2_stack's joint_trajectory_controller for the iiwa (position interface)
    iiwa = controller_spec(CONTROLLERS, 'joint_trajectory_controller')
    assert iiwa.trajectory and iiwa.interface == 'position' and iiwa.interpolate_from_desired_state
    # a forward position controller (lbr's other one): the interface is implied by its type
    fpc = {'controller_manager': {'ros__parameters': {'fpc': {'type': 'position_controllers/JointGroupPositionController'}}},
           'fpc': {'ros__parameters': {'joints': list(iiwa.joints)}}}
    assert controller_spec(fpc, 'fpc').interface == 'position'
    with pytest.raises(ValueError, match='not emulated'):
        controller_spec(CONTROLLERS, 'joint_state_broadcaster')
    with pytest.raises(ValueError, match='no type'):
        controller_spec(CONTROLLERS, 'nope')
    with pytest.raises(ValueError, match='writes'):
        ForwardCommand(controller_spec(fpc, 'fpc'),
                       parse_ros2_control(urdf_file('iiwa14.urdf').read_text()).claimed('effort'))


# --- the iiwa's JTC: what it writes to the position interface ----------------------------------
IIWA = parse_ros2_control(urdf_file('iiwa14.urdf').read_text()).claimed('position')
Q0 = IIWA.initial('position')


def iiwa_follower():
    return TrajectoryFollower(controller_spec(CONTROLLERS, 'joint_trajectory_controller'), IIWA, Q0, lead=True)


def test_the_iiwa_jtc_writes_the_trajectory_one_update_ahead_and_plays_a_tail_out():
    """``lead``: each step's row is the trajectory at the step's end (a JTC's command_next_), so
    the space plant's next positions are written for the step that reaches them; without new
    messages (``hold``: a late lockstep frame; frames skipped) the braking tail goes on and ends
    at rest, as the stock JTC plays out a trajectory that ends at rest."""
    from hil_core.space.command_stream import braking_tail
    f = iiwa_follower()
    f.activate(0.0)
    v = np.linspace(-0.5, 0.7, 7)
    times, pos, vel = braking_tail(Q0 + v * 1e-3, v, 5.0, 1_000_000)
    names = controller_spec(CONTROLLERS, 'joint_trajectory_controller').joints
    got = f.accept(Trajectory.from_arrays(names, 0, times * 1e-9, pos, vel), 0)
    assert got.accepted, got.detail
    f.apply(got.entry, 0.0, 0.0, None)
    assert not f.ends_moving()
    row = f.commands(0.0, 1, 1e-3)['position']
    np.testing.assert_allclose(row[0], Q0 + v * 1e-3, rtol=0, atol=1e-15)      # the point at stamp + 1 ms
    f.hold(1e-3)                                                  # the next frame's command is late
    rows = [f.commands(1e-3, 1, 1e-3)['position']]
    f.frames_skipped(2e-3, 5e-3)                                  # then real time skipped three frames
    rows = np.vstack(rows + [f.commands(k * 1e-3, 1, 1e-3)['position'] for k in range(5, 400)])
    steps = np.diff(np.vstack([row, rows]), axis=0) / 1e-3        # velocity of the written positions
    np.testing.assert_allclose(steps[0], v, rtol=0, atol=5.0 * 1e-3)          # braking from v at most a_max
    assert np.all(np.abs(np.diff(steps, axis=0)) <= 5.0 * 1e-3 + 1e-9)      # |dv| <= a_max dt
    assert np.all(steps[-1] == 0.0)
    np.testing.assert_allclose(rows[-1], pos[-1], rtol=0, atol=1e-15)       # the tail's rest point


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(st.one_of(st.floats(allow_nan=True, allow_infinity=True, width=64),
                                   st.floats(-600.0, 600.0)), min_size=3, max_size=6), max_size=20))
def test_the_plant_never_receives_a_command_it_must_not_get(messages):
    """Whatever arrives, the effort written is NaN (no command) or finite within the URDF limits."""
    c = fcc()
    lo, hi = HYB.command_limits()
    for data in messages:
        got = c.accept(data)
        if got.accepted:
            c.apply(got.entry)
        rows = c.commands(0.0, 2, 1e-4)['effort']
        assert np.all(np.isnan(rows)) or (np.all(np.isfinite(rows)) and np.all(rows >= lo) and np.all(rows <= hi))


@pytest.mark.parametrize('vel, moving', [(0.1, True), (-2e-6, True), (0.0, False), (5e-7, False), (None, False)])
def test_a_trajectory_ends_moving_only_with_a_velocity_at_its_last_point(vel, moving):
    """The drives count frames past the end of a trajectory as late commands only when it ended
    moving; after one that ends at rest (or without velocities) holding is what was asked for."""
    f = follower()
    assert not f.ends_moving()                                     # holding where it started
    f.apply(f.accept(traj(vel=vel), 0).entry, 0.0, 0.0, None)
    assert f.ends_moving() == moving
    f.hold(0.001)
    assert not f.ends_moving()


_VALUE = st.one_of(st.floats(-6000.0, 6000.0), st.sampled_from([math.nan, math.inf, -math.inf, 5000.0, -5000.0,
                                                                  500.0, -500.0, 5000.000001]))


@settings(max_examples=600, deadline=None)
@given(st.lists(_VALUE, min_size=5, max_size=5), st.booleans())
def test_the_fast_acceptance_of_a_forward_command_is_the_full_check(values, reversed_joints):
    """The drives' loop sends 10000 commands a second through accept's fast path: same verdict,
    same entry (hardware order) as the full check, limits and joint order included."""
    c = fcc(joints=list(HYB.joint_names[::-1]) if reversed_joints else None)
    fast, full = c.accept(values), c.check(np.asarray(values, dtype=float))
    assert fast.accepted == full.accepted
    if full.accepted:
        np.testing.assert_array_equal(fast.entry, full.entry)
