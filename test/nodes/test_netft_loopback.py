"""The Net F/T client against the hil_sim RDT device over loopback UDP (the real bytes)."""
import signal
import socket
import subprocess
import sys
import time

import numpy as np
import pytest

from hil_core.ft.netft_client import NetFTClient
from hil_core.ft.load_profiles import LoadProfile
from hil_sim.netft_device.node import NetFTDevice


def _drain(client, until, timeout=30.0):
    """Receive bursts until ``until(totals)`` or timeout; return totals."""
    totals = dict(records=0, accepted=0, bad=0, counts=[])
    end = time.monotonic() + timeout
    while not until(totals) and time.monotonic() < end:
        b = client.receive()
        totals['records'] += len(b)
        totals['accepted'] += int(b.accepted.sum())
        totals['bad'] += b.bad_length
        if len(b):
            totals['counts'].append(b.counts)
    return totals


def test_7khz_two_seconds_with_1pc_drops_counted_exactly():
    n = 14000                                      # 7 kHz for 2 s
    with NetFTDevice(rate=7000.0, drop=0.01, seed=42, first_sequence=2 ** 32 - 5000) as dev:
        client = NetFTClient(*dev.address, timeout=0.2)
        client.open()
        client.start(sample_count=n)
        t = _drain(client, lambda tot: dev.produced >= n and not dev.streaming and tot['records'] + dev.counters['dropped'] + client.socket_drops() >= n)
        kernel = client.socket_drops()            # losses of this machine, not of the device
        client.close()
    assert dev.produced == n and dev.counters['dropped'] > 50
    assert client.tracker.lost == dev.counters['dropped'] + kernel
    assert t['records'] == n - dev.counters['dropped'] - kernel
    assert client.tracker.out_of_order == 0 and client.tracker.duplicates == 0


def test_reorder_corrupt_and_drop_counted():
    n = 3000
    with NetFTDevice(rate=5000.0, drop=0.01, reorder=0.02, corrupt=0.01, seed=3) as dev:
        client = NetFTClient(*dev.address, timeout=0.2)
        client.start(sample_count=n)
        t = _drain(client, lambda tot: dev.produced >= n and not dev.streaming and tot['records'] + tot['bad'] + dev.counters['dropped'] + client.socket_drops() >= n)
        kernel = client.socket_drops()
        client.close()
    c = dev.counters
    assert t['bad'] == c['corrupted'] and client.bad_packets == c['corrupted']
    assert c['reordered'] > 20
    if kernel == 0:    # a record lost in the kernel may have been the one a late record overtook
        assert client.tracker.out_of_order == c['reordered']
    # corrupted records are lost to the receiver: their sequence number never arrives
    assert client.tracker.lost == c['dropped'] + c['corrupted'] + kernel


def test_counts_bias_and_stop():
    prof = LoadProfile([{'type': 'constant', 'wrench': [1.5, -2.0, 10.0, 0.25, -0.5, 0.125]}])
    with NetFTDevice(rate=1000.0, profile=prof, counts_per_force=1e6, counts_per_torque=1e6) as dev:
        client = NetFTClient(*dev.address, timeout=0.5)
        client.start()
        t = _drain(client, lambda tot: tot['records'] >= 20)
        first = np.vstack(t['counts'])[0]
        assert first.tolist() == [1_500_000, -2_000_000, 10_000_000, 250_000, -500_000, 125_000]
        client.hardware_bias()
        _drain(client, lambda tot: dev.counters['biases'] == 1)
        t = _drain(client, lambda tot: sum(len(c) for c in tot['counts']) >= 20)
        assert np.all(np.vstack(t['counts'])[-5:] == 0)           # tared in the box
        client.stop()
        _drain(client, lambda tot: not dev.streaming, timeout=5)
        client.receive()                                          # anything in flight
        assert len(client.receive()) == 0                         # silent after stop
        client.close()
    assert dev.counters['starts'] == 1 and dev.counters['stops'] == 1


