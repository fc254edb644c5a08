"""Hexafloat on three emulated hosts (docs/lab.md, "Two or three hosts"): the split
``three_hosts`` puts the drives on one host, the admittance model on a second (seed 000's
floating-body model on a CPU of its own) and the rest of the chain with the supervisor on a
third, each in a network namespace with a private /dev/shm, joined by a bridge
(test/system/netns_three.py): every message between the parts crosses the links by UDP. In
lockstep all three parts end done and the chain's bag is transparent as seed 000 section 5.1
measures it: four poses of buffer plus the F/T filter's group delay, unity gain to 7 Hz.

And the proof that the emulated hosts have no other way to talk (the two-host pair of
netns_hosts.py, its veth down): the supervisor's part never hears the drives' part, which never
hears the supervisor, and nothing arrives on either end of the link. Last, bench/two_hosts.sh,
the same pair for people: both summaries, and nothing of it left after its end or a Ctrl-C."""
import json
import os
import pathlib
import re
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
import yaml
from conftest import next_domain_id
from hilrun import processes_on_domain
from netns_hosts import TwoHosts, hil_argv, summary_of, unavailable
from netns_three import Hosts

from hil_core.ft.filters import design_sos, group_delay_s
from hil_core.transparency.run_analysis import analyse_run
from hil_nodes.bringup.system import repo_root
from hil_nodes.report.analysis import admittance_model
from hil_nodes.report.bagdata import load_run

pytestmark = pytest.mark.slow

MODES = ['IDLE', 'HOMING', 'SYNCHRONIZING', 'RUNNING', 'RETURNING_HOME', 'IDLE']
FRAME = 0.0025
BUFFER_DELAY = 4 * FRAME           # seed 000: four poses of the reference buffer = 10 ms
# seed 000 5.1's impulses (config/ft_loads/impulses_seed000.yaml: at 5 s and every 6 s, 4.6875 s
# segments): 17 s of sim time hold the first two, which is what the gain and delay need
DURATION = '17'
TIMEOUT = 300.0                    # wall s for a run of any part (a guard, not a figure)


def _skip_without_namespaces():
    why = unavailable()
    if why:
        pytest.skip(f'hosts cannot be emulated here: {why}')


def _impulse_system(tmp_path) -> str:
    """Hexafloat with seed 000 5.1's impulse load in its simulated F/T sensor. A scenario cannot
    give it: a scenario goes to the supervisor's part only and may not set the model's values
    (impulse_3hz's admittance values are the system's own, 3 Hz), so every part takes this
    system file instead: one plan on every host."""
    desc = yaml.safe_load((repo_root() / 'config/systems/hexafloat.yaml').read_text())
    ft = next(n for n in desc['nodes'] if n['name'] == 'ft_sensor')
    ft['mock_parameters']['sim_load_file'] = 'config/ft_loads/impulses_seed000.yaml'
    path = tmp_path / 'hexafloat_impulses.yaml'
    path.write_text(yaml.safe_dump(desc, sort_keys=False))
    return str(path)


def _run(hosts, runs, domain, tmp_path, timeout=TIMEOUT):
    """Start ``runs`` [(host, part, argv extra)] in order; {part: (code, summary, stderr)}."""
    procs, files = {}, {}
    for host, part, extra in runs:
        files[part] = (open(tmp_path / f'{part}.out', 'w'), open(tmp_path / f'{part}.err', 'w'))
        argv = hil_argv(*extra, '--part', part, '--domain-id', domain, '--quiet')
        procs[part] = hosts.popen(host, argv, dict(os.environ), *files[part])
    out = {}
    for part, proc in procs.items():
        try:
            code = proc.wait(timeout)
        except subprocess.TimeoutExpired:
            code = None
        for f in files[part]:
            f.close()
        out[part] = (code, summary_of((tmp_path / f'{part}.out').read_text()), (tmp_path / f'{part}.err').read_text())
    return out


