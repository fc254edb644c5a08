"""admittance over DDS: impulse in -> reference equal to the library, stale hold, NaN and
out-of-order stamps, bumpless online changes, reset, FAULT hold, lifecycle and refusals."""
import numpy as np
from diagnostic_msgs.msg import DiagnosticArray
from geometry_msgs.msg import AccelStamped, PoseStamped, TwistStamped, WrenchStamped
from rcl_interfaces.srv import SetParameters
from rclpy.parameter import Parameter
from std_msgs.msg import String
from std_srvs.srv import Trigger

from hil_core.admittance import LtiAdmittanceModel, matrices_from_frequency
from hil_nodes import qos, topics
from hil_nodes.admittance.node import AdmittanceNode
from hil_nodes.msgs.convert import array_to_wrench, ns_to_stamp, pose_to_array, stamp_to_ns
from rig import NodeRig, build, statuses
from rosutil import PUB_RELIABLE, SUB_RELIABLE

T = 0.0025
T_NS = 2_500_000
SEED_K = [5000.0] * 3 + [200.0] * 3


class Rig(NodeRig):
    def __init__(self, ros, **params):
        super().__init__(ros, build(ros, AdmittanceNode, **{'lockstep': True, 'stale_timeout': 0.02, **params}),
                         inputs=[topics.FT_WRENCH], outputs=[topics.ADMITTANCE_REFERENCE])
        self.poses = ros.collect(PoseStamped, topics.ADMITTANCE_REFERENCE, SUB_RELIABLE)
        self.twists = ros.collect(TwistStamped, topics.ADMITTANCE_TWIST, SUB_RELIABLE)
        self.accels = ros.collect(AccelStamped, topics.ADMITTANCE_ACCEL, SUB_RELIABLE)
        self.diags = ros.collect(DiagnosticArray, topics.DIAGNOSTICS, SUB_RELIABLE)
        self.pub = ros.node.create_publisher(WrenchStamped, topics.FT_WRENCH, PUB_RELIABLE)
        self.mode_pub = ros.node.create_publisher(String, topics.HIL_MODE, qos.latched())

    def send(self, stamp_ns, wrench, expect=1):
        before = len(self.poses)
        msg = WrenchStamped(wrench=array_to_wrench(wrench))
        msg.header.stamp = ns_to_stamp(stamp_ns)
        msg.header.frame_id = 'hexapod_base'
        self.pub.publish(msg)
        if expect is None:
            return []
        if expect:
            self.ros.spin_until(lambda: len(self.poses) >= before + expect, 10, f'reference for {stamp_ns}')
            self.ros.spin_until(lambda: len(self.accels) >= len(self.poses), 10, 'accel')
        else:
            # a message that must produce nothing: wait until the node has seen it
            n0 = self._seen()
            self.ros.spin_until(lambda: self._seen() > n0, 10, 'bad input handled')
            self.ros.spin_for(0.05)
            assert len(self.poses) == before
        return self.poses[before:]

    def _seen(self):
        c = self.node.counters
        return c['steps'] + c['rejected_stamps'] + c['nonfinite'] + c['ignored_fault']

    def statuses(self, text):
        return statuses(self.diags, name='admittance: model', text=text)


def library(**kw):
    return LtiAdmittanceModel(*matrices_from_frequency(kw.pop('fn', 3.0), 0.2, SEED_K), T, **kw)


