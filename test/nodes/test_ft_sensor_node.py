"""ft_sensor over DDS: lockstep mock source (filter vs scipy, publish grid), bad input and the
stale contract, bias service, replay (bag written with rosbags, CSV), lifecycle transitions
and a refused configuration."""
import numpy as np
from rclpy.qos import qos_profile_sensor_data
import pytest
from diagnostic_msgs.msg import DiagnosticArray
from geometry_msgs.msg import WrenchStamped
from rclpy.parameter import Parameter
from rclpy.qos import QoSProfile, ReliabilityPolicy
from rosgraph_msgs.msg import Clock
from scipy import signal
from std_srvs.srv import Trigger

from hil_nodes import qos, topics
from hil_nodes.msgs.convert import array_to_wrench, ns_to_stamp, stamp_to_ns, wrench_to_array
from hil_nodes.ft_sensor.node import FtSensorNode
from rig import NodeRig, build, start, statuses
from rosutil import PUB_RELIABLE, SUB_RELIABLE

DT = 625_000
FRAME = 2_500_000


LOCKSTEP = dict(lockstep=True, use_sim_time=True, source='mock')


class Feed(NodeRig):
    """ft_sensor (lockstep, the mock source unless told otherwise) and the test-side mock sensor:
    samples published on MOCK_FT_WRENCH (read by the mock source), the outputs collected."""

    def __init__(self, ros, **params):
        params = {**LOCKSTEP, **params}
        super().__init__(ros, build(ros, FtSensorNode, **params), outputs=[topics.FT_WRENCH],
                         inputs=[topics.MOCK_FT_WRENCH] if params['source'] == 'mock' else [])
        self.pub = ros.node.create_publisher(WrenchStamped, topics.MOCK_FT_WRENCH, PUB_RELIABLE)
        self.out = ros.collect(WrenchStamped, topics.FT_WRENCH, SUB_RELIABLE)
        self.raw = ros.collect(WrenchStamped, topics.FT_WRENCH_RAW, SUB_RELIABLE)
        self.diag = ros.collect(DiagnosticArray, topics.DIAGNOSTICS, 100)

    def processed(self):
        chain = self.node.chain
        return sum(chain.counters.values()) if chain is not None and self.node.active else None

    def send(self, stamps, x, expect_out=None):
        """Publish frame by frame (4 samples, as the mock sensor does) and wait until each
        frame went through the node: the stream QoS keeps 50 samples, not a whole burst."""
        for k in range(0, len(stamps), 4):
            start = self.processed()
            for t, w in zip(stamps[k:k + 4], x[k:k + 4]):
                msg = WrenchStamped(wrench=array_to_wrench(w))
                msg.header.stamp = ns_to_stamp(int(t))
                self.pub.publish(msg)
            if start is not None:
                want = start + len(stamps[k:k + 4])
                self.ros.spin_until(lambda: self.processed() >= want, timeout=10, what='samples processed')
        if expect_out is not None:
            self.ros.spin_until(lambda: len(self.out) >= expect_out, timeout=20, what=f'{expect_out} wrenches')
        else:
            self.ros.spin_for(0.3)

    def errors(self, text=''):
        return [s.message for s in statuses(self.diag, name='ft_sensor: signal chain', level=b'\x02', text=text)]


def _outputs(msgs):
    return (np.array([stamp_to_ns(m.header.stamp) for m in msgs]), np.array([wrench_to_array(m.wrench) for m in msgs]))


