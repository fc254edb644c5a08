"""mock_ft over DDS: lockstep sample count and stamps per /clock tick, determinism from the
seed, sensor dropout, lifecycle and a refused configuration."""
import numpy as np
from diagnostic_msgs.msg import DiagnosticArray
from geometry_msgs.msg import WrenchStamped
from rclpy.parameter import Parameter
from rclpy.qos import QoSProfile, ReliabilityPolicy
from rosgraph_msgs.msg import Clock

from hil_core.ft.load_profiles import LoadProfile
from hil_nodes import topics
from hil_nodes.msgs.convert import ns_to_stamp, stamp_to_ns, wrench_to_array
from hil_sim.mock_ft.node import MockFtNode
from rig import start
from rosutil import SUB_RELIABLE

FRAME_NS = 2_500_000


def _node(ros, name, **params):
    base = dict(lockstep=True, use_sim_time=True, profile='pushes', amplitude=30.0, push_rate=20.0, seed=7)
    return start(ros, MockFtNode, name, **{**base, **params})


def _tick(ros, clock_pub, t_ns):
    clock_pub.publish(Clock(clock=ns_to_stamp(t_ns)))


def test_lockstep_samples_per_tick_and_determinism(ros):
    _node(ros, 'mock_ft_a')
    _node(ros, 'mock_ft_b')
    got = ros.collect(WrenchStamped, topics.MOCK_FT_WRENCH, SUB_RELIABLE)
    diags = ros.collect(DiagnosticArray, topics.DIAGNOSTICS, 100)
    clock_pub = ros.node.create_publisher(Clock, topics.CLOCK, 10)
    for name in ('mock_ft_a', 'mock_ft_b'):
        ros.bring_up(name)
    # its status: "<node>: load profile", hardware_id the simulated load (docs/CONTRACTS.md "Diagnostics")
    ros.spin_until(lambda: ('mock_ft_a: load profile', 'simulated F/T load profile (hil_sim)', 'streaming load profile')
                   in {(st.name, st.hardware_id, st.message) for d in diags for st in d.status}, 10, 'active status')
    ros.wait_for_subscribers(topics.CLOCK, 2)
    ros.wait_for_publishers(topics.MOCK_FT_WRENCH, 2)
    ticks = [k * FRAME_NS for k in range(0, 41)]
    counts = []
    for t in ticks:
        before = len(got)
        want = 2 * (1 if t == 0 else 4)
        _tick(ros, clock_pub, t)
        ros.spin_until(lambda: len(got) >= before + want, timeout=10, what=f'samples of tick {t}')
        new = got[before:]
        counts.append(len(new))
        assert max(stamp_to_ns(m.header.stamp) for m in new) == t      # the last one stamped t_k
    assert counts == [2] + [8] * 40
    _tick(ros, clock_pub, ticks[-1])                                      # a repeated tick adds nothing
    ros.spin_for(0.2)
    assert len(got) == sum(counts)
    a = sorted((m for m in got if m.header.frame_id == 'ft_sensor'), key=lambda m: stamp_to_ns(m.header.stamp))
    stamps = np.array([stamp_to_ns(m.header.stamp) for m in a])
    assert np.array_equal(np.unique(stamps), np.arange(0, 161) * 625_000)
    # both nodes (same seed) published identical samples: compare per stamp
    by_stamp = {}
    for m in a:
        by_stamp.setdefault(stamp_to_ns(m.header.stamp), []).append(wrench_to_array(m.wrench))
    assert all(len(v) == 2 and np.array_equal(v[0], v[1]) for v in by_stamp.values())
    assert any(np.linalg.norm(v[0]) > 0.5 for v in by_stamp.values())