def test_hexafloat_on_three_hosts_lockstep_is_done_and_transparent(tmp_path):
    _skip_without_namespaces()
    system = _impulse_system(tmp_path)
    hosts = Hosts('abc')
    try:
        common = lambda host: [system, '--split', 'three_hosts', '--seed', '3', '--lockstep',   # noqa: E731
                               '--peers', hosts.peers(host)]
        runs = _run(hosts, [('a', 'hardware', common('a')), ('c', 'model', common('c')),
                            ('b', 'chain', [*common('b'), '--duration', DURATION, '--record', str(tmp_path)])],
                    str(next_domain_id()), tmp_path)
    finally:
        hosts.close()
    for part, (code, summary, err) in runs.items():
        assert code == 0, (part, err[-3000:])
        assert summary['part'] == part and summary['outcome'] == 'done', (part, summary)
        assert summary['modes'].split(' -> ') == MODES, (part, summary['modes'])
    chain, hw, model = (runs[p][1] for p in ('chain', 'hardware', 'model'))
    assert model['nodes'] == 'admittance' and model['supervisor'] == 'shut this part down'
    assert hw['nodes'] == 'mock_hexapod' and hw['frames'] == chain['frames']
    assert chain['late_commands'] == '0' and hw['late_commands'] == '0' and chain['faults'] == '0'
    # each part measured both others' clocks (one kernel clock: offsets within half a round trip)
    for summary, others in ((chain, ('hardware', 'model')), (hw, ('chain', 'model')), (model, ('hardware', 'chain'))):
        assert all(f'{o}: offset ' in summary['clocks'] for o in others), summary['clocks']
    # seed 000 5.1 on the chain's bag: the model's reference went through two links and came back
    run = load_run(chain['bag'])
    start = next(t for t, m in run.modes if m == 'RUNNING')
    end = next(t for t, m in run.modes if t > start and m == 'RETURNING_HOME')
    raw, tcp = run.get('/ft_sensor/wrench_raw'), run.get('/kinematics/tcp_pose')
    f, p = (raw.t >= start) & (raw.t <= end), (tcp.t >= start) & (tcp.t <= end)
    numbers = analyse_run(admittance_model(run.manifest), raw.t[f], raw.values[f], tcp.t[p], tcp.values[p],
                          axis=0).numbers()
    assert numbers['segments'] == 2 and numbers['impulsive'], numbers
    assert numbers['gain_dev_db_7hz'] <= 0.5, numbers
    ft = run.manifest['parameters']['ft_sensor']
    rate = float(ft['sample_rate'])
    sos = design_sos(int(ft['filter_order']), float(ft['filter_cutoff_hz']), rate)
    designed = BUFFER_DELAY + float(np.mean(group_delay_s(sos, np.linspace(0.5, 7.0, 50), rate)))
    assert abs(numbers['delay_ms_7hz'] * 1e-3 - designed) <= 1e-3, (numbers['delay_ms_7hz'], designed * 1e3)
    # the model's values in the manifest are the model part's (every part computes one plan)
    params = run.manifest['parameters']
    assert params['admittance']['natural_frequency'] == [3.0] * 6 and params['mock_hexapod']['seed'] == 3


def _rx_packets(pair, host: str, dev: str) -> int:
    info = subprocess.run(['ip', '-n', pair.ns[host], '-s', '-j', 'link', 'show', 'dev', dev], capture_output=True,
                          text=True, check=True).stdout
    return int(json.loads(info)[0]['stats64']['rx']['packets'])


def test_with_the_veth_down_no_message_crosses(tmp_path):
    """The two-host pair of test_two_hosts.py with its link down: the chain's supervisor waits
    --part-timeout for the drives' nodes and names them (exit 1), the drives' part never hears a
    heartbeat (exit 2), neither measured the other's clock, and no packet arrived on either
    end of the veth pair while it was down."""
    _skip_without_namespaces()
    pair = TwoHosts()
    try:
        dev = {h: json.loads(subprocess.run(['ip', '-n', pair.ns[h], '-j', 'link', 'show', 'type', 'veth'],
                                            capture_output=True, text=True, check=True).stdout)[0]['ifname']
               for h in 'ab'}
        subprocess.run(['ip', '-n', pair.ns['a'], 'link', 'set', dev['a'], 'down'], check=True)
        # (while up, the kernel's own IPv6 link announcements may have crossed: counted from here)
        before = {h: _rx_packets(pair, h, dev[h]) for h in 'ab'}
        domain = str(next_domain_id())
        runs = _run(pair, [('a', 'hardware', ['hexafloat', '--part-timeout', '5', '--peers', pair.addr['b']]),
                           ('b', 'chain', ['hexafloat', '--part-timeout', '5', '--duration', '1',
                                           '--peers', pair.addr['a']])], domain, tmp_path)
        after = {h: _rx_packets(pair, h, dev[h]) for h in 'ab'}
    finally:
        pair.close()
    (hw_code, hw, hw_err), (ch_code, chain, ch_err) = runs['hardware'], runs['chain']
    assert ch_code == 1, ch_err[-3000:]
    assert 'waited 5 s for the lifecycle services of mock_hexapod (part hardware)' in chain['fault_reason']
    assert chain['modes'] == 'IDLE -> FAULT' and chain['clocks'] == 'hardware: not measured (no answer)'
    assert hw_code == 2, hw_err[-3000:]
    assert hw['supervisor'] == 'never heard' and hw['clocks'] == 'chain: not measured (no answer)'
    assert hw['reason'].startswith('no heartbeat of the supervisor (part chain) within 5 s')
    assert after == before
    assert processes_on_domain(int(domain)) == []


