"""reference_source driving an in-process mock_hexapod in lockstep; the test plays the supervisor
(one /hil/frame per /clock tick, mode in frame_id, mirroring the motion side's events)."""
import numpy as np
from diagnostic_msgs.msg import DiagnosticArray
from rclpy.qos import QoSProfile, ReliabilityPolicy
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import JointState
from std_msgs.msg import Header
from trajectory_msgs.msg import JointTrajectory

from hil_nodes import qos, topics
from hil_nodes.msgs.convert import duration_to_sec, ns_to_stamp, stamp_to_ns
from hil_sim.mock_hardware.system_mock import system_mock
from hil_sim.reference_source.node import ReferenceSourceNode
from rig import NodeRig, build, statuses

T_NS = 2_500_000


class Supervisor:
    """Minimal stand-in: publishes /hil/frame for each new /clock value; mode logic by callback."""

    def __init__(self, ros, modes):
        self.ros, self.modes = ros, modes
        self.events, self.frames, self.last = [], 0, None
        self.pub = ros.node.create_publisher(Header, topics.HIL_FRAME, qos.stream(True))
        self.subs = [ros.node.create_subscription(Clock, topics.CLOCK, self._on_clock, qos.stream(True)),
                     ros.node.create_subscription(DiagnosticArray, topics.HIL_EVENTS, self._on_event, 50)]

    def _on_event(self, msg):
        for st in msg.status:
            self.events.append((stamp_to_ns(msg.header.stamp), st.name, st.hardware_id))

    def _on_clock(self, msg):
        t = stamp_to_ns(msg.clock)
        if t == self.last:
            return
        self.last = t
        self.frames = t // T_NS
        self.pub.publish(Header(stamp=msg.clock, frame_id=self.modes(self.frames, [e[1] for e in self.events])))

    def close(self):
        for sub in self.subs:
            self.ros.node.destroy_subscription(sub)
        self.ros.node.destroy_publisher(self.pub)


def flow(fault_at=None):
    def modes(k, seen):
        if fault_at is not None and k >= fault_at:
            return 'FAULT'
        if k < 20:
            return 'IDLE'
        if 'synchronized' in seen:
            return 'RUNNING'
        return 'SYNCHRONIZING' if 'homed' in seen else 'HOMING'
    return modes


def run_graph(ros, modes, frames, seed=7, initial=(0.004, -0.003, 0.002, 0.0, 0.001, -0.002), lockstep=True):
    mock = system_mock('hexafloat_scripted', dict(lockstep=lockstep, time_scale=0.0 if lockstep else 2.0,
                                                  lockstep_timeout=10.0, initial_positions=list(initial)),
                       context=ros.context)
    source = build(ros, ReferenceSourceNode, lockstep=lockstep, seed=seed, sync_duration=0.2,
                   amplitudes=[0.005] * 6, homing_min_duration=0.05)
    sup = Supervisor(ros, modes)
    js = ros.collect(JointState, topics.JOINT_STATES, qos.joint_states(True, depth=1000) if lockstep
                     else QoSProfile(depth=1000, reliability=ReliabilityPolicy.BEST_EFFORT))
    run_graph.commands = ros.collect(JointTrajectory, topics.HEXAPOD_JOINT_TRAJECTORY,
                                     QoSProfile(depth=1000, reliability=ReliabilityPolicy.BEST_EFFORT))
    for node in (mock, source):
        ros.add_node(node)
    ros.bring_up('reference_source')
    ros.bring_up('mock_hexapod')
    ros.spin_until(lambda: sup.frames >= frames, 60, f'{frames} frames')
    for name in ('mock_hexapod', 'reference_source'):
        assert ros.change_state(name, 'deactivate')
    for node in (mock, source):
        ros.executor.remove_node(node)
        ros._extra_nodes.remove(node)
        node.destroy_node()
    sup.close()
    by_stamp = {stamp_to_ns(m.header.stamp): (tuple(m.position), tuple(m.velocity)) for m in js}
    return by_stamp, sup.events


def test_homing_synchronization_running_and_determinism(ros):
    states, events = run_graph(ros, flow(), 250)
    names = [e[1] for e in events]
    assert names[:2] == ['homed', 'synchronized'], names
    assert all(e[2] == 'reference_source' for e in events)
    t_homed, t_sync = events[0][0], events[1][0]
    assert t_sync - t_homed == 80 * T_NS                        # sync_duration 0.2 s = 80 frames
    # Homed: the mock is at home (0) when the event is reported.
    np.testing.assert_allclose(states[t_homed][0], 0.0, atol=1e-6)
    stamps = sorted(states)
    assert stamps == [k * T_NS for k in range(len(stamps))], 'every frame, none late or skipped'
    pos = np.array([states[s][0] for s in stamps])
    assert np.all(np.abs(np.diff(pos, axis=0)) <= 0.2 * 2.5e-3 + 1e-9), 'no jump'
    assert np.max(np.abs(pos[-1])) > 1e-4, 'the script is running'
    again, events2 = run_graph(ros, flow(), 250)
    common = sorted(set(states) & set(again))
    assert len(common) >= 250
    assert [states[s] for s in common] == [again[s] for s in common], 'same seed, same joint states'
    assert [e[:2] for e in events2[:2]] == [e[:2] for e in events[:2]]