def test_seed_changes_samples_and_dropout(ros):
    node = _node(ros, 'mock_ft', seed=8, sensor_dropout=[0.010, 0.020], frame_id='s8')
    got = ros.collect(WrenchStamped, topics.MOCK_FT_WRENCH, SUB_RELIABLE)
    clock_pub = ros.node.create_publisher(Clock, topics.CLOCK, 10)
    ros.bring_up('mock_ft')
    ros.wait_for_subscribers(topics.CLOCK)
    for k in range(0, 13):
        _tick(ros, clock_pub, k * FRAME_NS)
        ros.spin_for(0.01)
    expected = [s for s in range(0, 12 * 4 + 1) if not 16 <= s <= 32]   # samples at 10..20 ms dropped
    ros.spin_until(lambda: len(got) >= len(expected), timeout=10, what='samples')
    stamps = sorted(stamp_to_ns(m.header.stamp) for m in got)
    assert stamps == [s * 625_000 for s in expected]
    # the first sample is the seed-8 profile at t = 0, and seed 7 would differ
    m0 = min(got, key=lambda m: stamp_to_ns(m.header.stamp))
    same = LoadProfile(node.profile.components, seed=8).sample([0.0])[0]
    other = LoadProfile(node.profile.components, seed=7).sample([0.0])[0]
    assert np.array_equal(wrench_to_array(m0.wrench), same) and not np.array_equal(same, other)
    # deactivated: ticks publish nothing
    assert ros.change_state('mock_ft', 'deactivate')
    n = len(got)
    _tick(ros, clock_pub, 20 * FRAME_NS)
    ros.spin_for(0.2)
    assert len(got) == n


def test_refused_configuration(ros, tmp_path):
    node = _node(ros, 'mock_ft', scenario_file=str(tmp_path / 'missing.yaml'))
    assert not ros.change_state('mock_ft', 'configure')
    assert ros.get_state('mock_ft') == 'unconfigured'
    bad = tmp_path / 'bad.yaml'
    bad.write_text('components:\n  - {type: sawtooth}\n')
    node.set_parameters([Parameter('scenario_file', value=str(bad))])
    assert not ros.change_state('mock_ft', 'configure')
    good = tmp_path / 'good.yaml'
    good.write_text('seed: 3\nsensor_dropout: [1.0, 2.0]\ncomponents:\n  - {type: steps, axis: 2, amplitude: 5.0}\n')
    node.set_parameters([Parameter('scenario_file', value=str(good))])
    assert ros.change_state('mock_ft', 'configure')
    assert node.dropout == (1.0, 2.0) and node.profile.seed == 3


def _params_from(path, node):
    import yaml
    return yaml.safe_load(open(path))[node]['ros__parameters']


def test_shipped_config_and_scenarios_configure(ros):
    import pathlib
    root = pathlib.Path(__file__).resolve().parents[2]
    node = start(ros, MockFtNode, **_params_from(root / 'config/mock_ft.yaml', 'mock_ft'))
    assert ros.change_state('mock_ft', 'configure')
    for scenario in sorted((root / 'config/ft_loads').glob('*.yaml')):
        assert ros.change_state('mock_ft', 'cleanup')
        node.set_parameters([Parameter('scenario_file', value=str(scenario))])
        assert ros.change_state('mock_ft', 'configure'), scenario
        assert np.all(np.isfinite(node.profile.sample(np.arange(0, 30, 0.01))))


def test_real_time_timer_publishes_the_grid(ros):
    node = _node(ros, 'mock_ft', lockstep=False, use_sim_time=False, timer_period=0.01, profile='steps',
                 amplitude=5.0, start=0.0, period=0.05)
    got = ros.collect(WrenchStamped, topics.MOCK_FT_WRENCH, QoSProfile(depth=5000, reliability=ReliabilityPolicy.BEST_EFFORT))
    ros.bring_up('mock_ft')
    ros.spin_until(lambda: len(got) >= 300, timeout=20, what='real-time samples')
    stamps = np.array(sorted(stamp_to_ns(m.header.stamp) for m in got))
    assert np.all(stamps % 625_000 == 0)
    assert np.all(np.diff(stamps) >= 625_000)
    first = min(got, key=lambda m: stamp_to_ns(m.header.stamp))
    t_rel = (stamp_to_ns(first.header.stamp) - node._origin_ns) * 1e-9
    assert np.array_equal(wrench_to_array(first.wrench), node.profile.sample([t_rel])[0])