def test_impulse_reference_matches_library_and_stamps(ros):
    home = [0.0, 0.0, 0.8, 0.0, 0.0, 0.0, 1.0]
    tcp = [0.05, 0.0, 0.3, 0.0, 0.0, 0.0, 1.0]
    rig = Rig(ros, home_pose=home, control_frame='hexafloat_swl', tcp_offset=tcp)
    rig.up()
    model = library(home=home, tcp_offset=tcp)
    t0 = 1_000_000_000
    for k in range(120):
        w = np.array([400.0, -100.0, 50.0, 10.0, -5.0, 3.0]) if k < 2 else np.zeros(6)
        got = rig.send(t0 + k * T_NS, w)
        model.step(w)
        pose, twist, accel = model.outputs()
        assert np.max(np.abs(pose_to_array(got[0].pose) - pose)) < 1e-12
        assert stamp_to_ns(got[0].header.stamp) == t0 + k * T_NS
        assert got[0].header.frame_id == 'hexafloat_swl'
    assert rig.twists[-1].header.frame_id == 'hexafloat_swl'
    assert stamp_to_ns(rig.accels[-1].header.stamp) == t0 + 119 * T_NS
    assert abs(rig.twists[-1].twist.linear.x - twist[0]) < 1e-12
    assert abs(rig.accels[-1].accel.angular.z - accel[5]) < 1e-9
    assert max(abs(pose_to_array(p.pose)[0]) for p in rig.poses) > 1e-3


