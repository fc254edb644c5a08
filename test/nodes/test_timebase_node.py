"""timebase node over DDS: lifecycle, refused configuration, lockstep frame per reference with
the paper's 10 ms delay, bad references (NaN, out of order), drain and hold on missing
references and recovery, real-time timer, and the full lockstep loop with the mock hexapod."""
import numpy as np
import pytest
from diagnostic_msgs.msg import DiagnosticArray
from geometry_msgs.msg import PoseStamped
from rclpy.parameter import Parameter
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import JointState
from trajectory_msgs.msg import JointTrajectory

from hil_core.hexaslide import home_pose
from hil_core.maths.rotations import rotvec_to_quat
from hil_core.timebase import hexaslide_ik
from hil_nodes import qos, topics
from hil_nodes.msgs.convert import array_to_pose, duration_to_sec, ns_to_stamp, stamp_to_ns
from hil_nodes.timebase.node import TimebaseNode
from rig import NodeRig, build, check_up_and_down, statuses, values

T_NS = 2_500_000
TS = 0.000625
DELAY = 0.010                       # seed 000 section 5: four poses
IK = hexaslide_ik('hexaslide_scaled')
HOME = home_pose(IK.geometry)


def reference(t):
    """Starts at rest at home; a few millimetres and a small tilt."""
    t = np.maximum(np.atleast_1d(np.asarray(t, float)), 0.0)     # at rest before t = 0
    p = np.tile(HOME, (len(t), 1))
    w = 2 * np.pi * 2.0
    p[:, 0] += 0.004 * (1 - np.cos(w * t))
    p[:, 2] += 0.002 * (1 - np.cos(0.5 * w * t))
    p[:, 3:] = rotvec_to_quat(np.column_stack([0.01 * (1 - np.cos(w * t)), 0 * t, 0 * t]))
    return p


def status_of(diags, name='timebase: buffer'):
    return [(st.level, st.message, values(st)) for st in statuses(diags, name=name)]


class Rig(NodeRig):
    def __init__(self, ros, up=True, **params):
        defaults = dict(lockstep=True, status_period=0.05, warn_interval=0.0)
        super().__init__(ros, build(ros, TimebaseNode, **{**defaults, **params}),
                         inputs=[topics.PLANNER_SAFE_REFERENCE])
        self.out = ros.collect(JointTrajectory, topics.HEXAPOD_JOINT_TRAJECTORY, qos.command(depth=1000))
        self.diags = ros.collect(DiagnosticArray, topics.DIAGNOSTICS, 1000)
        self.pub = ros.node.create_publisher(PoseStamped, topics.PLANNER_SAFE_REFERENCE, qos.stream(True, 1000))
        self.clock = ros.node.create_publisher(Clock, topics.CLOCK, qos.stream(True))
        if up:
            self.up()

    def send(self, k, pose=None, stamp_ns=None):
        msg = PoseStamped()
        msg.header.stamp = ns_to_stamp(k * T_NS if stamp_ns is None else stamp_ns)
        msg.header.frame_id = 'hexapod_base'
        msg.pose = array_to_pose(reference(k * T_NS * 1e-9)[0] if pose is None else pose)
        self.pub.publish(msg)

    def wait_frames(self, n, what='frames'):
        self.ros.spin_until(lambda: len(self.out) >= n, 20, what)


def test_lifecycle_and_refused_configuration(ros):
    rig = Rig(ros, up=False, segmentation_time=0.001)     # 2.5 ms / 1 ms is not whole
    assert not ros.change_state('timebase', 'configure')
    ros.spin_until(lambda: any('configuration' in m and 'whole multiple' in m
                               for _, m, _ in status_of(rig.diags)), 10, 'refusal diagnostic')
    assert ros.get_state('timebase') == 'unconfigured'
    rig.node.set_parameters([Parameter('segmentation_time', value=0.00125)])
    check_up_and_down(ros, 'timebase')


def test_lockstep_one_command_per_reference_with_the_four_pose_delay(ros):
    rig = Rig(ros)
    n = 60
    for k in range(n):
        rig.send(k)
        rig.wait_frames(k + 1)
    msgs = rig.out
    assert [stamp_to_ns(m.header.stamp) for m in msgs] == [k * T_NS for k in range(n)]
    m = msgs[-1]
    assert list(m.joint_names) == [f'slider_{i}' for i in range(1, 7)]
    assert [duration_to_sec(p.time_from_start) for p in m.points] == pytest.approx(TS * np.arange(1, 5))
    t = np.array([k * T_NS * 1e-9 + TS * np.arange(1, 5) for k in range(n)]).ravel()
    q = np.array([p.positions for m in msgs for p in m.points])
    qd = np.array([p.velocities for m in msgs for p in m.points])
    expected, ok = IK(reference(t - DELAY))
    assert ok.all() and np.abs(q - expected)[t > 0.05].max() < 1e-6
    assert np.abs(q).max() > 1e-4
    assert np.all(np.isfinite(qd))
    rig.ros.spin_until(lambda: any('delay_ms' in v and abs(float(v['delay_ms']) - 10.0) < 1e-6
                                   and v.get('distance') == '2' for _, _, v in status_of(rig.diags)),
                       10, 'metrics with 10 ms delay and distance 2')


