"""Hexafloat on two hosts (docs/lab.md, "Two or three hosts"): the `hardware` part (the mock
drives with their watchdog, the /clock owner) on one emulated host, the `chain` part (F/T driver,
admittance, planner, time base, kinematics, supervisor, recorder) on another, joined by a veth
pair, each with its own /dev/shm (test/system/netns_hosts.py): every message crosses the link by
UDP. Discovery by static peers (no multicast: the range stays LOCALHOST) and on the subnet
(multicast over the link). Both parts exit 0 with their summaries, the chain's bag shows the
platform moving and the run done, and the lockstep clock makes it the same run, joint state for
joint state, as the whole graph on one host.

Also, on this machine only: the supervisor's wait for a part that never starts names its nodes
and their part, and a part without the supervisor ends on its own once the supervisor is gone,
after its drives braked."""
import os
import pathlib
import re
import signal
import subprocess
import time

import numpy as np
import pytest
import yaml
from conftest import next_domain_id
from hilrun import hil_run, joint_state_payloads, processes_on_domain, run_end_stamp
from netns_hosts import TwoHosts, hil_argv, summary_of, unavailable

from hil_nodes import topics
from hil_nodes.recorder.bag import read_messages

pytestmark = pytest.mark.slow

RUN = ('--seed', '3', '--lockstep')
DURATION = ('--duration', '2')
MODES = ['IDLE', 'HOMING', 'SYNCHRONIZING', 'RUNNING', 'RETURNING_HOME', 'IDLE']
MOVED = 1e-4      # m: a slider's travel during the run (seed 000's default load moves them ~0.45 mm)
TIMEOUT = 300.0   # wall s for a run of either part (a guard, not a figure)


@pytest.fixture(scope='module')
def one_host_run(tmp_path_factory):
    """The reference: the whole graph on this host, same seed and duration."""
    root = tmp_path_factory.mktemp('one_host')
    code, summary, err = hil_run('hexafloat', *RUN, *DURATION, '--record', str(root))
    assert code == 0, err[-3000:]
    return summary


@pytest.fixture(params=['peers', 'subnet'])
def hosts(request):
    why = unavailable()
    if why:
        pytest.skip(f'two hosts cannot be emulated here: {why}')
    pair = TwoHosts(multicast=request.param == 'subnet')
    pair.discovery = request.param
    try:
        yield pair
    finally:
        pair.close()          # always: the processes in them, the namespaces, the veth pair


def _run_parts(hosts, tmp_path):
    """Both parts, the drives' host first; (code, summary, stderr) of each, by part."""
    domain = str(next_domain_id())
    disc = {'a': ['--network'], 'b': ['--network']} if hosts.discovery == 'subnet' else \
        {'a': ['--peers', hosts.addr['b']], 'b': ['--peers', hosts.addr['a']]}
    files, procs = {}, {}
    for host, part, extra in (('a', 'hardware', []), ('b', 'chain', [*DURATION, '--record', str(tmp_path)])):
        files[part] = (open(tmp_path / f'{part}.out', 'w'), open(tmp_path / f'{part}.err', 'w'))
        argv = hil_argv('hexafloat', '--part', part, *RUN, '--domain-id', domain, '--quiet', *disc[host], *extra)
        procs[part] = hosts.popen(host, argv, dict(os.environ), *files[part])
    out = {}
    for part, proc in procs.items():
        try:
            code = proc.wait(TIMEOUT)
        except subprocess.TimeoutExpired:
            code = None
        for f in files[part]:
            f.close()
        out[part] = (code, summary_of((tmp_path / f'{part}.out').read_text()),
                     (tmp_path / f'{part}.err').read_text())
    return out