def test_only_one_client_streams():
    with NetFTDevice(rate=1000.0) as dev:
        a = NetFTClient(*dev.address, timeout=0.3)
        b = NetFTClient(*dev.address, timeout=0.3)
        a.start()
        _drain(a, lambda tot: tot['records'] >= 10)
        b.start()
        assert len(b.receive()) == 0                   # refused: the box serves one client
        assert dev.counters['refused_clients'] >= 1
        a.close()
        b.close()


def test_device_rejects_bad_settings():
    with pytest.raises(ValueError, match='7000'):
        NetFTDevice(rate=8000.0)
    with pytest.raises(ValueError, match='drop'):
        NetFTDevice(drop=1.5)


def test_standalone_device_script():
    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    probe.bind(('127.0.0.1', 0))
    port = probe.getsockname()[1]
    probe.close()
    proc = subprocess.Popen([sys.executable, '-m', 'hil_sim.netft_device.node', '--port', str(port), '--rate', '1000',
                             '--drop', '0.05', '--seed', '1'], stdout=subprocess.PIPE, text=True)
    try:
        assert f':{port} at 1000 Hz' in proc.stdout.readline()
        client = NetFTClient('127.0.0.1', port, timeout=0.5)
        client.start(sample_count=500)
        t = _drain(client, lambda tot: tot['records'] + client.tracker.lost >= 500, timeout=20)
        assert t['records'] > 400 and client.tracker.lost == 500 - t['records']
        client.close()
    finally:
        proc.send_signal(signal.SIGINT)
        out = proc.communicate(timeout=10)[0]
    assert 'dropped=' in out and proc.returncode == 0


def test_strays_and_a_renumbered_stream_are_not_losses():
    """Net F/T input faults: stray records (random rdt_sequence) and a box that starts its numbering
    again are reported (strays, resets), never counted as lost packets."""
    n = 4000
    with NetFTDevice(rate=4000.0, drop=0.01, stray=0.02, seed=11) as dev:
        client = NetFTClient(*dev.address, timeout=0.2)
        client.start(sample_count=n)
        first = _drain(client, lambda tot: dev.produced >= n // 2)['accepted']
        dev.restart_numbering()
        t = _drain(client, lambda tot: dev.produced >= n and not dev.streaming
                   and first + tot['accepted'] + dev.counters['dropped'] + client.socket_drops() + 2 >= n)
        t['accepted'] += first
        kernel = client.socket_drops()
        client.close()
    tr = client.tracker
    assert dev.counters['strays'] > 20 and dev.counters['renumbered'] == 1
    assert tr.resets == 1 and tr.lost <= dev.counters['dropped'] + kernel
    assert tr.lost >= dev.counters['dropped'] - 2            # a drop inside the reset's run is not seen
    if kernel == 0:
        assert tr.strays == dev.counters['strays']
    assert t['accepted'] >= n - dev.counters['dropped'] - kernel - 2     # the reset costs two records


def test_re_request_while_streaming_restarts_at_one_without_loss():
    """The box numbers every stream from 1; a re-request (after a silence) must not turn the
    new stream into duplicates."""
    with NetFTDevice(rate=2000.0, seed=12) as dev:
        client = NetFTClient(*dev.address, timeout=0.2)
        client.start()
        _drain(client, lambda tot: tot['accepted'] >= 500)
        client.start()                                        # the same client asks again
        t = _drain(client, lambda tot: tot['accepted'] >= 500 and dev.counters['starts'] == 2
                   and dev.next_sequence > 300)
        client.close()
    assert client.tracker.lost == client.socket_drops() and client.tracker.duplicates <= 2
    assert t['accepted'] >= 500


def test_implausible_counts_are_marked():
    prof = LoadProfile([{'type': 'constant', 'wrench': [1.5, -2.0, 10.0, 0.25, -0.5, 0.125]}])
    with NetFTDevice(rate=1000.0, profile=prof) as dev:
        client = NetFTClient(*dev.address, timeout=0.5)
        client.start()
        _drain(client, lambda tot: tot['records'] >= 20)
        dev.override_counts([-1] * 6, 30)
        flagged = []
        end = time.monotonic() + 20
        while sum(flagged) < 30 and time.monotonic() < end:
            b = client.receive()
            flagged += b.implausible.tolist()
            assert np.all(b.counts[b.implausible] == -1)
        client.close()
    assert sum(flagged) == 30