def test_nan_and_out_of_order_references_are_refused_without_output(ros):
    rig = Rig(ros)
    for k in range(5):
        rig.send(k)
        rig.wait_frames(k + 1)
    bad = HOME.copy()
    bad[0] = np.nan
    rig.send(5, pose=bad)
    rig.send(3)                                    # older than the last one
    rig.send(4)                                    # duplicate stamp
    rig.send(5)
    rig.wait_frames(6)
    ros.spin_until(lambda: any('non-finite' in m for _, m, _ in status_of(rig.diags))
                   and any('out-of-order' in m for _, m, _ in status_of(rig.diags)), 10, 'warnings')
    ros.spin_for(0.2)
    assert [stamp_to_ns(m.header.stamp) for m in rig.out] == [k * T_NS for k in range(6)]
    assert rig.node.counters['invalid'] == 1 and rig.node.counters['stale'] == 2
    assert all(np.all(np.isfinite(p.positions)) for m in rig.out for p in m.points)


def test_missing_references_drain_hold_and_recover(ros):
    rig = Rig(ros)
    for k in range(40):
        rig.send(k)
        rig.wait_frames(k + 1)
    # the writer dies. The (test's) hardware waits for frame 40 in vain, holds, moves on to
    # t_41: from then on the node commands every frame at its clock tick
    for k in range(41, 70):
        rig.clock.publish(Clock(clock=ns_to_stamp(k * T_NS)))
        rig.wait_frames(k, f'drain frame {k}')
    qd = np.array([p.velocities for m in rig.out[-10:] for p in m.points])
    q = np.array([p.positions for m in rig.out[-10:] for p in m.points])
    assert np.allclose(qd, 0.0, atol=1e-12) and np.ptp(q, axis=0).max() < 1e-12
    v_all = np.array([p.velocities for m in rig.out for p in m.points])
    # no jump: the stop decelerates over one move (velocity continuous, |dv| <= v Ts / T)
    v_stop = np.abs(v_all[:160]).max()
    assert np.abs(np.diff(v_all, axis=0)).max() <= 1.1 * v_stop * TS / (T_NS * 1e-9)
    ros.spin_until(lambda: any(lvl == b'\x01' and 'holding' in m for lvl, m, _ in status_of(rig.diags)),
                   10, 'holding warning')
    # the writer comes back (at rest where it stopped would be the planner's job; here the
    # reference simply continues): the node follows again, reactive to references
    for k in range(70, 120):
        rig.send(k)
        rig.wait_frames(k)
    ros.spin_until(lambda: any('references back' in m for _, m, _ in status_of(rig.diags)), 10, 'recovery')
    assert [stamp_to_ns(m.header.stamp) for m in rig.out] == [k * T_NS for k in range(120) if k != 40]
    ros.spin_until(lambda: any(v.get('holding') == 'False' and v.get('distance') == '2'
                               for _, _, v in status_of(rig.diags)[-3:]), 10, 'distance 2 again')


def test_real_time_timer_commands_every_move(ros):
    rig = Rig(ros, lockstep=False)
    stamp0 = ros.node.get_clock().now().nanoseconds
    for k in range(10):
        rig.send(k, stamp_ns=stamp0 + k * T_NS)
    ros.spin_until(lambda: len(rig.out) >= 20, 20, 'timer commands')
    stamps = [stamp_to_ns(m.header.stamp) for m in rig.out]
    # one message per frame of the wall-time grid: late ones are caught up, and a frame is only
    # ever missing when the node counted it as skipped (a tick more than max_catchup frames late)
    gaps = np.diff(stamps) // T_NS
    assert all(s % T_NS == 0 for s in stamps) and np.all(gaps >= 1)
    assert int(np.sum(gaps - 1)) <= rig.node.counters['skipped_frames']
    # the reader runs one frame ahead: the first message holds that frame's 4 points, every later
    # one the previous frame's 4 again (identical) followed by the new 4, at Ts ... 2 T
    # (after skipped frames the repeat is left out: those points belong to a frame long past)
    assert len(rig.out[0].points) == 4
    assert [len(m.points) for m in rig.out[1:]] == [8 if g == 1 else 4 for g in gaps]
    tfs = [[p.time_from_start.nanosec for p in m.points] for m in rig.out]
    # (every message, not just the second: under load the second may already follow a skipped
    # frame, and then holds only its own 4 points, at T + Ts ... 2 T)
    assert tfs[0] == [625_000 * i for i in range(5, 9)]
    assert tfs[1:] == [[625_000 * i for i in range(1 if g == 1 else 5, 9)] for g in gaps]
    for prev, msg in zip(rig.out, rig.out[1:]):
        if stamp_to_ns(msg.header.stamp) - stamp_to_ns(prev.header.stamp) != T_NS:
            continue
        assert [list(p.positions) for p in msg.points[:4]] == [list(p.positions) for p in prev.points[-4:]]
        assert [list(p.velocities) for p in msg.points[:4]] == [list(p.velocities) for p in prev.points[-4:]]
    q = np.array([p.positions for m in rig.out for p in m.points])
    assert np.all(np.isfinite(q)) and np.abs(q).max() < 0.01
    # the W-R distance the health counters expect: one pose less than the default, as the reader
    # clock runs one frame ahead (the delay reader clock - reproduced stamp is the same 4 T)
    ros.spin_until(lambda: any('expected_distance' in v for _, _, v in status_of(rig.diags)), 10, 'a status')
    assert [v['expected_distance'] for _, _, v in status_of(rig.diags) if 'expected_distance' in v][-1] == '1'