def test_hexafloat_split_over_two_emulated_hosts(hosts, tmp_path, one_host_run):
    runs = _run_parts(hosts, tmp_path)
    (hw_code, hw, hw_err), (ch_code, chain, ch_err) = runs['hardware'], runs['chain']
    # each part's summary (outcome, reason, supervisor) and its stderr tell why it failed
    assert ch_code == 0, (chain, ch_err[-3000:])
    assert hw_code == 0, (hw, hw_err[-3000:])
    # each part's own summary
    assert (chain['part'], chain['outcome'], chain['faults'], chain['late_commands']) == ('chain', 'done', '0', '0')
    assert chain['modes'].split(' -> ') == MODES
    assert (hw['part'], hw['nodes'], hw['outcome']) == ('hardware', 'mock_hexapod', 'done')
    assert hw['supervisor'] == 'shut this part down' and hw['modes'].split(' -> ') == MODES
    assert hw['late_commands'] == '0' and hw['frames'] == chain['frames'] and int(hw['frames']) >= 800, hw_err[-3000:]
    expected = 'SUBNET' if hosts.discovery == 'subnet' else 'LOCALHOST, static peers '
    assert chain['discovery'].startswith(expected) and hw['discovery'].startswith(expected)
    if hosts.discovery == 'peers':
        assert f"static peers {hosts.addr['a']}," in chain['discovery']
        assert f"static peers {hosts.addr['b']}," in hw['discovery']
    # across hosts every process takes the profile whose UDP sends never block (a dropped link)
    assert chain['discovery'].endswith('config/fastdds_hosts.xml') and hw['discovery'].endswith('fastdds_hosts.xml')
    # clocks measured at start: the emulated hosts share one kernel clock, so the true offset is 0
    # and a sample is off by at most half its round trip (hil_core.supervision.clock_offset)
    for summary, other in ((chain, 'hardware'), (hw, 'chain')):
        found = re.fullmatch(rf'{other}: offset ([-+][0-9.]+) ms, rtt ([0-9.]+) ms \(median of 9; offsets within '
                             r'([0-9.]+) ms, rtt at most ([0-9.]+) ms\)', summary['clocks'])
        assert found, summary['clocks']
        offset, rtt, _, rtt_max = map(float, found.groups())
        assert 0 < rtt <= rtt_max and abs(offset) <= rtt_max / 2 + 0.001, summary['clocks']   # (+ the print's rounding)
    # the chain's bag: the platform moved, the run ended done and at home
    bag = chain['bag']
    modes = [m.data for _, _, m in read_messages(bag, [topics.ROOT.HIL_MODE])]
    assert modes == MODES
    states = joint_state_payloads(bag)
    positions = np.array([s[2] for s in states])
    assert (positions.max(axis=0) - positions.min(axis=0)).max() > MOVED
    end = run_end_stamp(bag)                                  # home_reached: the run is done
    at_end = [s for s in states if s[0] <= end][-1]
    assert np.abs(at_end[2]).max() < 1e-6                      # back home (0 at the home pose)
    # the run's manifest holds every part's values (hil report recomputes the ideal motion from them)
    drives = yaml.safe_load((pathlib.Path(bag) / 'hil_run.yaml').read_text())['parameters']['mock_hexapod']
    assert drives['use_sim_time'] is False and drives['frame_period'] == 0.0025 and drives['seed'] == 3
    # lockstep across hosts: the same run as on one host, joint state for joint state
    one_end = run_end_stamp(one_host_run['bag'])
    reference = [s for s in joint_state_payloads(one_host_run['bag']) if s[0] <= one_end]
    run = [s for s in states if s[0] <= end]
    assert len(run) == len(reference) and run == reference     # (lengths first: a short message on failure)


def test_the_supervisor_names_the_nodes_of_a_part_that_never_starts(tmp_path):
    """Only the chain of a three-host split: the supervisor waits for the model's and the drives'
    nodes, says which and on which part, and gives up after --part-timeout with a FAULT naming
    them (exit 1: the bring-up failed)."""
    code, summary, err = hil_run('hexafloat', '--split', 'three_hosts', '--part', 'chain', '--part-timeout', '3',
                                 '--duration', '1', timeout=TIMEOUT)
    assert code == 1, err[-3000:]
    words = 'waited 3 s for the lifecycle services of mock_hexapod (part hardware), admittance (part model)'
    assert words in summary['fault_reason'] and words in err
    assert summary['part'] == 'chain' and summary['modes'] == 'IDLE -> FAULT'
    assert processes_on_domain(int(summary['domain_id'])) == []


def test_a_part_without_the_supervisor_ends_on_its_own_when_the_supervisor_is_gone(tmp_path):
    """The drives' part on this host, the chain's killed in the middle of a run (SIGKILL of its
    `hil run`: its node processes get SIGTERM and end without the shutdown sequence): the drives'
    watchdog brakes, the part sees the supervisor gone for its liveness limit, waits for the
    drives at rest, stops and exits 1 saying so."""
    domain = str(next_domain_id())
    hw_out, hw_err = open(tmp_path / 'hw.out', 'w'), open(tmp_path / 'hw.err', 'w')
    hw = subprocess.Popen(hil_argv('hexafloat', '--part', 'hardware', '--domain-id', domain), stdout=hw_out,
                          stderr=hw_err, start_new_session=True)
    chain = subprocess.Popen(hil_argv('hexafloat', '--part', 'chain', '--domain-id', domain, '--duration', '600',
                                      '--quiet'), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                             start_new_session=True)
    try:
        end = time.monotonic() + TIMEOUT
        while 'mode RUNNING' not in (tmp_path / 'hw.err').read_text():   # its progress lines
            assert hw.poll() is None and time.monotonic() < end, (tmp_path / 'hw.err').read_text()[-3000:]
            time.sleep(0.2)
        os.kill(chain.pid, signal.SIGKILL)
        code = hw.wait(TIMEOUT)
    finally:
        for proc in (hw, chain):
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(30)
        hw_out.close()
        hw_err.close()
    summary, err = summary_of((tmp_path / 'hw.out').read_text()), (tmp_path / 'hw.err').read_text()
    assert code == 1, err[-3000:]
    assert summary['outcome'] == 'fault' and summary['supervisor'] == 'gone (no heartbeat for 3 s)'
    assert summary['reason'] == 'the supervisor (part chain) was gone for 3 s before the run ended'
    assert 'the drives were not at rest' not in err and 'no joint states heard' not in err   # braked first
    end = time.monotonic() + 30.0      # the chain's node processes end on their SIGTERM (no orphans)
    while processes_on_domain(int(domain)) and time.monotonic() < end:
        time.sleep(0.2)
    assert processes_on_domain(int(domain)) == []
