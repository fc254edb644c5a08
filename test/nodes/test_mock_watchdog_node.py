"""The mock drives' own watchdog over DDS (hil_sim.mock_hardware.watchdog in the hexafloat system's
mock_hardware, lockstep, ``lockstep_late: brake`` by default):
the test plays the controller, moving every slider at 0.1 m/s. When its commands stop, or when
the supervisor (a real SupervisorNode here) dies while commands still flow, the mock brakes by
itself from the moving setpoint to rest at brake_deceleration: peak slider acceleration from
/joint_states no higher than the planner's a_max (6 m/s^2), no reversal, commands ignored
afterwards, a 'fault' event and an ERROR status naming the reason."""
import numpy as np
import pytest
from diagnostic_msgs.msg import DiagnosticArray
from sensor_msgs.msg import JointState
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from hil_nodes import qos, topics
from hil_nodes.msgs.convert import ns_to_stamp, sec_to_duration, stamp_to_ns
from hil_nodes.supervisor.node import SupervisorNode
from hil_sim.mock_hardware.system_mock import system_mock
from rig import start

NAMES = [f'slider_{i}' for i in range(1, 7)]
T_NS, SUB = 2_500_000, 0.000625
A_MAX_PLANNER = 6.0          # config/planner.yaml a_max (translation), the fault matrix's bound
BRAKE = 4.0                  # the mock's brake_deceleration in these tests
ACCEL, SPEED = 2.0, 0.1      # the test controller: ramp at 2 m/s^2 to 0.1 m/s, then cruise


def reference(t):
    """Setpoint of the test controller (every slider alike): position and velocity at t (s)."""
    t_ramp = SPEED / ACCEL
    if t < t_ramp:
        return 0.5 * ACCEL * t * t, ACCEL * t
    return 0.5 * ACCEL * t_ramp ** 2 + SPEED * (t - t_ramp), SPEED


class Controller:
    """Answers every new /joint_states frame with the command of that frame (while ``on``)."""

    def __init__(self, ros):
        self.on = True
        self.sent = 0
        self.js: list[JointState] = []
        self.pub = ros.node.create_publisher(JointTrajectory, topics.HEXAPOD_JOINT_TRAJECTORY,
                                             qos.command(50, lockstep=True))
        ros.node.create_subscription(JointState, topics.JOINT_STATES, self._on_js, qos.joint_states(True, depth=100))

    def _on_js(self, msg):
        if self.js and stamp_to_ns(msg.header.stamp) <= stamp_to_ns(self.js[-1].header.stamp):
            return                                      # t_0 re-published before the first command
        self.js.append(msg)
        if not self.on:
            return
        t_ns = stamp_to_ns(msg.header.stamp)
        cmd = JointTrajectory(joint_names=NAMES)
        cmd.header.stamp = ns_to_stamp(t_ns)
        for i in range(1, 5):
            p, v = reference(t_ns * 1e-9 + i * SUB)
            cmd.points.append(JointTrajectoryPoint(positions=[p] * 6, velocities=[v] * 6,
                                                   time_from_start=sec_to_duration(i * SUB)))
        self.pub.publish(cmd)
        self.sent += 1


def rig(ros, **params):
    # lockstep_late is left at its default, brake: a frame whose command is late starts the
    # watchdog's stop ('hold' would stop following dead and go on)
    defaults = dict(lockstep=True, time_scale=0.0, lockstep_timeout=0.5, status_period=0.2, watchdog=True,
                    brake_deceleration=[BRAKE] * 6, supervisor_timeout=0.5,
                    use_sim_time=False)
    defaults.update(params)
    events = ros.collect(DiagnosticArray, topics.HIL_EVENTS, qos.command(50))
    diags = ros.collect(DiagnosticArray, topics.DIAGNOSTICS, 100)
    ctl = Controller(ros)
    ros.add_node(system_mock('hexafloat', defaults, context=ros.context))
    ros.bring_up('mock_hexapod')
    return ctl, events, diags


def peak_acceleration(js, since_ns=0):
    """Peak slider acceleration from /joint_states velocities, frame to frame."""
    v = np.array([m.velocity for m in js if stamp_to_ns(m.header.stamp) >= since_ns])
    return float(np.max(np.abs(np.diff(v, axis=0)) / (T_NS * 1e-9)))


