"""planner over DDS: lockstep gate (frame + reference), the whole mode flow with a safety takeover,
bad input (NaN reference, out-of-order stamps, unknown mode, missing reference, missing kinematics
pose), FAULT stop, markers, lifecycle and refused parameters."""
import time

import numpy as np
from diagnostic_msgs.msg import DiagnosticArray
from geometry_msgs.msg import PoseStamped, TwistStamped
from rclpy.parameter import Parameter
from rclpy.qos import QoSProfile, ReliabilityPolicy
from std_msgs.msg import Header
from visualization_msgs.msg import MarkerArray

from hil_core.planner.config import Workspace
from hil_core.planner.dof import pose_to_dof
from hil_nodes import qos, topics
from hil_nodes.msgs.convert import array_to_pose, ns_to_stamp, pose_to_array, stamp_to_ns
from hil_nodes.planner.node import PlannerNode
from hil_nodes.bringup.system import repo_root
from rig import NodeRig, build, check_up_and_down, start
from rosutil import SUB_RELIABLE

T_NS = 2_500_000
BEST_EFFORT = QoSProfile(depth=1000, reliability=ReliabilityPolicy.BEST_EFFORT)
WS = Workspace.load(str(repo_root() / 'config' / 'workspace_hexaslide_scaled.yaml'))
HOME = np.asarray(WS.home_pose, dtype=float)
A_MAX = np.array([6.0, 6.0, 6.0, 20.0, 20.0, 20.0])


INPUTS = (topics.ADMITTANCE_REFERENCE, topics.KINEMATICS_TCP_POSE)
TIMING = dict(homing_min_duration=0.01, sync_duration=0.01, return_min_duration=0.1)


class Rig(NodeRig):
    def __init__(self, ros, **params):
        base = dict(lockstep=True, **TIMING, reference_wait=0.2)
        base.update(params)
        super().__init__(ros, build(ros, PlannerNode, **base), inputs=[topics.HIL_FRAME, *INPUTS],
                         outputs=[topics.PLANNER_SAFE_REFERENCE])
        # real time streams are best effort (sensor-data QoS): a reliable reader would not match
        out_qos = SUB_RELIABLE if base['lockstep'] else BEST_EFFORT
        self.out = ros.collect(PoseStamped, topics.PLANNER_SAFE_REFERENCE, out_qos)
        self.twist = ros.collect(TwistStamped, topics.PLANNER_SAFE_TWIST, out_qos)
        self.hil_events = ros.collect(DiagnosticArray, topics.HIL_EVENTS, qos.command(100))
        self.events = ros.collect(DiagnosticArray, topics.PLANNER_EVENTS, qos.command(100))
        self.diags = ros.collect(DiagnosticArray, topics.DIAGNOSTICS, SUB_RELIABLE)
        self.markers = ros.collect(MarkerArray, topics.PLANNER_MARKERS, qos.latched())
        # inputs as their producers publish them (qos.stream: transient-local in lockstep)
        in_qos = qos.stream(reliable=base['lockstep'])
        self.frame_pub = ros.node.create_publisher(Header, topics.HIL_FRAME, in_qos)
        self.ref_pub = ros.node.create_publisher(PoseStamped, topics.ADMITTANCE_REFERENCE, in_qos)
        self.meas_pub = ros.node.create_publisher(PoseStamped, topics.KINEMATICS_TCP_POSE, in_qos)
        self.k = 0

    def up(self):
        super().up()
        # discovery is asynchronous (slow on a loaded machine): repeat a harmless message on each
        # input until the node has seen one, so no single message of the test is lost to it
        n = self.node
        self._until_seen(lambda: self.frame_pub.publish(Header(stamp=ns_to_stamp(1), frame_id='IDLE')),
                         lambda: n.counters['frames'] >= 1, topics.HIL_FRAME)
        self._until_seen(lambda: self.ref_pub.publish(PoseStamped(pose=array_to_pose(HOME))),
                         # lockstep: stamp 0 is older than the released warm-up frame: counted stale
                         lambda: (n.latest_ref is not None) if not n.p.lockstep else n.sync.dropped_stale >= 1,
                         topics.ADMITTANCE_REFERENCE)

    def _until_seen(self, send, seen, what, timeout=30.0):
        end = time.monotonic() + timeout
        while not seen():
            assert time.monotonic() < end, f'{what}: nothing received within {timeout} s'
            send()
            self.ros.spin_for(0.1)

    def measured(self, pose):
        msg = PoseStamped(pose=array_to_pose(pose))
        msg.header.stamp = ns_to_stamp((self.k + 1) * T_NS)
        self._until_seen(lambda: self.meas_pub.publish(msg), lambda: self.node.measured is not None,
                         topics.KINEMATICS_TCP_POSE)

    def frames(self, mode, refs=None, n=None, expect=True):
        """Publish frames k+1.. (and their references if given) in batches; wait for the outputs."""
        n = len(refs) if refs is not None else n
        for start in range(0, n, 10):           # well inside the stream QoS depth
            before = len(self.out)
            batch = range(start, min(n, start + 10))
            for i in batch:
                self.k += 1
                stamp = ns_to_stamp(self.k * T_NS)
                if refs is not None and refs[i] is not None:
                    msg = PoseStamped(pose=array_to_pose(refs[i]))
                    msg.header.stamp = ns_to_stamp(self.k * T_NS if not isinstance(refs[i], tuple) else refs[i][1])
                    self.ref_pub.publish(msg)
                self.frame_pub.publish(Header(stamp=stamp, frame_id=mode))
            if expect:
                self.ros.spin_until(lambda: len(self.out) >= before + len(batch), 20, f'outputs of frames to {self.k}')

    def names(self, msgs):
        return [s.name for m in msgs for s in m.status]

    def poses(self):
        return np.array([pose_to_array(m.pose) for m in self.out])


