"""hil_sim.mock_hardware.node over real DDS: the robot from the URDF's <ros2_control> block, the frame
cycle checked against GenericSystem's mirror plant, the stock controllers' acceptance rules
(JTC and forward_command_controller) with refusals counted by layer, and the hardware-side
watchdog's controlled stop (commands silent, only refused commands, supervisor heartbeat lost)
with the peak deceleration measured from /joint_states. The test process plays the controller."""
import math

import numpy as np
import pytest
import yaml
from rclpy.qos import DurabilityPolicy, ReliabilityPolicy
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, Header

from hil_core.data_paths import config_file, urdf_file
from hil_nodes import qos, topics
from hil_nodes.msgs.convert import stamp_to_ns
from hil_sim.mock_hardware.node import MockHardwareNode
from rig import SLIDERS as NAMES, SUBSTEP as SUB, MockDrives, build, trajectory

T_NS = 2_500_000
HEXAPOD = dict(robot_description='urdf/hexafloat_scaled.urdf', controller='hexapod_controller', plant='servo')
IIWA_Q0 = [-0.458149, 1.151219, 0.012566, 1.179319, -1.102175, -0.04468, 2.457249]


@pytest.fixture
def iiwa(tmp_path):
    """The iiwa behind lbr_fri_ros2_stack's other stock controller, ``forward_position_controller``
    (position_controllers/JointGroupPositionController, lbr_controllers.yaml), added to a copy of
    config/controllers.yaml: the forward command rules on the iiwa's position interface (the
    space-iiwa system's joint_trajectory_controller is test_mock_iiwa_node's)."""
    config = yaml.safe_load(config_file('controllers.yaml').read_text())
    joints = config['joint_trajectory_controller']['ros__parameters']['joints']
    config['controller_manager']['ros__parameters']['forward_position_controller'] = {
        'type': 'position_controllers/JointGroupPositionController'}
    config['forward_position_controller'] = {'ros__parameters': {'joints': joints}}
    (tmp_path / 'controllers.yaml').write_text(yaml.safe_dump(config))
    return dict(robot_description='urdf/iiwa14.urdf', controller='forward_position_controller', plant='iiwa',
                frame_period=0.001, controllers_file=str(tmp_path / 'controllers.yaml'))


def drives(ros, robot, **params):
    """The mock drives of ``robot`` (a dict of its parameters) as node 'mock' on a lockstep clock."""
    return MockDrives(ros, build(ros, MockHardwareNode, 'mock', **{
        **robot, 'lockstep': True, 'time_scale': 0.0, 'lockstep_timeout': 10.0, 'status_period': 0.1, **params}))


def peak_deceleration(js, since_ns=0):
    """Largest |dv/dt| of any joint between consecutive /joint_states (stamped times)."""
    t = np.array([stamp_to_ns(m.header.stamp) * 1e-9 for m in js if stamp_to_ns(m.header.stamp) >= since_ns])
    v = np.array([m.velocity for m in js if stamp_to_ns(m.header.stamp) >= since_ns])
    keep = np.r_[True, np.diff(t) > 0]
    t, v = t[keep], v[keep]
    return float(np.max(np.abs(np.diff(v, axis=0)) / np.diff(t)[:, None]))


def test_robot_from_the_urdf_broadcaster_qos_and_t0_for_a_late_subscriber(ros, iiwa):
    urdf = urdf_file('iiwa14.urdf').read_text().replace(
        '<plugin>mock_components/GenericSystem</plugin>',
        '<plugin>mock_components/GenericSystem</plugin><param name="mock_plant">integrate</param>')
    rig = drives(ros, dict(iiwa, robot_description=urdf, plant='')).up()
    first = rig.js[-1]
    assert list(first.name) == [f'iiwa_joint_{i}' for i in range(1, 8)] and list(first.position) == IIWA_Q0
    ros.spin_until(lambda: rig.values(), 10, 'status')
    assert rig.values()[-1]['plant'] == 'integrate'                    # the URDF's hardware <param>
    # "<node>: drives", hardware_id the URDF's <ros2_control> hardware (docs/CONTRACTS.md "Diagnostics")
    assert {(st.name, st.hardware_id) for a in rig.diag for st in a.status if st.name != 'mock: cycle'} == \
        {('mock: drives', 'iiwa14 (integrate plant, hil_sim)')}
    info = ros.node.get_publishers_info_by_topic(topics.JOINT_STATES)
    assert [(i.qos_profile.reliability, i.qos_profile.durability) for i in info] == \
        [(ReliabilityPolicy.RELIABLE, DurabilityPolicy.VOLATILE)]      # joint_state_broadcaster's QoS
    late = ros.collect(JointState, topics.JOINT_STATES, qos.joint_states(True))
    ros.spin_until(lambda: late, 10, 't_0 re-published to a late subscriber')
    assert stamp_to_ns(late[0].header.stamp) == 0


