"""hybrid5 over real DDS: mock drives (hil_sim.mock_hardware.node as config/systems/hybrid5.yaml builds it:
hybrid5 plant, effort_controller; lockstep by arrival, /clock owned, refused commands end in the
watchdog's controlled stop), the hybrid_controller (mode-aware via /hil/frame, events, bad input, lifecycle)
and the kinematics node with ``robot: hybrid5``. The test plays the supervisor's frame gate."""
import numpy as np
import pytest
from diagnostic_msgs.msg import DiagnosticArray
from geometry_msgs.msg import PoseStamped
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, Header

from hil_core.hybrid5 import JOINT_NAMES, dynamics as dyn, kinematics as kin
from hil_core.hybrid5.params import load_params
from hil_nodes import qos, topics
from hil_nodes.msgs.convert import stamp_to_ns
from hil_nodes.hybrid_controller.node import HybridControllerNode
from hil_nodes.kinematics.node import KinematicsNode
from hil_sim.mock_hardware.system_mock import system_mock
from rig import NodeRig, build, start, system_drives

P = load_params()
P0 = np.array([0.0, 0.0, 0.85])


def static_effort(p):
    """Leg forces that hold the plant still: J^-T grad V with grad V by finite differences."""
    pl, h = P.plant, 1e-7
    grad = np.array([(dyn.potential(p + h * e, P.R, pl.m_p, pl.m_s, pl.q_g)
                      - dyn.potential(p - h * e, P.R, pl.m_p, pl.m_s, pl.q_g)) / (2 * h) for e in np.eye(3)])
    return np.r_[np.linalg.solve(kin.jacobian(p, P.R).T, grad), 0.0, 0.0]


def drives(ros, **params):
    return system_drives(ros, 'hybrid5', **{'lockstep': True, 'lockstep_timeout': 5.0, 'status_period': 0.1,
                                            **params})


def test_mock_lockstep_frames_and_holding_effort(ros):
    rig = drives(ros)
    first = rig.js[-1]
    assert stamp_to_ns(first.header.stamp) == 0 and list(first.name) == list(JOINT_NAMES)
    np.testing.assert_allclose(first.position[:3], kin.inverse(P0, P.R), atol=P.plant.encoder_leg)
    ros.spin_for(0.3)
    assert all(stamp_to_ns(m.header.stamp) == 0 for m in rig.js)       # no command: time stands still
    u = static_effort(P0)
    for k in range(1, 201):
        js = rig.send(u)
        assert stamp_to_ns(js.header.stamp) == k * 100_000              # 100 us frames
    np.testing.assert_allclose(js.position[:3], first.position[:3], atol=3 * P.plant.encoder_leg)


@pytest.mark.parametrize('bad', [[0.0] * 4,                     # size mismatch: the controller is deactivated
                                 [0.0, np.nan, 0, 0, 0],          # dropped: the last command persists ...
                                 [1e7, 0, 0, 0, 0]])              # ... until command_timeout without a valid one
def test_mock_rejects_bad_commands_and_brakes_without_a_jump(ros, bad):
    rig = drives(ros, command_timeout=0.01)
    push = static_effort(P0) + np.array([150.0, -80.0, 0.0, 3.0, 2.0])  # accelerate every joint
    for _ in range(300):
        rig.send(push)
    v0 = np.abs(rig.js[-1].velocity)
    assert v0.min() > 1e-4
    for _ in range(1500):
        rig.send(bad)
    ros.spin_until(lambda: any('rejected' in m for m in rig.messages()), 10, 'rejection diagnostic')
    pos = np.array([m.position for m in rig.js[-1501:]])
    vel = np.array([m.velocity for m in rig.js[-1501:]])
    assert np.all(np.abs(vel[-1]) < 0.2 * v0 + 1e-5)                      # braked to rest
    assert np.abs(np.diff(pos, axis=0)).max() < 1e-4                      # 0.1 mm per frame at most
    assert np.abs(np.diff(vel, axis=0)).max() < 0.01
    rig.send(push)                                                        # after the watchdog's stop a
    assert rig.node._watchdog.braking                                     # command is not followed