def test_fault_holds_with_zero_velocity_and_no_jump(ros):
    states, events = run_graph(ros, flow(fault_at=150), 300)
    stamps = sorted(states)
    pos = np.array([states[s][0] for s in stamps])
    vel = np.array([states[s][1] for s in stamps])
    assert 'homed' in [e[1] for e in events]
    assert np.max(np.abs(vel[140:150])) > 1e-3, 'moving when the fault arrives'
    assert np.all(np.abs(np.diff(pos, axis=0)) <= 0.2 * 2.5e-3 + 1e-9)
    assert np.all(np.abs(np.diff(vel, axis=0)) <= 20.0 * 2.5e-3 + 1e-9)
    np.testing.assert_allclose(vel[-20:], 0.0, atol=1e-6)
    np.testing.assert_allclose(pos[-20:], np.tile(pos[-1], (20, 1)), atol=1e-7)


def test_real_time_uses_latest_mode_and_reaches_synchronized(ros):
    """Real time (2x pace) on the test's own executor: the wall clock is not the test's to control
    (a loaded machine makes the mock skip frames and commands arrive late: its servo then chases
    the setpoint, steps of 1.2 mm were seen at the drives in full suite runs), so what is judged is
    the source's own output: the mode flow, and commands that never jump."""
    _, events = run_graph(ros, flow(), 260, lockstep=False)
    # the source's events (a starved mock's watchdog may report its own fault meanwhile)
    assert [e[1] for e in events if e[2] == 'reference_source'][:2] == ['homed', 'synchronized']
    points = sorted((stamp_to_ns(m.header.stamp) * 1e-9 + duration_to_sec(pt.time_from_start), tuple(pt.positions))
                    for m in run_graph.commands for pt in m.points)
    t = np.array([p[0] for p in points])
    pos = np.array([p[1] for p in points])
    assert len(points) > 400
    dt = np.diff(t)[:, None]
    step = np.abs(np.diff(pos, axis=0))
    assert np.all(step <= 0.2 * np.maximum(dt, 0.000625) + 1e-9), step.max()    # 0.2 m/s, as in lockstep


def test_bad_parameter_refused_and_bad_joint_states_never_command_a_jump(ros):
    import pathlib

    from trajectory_msgs.msg import JointTrajectory
    config = pathlib.Path(__file__).resolve().parents[2] / 'config' / 'reference_source.yaml'
    diag = ros.collect(DiagnosticArray, topics.DIAGNOSTICS, 100)
    ros.spawn('hil_sim.reference_source.node', ['--params-file', str(config), '-p', 'amplitudes:=[0.5,0.5,0.5,0.5,0.5,0.5]'])
    assert not ros.change_state('reference_source', 'configure', timeout=30)
    ros.spin_until(lambda: statuses(diag, node='reference_source', text='peak velocity'), 10,
                   'refusal naming the cause')
    # In-process source (other name) fed by hand: NaN joints before any setpoint -> no command;
    # good joints -> hold them; NaN afterwards -> keep the last setpoint, never a jump.
    rig = NodeRig(ros, build(ros, ReferenceSourceNode, 'ref_b', lockstep=True),
                  inputs=[topics.HIL_FRAME, topics.JOINT_STATES])
    source = rig.node
    cmds = ros.collect(JointTrajectory, topics.HEXAPOD_JOINT_TRAJECTORY, 50)
    frame_pub = ros.node.create_publisher(Header, topics.HIL_FRAME, qos.stream(True))
    js_pub = ros.node.create_publisher(JointState, topics.JOINT_STATES, qos.stream(True))
    rig.up()
    names = [f'slider_{i}' for i in range(1, 7)]
    here = [0.003, 0.0, -0.002, 0.001, 0.0, 0.0]
    for k, pos in enumerate([[float('nan')] * 6, here, [float('nan')] * 6, here[:5]]):
        stamp = ns_to_stamp(k * T_NS)
        js_pub.publish(JointState(header=Header(stamp=stamp), name=names[:len(pos)], position=pos))
        frame_pub.publish(Header(stamp=stamp, frame_id='IDLE'))
        expected = [(1, 0), (1, 1), (2, 2), (3, 3)][k]          # (bad joint states, commands)
        ros.spin_until(lambda: (source.bad_joint_states, source.frames) == expected, 10, f'frame {k}')
    ros.spin_until(lambda: len(cmds) == 3, 10, 'three commands')
    assert [stamp_to_ns(c.header.stamp) for c in cmds] == [T_NS, 2 * T_NS, 3 * T_NS]
    for c in cmds:
        for pt in c.points:
            np.testing.assert_allclose(pt.positions, here, atol=1e-12)
            np.testing.assert_allclose(pt.velocities, 0.0, atol=1e-12)
    assert source.bad_joint_states == 3