@pytest.mark.parametrize('params, says', [
    (dict(robot_description=''), "'robot_description' is required"),
    (dict(controller='nope'), "controller 'nope'"),
    (dict(controller='joint_trajectory_controller'), 'are not the joints'),      # the iiwa's on the hexapod
    (dict(robot_description='urdf/iiwa14.urdf', controller='joint_trajectory_controller', plant='hybrid5',
          frame_period=0.001), 'hybrid5'),
    (dict(initial_positions=[0.0] * 5), 'one value per joint (6)'),
    (dict(frame_period=0.001), 'whole multiple'),
    (dict(initial_positions=[0.5] * 6), 'servo plant'),                 # beyond the URDF stroke
])
def test_a_robot_that_cannot_run_is_refused_at_configure(ros, params, says):
    rig = drives(ros, dict(HEXAPOD, **params))
    assert not ros.change_state('mock', 'configure')
    ros.spin_until(lambda: any('configuration refused' in m and says in m for m in rig.messages()), 10, says)


def test_mirror_plant_shows_the_previous_frame_setpoint(ros):
    """GenericSystem's one-cycle delay through the frame cycle: /joint_states at t_(k+1) is the
    setpoint at t_k, which is the end of frame k-1's trajectory as given."""
    rig = drives(ros, dict(HEXAPOD, plant='mirror')).up()

    def f(t):
        return [0.01 * math.sin(3 * t + j) for j in range(6)]
    for k in range(30):
        t = k * T_NS * 1e-9
        rig.send(trajectory(k * T_NS, [f(t + SUB * i) for i in range(1, 5)]))
        expected = [0.0] * 6 if k == 0 else f(t)
        assert list(rig.js[-1].position) == pytest.approx(expected, abs=1e-15) and rig.stamp() == (k + 1) * T_NS


def test_jtc_refusals_by_rule_and_layer_while_the_trajectory_goes_on(ros, tmp_path):
    strict = yaml.safe_load(config_file('controllers.yaml').read_text())
    strict['hexapod_controller']['ros__parameters']['allow_nonzero_velocity_at_trajectory_end'] = False
    (tmp_path / 'c.yaml').write_text(yaml.safe_dump(strict))
    rig = drives(ros, HEXAPOD, controllers_file=str(tmp_path / 'c.yaml')).up()
    target = np.full(6, 0.002)
    ramp = [target * (i + 1) / 4 for i in range(4)]
    rig.send(trajectory(0, ramp, [np.zeros(6)] * 4))
    good = [target] * 4
    cases = [  # (message for frame k, layer, reason)
        (lambda s: trajectory(s, good, names=NAMES[:5] + ['elbow']), 'controller', 'unknown_joint'),
        (lambda s: trajectory(s, good[:1], names=NAMES[:5], times=[SUB]), 'controller', 'joint_count'),
        (lambda s: trajectory(s, good, [np.full(6, 0.1)] * 4), 'controller', 'nonzero_end_velocity'),
        (lambda s: trajectory(s, good[:2], times=[-2 * SUB, -SUB]), 'controller', 'ends_in_past'),
        (lambda s: trajectory(s, good, times=[SUB, 2 * SUB, 2 * SUB, 4 * SUB]), 'controller', 'time_not_increasing'),
        (lambda s: trajectory(s, good, names=NAMES[:5] + NAMES[:1]), 'guard', 'duplicate_joint'),
        (lambda s: trajectory(s, [[0.01, math.nan, 0, 0, 0, 0]] + good[1:]), 'guard', 'non_finite'),
        (lambda s: trajectory(s, [np.full(6, 0.15)] * 4), 'guard', 'position_limit'),
        (lambda s: trajectory(s, good, [np.full(6, 2.0)] * 3 + [np.zeros(6)]), 'guard', 'velocity_limit'),
    ]
    for make, layer, reason in cases:
        before = rig.stamp()
        rig.pub.publish(make(before))             # refused: its frame goes on waiting for a valid one
        ros.spin_until(lambda: any(f'({reason})' in m for m in rig.messages()), 10, reason)
        assert rig.stamp() == before
    for i in range(60):                           # (one at a time: the publisher keeps the last 10)
        rig.pub.publish(trajectory(rig.stamp(), good[:1], names=NAMES[:5], times=[SUB]))
        ros.spin_until(lambda: sum(rig.node.refused.values()) == 10 + i, 10, f'refusal {10 + i}')
    ros.spin_until(lambda: rig.values() and rig.values()[-1]['rejected_commands'] == '69', 10, 'counters')
    v = rig.values()[-1]
    assert (v['refused_by_controller'], v['refused_by_guard'], v['stale_commands']) == ('65', '4', '0')
    frame = rig.stamp()
    rig.send(trajectory(frame, good, [np.zeros(6)] * 4))   # the frame's valid command, after 69 refused:
    assert rig.stamp() == frame + rig.node.frame_ns          # taken, the frame goes on
    for _ in range(60):
        rig.send(trajectory(rig.stamp(), good, [np.zeros(6)] * 4))
    np.testing.assert_allclose(rig.js[-1].position, target, atol=1e-9)   # at the target, no stop
    assert not rig.fault()