def _check_limits(poses):
    x = pose_to_dof(poses)
    acc = np.abs(np.diff(x, 2, axis=0)) / (T_NS * 1e-9) ** 2
    assert np.all(acc <= A_MAX + 1e-6), acc.max(axis=0)       # float32-free DDS doubles: tight
    assert np.max(WS.soft.level(x[:, :3] - HOME[:3])) <= WS.hard_expansion


def test_mode_flow_with_takeover_recovery_and_home(ros):
    rig = Rig(ros)
    rig.up()
    assert rig.ros.spin_until(lambda: rig.markers, 10, 'latched markers')
    assert [m.ns for m in rig.markers[0].markers] == ['soft_limit', 'hard_limit']
    rig.measured(HOME)
    rig.frames('IDLE', n=3)
    rig.frames('HOMING', n=4)                         # homing needs no reference: frames alone release
    rig.ros.spin_until(lambda: 'homed' in rig.names(rig.hil_events), 10, 'homed')
    # now frames wait for their reference (lockstep): a frame without one produces nothing yet
    before = len(rig.out)
    rig.frames('SYNCHRONIZING', n=1, expect=False)
    rig.ros.spin_for(0.05)
    assert len(rig.out) == before
    # the reference of that frame releases it; then a push outward at 0.4 m/s along x
    u = np.array([1.0, 0.3, 0.2]) / np.linalg.norm([1.0, 0.3, 0.2])
    ref = HOME.copy()
    msg = PoseStamped(pose=array_to_pose(ref))
    msg.header.stamp = ns_to_stamp(rig.k * T_NS)
    rig.ref_pub.publish(msg)
    rig.ros.spin_until(lambda: len(rig.out) == before + 1, 10, 'frame released by its reference')
    refs = [np.r_[HOME[:3] + u * min(0.4 * i * T_NS * 1e-9, 0.15), HOME[3:]] for i in range(1, 301)]
    rig.frames('RUNNING', refs)
    names = rig.names(rig.hil_events)
    assert names[:3] == ['homed', 'synchronized', 'safety_takeover'], names
    takeover = [s for m in rig.events for s in m.status if s.name == 'safety_takeover'][0]
    values = {kv.key: kv.value for kv in takeover.values}
    assert 'exit_point' in values and 'exit_velocity' in values
    # keep framing (the supervisor now says SAFETY_RECOVERY) until home is reached
    for _ in range(40):
        if 'home_reached' in rig.names(rig.hil_events):
            break
        rig.frames('SAFETY_RECOVERY', n=30)
    assert rig.names(rig.hil_events)[-2:] == ['back_inside', 'home_reached']
    rig.frames('IDLE', n=3)
    p = rig.poses()
    _check_limits(p)
    assert np.array_equal(p[-1], HOME) and np.array_equal(p[-2], HOME)
    # output stamps are the frame stamps, one per frame, in order
    stamps = [stamp_to_ns(m.header.stamp) for m in rig.out]
    assert stamps == sorted(set(stamps)) and len(stamps) == rig.k
    rig.ros.spin_until(lambda: len(rig.twist) == len(rig.out), 10, 'one twist per pose')


