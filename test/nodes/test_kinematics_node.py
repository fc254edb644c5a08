"""kinematics node over DDS: joint states of known poses -> TCP pose, malformed input and FK
failure -> diagnostic and no publication, FK/IK queries, markers, robot description, lifecycle."""
import math
import pathlib

import numpy as np
import pytest
from diagnostic_msgs.msg import DiagnosticArray
from geometry_msgs.msg import PoseStamped
from rcl_interfaces.srv import SetParameters
from rclpy.lifecycle import TransitionCallbackReturn
from rclpy.parameter import Parameter
from sensor_msgs.msg import JointState
from std_msgs.msg import String
from visualization_msgs.msg import MarkerArray

from hil_core import hexaslide as hx
from hil_nodes import qos, topics
from hil_nodes.msgs.convert import array_to_pose, ns_to_stamp, pose_to_array, stamp_to_ns
from hil_nodes.kinematics.node import KinematicsNode
from rig import NodeRig, build, statuses
from rosutil import PUB_RELIABLE, SUB_RELIABLE

ROOT = pathlib.Path(__file__).resolve().parents[2]
GEOM = hx.load_geometry('hexaslide_scaled')
NAMES = list(GEOM.joint_names)


class Rig(NodeRig):
    def __init__(self, ros, **params):
        super().__init__(ros, build(ros, KinematicsNode, **{'lockstep': True, **params}),
                         inputs=[topics.JOINT_STATES], outputs=[topics.KINEMATICS_TCP_POSE])
        self.poses = ros.collect(PoseStamped, topics.KINEMATICS_TCP_POSE, SUB_RELIABLE)
        self.markers = ros.collect(MarkerArray, topics.KINEMATICS_MARKERS, SUB_RELIABLE)
        self.diags = ros.collect(DiagnosticArray, topics.DIAGNOSTICS, SUB_RELIABLE)
        self.fk_out = ros.collect(PoseStamped, topics.KINEMATICS_FK_RESPONSE, qos.command())
        self.ik_out = ros.collect(JointState, topics.KINEMATICS_IK_RESPONSE, qos.command())
        self.pub = ros.node.create_publisher(JointState, topics.JOINT_STATES, PUB_RELIABLE)
        self.fk_req = ros.node.create_publisher(JointState, topics.KINEMATICS_FK_REQUEST, qos.command())
        self.ik_req = ros.node.create_publisher(PoseStamped, topics.KINEMATICS_IK_REQUEST, qos.command())

    def seen(self):
        c = self.node.counters
        return sum(c[k] for k in ('published', 'malformed', 'bad_stamp', 'repeated_stamp', 'fk_failed'))

    def send(self, stamp_ns, names, positions, expect=True):
        before, seen = len(self.poses), self.seen()
        msg = JointState(name=list(names), position=[float(v) for v in positions])
        msg.header.stamp = ns_to_stamp(stamp_ns)
        self.pub.publish(msg)
        self.ros.spin_until(lambda: self.seen() > seen, 10, f'joint state {stamp_ns} handled')
        if expect:
            self.ros.spin_until(lambda: len(self.poses) > before, 10, f'pose for {stamp_ns}')
            return self.poses[-1]
        self.ros.spin_for(0.05)
        assert len(self.poses) == before, 'a bad joint state must not produce a pose'
        return None

    def statuses(self, text):
        return statuses(self.diags, name='kinematics: pose estimate', text=text)