def test_real_time_refuses_a_trajectory_that_ended_in_the_past(ros):
    rig = drives(ros, HEXAPOD, lockstep=False, time_scale=1.0, watchdog=False).up()
    now = ros.node.get_clock().now().nanoseconds
    rig.pub.publish(trajectory(now - 100_000_000, [np.full(6, 0.005)] * 4))   # ended 97.5 ms ago
    ros.spin_until(lambda: any('(ends_in_past)' in m for m in rig.messages()), 10, 'refusal')
    rig.pub.publish(trajectory(0, [np.full(6, 0.003)], [np.zeros(6)], times=[0.02]))   # stamp 0: from now
    ros.spin_until(lambda: np.allclose(rig.js[-1].position, 0.003, atol=1e-5), 20, 'the next one followed')
    assert rig.node.refused == {'controller': 1, 'guard': 0} and rig.node._clock_pub is None   # wall clock


def test_forward_command_rules_with_the_integrate_plant_as_oracle(ros, iiwa):
    """Pairing by arrival, one frame per message; a non-finite message is dropped and the last
    command persists; a size mismatch deactivates the controller for good (refusals counted; the
    watchdog is off here)."""
    rig = drives(ros, dict(iiwa, plant='integrate'), watchdog=False).up()
    v = np.linspace(-0.3, 0.3, 7)
    q = [np.asarray(IIWA_Q0) + k * 0.001 * v for k in range(1, 6)]
    for row in q:
        rig.send(Float64MultiArray(data=row.tolist()))
    rig.send(Float64MultiArray(data=[0.1, math.nan, 0, 0, 0, 0, 0]))
    rig.send(Float64MultiArray(data=[math.nan] * 7))
    rig.send(Float64MultiArray(data=[9.0] + [0.0] * 6))                 # beyond the URDF limit: guard
    assert rig.stamp() == 8 * 1_000_000
    # GenericSystem: position := command; the last valid one persisted, its velocity by difference
    np.testing.assert_allclose(rig.js[-1].position, q[-1], rtol=0, atol=1e-15)
    assert np.all(np.array(rig.js[-1].velocity) == 0.0)
    np.testing.assert_allclose(rig.js[5].velocity, v, rtol=0, atol=1e-9)        # while the ramp ran
    rig.send(Float64MultiArray(data=[0.0] * 6))                         # size mismatch
    rig.send(Float64MultiArray(data=IIWA_Q0))                           # not taken any more
    ros.spin_until(lambda: rig.values() and rig.values()[-1]['rejected_commands'] == '5', 10, 'counters')
    vals = rig.values()[-1]
    assert (vals['refused_by_controller'], vals['refused_by_guard'], vals['braking']) == ('4', '1', 'False')
    assert any('(inactive)' in m for m in rig.messages())
    ros.spin_until(lambda: any(m.startswith('forward_position_controller deactivated: command size 6')
                               for m in rig.messages()),
                   10, 'deactivated status')