def test_bad_input_is_reported_and_never_makes_a_jump(ros):
    rig = Rig(ros, lockstep=True)
    rig.up()
    # no kinematics pose yet: nothing published, a clear diagnostic
    rig.frames('IDLE', n=2, expect=False)
    rig.ros.spin_until(lambda: any('waiting for' in s.message for d in rig.diags for s in d.status
                                   if s.name == 'planner: workspace'), 10, 'missing-pose diagnostic')
    assert not rig.out
    rig.measured(HOME)
    rig.frames('HOMING', n=4)
    rig.ros.spin_until(lambda: 'homed' in rig.names(rig.hil_events), 10, 'homed')
    smooth = [np.r_[HOME[:3] + [0.01 * (1 - np.cos(0.02 * i)), 0, 0], HOME[3:]] for i in range(60)]
    rig.frames('SYNCHRONIZING', smooth[:20])
    bad = list(smooth[20:40])
    bad[3] = np.full(7, np.nan)                                 # NaN reference
    bad[4] = np.r_[HOME[:3], 0, 0, 0, 0.0]                      # zero quaternion
    rig.frames('RUNNING', bad)
    names = rig.names(rig.events)
    assert 'reference_invalid' in names
    # unknown mode in a frame: ignored with a diagnostic, no output for it
    before = len(rig.out)
    rig.k += 1
    rig.frame_pub.publish(Header(stamp=ns_to_stamp(rig.k * T_NS), frame_id='WARP_DRIVE'))
    rig.ros.spin_until(lambda: rig.node.counters['bad_frames'] == 1, 10, 'bad frame counted')
    assert len(rig.out) == before
    # missing reference (dead admittance): the frame is released after reference_wait as a dropout
    rig.frames('RUNNING', n=2)
    assert rig.node.counters['waited_out'] >= 2
    rig.frames('RUNNING', smooth[40:])
    # supervisor FAULT: controlled stop and hold, frames alone release (no reference needed)
    rig.frames('FAULT', n=40)
    p = rig.poses()
    _check_limits(p)
    assert np.array_equal(p[-1], p[-2]), 'not holding after FAULT'
    assert np.all(np.isfinite(p))


def test_real_time_steps_once_per_reference_with_its_stamp_and_brakes_without_them(ros):
    """Real time (wall clock): one step per model reference, stamped with it (an older or repeated
    stamp is ignored); without references the planner steps on its own timer (homing, braking)."""
    from std_msgs.msg import String
    # the fallback waits 0.5 s without references (default 8 frames, 20 ms): this test's own publish
    # loop can stall longer than 20 ms on a loaded machine, and the fallback then rightly steps
    # between the references
    rig = NodeRig(ros, build(ros, PlannerNode, lockstep=False, realtime_fallback_frames=200, **TIMING),
                  inputs=[topics.HIL_MODE, *INPUTS])
    node = rig.node
    out = ros.collect(PoseStamped, topics.PLANNER_SAFE_REFERENCE, BEST_EFFORT)
    events = ros.collect(DiagnosticArray, topics.HIL_EVENTS, qos.command(100))
    all_events = ros.collect(DiagnosticArray, topics.PLANNER_EVENTS, qos.command(100))
    mode_pub = ros.node.create_publisher(String, topics.HIL_MODE, qos.latched(20))
    ref_pub = ros.node.create_publisher(PoseStamped, topics.ADMITTANCE_REFERENCE, qos.stream(False))
    meas_pub = ros.node.create_publisher(PoseStamped, topics.KINEMATICS_TCP_POSE, qos.stream(False))
    rig.up()
    mode_pub.publish(String(data='HOMING'))
    ros.spin_until(lambda: node.mode.value == 'HOMING', 10, 'mode')
    meas = PoseStamped(pose=array_to_pose(HOME))
    for _ in range(100):                      # the robot pose, until the planner has started
        meas_pub.publish(meas)
        ros.spin_for(0.05)
        if node.counters['published'] > 0:
            break
    ros.spin_until(lambda: 'homed' in [s.name for e in events for s in e.status], 10, 'homed on the timer')
    assert node.counters['fallback_steps'] > 0
    # matched, not only discovered: references sent before the match are lost, and the fallback
    # steps past their stamps (each later reference older than its last step is ignored)
    ros.spin_until(lambda: ref_pub.get_subscription_count() >= 1, 10, 'the planner matched the references')
    # references on the wall grid drive the planner: one output per reference, with its stamp
    # (stamped at the moment they are sent: a wall-clock reference is never ahead of now)
    sent, start = [], None
    while len(sent) < 59:
        i = len(sent) + 1
        now = ros.node.get_clock().now().nanoseconds // T_NS * T_NS
        stamp = now if i != 40 else sent[30]                        # one out-of-order stamp
        if sent and stamp == sent[-1]:
            ros.spin_for(0.001)
            continue
        msg = PoseStamped(pose=array_to_pose(np.r_[HOME[:3] + [0.0001 * i, 0, 0], HOME[3:]]))
        msg.header.stamp = ns_to_stamp(stamp)
        ref_pub.publish(msg)
        sent.append(stamp)
        start = start if start is not None else stamp
        # one reference in flight at a time: this test spins the planner in its own executor, which
        # can leave a burst unread until the sensor-data queue (depth 5) has dropped the oldest
        arrived = node._last_ref_wall
        ros.spin_until(lambda: node._last_ref_wall > arrived, 10, 'the reference taken')
    # without references the fallback steps the planner again and it brakes (reference_stale);
    # those steps are stamped after the last reference
    steps = node.counters['fallback_steps']
    ros.spin_until(lambda: node.counters['fallback_steps'] > steps
                   and 'reference_stale' in [s.name for e in all_events for s in e.status], 10, 'braking on the timer')
    outs = [stamp_to_ns(m.header.stamp) for m in out if start <= stamp_to_ns(m.header.stamp) <= max(sent)]
    fresh = [s for k, s in enumerate(sent) if s > max(sent[:k], default=0)]   # the repeated one dropped
    # every output after the first reference is one of a reference (the first one or two may be
    # older than the fallback's last step and give nothing)
    assert set(outs[2:]) <= set(fresh)
    from_refs = [s for s in outs if s in set(fresh)]
    assert from_refs == sorted(set(from_refs)) and len(from_refs) >= len(fresh) - 2
    assert sent[30] in from_refs and from_refs.count(sent[30]) == 1      # the repeat gave nothing more
    assert node.counters['fallback_steps'] > 0
    _check_limits(ros_poses([m for m in out if stamp_to_ns(m.header.stamp) in set(from_refs)]))
    assert node.planner.phase.value == 'RUNNING'