def _stalled_rig(ros, monkeypatch):
    """A real-time time base on a clock the test sets (``now``), started and on time for frames
    0-3 of the grid from ``t0``; ``deliver(k)`` hands it the reference of frame k."""
    rig = Rig(ros, lockstep=False)
    node = rig.node
    t0 = (ros.node.get_clock().now().nanoseconds // T_NS + 400) * T_NS
    now = [t0]
    monkeypatch.setattr(node, 'now_ns', lambda: now[0])

    def deliver(k):
        node._on_reference_payload((t0 + k * T_NS, reference(k * T_NS * 1e-9)[0]))
    for k in range(4):
        now[0] = t0 + k * T_NS + 300_000
        deliver(k)
    assert node.last_frame_ns == t0 + 3 * T_NS
    return node, t0, now, deliver


def test_real_time_after_a_stall_each_frame_is_produced_at_its_own_reference(ros, monkeypatch):
    """The process stalled for six frames (15 ms): the references of the frames it missed come
    in one turn of the spin loop, one after the other. Each frame is produced at its own
    reference, so W-R stays at its default; the frames that waited past their time are left for
    the end of the turn (frame_loop.after_frame), by when their references are in. Produced at
    the first late reference, frames 5-8 were made without theirs. Nothing is skipped: the stall
    is within max_catchup (10 frames)."""
    from hil_nodes.runtime.frame_loop import LOOP
    node, t0, now, deliver = _stalled_rig(ros, monkeypatch)
    monkeypatch.setattr(LOOP, 'driven', True)
    now[0] = t0 + 9 * T_NS + 300_000
    produced = []
    for k in range(4, 10):
        deliver(k)
        produced.append((node.last_frame_ns - t0) // T_NS)
    assert produced == [4, 5, 6, 7, 8, 9]
    assert LOOP.run_after() == 1 and node.last_frame_ns == t0 + 9 * T_NS
    assert node.counters['distance_off_frames'] == 0 and node.counters['skipped_frames'] == 0


def test_real_time_after_a_stall_a_reference_that_never_comes_is_waited_for_until_the_turn_ends(ros, monkeypatch):
    """The same stall, the references of frames 6-9 lost: after the turn's deliveries the frames
    that waited their ``frame_wait`` are produced without them (up to frame 8; frame 9's wait has
    not run out), as at a reference that came alone."""
    from hil_nodes.runtime.frame_loop import LOOP
    node, t0, now, deliver = _stalled_rig(ros, monkeypatch)
    monkeypatch.setattr(LOOP, 'driven', True)
    now[0] = t0 + 9 * T_NS + 300_000
    deliver(4)
    deliver(5)
    assert node.last_frame_ns == t0 + 5 * T_NS
    assert LOOP.run_after() == 1 and node.last_frame_ns == t0 + 8 * T_NS
    assert node.counters['skipped_frames'] == 0


def test_real_time_a_stall_beyond_max_catchup_skips_the_oldest_frames_and_counts_them(ros, monkeypatch):
    """Twelve frames due at once (4-15, a stall of 30 ms) against max_catchup 10: the two oldest
    are skipped and counted, the ten others produced."""
    node, t0, now, deliver = _stalled_rig(ros, monkeypatch)
    assert node.p.max_catchup == 10
    now[0] = t0 + 15 * T_NS + 300_000
    deliver(15)
    assert node.last_frame_ns == t0 + 15 * T_NS and node.counters['skipped_frames'] == 2
    assert node.counters['frames'] == 4 + 10


def test_real_time_the_fallback_does_not_start_while_the_process_queue_holds_deliveries(ros, monkeypatch):
    """As the planner's: after a stall the references may still be upstream in the process's
    queue when the slow watch runs between two drains; only with the queue empty (a drain that
    ended) and no reference for two frames does the fallback start (and produce frames on its own)."""
    from hil_nodes.runtime import intra_process
    node, t0, now, deliver = _stalled_rig(ros, monkeypatch)
    node._last_ref_wall = -np.inf
    monkeypatch.setattr(intra_process.BUS, 'pending', lambda: 12)
    node._watch_references()
    assert node._fallback_timer is None
    monkeypatch.setattr(intra_process.BUS, 'pending', lambda: 0)
    node._watch_references()
    assert node._fallback_timer is not None


def test_lockstep_with_the_mock_hexapod_follows_the_ik_of_the_references(ros):
    from hil_sim.mock_hardware.system_mock import system_mock
    mock = ros.add_node(system_mock('hexafloat', dict(lockstep=True, time_scale=0.0, lockstep_timeout=5.0),
                                    context=ros.context))
    js = ros.collect(JointState, topics.JOINT_STATES, qos.joint_states(True, depth=1000))
    ros.bring_up('mock_hexapod')
    rig = Rig(ros)
    sent = set()

    def planner(msg):                   # the test plays the planner: one reference per frame
        k = stamp_to_ns(msg.header.stamp) // T_NS
        if k not in sent:
            sent.add(k)
            rig.send(k)
    ros.node.create_subscription(JointState, topics.JOINT_STATES, planner, qos.joint_states(True, depth=1000))
    n = 240
    ros.spin_until(lambda: js and stamp_to_ns(js[-1].header.stamp) >= n * T_NS, 60, f'{n} lockstep frames')
    states = {stamp_to_ns(m.header.stamp): np.array(m.position) for m in js}
    ks = np.arange(40, n)
    q = np.array([states[k * T_NS] for k in ks])
    expected, ok = IK(reference(ks * T_NS * 1e-9 - DELAY))
    assert ok.all() and np.abs(expected).max() > 1e-3
    # the mock's servo (50 Hz loop, full feedforward) follows the setpoints closely
    assert np.abs(q - expected).max() < 20e-6
    # every frame was commanded in time and accepted by the drives
    assert mock.late_commands == 0 and mock.rejected_commands == 0 and mock.stale_commands == 0


def test_unreachable_reference_holds_with_an_error_and_no_jump(ros):
    rig = Rig(ros)
    n = 120
    for k in range(n):                  # x ramps at 0.5 m/s out of the workspace (~0.1 m)
        pose = HOME.copy()
        pose[0] += 0.5 * max(0.0, k - 5) * T_NS * 1e-9
        rig.send(k, pose=pose)
        rig.wait_frames(k + 1)
    ros.spin_until(lambda: any(lvl == b'\x02' and 'inverse kinematics failed' in m
                               for lvl, m, _ in status_of(rig.diags)), 10, 'IK error diagnostic')
    q = np.array([p.positions for m in rig.out for p in m.points])
    qd = np.array([p.velocities for m in rig.out for p in m.points])
    assert np.all(np.isfinite(q)) and np.all(np.isfinite(qd))
    assert np.abs(np.diff(q, axis=0)).max() <= 1.5 * np.abs(qd).max() * TS    # never a jump
    assert np.allclose(qd[-40:], 0.0, atol=1e-12) and np.ptp(q[-40:], axis=0).max() < 1e-12
    assert rig.node.engine.fault is not None


def test_standalone_process_with_params_file(ros):
    """`python -m hil_nodes.timebase.node --ros-args --params-file config/timebase.yaml`."""
    import pathlib
    config = pathlib.Path(__file__).resolve().parents[2] / 'config' / 'timebase.yaml'
    out = ros.collect(JointTrajectory, topics.HEXAPOD_JOINT_TRAJECTORY, qos.command(depth=100))
    proc = ros.spawn('hil_nodes.timebase.node', ['--params-file', str(config)])
    ros.bring_up('timebase', timeout=40)
    pub = ros.node.create_publisher(PoseStamped, topics.PLANNER_SAFE_REFERENCE, qos.stream(True, 100))
    ros.wait_for_subscribers(topics.PLANNER_SAFE_REFERENCE)
    for k in range(3):
        msg = PoseStamped()
        msg.header.stamp = ns_to_stamp(k * T_NS)
        msg.pose = array_to_pose(HOME)
        pub.publish(msg)
    ros.spin_until(lambda: len(out) >= 3, 20, 'commands from the node process')
    assert [stamp_to_ns(m.header.stamp) for m in out[:3]] == [0, T_NS, 2 * T_NS]
    assert np.allclose([p.positions for p in out[-1].points], 0.0, atol=1e-12)   # home = 0
    assert proc.stop() == 0, proc.output()
