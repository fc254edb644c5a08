"""ft_sensor with source netft against the hil_sim Net F/T device over loopback UDP (real time),
and the node run standalone as `python -m hil_nodes.ft_sensor.node` (mock source)."""

import numpy as np
from diagnostic_msgs.msg import DiagnosticArray
from geometry_msgs.msg import WrenchStamped
from rclpy.qos import QoSProfile, ReliabilityPolicy
from std_srvs.srv import Trigger

from hil_core.ft.netft_client import NetFTClient
from hil_core.ft.load_profiles import LoadProfile
from hil_nodes import topics
from hil_nodes.msgs.convert import array_to_wrench, ns_to_stamp, stamp_to_ns, wrench_to_array
from hil_nodes.ft_sensor.node import FtSensorNode
from hil_sim.netft_device.node import NetFTDevice
from rig import start, statuses, values
from rosutil import PUB_RELIABLE, SUB_RELIABLE

LOAD = [2.0, -1.0, 15.0, 0.2, -0.1, 0.05]
BEST_EFFORT = QoSProfile(depth=1000, reliability=ReliabilityPolicy.BEST_EFFORT)


def _ft(ros, port, **params):
    base = dict(source='netft', sensor_ip='127.0.0.1', sensor_port=port, sample_rate=1600.0,
                receive_timeout=0.2, status_period=0.2)
    return start(ros, FtSensorNode, **{**base, **params})


def _diag(ros):
    return ros.collect(DiagnosticArray, topics.DIAGNOSTICS, 100)


def _values(diag, key):
    return [v[key] for v in map(values, statuses(diag, name='ft_sensor: signal chain')) if key in v]


def test_netft_stream_losses_bias_and_stop(ros):
    prof = LoadProfile([{'type': 'constant', 'wrench': LOAD}])
    with NetFTDevice(rate=1600.0, profile=prof, drop=0.02, seed=5) as dev:
        node = _ft(ros, dev.address[1], hardware_bias=True)
        out = ros.collect(WrenchStamped, topics.FT_WRENCH, BEST_EFFORT)
        diag = _diag(ros)
        ros.bring_up('ft_sensor')
        ros.spin_until(lambda: len(out) >= 50, timeout=20, what='filtered wrenches from the Net F/T')
        assert np.max(np.abs(wrench_to_array(out[-1].wrench) - LOAD)) < 1e-6        # counts -> SI
        stamps = [stamp_to_ns(m.header.stamp) for m in out]
        assert all(b > a for a, b in zip(stamps, stamps[1:]))
        ros.spin_until(lambda: any(v not in (None, '0') for v in _values(diag, 'lost_packets')), timeout=20,
                       what='lost packets in the diagnostics')
        assert _values(diag, 'status_word')[-1] == '0x00000000'
        # diagnostic_updater naming: "<node>: <task>", hardware_id the sensor the chain reads
        named = {(st.name, st.hardware_id) for d in diag for st in d.status}
        assert ('ft_sensor: signal chain', 'ATI Net F/T 127.0.0.1') in named
        assert ('ft_sensor: cycle', 'ATI Net F/T 127.0.0.1') in named
        # hardware bias: 0x0042 to the box, the wrench settles at zero
        res = ros.call(Trigger, topics.FT_BIAS)
        assert res.success and '0x0042' in res.message
        ros.spin_until(lambda: dev.counters['biases'] == 1, timeout=10, what='bias command at the device')
        ros.spin_until(lambda: np.max(np.abs(wrench_to_array(out[-1].wrench))) < 1e-6, timeout=20,
                       what='wrench settled at zero after the bias')
        assert ros.change_state('ft_sensor', 'deactivate')
        ros.spin_until(lambda: not dev.streaming, timeout=10, what='stop command at the device')
        tracker = node.source.client.tracker
        kernel = node.source.client.socket_drops()
        assert tracker.lost == dev.counters['dropped'] + kernel
        assert dev.counters['stops'] == 1