def cruise(t, speed=0.05, accel=1.0):
    """Every slider alike: from rest at ``accel`` to ``speed``, then cruise (position, velocity)."""
    t_ramp = speed / accel
    if t < t_ramp:
        return 0.5 * accel * t * t, accel * t
    return 0.5 * accel * t_ramp ** 2 + speed * (t - t_ramp), speed


def long_trajectory(seconds=1.0):
    times = np.arange(1, int(seconds / 0.01) + 1) * 0.01
    pv = [cruise(t) for t in times]
    return trajectory(0, [[p] * 6 for p, _ in pv], [[v] * 6 for _, v in pv], times=list(times))


def check_controlled_stop(ros, rig, needle, brake):
    ros.spin_until(rig.fault, 20, 'fault event')
    fault = rig.fault()
    assert needle in fault.message and fault.hardware_id == 'mock'
    trip = stamp_to_ns(next(e for e in rig.events if e.status[0].name == 'fault').header.stamp)
    ros.spin_until(lambda: rig.stamp() > trip + 0.1 * 1e9, 20, 'frames after the trip')
    at_trip = [m.velocity[0] for m in rig.js if stamp_to_ns(m.header.stamp) <= trip][-1]
    assert at_trip == pytest.approx(0.05, rel=0.02)                         # it was cruising
    assert abs(rig.js[-1].velocity[0]) < 1e-6                                # at rest
    peak = peak_deceleration(rig.js)
    # the brake, not the servo's hold; the position loop tracking the braking setpoint adds < 0.1 %
    # (measured: 3.0002 at 3 m/s^2)
    assert peak <= brake * 1.001, peak
    assert peak >= 0.9 * brake                                               # and it did brake
    ros.spin_until(lambda: any(m.startswith('watchdog: braked') for m in rig.messages()), 10, 'ERROR status')


# Real time at half speed (the sim clock): a loaded machine then slows the run down instead of
# making the mock skip frames (at time_scale 1 a skipped frame holds the setpoint, which is no
# controlled stop to measure).
def test_watchdog_stops_a_moving_robot_when_commands_stop(ros):
    # command_timeout 0.2 s of wall time = 0.1 s of sim time at half speed, well after the 0.05 s
    # ramp to cruise (at 0.1 s it tripped right at the ramp's end: 0.0475 m/s once in a CI run)
    rig = drives(ros, HEXAPOD, lockstep=False, time_scale=0.5, command_timeout=0.2, brake_deceleration=[4.0]).up()
    rig.pub.publish(long_trajectory())              # one command for 1 s of motion, then silence
    check_controlled_stop(ros, rig, 'no valid command for', 4.0)


def test_watchdog_stops_a_moving_robot_when_the_supervisor_heartbeat_is_lost(ros):
    beat = ros.node.create_publisher(Header, topics.HIL_HEARTBEAT, 10)
    alive = [True]
    ros.node.create_timer(0.05, lambda: alive[0] and beat.publish(Header(frame_id='/supervisor')))
    rig = drives(ros, HEXAPOD, lockstep=False, time_scale=0.5, command_timeout=30.0, supervisor_timeout=0.5,
              brake_deceleration=[3.0]).up()
    rig.pub.publish(long_trajectory())
    ros.spin_until(lambda: rig.js[-1].velocity[0] > 0.049, 10, 'cruising')
    alive[0] = False                                 # the supervisor dies mid-motion
    check_controlled_stop(ros, rig, 'supervisor heartbeat lost', 3.0)


def test_only_refused_commands_stop_the_arm_after_command_timeout_of_sim_time(ros, iiwa):
    """Lockstep, forward position commands: the last valid command persists (FCC: the arm holds
    there, a stock forward controller has no stop of its own); a stream of non-finite ones trips
    the watchdog deterministically, command_timeout of sim time after the frame of the last valid
    command, and the drives follow no command afterwards."""
    rig = drives(ros, iiwa, command_timeout=0.05, brake_deceleration=[2.0]).up()
    v = np.array([0.2, -0.2, 0.2, 0.2, -0.2, 0.2, 0.2])
    for k in range(1, 201):                          # frames 0..199: valid
        last = np.asarray(IIWA_Q0) + v * k * 1e-3
        rig.send(Float64MultiArray(data=last.tolist()))
    while not rig.fault():
        rig.send(Float64MultiArray(data=[math.nan] * 7))
    trip = stamp_to_ns(next(e for e in rig.events if e.status[0].name == 'fault').header.stamp)
    assert trip == 250_000_000                       # 199 ms + more than 50 ms
    np.testing.assert_array_equal(rig.node.plant.reference, last)     # the last valid command persisted
    for _ in range(150):               # (while braking, frames also advance on their own)
        rig.send(Float64MultiArray(data=(last + 0.1).tolist()))
    assert rig.node._watchdog.braking
    assert np.abs(rig.js[-1].velocity).max() < 5e-3       # (0.2 s after an abrupt hold: still settling)
    np.testing.assert_allclose(rig.js[-1].position, last, rtol=0, atol=2e-3)    # not followed