class Loop:
    """mock + controller + the test as frame gate (mode chosen by the test)."""

    def __init__(self, ros, **ctl_params):
        self.ros, self.mode = ros, 'IDLE'
        d = dict(lockstep=True, lockstep_timeout=5.0, status_period=0.1)
        self.mock_node = ros.add_node(system_mock('hybrid5', d, context=ros.context))
        self.ctl = start(ros, HybridControllerNode, **{'lockstep': True, 'status_period': 0.1, **ctl_params})
        self.frames = ros.node.create_publisher(Header, topics.HIL_FRAME, qos.stream(True))
        self.js = []
        ros.node.create_subscription(JointState, topics.JOINT_STATES, self._gate,
                                     qos.joint_states(True, depth=5000))
        self.events = ros.collect(DiagnosticArray, topics.HIL_EVENTS, qos.command(depth=100))
        self.refs = ros.collect(JointState, topics.HYBRID_REFERENCE, qos.stream(True, depth=50000))
        ros.bring_up('hybrid_controller')
        ros.bring_up('mock_hybrid5')

    def _gate(self, msg):
        self.js.append(msg)
        self.frames.publish(Header(stamp=msg.header.stamp, frame_id=self.mode))

    def run_until(self, pred, timeout=60.0, what='condition'):
        self.ros.spin_until(pred, timeout, what)

    def event_names(self):
        return [s.name for a in self.events for s in a.status]


def test_controller_modes_events_tracking_and_fault_brake(ros):
    loop = Loop(ros)
    loop.run_until(lambda: len(loop.js) > 20, 30, 'lockstep frames')
    loop.mode = 'HOMING'
    loop.run_until(lambda: 'synchronized' in loop.event_names(), 60, 'homed + synchronized')
    assert loop.event_names()[:2] == ['homed', 'synchronized']
    loop.mode = 'RUNNING'                                   # the supervisor mirrors the progress
    n0 = len(loop.js)
    loop.run_until(lambda: len(loop.js) > n0 + 1500, 120, '1500 running frames')
    js = {stamp_to_ns(m.header.stamp): np.array(m.position) for m in loop.js}
    err = [np.abs(np.array(r.position[:3]) - js[stamp_to_ns(r.header.stamp)][:3]).max()
           for r in loop.refs[-1400:] if stamp_to_ns(r.header.stamp) in js]
    moved = np.abs(np.array(loop.refs[-1].position[:3]) - np.array(loop.refs[0].position[:3])).max()
    assert moved > 1e-4 and max(err) < 10e-6                 # the path moves; legs track to < 10 um
    loop.mode = 'FAULT'
    n1 = len(loop.refs)
    loop.run_until(lambda: len(loop.refs) > n1 + 1500, 120, 'braking frames')
    v = np.array([r.velocity for r in loop.refs[n1:]])
    assert np.abs(v[-1]).max() < 1e-9                         # at rest, held
    assert np.abs(np.diff(v, axis=0)).max() < 2e-3            # decelerated, no jump
    assert 'fault' not in loop.event_names() and loop.mock_node.late_commands == 0


class FedController(NodeRig):
    """The controller alone, the test publishing its joint states and frames and hearing its efforts."""

    def __init__(self, ros, lockstep):
        super().__init__(ros, build(ros, HybridControllerNode, lockstep=lockstep),
                         inputs=[topics.JOINT_STATES, topics.HIL_FRAME])
        self.eff = ros.collect(Float64MultiArray, topics.HYBRID_EFFORT_COMMANDS, qos.command(depth=50))
        self.js_pub = ros.node.create_publisher(JointState, topics.JOINT_STATES, qos.stream(lockstep))
        self.fr_pub = ros.node.create_publisher(Header, topics.HIL_FRAME, qos.stream(lockstep))


def test_controller_bad_joint_states_and_unassembled_legs(ros):
    rig = FedController(ros, lockstep=True)
    ctl, eff, js_pub, fr_pub = rig.node, rig.eff, rig.js_pub, rig.fr_pub
    events = ros.collect(DiagnosticArray, topics.HIL_EVENTS, qos.command(depth=50))
    diag = ros.collect(DiagnosticArray, topics.DIAGNOSTICS, 100)
    rig.up()
    good = list(kin.inverse(P0, P.R)) + [0.0, 0.0]

    def frame(k, pos, names=JOINT_NAMES):
        stamp = Header(stamp=ros.node.get_clock().now().to_msg()).stamp
        stamp.sec, stamp.nanosec = 0, k * 100_000
        js_pub.publish(JointState(header=Header(stamp=stamp), name=list(names), position=[float(x) for x in pos]))
        fr_pub.publish(Header(stamp=stamp, frame_id='IDLE'))

    frame(1, good)
    ros.spin_until(lambda: len(eff) == 1, 10, 'effort of a good frame')
    frame(2, [np.nan] + good[1:])                                  # NaN
    frame(3, good[:4], JOINT_NAMES[:4])                            # a joint missing
    ros.spin_until(lambda: ctl.counters['bad_joint_states'] == 2, 10, 'bad joint states counted')
    ros.spin_until(lambda: any('unusable' in s.message for a in diag for s in a.status), 10, 'diagnostic')
    frame(4, [0.01, 1.0, 1.0, 0.0, 0.0])                           # legs that cannot meet
    ros.spin_until(lambda: any(s.name == 'fault' for a in events for s in a.status), 10, 'fault event')
    assert len(eff) == 1 and all(np.all(np.isfinite(m.data)) for m in eff)   # nothing unsafe sent