def test_silent_sensor_says_only_one_client(ros):
    with NetFTDevice(rate=500.0) as dev:
        other = NetFTClient(*dev.address, timeout=0.5)       # somebody else is streaming already
        other.start()
        assert len(other.receive()) > 0
        _ft(ros, dev.address[1], receive_timeout=0.1, reconnect_backoff_max=0.2)
        out = ros.collect(WrenchStamped, topics.FT_WRENCH, BEST_EFFORT)
        diag = _diag(ros)
        ros.bring_up('ft_sensor')
        ros.spin_until(lambda: any('Only one client can stream' in s.message for d in diag for s in d.status
                                   if s.level == b'\x02'), timeout=20, what='sensor silent ERROR')
        ros.spin_until(lambda: dev.counters['refused_clients'] >= 2, timeout=20, what='re-requests with backoff')
        assert out == []
        other.close()


def test_corrupt_and_status_error_never_published(ros):
    prof = LoadProfile([{'type': 'constant', 'wrench': LOAD}])
    with NetFTDevice(rate=1000.0, profile=prof, corrupt=0.05, status_word=0x80000000, seed=2) as dev:
        node = _ft(ros, dev.address[1], sample_rate=1000.0)
        out = ros.collect(WrenchStamped, topics.FT_WRENCH, BEST_EFFORT)
        raw = ros.collect(WrenchStamped, topics.FT_WRENCH_RAW, BEST_EFFORT)
        diag = _diag(ros)
        ros.bring_up('ft_sensor')
        errors = lambda text: [s.message for d in diag for s in d.status if s.level == b'\x02' and text in s.message]
        ros.spin_until(lambda: errors('wrong length'), timeout=20, what='wrong-length ERROR')
        ros.spin_until(lambda: errors('status'), timeout=20, what='status-word ERROR')
        ros.spin_until(lambda: node.chain.counters['status'] > 200, timeout=20, what='flagged samples')
        assert out == [] and raw == []
        assert node.bad_packets > 0


def test_standalone_process_lifecycle(ros):
    proc = ros.spawn('hil_nodes.ft_sensor.node', ['-p', 'source:=mock', '-p', 'lockstep:=true'])
    ros.spin_until(lambda: '/ft_sensor/change_state' in dict(ros.node.get_service_names_and_types()),
                   timeout=30, what='ft_sensor process')
    assert ros.get_state('ft_sensor') == 'unconfigured'
    ros.bring_up('ft_sensor')
    pub = ros.node.create_publisher(WrenchStamped, topics.MOCK_FT_WRENCH, PUB_RELIABLE)
    out = ros.collect(WrenchStamped, topics.FT_WRENCH, SUB_RELIABLE)
    ros.wait_for_subscribers(topics.MOCK_FT_WRENCH)
    ros.wait_for_publishers(topics.FT_WRENCH)
    for k in range(1, 5):
        msg = WrenchStamped(wrench=array_to_wrench(LOAD))
        msg.header.stamp = ns_to_stamp(k * 625_000)
        pub.publish(msg)
    ros.spin_until(lambda: out, timeout=20, what='wrench from the ft_sensor process')
    assert stamp_to_ns(out[0].header.stamp) == 2_500_000
    assert ros.change_state('ft_sensor', 'deactivate') and ros.change_state('ft_sensor', 'cleanup')
    assert ros.change_state('ft_sensor', 'shutdown')
    assert proc.proc.poll() is None or proc.proc.returncode == 0


def _raw_fz(raw):
    return np.array([m.wrench.force.z for m in raw])


def test_all_ones_and_rail_counts_are_refused_not_published(ros):
    """A Net F/T input fault: 0xFFFFFFFF on every axis is -1 count, about 0 N, a 15 N step that the
    spike check lets through; an int32 rail is a clipped value. Neither may come out as a force."""
    prof = LoadProfile([{'type': 'constant', 'wrench': LOAD}])
    with NetFTDevice(rate=1000.0, profile=prof, seed=6) as dev:
        node = _ft(ros, dev.address[1], sample_rate=1000.0, publish_raw_all=True)
        raw = ros.collect(WrenchStamped, topics.FT_WRENCH_RAW, BEST_EFFORT)
        diag = _diag(ros)
        ros.bring_up('ft_sensor')
        ros.spin_until(lambda: len(raw) >= 100, timeout=20, what='raw wrenches')
        dev.override_counts([-1] * 6, 200)
        ros.spin_until(lambda: dev.counters['overridden'] >= 200, timeout=20, what='all-ones records sent')
        dev.override_counts([0, 0, 2 ** 31 - 1, 0, 0, 0], 200)
        ros.spin_until(lambda: dev.counters['overridden'] >= 400, timeout=20, what='rail records sent')
        n = len(raw)
        ros.spin_until(lambda: len(raw) >= n + 100, timeout=20, what='valid data again')
        errors = [s.message for d in diag for s in d.status if s.level == b'\x02']
        ros.spin_until(lambda: _values(diag, 'implausible_counts') and int(_values(diag, 'implausible_counts')[-1]) >= 390,
                       timeout=20, what='implausible_counts figure')
        errors = [s.message for d in diag for s in d.status if s.level == b'\x02']
        assert any('implausible raw counts' in m for m in errors)
        assert np.all(np.abs(_raw_fz(raw) - LOAD[2]) < 1e-6)          # nothing but the load came out
        assert node.source.implausible >= 390