def test_lockstep_mock_source_matches_scipy_on_the_grid(ros):
    feed = Feed(ros).up()
    assert ros.get_state('ft_sensor') == 'active'
    n = 400
    stamps = np.arange(1, n + 1) * DT
    t = stamps * 1e-9
    x = np.column_stack([10 * np.sin(2 * np.pi * 5 * t), 2.0 + 0.5 * np.sin(2 * np.pi * 50 * t), np.where(t > 0.1, 20.0, 0.0),
                         0.1 * np.ones(n), np.zeros(n), 0.3 * np.sin(2 * np.pi * 1 * t)])
    feed.send(stamps, x, expect_out=n // 4)
    got_t, got = _outputs(feed.out)
    assert np.array_equal(got_t, np.arange(1, n // 4 + 1) * FRAME)      # one per 2.5 ms frame, stamp = sample time
    sos = signal.butter(2, 40.0, fs=1600.0, output='sos')
    expect = signal.sosfilt(sos, x, axis=0, zi=signal.sosfilt_zi(sos)[:, :, None] * x[0])[0]
    assert np.max(np.abs(got - expect[3::4])) < 1e-9
    ros.spin_until(lambda: len(feed.raw) >= n // 4, timeout=10, what='raw wrenches')
    raw_t, raw = _outputs(feed.raw)
    assert np.array_equal(raw_t, got_t) and np.allclose(raw, x[3::4])
    # lifecycle through change_state: deactivate stops output, cleanup, reconfigure
    assert ros.change_state('ft_sensor', 'deactivate')
    before = len(feed.out)
    feed.send(stamps[-1] + np.arange(1, 9) * DT, x[:8])
    assert len(feed.out) == before
    assert ros.change_state('ft_sensor', 'cleanup') and ros.get_state('ft_sensor') == 'unconfigured'
    ros.bring_up('ft_sensor')


def test_bad_input_never_published_then_stale(ros):
    feed = Feed(ros, stale_timeout=0.01).up()
    base = np.array([3.0, -2.0, 30.0, 0.2, 0.1, -0.1])
    stamps = list(np.arange(1, 41) * DT)
    x = np.tile(base, (40, 1))
    x[9, 0] = np.nan
    x[13, 4] = np.inf
    x[17, 2] = 2000.0                         # saturated (mini45 Fz range 1160 N)
    x[21] = base * 10                         # 10x spike
    feed.send(stamps, x, expect_out=10)
    feed.send([stamps[-1]], [base])           # out-of-order (repeated) stamp
    _, got = _outputs(feed.out)
    assert np.all(np.isfinite(got)) and np.max(np.abs(got - base)) < 1e-9   # held: never a bad value
    _, raw = _outputs(feed.raw)
    assert np.max(np.abs(raw - base)) < 1e-12
    ros.spin_until(lambda: feed.errors('rejected'), timeout=10, what='ERROR diagnostic')
    # 30 ms of NaN: output continues for stale_timeout (10 ms) of sample time, then stops
    nan_t = stamps[-1] + np.arange(1, 49) * DT
    n0 = len(feed.out)
    feed.send(nan_t, np.full((48, 6), np.nan))
    ros.spin_until(lambda: feed.errors('stale_timeout'), timeout=10, what='stale ERROR')
    late = [stamp_to_ns(m.header.stamp) for m in feed.out[n0:]]
    assert late and max(late) - stamps[-1] <= 10_000_000
    assert len(late) == 4                     # 2.5, 5, 7.5, 10 ms after the last valid sample
    # valid data again: publishing resumes, smoothly from the held value
    again = nan_t[-1] + np.arange(1, 9) * DT
    feed.send(again, np.tile(base, (8, 1)), expect_out=n0 + 4 + 2)
    assert np.max(np.abs(wrench_to_array(feed.out[-1].wrench) - base)) < 1e-9


def test_each_kind_of_input_error_is_told_however_often_another_comes(ros):
    """A sensor flagging every sample (a status error) reports rejected samples every frame; the
    packets it corrupts are another kind of input error, told within the same 0.2 s (with one
    throttle for both, the first report after each interval won, and a wrong-length packet was
    told in about one interval in twenty: CI waited 20 s for one once)."""
    feed = Feed(ros).up()
    feed.node.report_input_error('rejected F/T sample(s): status error; holding the last valid value',
                                 kind='rejected samples')
    feed.node.report_bad_packets(1)                                 # right after it
    ros.spin_until(lambda: feed.errors('wrong length') and feed.errors('rejected'), timeout=10,
                   what='both ERRORs')
    assert feed.node.bad_packets == 1


def test_bias_service(ros):
    feed = Feed(ros, bias_samples=20).up()
    offset = np.array([1.0, 2.0, -3.0, 0.1, 0.2, 0.3])
    feed.send(np.arange(1, 5) * DT, np.tile(offset, (4, 1)), expect_out=1)
    res = ros.call(Trigger, topics.FT_BIAS)
    assert not res.success and '20' in res.message
    feed.send(np.arange(5, 41) * DT, np.tile(offset, (36, 1)), expect_out=10)
    res = ros.call(Trigger, topics.FT_BIAS)
    assert res.success, res.message
    feed.send(np.arange(41, 241) * DT, np.tile(offset, (200, 1)), expect_out=60)
    assert np.max(np.abs(wrench_to_array(feed.out[-1].wrench))) < 1e-6   # tared, filter settled
    steps = np.diff(np.array([wrench_to_array(m.wrench) for m in feed.out]), axis=0)
    assert np.max(np.abs(steps)) < 0.6 * np.max(np.abs(offset))            # no jump at the tare


def _clock_drive(ros, feed, frames):
    clock = ros.node.create_publisher(Clock, topics.CLOCK, qos.stream(True))   # the drives' lockstep /clock
    ros.wait_for_subscribers(topics.CLOCK)
    for k in range(frames + 1):
        clock.publish(Clock(clock=ns_to_stamp(k * FRAME)))
        ros.spin_until(lambda: len(feed.out) >= k + 1, timeout=10, what=f'wrench of frame {k}')


def _write_bag(path, t, w, topic):
    from rosbags.rosbag2 import StoragePlugin, Writer
    from rosbags.typesys import Stores, get_typestore
    ts = get_typestore(Stores.ROS2_KILTED)
    Msg, Header, Time = ts.types['geometry_msgs/msg/WrenchStamped'], ts.types['std_msgs/msg/Header'], ts.types['builtin_interfaces/msg/Time']
    Wrench, Vec = ts.types['geometry_msgs/msg/Wrench'], ts.types['geometry_msgs/msg/Vector3']
    with Writer(path, version=9, storage_plugin=StoragePlugin.MCAP) as writer:
        conn = writer.add_connection(topic, Msg.__msgtype__, typestore=ts)
        for ti, wi in zip(t, w):
            ns = int(round(ti * 1e9))
            msg = Msg(header=Header(stamp=Time(sec=ns // 10 ** 9, nanosec=ns % 10 ** 9), frame_id='ft'),
                      wrench=Wrench(force=Vec(x=wi[0], y=wi[1], z=wi[2]), torque=Vec(x=wi[3], y=wi[4], z=wi[5])))
            writer.write(conn, ns, ts.serialize_cdr(msg, Msg.__msgtype__))


@pytest.mark.parametrize('kind', ['bag', 'csv'])
def test_replay_source(ros, tmp_path, kind):
    # a slow ramp recorded at 100 Hz, starting at t = 5 s in the recording
    t = 5.0 + np.arange(0, 101) * 0.01
    w = np.column_stack([(t - 5.0) * k for k in (10, -5, 2, 0.1, 0.2, -0.3)])
    if kind == 'bag':
        path = tmp_path / 'load_bag'
        _write_bag(path, t, w, '/recorded/wrench')
        feed = Feed(ros, source='replay', replay_file=str(path), replay_topic='/recorded/wrench').up()
    else:
        path = tmp_path / 'load.csv'
        np.savetxt(path, np.column_stack([t, w]), delimiter=',', header='t,Fx,Fy,Fz,Tx,Ty,Tz', comments='')
        feed = Feed(ros, source='replay', replay_file=str(path)).up()
    _clock_drive(ros, feed, 40)
    got_t, got = _outputs(feed.out)
    assert np.array_equal(got_t, np.arange(0, 41) * FRAME)
    # resampled at 1.6 kHz by linear interpolation, then the 40 Hz filter: a ramp lags by the
    # filter's DC group delay (about 5.6 ms), so compare with the ramp 5.6 ms earlier after settling
    slope = np.array([10, -5, 2, 0.1, 0.2, -0.3])
    from hil_core.ft.filters import design_sos, group_delay_s
    delay = group_delay_s(design_sos(2, 40.0, 1600.0), [0.0], 1600.0)[0]
    tail = got_t * 1e-9 > 0.06
    expect = np.outer(got_t[tail] * 1e-9 - delay, slope)
    assert np.max(np.abs(got[tail] - expect)) < 1e-3 * np.max(np.abs(slope))


def test_refused_configuration_names_the_parameter(ros, tmp_path):
    feed = Feed(ros, filter_cutoff_hz=900.0)
    node = feed.node
    assert not ros.change_state('ft_sensor', 'configure')
    assert ros.get_state('ft_sensor') == 'unconfigured'
    ros.spin_until(lambda: any('filter_cutoff_hz' in m for m in feed.errors()), timeout=10, what='refusal diagnostic')
    node.set_parameters([Parameter('filter_cutoff_hz', value=40.0), Parameter('source', value='replay')])
    assert not ros.change_state('ft_sensor', 'configure')             # replay without a file
    ros.spin_until(lambda: any('replay_file' in m for m in feed.errors()), timeout=10, what='replay refusal')
    node.set_parameters([Parameter('replay_file', value=str(tmp_path / 'none.csv'))])
    assert not ros.change_state('ft_sensor', 'configure')             # file missing
    node.set_parameters([Parameter('source', value='mock')])
    assert ros.change_state('ft_sensor', 'configure')


def test_tcp_pose_gravity_compensation_and_base_axes(ros):
    from geometry_msgs.msg import PoseStamped
    from hil_core.maths import rotations
    from hil_core.ft.signal_chain import gravity_wrench
    feed = Feed(ros, use_tcp_pose=True, payload_mass=2.0, payload_cog=[0.0, 0.0, 0.1], output_frame='base').up()
    q = rotations.rpy_to_quat([0.3, -0.2, np.pi / 2])
    pose_pub = ros.node.create_publisher(PoseStamped, topics.KINEMATICS_TCP_POSE, PUB_RELIABLE)
    ros.wait_for_subscribers(topics.KINEMATICS_TCP_POSE)
    pose = PoseStamped()
    pose.pose.orientation.x, pose.pose.orientation.y, pose.pose.orientation.z, pose.pose.orientation.w = q
    pose_pub.publish(pose)
    R = rotations.quat_to_matrix(q)
    ros.spin_until(lambda: np.allclose(feed.node.R, R), timeout=10, what='TCP pose at the node')
    push = np.array([1.0, 0.0, 0.0, 0.0, 0.0, 0.5])          # external load in sensor axes
    reading = gravity_wrench(R, 2.0, (0.0, 0.0, 0.1)) + push
    feed.send(np.arange(1, 17) * DT, np.tile(reading, (16, 1)), expect_out=4)
    got = wrench_to_array(feed.out[-1].wrench)
    assert feed.out[-1].header.frame_id == 'hexapod_base'
    assert np.allclose(got, np.concatenate([R @ push[:3], R @ push[3:]]), atol=1e-9)


def test_shipped_config_configures(ros):
    import pathlib
    import yaml
    root = pathlib.Path(__file__).resolve().parents[2]
    params = yaml.safe_load((root / 'config/ft_sensor.yaml').read_text())['ft_sensor']['ros__parameters']
    start(ros, FtSensorNode, **params)
    ros.bring_up('ft_sensor')
    assert ros.get_state('ft_sensor') == 'active'


def test_mock_ft_to_ft_sensor_lockstep_per_frame(ros):
    """The two nodes together: on each /clock tick t_k the wrench stamped t_k comes out, and it
    equals the offline chain applied to the seeded load profile."""
    from hil_core.ft.signal_chain import ChainConfig, SignalChain
    from hil_sim.mock_ft.node import MockFtNode
    mock = start(ros, MockFtNode, lockstep=True, use_sim_time=True, profile='pushes', push_rate=30.0, seed=4)
    feed = Feed(ros)
    ros.bring_up('mock_ft')
    feed.up()
    clock = ros.node.create_publisher(Clock, topics.CLOCK, qos.stream(True))
    ros.wait_for_subscribers(topics.CLOCK, 1)
    ros.wait_for_subscribers(topics.MOCK_FT_WRENCH, 1)
    for k in range(0, 81):
        clock.publish(Clock(clock=ns_to_stamp(k * FRAME)))
        ros.spin_until(lambda: feed.out and stamp_to_ns(feed.out[-1].header.stamp) == k * FRAME,
                       timeout=10, what=f'wrench of frame {k}')
    got_t, got = _outputs(feed.out)
    assert np.array_equal(got_t, np.arange(0, 81) * FRAME)
    samples = np.arange(0, 321) * DT
    offline = SignalChain(ChainConfig()).process(samples, mock.profile.sample(samples * 1e-9))
    assert np.max(np.abs(got - offline.filtered[offline.publish])) < 1e-9


def test_replay_real_time_and_silence_diagnostic(ros, tmp_path):
    path = tmp_path / 'short.csv'
    t = np.arange(0, 21) * 0.01                            # 0.2 s recording, constant load
    np.savetxt(path, np.column_stack([t, np.tile([1.0, 2.0, 3.0, 0.1, 0.2, 0.3], (21, 1))]), delimiter=',')
    start(ros, FtSensorNode, source='replay', replay_file=str(path), lockstep=False, use_sim_time=False,
          status_period=0.1)
    out = ros.collect(WrenchStamped, topics.FT_WRENCH, QoSProfile(depth=1000, reliability=ReliabilityPolicy.BEST_EFFORT))
    diag = ros.collect(DiagnosticArray, topics.DIAGNOSTICS, 100)
    ros.bring_up('ft_sensor')
    ros.spin_until(lambda: any('replay finished' in s.message for d in diag for s in d.status), timeout=20,
                   what='end of the replay')
    ros.spin_until(lambda: any('no F/T input sample' in s.message and s.level == b'\x02'
                               for d in diag for s in d.status), timeout=20, what='input-stopped ERROR')
    stamps = np.array([stamp_to_ns(m.header.stamp) for m in out])
    assert stamps.size > 40 and np.all(stamps % FRAME == 0) and np.all(np.diff(stamps) > 0)
    assert np.allclose(wrench_to_array(out[-1].wrench), [1.0, 2.0, 3.0, 0.1, 0.2, 0.3], atol=1e-9)


@pytest.mark.parametrize('lockstep', [True, False])
def test_sim_source_reads_the_load_scenario_in_process(ros, tmp_path, lockstep):
    """Source `sim` (Hexafloat with the mock hardware): the load scenario sampled on the 1.6 kHz
    grid inside the node, 4 samples per /clock frame, equal to the same scenario run offline
    through the chain (the scenario's dropout window is read with it). The same in real time at
    another pace than 1 (``--time-scale 2``: simulated time, not lockstep): the samples come with
    each /clock tick, and the node has no frame timer of its own (its wake-up is the drives')."""
    import yaml

    from hil_core.ft.signal_chain import ChainConfig, SignalChain
    from hil_core.ft.load_profiles import load_scenario_file
    path = tmp_path / 'load.yaml'
    path.write_text(yaml.safe_dump({'seed': 5, 'components': [
        {'type': 'impulses', 'axis': 0, 'amplitude': 30.0, 'start': 0.01, 'period': 1.0, 'count': 1, 'width': 0.03},
        {'type': 'noise', 'std': 0.1, 'rate': 1600.0}], 'sensor_dropout': [0.08, 0.2]}))
    feed = Feed(ros, source='sim', sim_load_file=str(path), output_frame='sensor', bias_samples=1,
                lockstep=lockstep)
    if not lockstep:                                      # real-time streams are best effort
        feed.out = ros.collect(WrenchStamped, topics.FT_WRENCH, qos_profile_sensor_data)
    feed.up()
    assert feed.node.source.timer is None and feed.node.source.sub is not None
    _clock_drive(ros, feed, 30)                           # 75 ms: before the dropout
    got_t, got = _outputs(feed.out)
    assert np.array_equal(got_t, np.arange(0, 31) * FRAME)
    profile, dropout = load_scenario_file(path)
    assert dropout == (0.08, 0.2)
    stamps = np.arange(0, 30 * 4 + 1) * DT
    chain = SignalChain(ChainConfig(bias_samples=1, decimation='grid'))
    out = chain.process(stamps, profile.sample(stamps * 1e-9))
    assert np.allclose(got, out.filtered[out.publish], atol=1e-9, rtol=0)