def ros_poses(msgs):
    return np.array([pose_to_array(m.pose) for m in msgs])


def test_refused_parameters_name_the_problem(ros):
    node = start(ros, PlannerNode, v_max=[2.0, 2.0, 2.0, 1.0, 1.0, 1.0])
    diags = ros.collect(DiagnosticArray, topics.DIAGNOSTICS, SUB_RELIABLE)
    assert not ros.change_state('planner', 'configure')
    ros.spin_until(lambda: any('gap' in s.message for d in diags for s in d.status), 10, 'refusal diagnostic')
    assert ros.get_state('planner') == 'unconfigured'
    node.set_parameters([Parameter('v_max', value=[0.15, 0.1, 0.1, 1.0, 1.0, 1.0]),
                         Parameter('workspace_file', value='/nonexistent/ws.yaml')])
    assert not ros.change_state('planner', 'configure')
    node.set_parameters([Parameter('workspace_file', value='')])
    check_up_and_down(ros, 'planner')


def test_params_file_configures_the_node(ros):
    import yaml
    values = yaml.safe_load((repo_root() / 'config' / 'planner.yaml').read_text())['planner']['ros__parameters']
    start(ros, PlannerNode, **values)
    ros.bring_up('planner')
    assert ros.get_state('planner') == 'active'


def test_lockstep_first_homing_frame_waits_for_the_robot_pose_instead_of_being_lost(ros):
    """The HOMING frame released before the kinematics pose arrived must be computed when the pose
    comes: the first frame is released once, and losing it would stall a lockstep run forever."""
    rig = Rig(ros)
    rig.up()
    key = 1_000 * T_NS
    before = len(rig.out)
    rig.node.measured = None
    rig.frame_pub.publish(Header(stamp=ns_to_stamp(key), frame_id='HOMING'))
    ros.spin_until(lambda: rig.node.awaiting_pose is not None, 10, 'frame waiting for the pose')
    assert len(rig.out) == before                        # nothing published without a start pose
    msg = PoseStamped(pose=array_to_pose(HOME))
    msg.header.stamp = ns_to_stamp(key)
    rig.meas_pub.publish(msg)
    ros.spin_until(lambda: len(rig.out) > before, 10, 'safe reference of the waiting frame')
    assert stamp_to_ns(rig.out[-1].header.stamp) == key
    np.testing.assert_allclose(pose_to_array(rig.out[-1].pose), HOME, atol=1e-12)


def test_real_time_the_fallback_does_not_start_while_the_process_queue_holds_deliveries(ros, monkeypatch):
    """After a stall of the process the chain's backlog can outlast a drain's budget: the slow
    watch, run between two drains, must not take the references still upstream in the queue for
    a dead writer (its step of the frame of now made every queued reference, older, be dropped).
    With the queue empty (a drain that ended) and no reference for the fallback's time, it starts."""
    from hil_nodes.runtime import intra_process
    rig = NodeRig(ros, build(ros, PlannerNode, lockstep=False, **TIMING), inputs=[topics.HIL_MODE, *INPUTS])
    rig.up()
    node = rig.node
    node._last_ref_wall = time.monotonic() - 1.0          # no reference for a second
    node._stop_fallback()
    steps = node.counters['fallback_steps']
    monkeypatch.setattr(intra_process.BUS, 'pending', lambda: 12)
    node._watch_references()
    assert node._fallback_timer is None and node.counters['fallback_steps'] == steps
    monkeypatch.setattr(intra_process.BUS, 'pending', lambda: 0)
    node._watch_references()
    assert node._fallback_timer is not None and node.counters['fallback_steps'] == steps + 1