def test_disable_commands_freezes_the_feedback(ros):
    from rcl_interfaces.msg import Parameter as ParameterMsg, ParameterType, ParameterValue
    from rcl_interfaces.srv import SetParameters
    rig = drives(ros, HEXAPOD).up()
    for k in range(40):
        rig.send(trajectory(k * T_NS, [np.full(6, 0.002)] * 4, [np.zeros(6)] * 4))
    frozen = list(rig.js[-1].position)
    req = SetParameters.Request(parameters=[ParameterMsg(name='disable_commands', value=ParameterValue(
        type=ParameterType.PARAMETER_BOOL, bool_value=True))])
    assert ros.call(SetParameters, '/mock/set_parameters', req).results[0].successful
    for k in range(40, 60):
        rig.send(trajectory(k * T_NS, [np.full(6, 0.004)] * 4, [np.zeros(6)] * 4))
        assert list(rig.js[-1].position) == frozen and rig.stamp() == (k + 1) * T_NS   # frames go on
    ros.spin_until(lambda: rig.values() and rig.values()[-1]['disable_commands'] == 'True', 10, 'status')


def test_real_time_counts_late_commands_only_when_a_moving_stream_runs_out(ros):
    """Wall clock: frames past the end of a trajectory that ended at rest are a hold by design (the
    planner went IDLE at the end of a run: 19 frames were counted late there); past one that
    ended moving, each frame is a late command."""
    rig = drives(ros, HEXAPOD, lockstep=False, time_scale=1.0, watchdog=False).up()
    rig.pub.publish(trajectory(0, [np.full(6, 0.001 * (i + 1)) for i in range(4)], [np.zeros(6)] * 4,
                               times=[0.01, 0.02, 0.03, 0.04]))
    ros.spin_until(lambda: np.allclose(rig.js[-1].position, 0.004, atol=1e-6), 20, 'at rest at the goal')
    frames = rig.node.frames
    ros.spin_until(lambda: rig.node.frames > frames + 40, 20, '40 frames of hold')
    assert rig.node.late_commands == 0
    moving = lambda: trajectory(0, [np.full(6, 0.004 + 0.0001 * (i + 1)) for i in range(4)],  # noqa: E731
                                [np.full(6, 0.01)] * 4, times=[0.01, 0.02, 0.03, 0.04])
    _until_no_frame_is_skipped(ros, rig, moving, lambda: rig.node.late_commands >= 5,
                               'late commands after a stream that ended moving')


def _until_no_frame_is_skipped(ros, rig, command, done, what: str, attempts: int = 20) -> None:
    """Publish ``command()`` and wait for ``done()``, again while the drives' own frames were
    skipped meanwhile (a real-time overrun): a skip drops a trajectory that does not carry its
    own stop, and holds (docs/mock_hardware.md), so neither the stream nor its late frames go
    on. A test process starved for more than MAX_CATCHUP_S (25 ms) skips (beside three CPU hogs, a
    few times a second; in CI beside the other worker): that is the overrun's path, not this
    test's."""
    n = rig.node
    for _ in range(attempts):
        overruns = n.overruns
        rig.pub.publish(command())
        try:
            ros.spin_until(lambda: done() or n.overruns > overruns, 20, what)
        except TimeoutError as exc:    # say what the drives saw
            raise AssertionError(f'{exc}: frames {n.frames}, late {n.late_commands}, stale {n.stale_commands}, '
                                 f'refused {n.refused} (last: {n.last_refusal!r}), overruns {n.overruns}, joint '
                                 f'states heard {len(rig.js)}, last position {rig.js[-1].position.tolist()}') from None
        if done():
            return
    raise AssertionError(f'{what}: the drives skipped frames in each of {attempts} attempts ({n.overruns} overruns)')