def test_burst_at_ten_times_the_rate_is_diagnosed_never_clamped(ros):
    """A Net F/T input fault: the box sends at 10x the configured rate for a while. The driver used to
    clamp the stamps 1 ns apart and say nothing; now an ERROR names the rate and the records of
    the burst are refused, and every published stamp is a sample period after the previous."""
    rate = 300.0
    prof = LoadProfile([{'type': 'constant', 'wrench': LOAD}])
    with NetFTDevice(rate=rate, profile=prof, seed=7) as dev:
        node = _ft(ros, dev.address[1], sample_rate=rate, publish_rate=100.0, publish_raw_all=True)
        raw = ros.collect(WrenchStamped, topics.FT_WRENCH_RAW, BEST_EFFORT)
        diag = _diag(ros)
        ros.bring_up('ft_sensor')
        ros.spin_until(lambda: len(raw) >= 300, timeout=20, what='1 s of raw wrenches')
        start = dev.produced
        dev.set_rate_factor(10.0)
        ros.spin_until(lambda: dev.produced >= start + 1500, timeout=20, what='0.5 s at 3 kHz')
        dev.set_rate_factor(1.0)
        errors = lambda: [s.message for d in diag for s in d.status if s.level == b'\x02' and 'rate anomaly' in s.message]
        ros.spin_until(errors, timeout=20, what='rate anomaly ERROR')
        assert 'configured sample_rate 300 Hz' in errors()[0]
        n = len(raw)
        ros.spin_until(lambda: len(raw) >= n + 300, timeout=30, what='stream accepted again')
        assert node.source.clock.refused > 1000
        stamps = np.array([stamp_to_ns(m.header.stamp) for m in raw])
        assert np.all(np.diff(stamps) >= 0.99e9 / rate - 1)          # never squeezed together


def test_strays_and_a_renumbering_do_not_count_as_lost_packets(ros):
    """A Net F/T input fault: stray sequence numbers made lost_packets jump by about 1e9 each."""
    prof = LoadProfile([{'type': 'constant', 'wrench': LOAD}])
    with NetFTDevice(rate=1600.0, profile=prof, drop=0.01, stray=0.01, seed=9) as dev:
        node = _ft(ros, dev.address[1])
        out = ros.collect(WrenchStamped, topics.FT_WRENCH, BEST_EFFORT)
        diag = _diag(ros)
        ros.bring_up('ft_sensor')
        ros.spin_until(lambda: dev.counters['strays'] >= 20, timeout=20, what='stray records')
        dev.restart_numbering()
        n = len(out)
        ros.spin_until(lambda: len(out) >= n + 100 and _values(diag, 'sequence_resets')
                       and _values(diag, 'sequence_resets')[-1] == '1', timeout=20, what='reset in the diagnostics')
        assert ros.change_state('ft_sensor', 'deactivate')
        tracker, kernel = node.source.client.tracker, node.source.client.socket_drops()
        assert dev.counters['dropped'] - 2 <= tracker.lost <= dev.counters['dropped'] + kernel
        assert tracker.strays >= dev.counters['strays'] - kernel and tracker.resets == 1
        lost = [int(v) for v in _values(diag, 'lost_packets')]
        assert max(lost) <= dev.counters['dropped'] + kernel                 # never a stray's jump
        assert int(_values(diag, 'stray_packets')[-1]) > 0
        assert np.max(np.abs(wrench_to_array(out[-1].wrench) - LOAD)) < 1e-6