def test_bad_input_stale_nan_and_stamps(ros):
    rig = Rig(ros, stale_timeout=0.02)   # 8 periods
    rig.up()
    model = library()
    w = np.array([100.0, 0, 0, 0, 0, 2.0])
    t = 5 * T_NS
    for k in range(10):
        rig.send(t, w)
        model.step(w)
        t += T_NS
    last = t - T_NS
    # duplicate and out-of-order stamps: rejected with a diagnostic, nothing published
    rig.send(last, w * 50, expect=0)
    rig.send(last - 3 * T_NS, w * 50, expect=0)
    rig.send(last + T_NS // 4, w * 50, expect=0)   # faster than the model period
    assert rig.node.counters['rejected_stamps'] == 3
    ros.spin_until(lambda: rig.statuses('out-of-order'), 10, 'stamp diagnostic')
    assert np.allclose(rig.node.model.x, model.x, rtol=0, atol=1e-15)
    # NaN / inf: ignored with a diagnostic
    rig.send(last + T_NS, [np.nan, 0, 0, 0, 0, 0], expect=0)
    rig.send(last + T_NS, [0, 0, np.inf, 0, 0, 0], expect=0)
    assert rig.node.counters['nonfinite'] == 2
    ros.spin_until(lambda: rig.statuses('non-finite'), 10, 'NaN diagnostic')
    assert np.allclose(rig.node.model.x, model.x, rtol=0, atol=1e-15)  # state untouched
    # the next valid sample sees a one-period gap: integrated with the last valid wrench
    got = rig.send(last + 2 * T_NS, w * 2, expect=2)
    model.step(w)
    assert np.max(np.abs(pose_to_array(got[0].pose) - model.pose())) < 1e-12
    assert stamp_to_ns(got[0].header.stamp) == last + T_NS
    model.step(w * 2)
    assert np.max(np.abs(pose_to_array(got[1].pose) - model.pose())) < 1e-12
    # stale: the F/T node stops; the node reports it and holds its state
    held = rig.node.model.x.copy()
    ros.spin_until(lambda: rig.statuses('stale'), 10, 'stale diagnostic')
    assert np.array_equal(rig.node.model.x, held)
    # back after 100 periods: only stale_timeout (8 periods) integrated with the last wrench, rest held
    before = len(rig.poses)
    got = rig.send(last + 102 * T_NS, w, expect=9)
    for _ in range(8):
        model.step(w * 2)
    model.step(w)
    assert len(rig.poses) == before + 9
    assert np.max(np.abs(pose_to_array(got[-1].pose) - model.pose())) < 1e-12
    assert rig.node.counters['held_steps'] == 100 - 1 - 8
    ros.spin_until(lambda: rig.statuses('wrench back'), 10, 'back diagnostic')


def test_bumpless_online_change_and_refusals(ros):
    rig = Rig(ros)
    rig.up()
    model = library()
    w = np.array([300.0, 0, 0, 0, 8.0, 0])
    for k in range(60):
        rig.send(k * T_NS, w)
        model.step(w)
    params = [Parameter('natural_frequency', value=[6.0] * 6).to_parameter_msg(),
              Parameter('stiffness', value=[9000.0] * 3 + [350.0] * 3).to_parameter_msg()]
    res = ros.call(SetParameters, '/admittance/set_parameters', SetParameters.Request(parameters=params))
    assert all(r.successful for r in res.results)
    model.set_matrices(*matrices_from_frequency(6.0, 0.2, [9000.0] * 3 + [350.0] * 3))
    for k in range(60, 120):
        rig.send(k * T_NS, w)
        model.step(w)
        assert np.max(np.abs(pose_to_array(rig.poses[-1].pose) - model.pose())) < 1e-12
    x = np.array([pose_to_array(p.pose)[0] for p in rig.poses])
    steps = np.abs(np.diff(x))
    assert steps[59] < 1.5 * max(steps[57], steps[61]) + 1e-12   # no step at the change
    # non-dynamic parameter while active: refused, and nothing changed
    bad = [Parameter('home_pose', value=[0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0]).to_parameter_msg()]
    res = ros.call(SetParameters, '/admittance/set_parameters', SetParameters.Request(parameters=bad))
    assert not res.results[0].successful and 'inactive' in res.results[0].reason
    # a dynamic one with an invalid value: refused with the parameter named
    bad = [Parameter('damping_ratio', value=[0.2] * 5).to_parameter_msg()]
    res = ros.call(SetParameters, '/admittance/set_parameters', SetParameters.Request(parameters=bad))
    assert not res.results[0].successful and 'damping_ratio' in res.results[0].reason
    rig.send(120 * T_NS, w)
    model.step(w)
    assert np.max(np.abs(pose_to_array(rig.poses[-1].pose) - model.pose())) < 1e-12


def test_reset_service_mode_idle_and_fault_hold(ros):
    rig = Rig(ros)
    rig.up()
    w = np.array([500.0, 0, 0, 0, 0, 0])
    for k in range(20):
        rig.send(k * T_NS, w)
    assert pose_to_array(rig.poses[-1].pose)[0] > 1e-3
    res = ros.call(Trigger, topics.ADMITTANCE_RESET)
    assert res.success
    assert np.all(rig.node.model.x == 0.0)
    rig.send(100 * T_NS, np.zeros(6))
    assert np.allclose(pose_to_array(rig.poses[-1].pose), [0, 0, 0, 0, 0, 0, 1])
    # FAULT: wrenches ignored, state held
    rig.mode_pub.publish(String(data='RUNNING'))
    ros.spin_until(lambda: rig.node._mode == 'RUNNING', 10, 'mode')
    for k in range(101, 111):
        rig.send(k * T_NS, w)
    rig.mode_pub.publish(String(data='FAULT'))
    ros.spin_until(lambda: rig.node._mode == 'FAULT', 10, 'mode')
    held = rig.node.model.x.copy()
    rig.send(111 * T_NS, w, expect=0)
    assert np.array_equal(rig.node.model.x, held)
    # run over: IDLE after a run resets to home
    rig.mode_pub.publish(String(data='IDLE'))
    ros.spin_until(lambda: rig.node._mode == 'IDLE', 10, 'mode')
    assert np.all(rig.node.model.x == 0.0)
    ros.spin_until(lambda: rig.statuses('reset to home (mode FAULT -> IDLE)'), 10, 'reset diagnostic')


def test_lifecycle_and_refused_configuration(ros):
    rig = Rig(ros, natural_frequency=[3.0] * 5)
    assert not ros.change_state('admittance', 'configure')
    assert ros.get_state('admittance') == 'unconfigured'
    ros.spin_until(lambda: rig.statuses('natural_frequency'), 10, 'refusal diagnostic')
    rig.node.set_parameters([Parameter('natural_frequency', value=[3.0] * 6),
                             Parameter('model', value='floater')])
    assert not ros.change_state('admittance', 'configure')   # floater without its file
    ros.spin_until(lambda: rig.statuses('floater_file'), 10, 'refusal diagnostic')
    rig.node.set_parameters([Parameter('model', value='frequency'),
                             Parameter('home_pose', value=[0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 2.0])])
    assert not ros.change_state('admittance', 'configure')
    ros.spin_until(lambda: rig.statuses('unit quaternion'), 10, 'refusal diagnostic')
    rig.node.set_parameters([Parameter('home_pose', value=[0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0])])
    assert ros.change_state('admittance', 'configure')
    assert ros.change_state('admittance', 'activate')
    rig.send(T_NS, [10.0, 0, 0, 0, 0, 0])
    assert ros.change_state('admittance', 'deactivate')
    # inactive: wrenches produce nothing, non-dynamic parameters may change (model rebuilt at home)
    n = len(rig.poses)
    rig.send(2 * T_NS, [10.0, 0, 0, 0, 0, 0], expect=None)
    ros.spin_for(0.3)
    assert len(rig.poses) == n
    rig.node.set_parameters([Parameter('home_pose', value=[0.0, 0.0, 0.5, 0.0, 0.0, 0.0, 1.0])])
    assert ros.change_state('admittance', 'activate')
    got = rig.send(3 * T_NS, np.zeros(6))
    assert np.allclose(pose_to_array(got[0].pose), [0, 0, 0.5, 0, 0, 0, 1])
    assert ros.change_state('admittance', 'deactivate')
    assert ros.change_state('admittance', 'cleanup')
    assert ros.change_state('admittance', 'configure')   # configure again after cleanup
    assert ros.change_state('admittance', 'cleanup')
    assert ros.change_state('admittance', 'shutdown')
    assert ros.get_state('admittance') == 'finalized'


def test_floater_model_and_entry_point(ros):
    import pathlib
    floater = str(pathlib.Path(__file__).resolve().parents[2] / 'config' / 'floater_example.yaml')
    proc = ros.spawn('hil_nodes.admittance.node', ['-p', 'lockstep:=true', '-p', 'model:=floater',
                                              '-p', f'floater_file:={floater}'])
    poses = ros.collect(PoseStamped, topics.ADMITTANCE_REFERENCE, SUB_RELIABLE)
    pub = ros.node.create_publisher(WrenchStamped, topics.FT_WRENCH, PUB_RELIABLE)
    ros.bring_up('admittance', timeout=30)
    ros.wait_for_subscribers(topics.FT_WRENCH, timeout=30)
    from hil_core.admittance import CumminsFloater
    model = CumminsFloater.from_yaml(floater, T)
    for k in range(20):
        msg = WrenchStamped(wrench=array_to_wrench([200.0, 0, 300.0, 0, 5.0, 0]))
        msg.header.stamp = ns_to_stamp(k * T_NS)
        pub.publish(msg)
        model.step([200.0, 0, 300.0, 0, 5.0, 0])
        ros.spin_until(lambda: len(poses) > k, 30, 'floater reference')
    assert np.max(np.abs(pose_to_array(poses[-1].pose) - model.pose())) < 1e-12
    assert proc.stop() == 0


def test_config_files_are_valid_and_seed_models():
    import pathlib
    from types import SimpleNamespace

    import yaml
    root = pathlib.Path(__file__).resolve().parents[2]
    table = {p.name: p for p in (*AdmittanceNode.COMMON_PARAMS, *AdmittanceNode.PARAMS)}
    for name, fn in (('admittance.yaml', 3.0), ('admittance_6hz.yaml', 6.0)):
        given = yaml.safe_load((root / 'config' / name).read_text())['admittance']['ros__parameters']
        assert set(given) <= set(table), set(given) - set(table)
        values = {k: p.validate(given.get(k, p.default)) for k, p in table.items()}
        model = AdmittanceNode._build_model(SimpleNamespace(**values))
        expected = library(fn=fn)
        assert np.allclose(model.M, expected.M) and np.allclose(model.K, np.diag(SEED_K))