SCRIPT = repo_root() / 'bench' / 'two_hosts.sh'


def _script(*args, **kw):
    env = {**os.environ, 'PYTHON': sys.executable, 'ROS_DOMAIN_ID': str(next_domain_id())}
    return subprocess.Popen([str(SCRIPT), *args], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            **kw)


def _names(stdout: str) -> list[str]:
    """The namespaces the script made (its first line)."""
    return re.findall(r'(hil2h[0-9a-f]+[ab]) \(', stdout)


def _left(names) -> list[str]:
    listed = subprocess.run(['ip', 'netns', 'list'], capture_output=True, text=True).stdout
    links = subprocess.run(['ip', '-o', 'link', 'show'], capture_output=True, text=True).stdout
    return [n for n in names if n in listed] + [n for n in names if n.replace('hil2h', 'hv2h') in links]


def _part_summaries(stdout: str) -> dict[str, dict[str, str]]:
    out = {}
    for block in re.split(r'^=== part ', stdout, flags=re.M)[1:]:
        name = block.split(' ', 1)[0]
        out[name] = summary_of(block.split('\n', 1)[1])
    return out


def test_the_two_hosts_script_runs_both_parts_and_cleans_up():
    _skip_without_namespaces()
    proc = _script('hexafloat', 'lockstep', '--duration', '1')
    stdout, stderr = proc.communicate(timeout=TIMEOUT)
    assert proc.returncode == 0, (stdout[-3000:], stderr[-3000:])
    names = _names(stdout)
    assert len(names) == 2 and _left(names) == []
    parts = _part_summaries(stdout)
    assert set(parts) == {'hardware', 'chain'}
    for part, summary in parts.items():
        assert summary['outcome'] == 'done' and summary['late_commands'] == '0', (part, summary)
    assert parts['hardware']['frames'] == parts['chain']['frames']
    assert 'chain: offset ' in parts['hardware']['clocks'] and 'hardware: offset ' in parts['chain']['clocks']


def test_the_two_hosts_script_cleans_up_on_ctrl_c():
    """SIGINT to the script (a terminal's Ctrl-C) in the middle of a run: both parts stop as on
    their own Ctrl-C (outcome interrupted, summaries printed), the namespaces and the link go."""
    _skip_without_namespaces()
    proc = _script('hexafloat', 'lockstep', '--duration', '600')
    first = proc.stdout.readline() + proc.stdout.readline()          # hosts: ..., output: DIR
    names, out_dir = _names(first), pathlib.Path(first.split('output: ', 1)[1].strip())
    try:
        end = time.monotonic() + TIMEOUT
        while 'mode RUNNING' not in ((out_dir / 'chain.err').read_text() if (out_dir / 'chain.err').exists() else ''):
            assert proc.poll() is None and time.monotonic() < end, first
            time.sleep(0.2)
        proc.send_signal(signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(30)
    assert proc.returncode == 130 and 'two_hosts.sh: interrupted' in stderr, stderr[-3000:]
    parts = _part_summaries(stdout)
    assert {p: s.get('outcome') for p, s in parts.items()} == {'hardware': 'interrupted', 'chain': 'interrupted'}
    assert len(names) == 2 and _left(names) == []