def check_stop(ros, ctl, events, diags, needle):
    ros.spin_until(lambda: any(st.name == 'fault' for e in events for st in e.status), 20.0, 'fault event')
    event = next(st for e in events for st in e.status if st.name == 'fault')
    assert event.hardware_id == 'mock_hexapod' and needle in event.message and 'watchdog' in event.message
    trip_ns = stamp_to_ns(next(e for e in events if e.status[0].name == 'fault').header.stamp)
    ros.spin_until(lambda: len(ctl.js) and stamp_to_ns(ctl.js[-1].header.stamp) > trip_ns + 40 * T_NS, 20.0,
                   'frames after the trip (the mock runs on by itself)')
    velocity = np.array([m.velocity[0] for m in ctl.js])
    stamps = np.array([stamp_to_ns(m.header.stamp) for m in ctl.js])
    at_trip = velocity[stamps == trip_ns][0]
    assert at_trip == pytest.approx(SPEED, rel=0.05)             # it was moving at speed
    assert np.all(velocity[stamps > trip_ns] >= -1e-4)            # no reversal
    assert abs(velocity[-1]) < 1e-4                               # at rest
    peak = peak_acceleration(ctl.js)
    assert peak <= A_MAX_PLANNER, f'peak slider acceleration {peak:.2f} m/s^2'
    stop_ns = stamps[np.argmax((stamps > trip_ns) & (np.abs(velocity) < 1e-3))]
    assert (stop_ns - trip_ns) * 1e-9 >= SPEED / A_MAX_PLANNER    # it did brake, it did not stop dead
    position = ctl.js[-1].position[0]
    ctl.on = True                                                  # a command coming back is not followed
    ros.spin_for(0.3)
    assert ctl.js[-1].position[0] == pytest.approx(position, abs=1e-9)
    ros.spin_until(lambda: any(st.name.split(': ')[0].strip('/') == 'mock_hexapod'          # "<node>: <task>"
                               and st.message.startswith('watchdog: braked') for d in diags for st in d.status),
                   10.0, 'ERROR status')
    return peak


def test_commands_stopping_make_the_mock_brake_within_its_deceleration(ros):
    ctl, events, diags = rig(ros)
    ros.spin_until(lambda: ctl.sent >= 60, 30.0, 'the controller running')
    ctl.on = False                                                 # the producer dies mid-motion
    peak = check_stop(ros, ctl, events, diags, 'no command for frame')
    assert peak == pytest.approx(BRAKE, rel=0.25)                  # the brake, not the servo's hold


def test_a_dead_supervisor_makes_the_mock_brake_while_commands_still_flow(ros):
    sup = start(ros, SupervisorNode, autostart=False, frame_period=0.05)
    # paced at wall time: the heartbeat's timeout is wall time, and an unpaced run would reach the
    # sliders' 0.1 m stroke end (guard refusals, a held setpoint) before the trip on a fast machine
    # (a long lockstep wait: a pause of this process must not trip the other stop first)
    ctl, events, diags = rig(ros, time_scale=1.0, lockstep_timeout=5.0)
    ros.spin_until(lambda: ctl.sent >= 60, 30.0, 'the controller running')
    ros.executor.remove_node(sup)
    sup.destroy_node()                                             # the supervisor dies; commands go on
    ros._extra_nodes.remove(sup)
    sent = ctl.sent
    peak = check_stop(ros, ctl, events, diags, 'supervisor heartbeat lost')
    assert ctl.sent > sent                                         # commands were still coming


def test_a_supervisor_name_that_is_no_node_name_is_refused_by_name(ros):
    """It goes into the DDS content filter of the heartbeat subscription: a quote in it would
    break the filter expression instead of being refused."""
    diags = ros.collect(DiagnosticArray, topics.DIAGNOSTICS, 100)
    ros.add_node(system_mock('hexafloat', dict(lockstep=True, time_scale=0.0, use_sim_time=False,
                                               supervisor_name="super'visor"), context=ros.context))
    assert not ros.change_state('mock_hexapod', 'configure')
    ros.spin_until(lambda: any("'supervisor_name'" in s.message for d in diags for s in d.status), 10,
                   'the parameter named')