def pose_error(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return max(np.abs(a[:3] - b[:3]).max(), min(np.abs(a[3:] - b[3:]).max(), np.abs(a[3:] + b[3:]).max()))


def test_tcp_pose_equals_the_pose_of_the_joint_states(ros):
    rig = Rig(ros)
    desc = ros.collect(String, topics.ROBOT_DESCRIPTION, qos.latched())
    rig.up()
    truth = np.concatenate([[hx.home_pose(GEOM)], hx.box_corners(GEOM)[::9], hx.random_poses(GEOM, 8, rng=1)])
    q = hx.inverse_kinematics(GEOM, truth).q
    order = [3, 0, 5, 1, 4, 2]                  # any joint order, extra joints ignored
    for k, (pose, qk) in enumerate(zip(truth, q)):
        stamp = 1_000_000_000 + k * 2_500_000
        msg = rig.send(stamp, [NAMES[i] for i in order] + ['gripper'], [qk[i] for i in order] + [0.3])
        assert stamp_to_ns(msg.header.stamp) == stamp and msg.header.frame_id == 'hexapod_base'
        assert pose_error(pose_to_array(msg.pose), pose) < 1e-9
    ros.spin_until(lambda: desc, 10, 'robot description')
    assert desc[0].data == (ROOT / 'urdf' / 'hexafloat_scaled.urdf').read_text()
    ros.spin_until(lambda: rig.markers, 10, 'markers')
    legs = rig.markers[-1].markers[0]
    ends = np.array([[p.x, p.y, p.z] for p in legs.points]).reshape(6, 2, 3)
    np.testing.assert_allclose(np.linalg.norm(ends[:, 0] - ends[:, 1], axis=1), GEOM.link_length, rtol=1e-9)
    assert not rig.statuses('malformed') and not rig.statuses('failed')


def test_malformed_joint_states_and_fk_failure_give_diagnostics_not_poses(ros):
    rig = Rig(ros, warn_interval=0.0)
    rig.up()
    good = np.zeros(6)
    t = 2_000_000_000
    rig.send(t, NAMES, good)
    bad_inputs = [
        (['slider_1', 'slider_2', 'slider_3', 'slider_4', 'slider_5', 'slider_7'], good, 'missing joints'),
        (NAMES, good[:5], 'positions'),
        (NAMES[:5] + ['slider_1'], good, 'duplicate'),
        (NAMES, [0, 0, math.nan, 0, 0, 0], 'non-finite'),
        (NAMES, [0, 0, 0, math.inf, 0, 0], 'non-finite'),
    ]
    for k, (names, positions, text) in enumerate(bad_inputs):
        rig.send(t + (k + 1) * 1000, names, positions, expect=False)
        ros.spin_until(lambda: rig.statuses(text), 10, f'diagnostic "{text}"')
    rig.send(t - 1000, NAMES, good, expect=False)                          # out of order
    ros.spin_until(lambda: rig.statuses('out-of-order'), 10, 'stamp diagnostic')
    rig.send(t, NAMES, good, expect=False)                                 # repeated stamp: silent
    assert rig.node.counters['repeated_stamp'] == 1
    rig.send(t + 10_000_000, NAMES, np.full(6, 0.5), expect=False)         # no closure: FK fails
    ros.spin_until(lambda: rig.statuses('forward kinematics failed'), 10, 'FK failure diagnostic')
    # and it recovers with the next valid sample, warm start intact
    pose = hx.random_poses(GEOM, 1, rng=2)[0]
    msg = rig.send(t + 20_000_000, NAMES, hx.inverse_kinematics(GEOM, pose).q[0])
    assert pose_error(pose_to_array(msg.pose), pose) < 1e-9
    assert len(rig.poses) == 2


def test_fk_and_ik_queries(ros):
    rig = Rig(ros)
    rig.up()
    ros.wait_for_subscribers(topics.KINEMATICS_FK_REQUEST)
    ros.wait_for_subscribers(topics.KINEMATICS_IK_REQUEST)
    pose = hx.random_poses(GEOM, 1, rng=3)[0]
    q = hx.inverse_kinematics(GEOM, pose).q[0]
    req = JointState(name=NAMES, position=[float(v) for v in q])
    req.header.stamp = ns_to_stamp(42)
    rig.fk_req.publish(req)
    ros.spin_until(lambda: rig.fk_out, 10, 'FK response')
    assert stamp_to_ns(rig.fk_out[0].header.stamp) == 42 and rig.fk_out[0].header.frame_id == 'hexapod_base'
    assert pose_error(pose_to_array(rig.fk_out[0].pose), pose) < 1e-9
    for stamp, p, frame in ((43, pose, 'hexapod_base'), (44, pose + [0, 0, 0.3, 0, 0, 0, 0], ''),
                            (45, pose, 'world')):
        msg = PoseStamped(pose=array_to_pose(p))
        msg.header.stamp = ns_to_stamp(stamp)
        msg.header.frame_id = frame
        rig.ik_req.publish(msg)
    ros.spin_until(lambda: len(rig.ik_out) >= 3, 10, 'IK responses')
    by_stamp = {stamp_to_ns(m.header.stamp): m for m in rig.ik_out}
    assert list(by_stamp[43].name) == NAMES and by_stamp[43].header.frame_id == 'hexapod_base'
    np.testing.assert_allclose(by_stamp[43].position, q, atol=1e-15)
    assert by_stamp[44].header.frame_id.startswith('error: no real solution')
    assert np.isnan(by_stamp[44].position).all()
    assert by_stamp[45].header.frame_id.startswith("error: pose frame 'world'")
    bad = JointState(name=NAMES, position=[0.5] * 6)
    bad.header.stamp = ns_to_stamp(46)
    rig.fk_req.publish(bad)
    ros.spin_until(lambda: len(rig.fk_out) >= 2, 10, 'FK error response')
    assert rig.fk_out[1].header.frame_id.startswith('error:') and math.isnan(rig.fk_out[1].pose.position.x)


def test_lifecycle_and_refused_configuration(ros):
    rig = Rig(ros, robot='hexaslide_scaled')
    res = ros.call(SetParameters, '/kinematics/set_parameters',
                   SetParameters.Request(parameters=[Parameter('robot', value='hexapod_xl').to_parameter_msg()]))
    assert res.results[0].successful                       # accepted while unconfigured ...
    assert not ros.change_state('kinematics', 'configure')  # ... and refused by configure
    ros.spin_until(lambda: rig.statuses('configuration refused'), 10, 'refusal diagnostic')
    assert "robot" in rig.statuses('configuration refused')[-1].message
    assert ros.get_state('kinematics') == 'unconfigured'
    ros.call(SetParameters, '/kinematics/set_parameters',
             SetParameters.Request(parameters=[Parameter('robot', value='hexaslide_full').to_parameter_msg()]))
    rig.up()
    full = hx.load_geometry('hexaslide_full')
    pose = hx.random_poses(full, 1, rng=4)[0]
    msg = rig.send(3_000_000_000, NAMES, hx.inverse_kinematics(full, pose).q[0])
    assert pose_error(pose_to_array(msg.pose), pose) < 1e-9
    assert ros.change_state('kinematics', 'deactivate')
    before = len(rig.poses)
    msg = JointState(name=NAMES, position=[0.0] * 6)
    msg.header.stamp = ns_to_stamp(3_200_000_000)
    rig.pub.publish(msg)
    ros.spin_for(0.3)
    assert len(rig.poses) == before                          # inactive: no output
    assert ros.change_state('kinematics', 'cleanup')
    assert ros.change_state('kinematics', 'configure')

    def set_param(name, value):
        req = SetParameters.Request(parameters=[Parameter(name, value=value).to_parameter_msg()])
        return ros.call(SetParameters, '/kinematics/set_parameters', req).results[0]
    bad = set_param('urdf_file', '/nonexistent/robot.urdf')                 # checked while inactive
    assert not bad.successful and 'not found' in bad.reason
    assert set_param('robot', 'hexaslide_scaled').successful               # applied while inactive
    assert ros.change_state('kinematics', 'activate')
    assert ros.get_state('kinematics') == 'active'
    assert not set_param('robot', 'hexaslide_full').successful             # refused while active
    pose = hx.random_poses(GEOM, 1, rng=7)[0]
    msg = rig.send(3_300_000_000, NAMES, hx.inverse_kinematics(GEOM, pose).q[0])
    assert pose_error(pose_to_array(msg.pose), pose) < 1e-9


def test_reactivation_never_publishes_a_pose_of_an_earlier_joint_state(ros):
    """The cause of a once flaky lifecycle test: the test's joint-state publisher is
    reliable + transient-local (as the lockstep mock's), so a joint-state subscription created anew
    at configure is replayed the publisher's history (stamps 3.0 s and 3.2 s, both published before
    the re-activation). Taken after activation, they came out as poses of the past. Here the
    transitions run in-process with no spinning in between, so a replay can only be taken after
    activation (the order that failed once in `make test`, now forced): the only pose after the
    re-activation must be the one of the new sample."""
    rig = Rig(ros)
    rig.up()
    pose = hx.random_poses(GEOM, 2, rng=8)
    rig.send(3_000_000_000, NAMES, hx.inverse_kinematics(GEOM, pose[0]).q[0])
    assert ros.change_state('kinematics', 'deactivate')
    stale = JointState(name=NAMES, position=[0.0] * 6)
    stale.header.stamp = ns_to_stamp(3_200_000_000)
    rig.pub.publish(stale)                                  # published while inactive
    ros.spin_until(lambda: rig.node.counters['inactive_dropped'] >= 1, 10, 'sample taken while inactive')
    node = rig.node
    for step in (node.trigger_cleanup, node.trigger_configure, node.trigger_activate):
        assert step() == TransitionCallbackReturn.SUCCESS
    after = len(rig.poses)
    fresh = JointState(name=NAMES, position=[float(v) for v in hx.inverse_kinematics(GEOM, pose[1]).q[0]])
    fresh.header.stamp = ns_to_stamp(3_300_000_000)
    rig.pub.publish(fresh)
    # a replay, if any, comes from the same writer as the new sample, so in order before it
    ros.spin_until(lambda: any(stamp_to_ns(p.header.stamp) == 3_300_000_000 for p in rig.poses[after:]), 10,
                   'pose of the new sample')
    assert [stamp_to_ns(p.header.stamp) for p in rig.poses[after:]] == [3_300_000_000]
    assert pose_error(pose_to_array(rig.poses[-1].pose), pose[1]) < 1e-9


def test_iiwa14_flange_pose(ros):
    iiwa = pytest.importorskip('hil_core.iiwa.kinematics')
    rig = Rig(ros, robot='iiwa14')
    rig.up()
    kin = iiwa.IiwaKinematics.from_urdf()
    rng = np.random.default_rng(5)
    names = [f'iiwa_joint_{i}' for i in range(1, 8)]
    for k in range(5):
        q = rng.uniform(kin.lower, kin.upper)
        msg = rig.send(4_000_000_000 + k * 1000, names, q)
        assert msg.header.frame_id == 'iiwa_link_0'
        T = iiwa.dh_forward(q)                                # independent DH product
        np.testing.assert_allclose(pose_to_array(msg.pose)[:3], T[:3, 3], atol=1e-12)
    rig.send(4_100_000_000, names[:6], np.zeros(6), expect=False)
    ros.spin_until(lambda: rig.statuses('missing joints'), 10, 'iiwa malformed diagnostic')


def test_a_flood_of_bad_samples_is_counted_but_reported_once_per_interval(ros):
    rig = Rig(ros, warn_interval=30.0)
    rig.up()
    for k in range(20):
        rig.send(5_000_000_000 + k, NAMES, [math.nan] * 6, expect=False)
    assert rig.node.counters['malformed'] == 20
    ros.spin_until(lambda: rig.statuses('non-finite'), 10, 'diagnostic')
    ros.spin_for(0.2)
    assert len(rig.statuses('non-finite')) == 1


def test_joint_states_of_the_mock_hexapod_give_the_commanded_pose(ros):
    """Lockstep with hil_sim.mock_hexapod: the test commands a smooth move to a target pose's
    sliders frame by frame; after servo settling the estimated TCP pose equals the target."""
    from builtin_interfaces.msg import Duration
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

    from hil_sim.mock_hardware.system_mock import system_mock
    mock = ros.add_node(system_mock('hexafloat', dict(lockstep=True, time_scale=0.0), context=ros.context))
    rig = Rig(ros)
    states = ros.collect(JointState, topics.JOINT_STATES, SUB_RELIABLE)
    cmd = ros.node.create_publisher(JointTrajectory, topics.HEXAPOD_JOINT_TRAJECTORY, qos.command(1000, lockstep=True))
    target = hx.poses_from_offsets(GEOM, [0.03, -0.015, 0.01, 0.05, -0.08, 0.03])[0]
    q_target = hx.inverse_kinematics(GEOM, target).q[0]
    rig.up()
    ros.bring_up('mock_hexapod')
    ramp, frames = 0.4, 320                                  # s of smooth ramp, frames in total (0.8 s)

    def setpoint(t):
        s = min(max(t / ramp, 0.0), 1.0)
        return q_target * s * s * (3 - 2 * s)
    answered = set()
    t0 = None
    while len(answered) < frames:
        ros.spin_until(lambda: states and stamp_to_ns(states[-1].header.stamp) not in answered, 20, 'frame')
        stamp = stamp_to_ns(states[-1].header.stamp)
        t0 = stamp if t0 is None else t0
        msg = JointTrajectory(joint_names=NAMES)
        msg.header.stamp = states[-1].header.stamp
        for j in range(1, 5):
            dt = j * 625_000
            pt = JointTrajectoryPoint(positions=[float(v) for v in setpoint((stamp - t0 + dt) * 1e-9)])
            pt.time_from_start = Duration(sec=0, nanosec=dt)
            msg.points.append(pt)
        cmd.publish(msg)
        answered.add(stamp)
    last = max(answered)
    ros.spin_until(lambda: any(stamp_to_ns(p.header.stamp) == last for p in rig.poses), 20, 'last pose')
    final = next(p for p in rig.poses if stamp_to_ns(p.header.stamp) == last)
    assert pose_error(pose_to_array(final.pose), target) < 1e-7       # servo settled
    assert mock.rejected_commands == 0
    stamps = [stamp_to_ns(p.header.stamp) for p in rig.poses]
    assert stamps == sorted(set(stamps)) and len(stamps) >= frames - 1


def test_standalone_process_with_params_file(ros):
    """`python -m hil_nodes.kinematics.node --ros-args --params-file config/kinematics.yaml`."""
    poses = ros.collect(PoseStamped, topics.KINEMATICS_TCP_POSE, SUB_RELIABLE)
    proc = ros.spawn('hil_nodes.kinematics.node', ['--params-file', str(ROOT / 'config' / 'kinematics.yaml')])
    ros.bring_up('kinematics', timeout=40)                  # waits for the process's services
    pub = ros.node.create_publisher(JointState, topics.JOINT_STATES, PUB_RELIABLE)
    ros.wait_for_subscribers(topics.JOINT_STATES)
    pose = hx.random_poses(GEOM, 1, rng=6)[0]
    msg = JointState(name=NAMES, position=[float(v) for v in hx.inverse_kinematics(GEOM, pose).q[0]])
    msg.header.stamp = ns_to_stamp(7_000_000_000)
    pub.publish(msg)
    ros.spin_until(lambda: poses, 20, 'pose from the node process')
    assert pose_error(pose_to_array(poses[0].pose), pose) < 1e-9
    assert proc.stop() == 0, proc.output()


def test_missing_joint_states_give_a_stale_diagnostic(ros):
    rig = Rig(ros, stale_timeout=0.2)
    rig.up()
    rig.send(6_000_000_000, NAMES, np.zeros(6))
    ros.spin_until(lambda: rig.statuses('no joint states'), 10, 'STALE diagnostic')
    assert rig.statuses('no joint states')[0].level == b'\x03'                # STALE
    rig.send(6_002_500_000, NAMES, np.zeros(6))
    ros.spin_until(lambda: rig.statuses('resumed'), 10, 'resumed diagnostic')


def test_in_real_time_tf_goes_out_after_the_frame_and_the_pose_at_once(ros, monkeypatch):
    """/tf is for observers: in real time, under the process's spin loop, it waits for the turn's
    deliveries to be done (frame_loop.after_frame); the TCP pose, which the chain reads, does not."""
    from tf2_msgs.msg import TFMessage
    from hil_nodes.runtime.frame_loop import LOOP
    rig = Rig(ros, lockstep=False)
    tfs = ros.collect(TFMessage, topics.TF, SUB_RELIABLE)
    rig.up()
    home = hx.home_pose(GEOM)
    q = hx.inverse_kinematics(GEOM, home[None]).q[0]
    monkeypatch.setattr(LOOP, 'driven', True)        # (its timers were made before: rclpy's)
    msg = rig.send(1_000_000_000, NAMES, q)
    assert pose_error(pose_to_array(msg.pose), home) < 1e-9
    ros.spin_for(0.2)
    assert tfs == []                                  # queued behind the frame
    assert LOOP.run_after() == 1
    ros.spin_until(lambda: tfs, 10, '/tf after the frame')
    platform = [t for t in tfs[-1].transforms if t.header.stamp == msg.header.stamp]
    assert platform and abs(platform[0].transform.translation.z - home[2]) < 1e-9