@pytest.mark.parametrize('params, says', [
    (dict(gcode_file='BAD'), 'line 3'),                         # arc end off its circle
    (dict(params_file='/nonexistent/hybrid5.yaml'), 'No such file'),
    (dict(params_file='MISSING'), "missing 'control'"),
    (dict(home=[0.0, 0.0, -0.5, 0.0, 0.0]), 'below the base plane'),   # not on the z > 0 branch
])
def test_controller_refuses_bad_configuration(ros, tmp_path, params, says):
    bad = tmp_path / 'bad.nc'
    bad.write_text('G21 G90\nG1 X1 F100\nG2 X5 Y0 I1 J0\n')
    missing = tmp_path / 'missing.yaml'
    missing.write_text('geometry: {R: 0.6, h: 0.05, work_origin: [0, 0, 0.85]}\n')
    params = {k: {'BAD': str(bad), 'MISSING': str(missing)}.get(v, v) if isinstance(v, str) else v
              for k, v in params.items()}
    start(ros, HybridControllerNode, **params)
    diag = ros.collect(DiagnosticArray, topics.DIAGNOSTICS, 100)
    assert not ros.change_state('hybrid_controller', 'configure')
    ros.spin_until(lambda: any(says in s.message for a in diag for s in a.status), 10, says)


def test_controller_real_time_ignores_out_of_order_stamps(ros):
    rig = FedController(ros, lockstep=False).up()
    ctl, eff, js_pub, fr_pub = rig.node, rig.eff, rig.js_pub, rig.fr_pub
    good = [*kin.inverse(P0, P.R).tolist(), 0.0, 0.0]
    ros.spin_until(lambda: fr_pub.publish(Header(frame_id='IDLE')) or ctl.mode == 'IDLE', 10, 'mode known')
    for ns in (300_000, 200_000, 400_000):                        # the 200 us sample comes late
        msg = JointState(name=list(JOINT_NAMES), position=good)
        msg.header.stamp.nanosec = ns
        js_pub.publish(msg)
        ros.spin_until(lambda: ctl.counters['cycles'] + ctl.counters['bad_stamps'] >= 1 + (ns != 300_000)
                       + (ns == 400_000), 10, f'sample {ns}')
    assert ctl.counters['cycles'] == 2 and ctl.counters['bad_stamps'] == 1 and len(eff) >= 1


def test_kinematics_node_hybrid5_fk(ros):
    rig = NodeRig(ros, build(ros, KinematicsNode, robot='hybrid5'), inputs=[topics.JOINT_STATES])
    poses = ros.collect(PoseStamped, topics.KINEMATICS_TCP_POSE, qos.stream(False))
    pub = ros.node.create_publisher(JointState, topics.JOINT_STATES, qos.stream(False))
    rig.up()
    p = np.array([0.03, -0.02, 0.9])
    msg = JointState(name=list(JOINT_NAMES), position=[*kin.inverse(p, P.R).tolist(), 0.1, 0.2])
    msg.header.stamp.nanosec = 100_000

    def got():
        pub.publish(msg)
        return poses
    ros.spin_until(got, 10, 'tcp pose')
    q = poses[-1].pose
    np.testing.assert_allclose([q.position.x, q.position.y, q.position.z], p, atol=1e-12)
    assert q.orientation.w == 1.0 and poses[-1].header.frame_id == 'hybrid5_base'


def test_mock_real_time_advances_and_holds_without_commands(ros):
    rig = drives(ros, lockstep=False, time_scale=0.5)
    ros.spin_until(lambda: stamp_to_ns(rig.js[-1].header.stamp) > 20_000_000, 30, 'sim time advancing')
    q = np.array(rig.js[-1].position[:3])
    np.testing.assert_allclose(q, kin.inverse(P0, P.R), atol=2e-6)   # the drives hold: nothing falls
