"""The link between two hosts goes down in the middle of a real-time run (docs/lab.md, "Two or
three hosts": "When the link drops").

Hexafloat in real time (``--realtime --time-scale 1``, one process per part) split over two
emulated hosts (test/system/netns_hosts.py): the drives' part on host a, the chain's part (the
supervisor, the recorder) on host b. In RUNNING the veth link is set down for 1 s, then up again:

* the chain's supervisor goes to FAULT naming the silent node *and its part* (its liveness limit in
  sim time, 0.5 s, not the 3 s wall limit: the chain side keeps running while the link is down);
* the drives stop on their own on the hardware side (the chain's stop cannot reach it): they hold
  past the end of the last setpoints, as a JTC does, and their watchdog trips on the missing
  commands; the hardware part's summary shows the trip, and the peak second difference of the
  slider positions over the frames the drives ran on their own, which they measure themselves,
  is within the planner's a_max;
* after the link is back nothing moves: the chain's bag shows the joint states the drives send once
  the link carries them again, all at one position, and the run never leaves FAULT (no reset);
* both parts exit 1 and leave no process on the domain, no namespace and no Fast DDS file of
  their domain in this machine's /dev/shm.

Both hosts run with the profile `hil run` gives every process across hosts
(config/fastdds_hosts.xml, ``hil_nodes.cli.discovery``): UDP sends that never block (Fast DDS
``non_blocking_send``). Without it a link that loses its carrier blocks the chain's
process in its next send to the other host (the kernel queues the datagrams for the lost
neighbour against the socket's send buffer): here the whole chain stood still for 0.7 s and the
supervisor named a node of its own process, not the lost part.

Real time on this loaded machine (both parts on one shared core): the supervisor judges real time
here but does not fault on it (``health_fault: false`` in the test's copy of the system file), and
the drives' ``command_timeout`` is 0.5 s instead of 0.2 s (``COMMAND_TIMEOUT``): the test is about
the link. A run that faults before the link goes down (a starved process taken for dead, the
drives refusing setpoints that came too late) is no attempt: it is tried again, up to
``ATTEMPTS`` times, and fails with every reason otherwise. Nothing here asserts wall-clock timing.
"""
import os
import pathlib
import re
import subprocess
import time

import numpy as np
import pytest
import yaml
from conftest import next_domain_id
from hilrun import joint_state_payloads, processes_on_domain
from netns_hosts import TwoHosts, hil_argv, summary_of, unavailable

from hil_nodes.bringup.system import repo_root

pytestmark = pytest.mark.slow

DOWN_S = 1.0          # wall s the link is down
AFTER_RUNNING_S = 0.5  # wall s in RUNNING before the link goes down
DURATION = '8'        # sim s of the run: RUNNING goes on well past the cut
ATTEMPTS = 4
# s: the drives' watchdog on missing commands (0.2 s as shipped). A starved core here delivers
# setpoints too late for the JTC rules in bursts, and 0.2 s of refusals trip the watchdog before
# the link goes down; 0.5 s still trips it well within the 1 s the link is down.
COMMAND_TIMEOUT = 0.5
TIMEOUT = 300.0       # wall s for either part (a guard, not a figure)
SHM = pathlib.Path('/dev/shm')



def planner_a_max() -> float:
    """The planner's translational a_max (config/planner.yaml): the bound of any stop."""
    cfg = yaml.safe_load((repo_root() / 'config' / 'planner.yaml').read_text())
    return max(cfg['planner']['ros__parameters']['a_max'][:3])


def system_file(tmp_path) -> pathlib.Path:
    """Hexafloat as shipped, but for the load of this machine: the supervisor reports real time
    without faulting on it, and the drives' command_timeout is COMMAND_TIMEOUT."""
    desc = yaml.safe_load((repo_root() / 'config' / 'systems' / 'hexafloat.yaml').read_text())
    for node in desc['nodes']:
        if node['name'] == 'supervisor':
            node['parameters'] = {**(node.get('parameters') or {}), 'health_fault': False}
        if node['name'] == 'mock_hexapod':
            node['parameters'] = {**(node.get('parameters') or {}), 'command_timeout': COMMAND_TIMEOUT}
    path = tmp_path / 'hexafloat_link.yaml'
    path.write_text(yaml.safe_dump(desc, sort_keys=False))
    return path


def veth_of(ns: str) -> str:
    out = subprocess.run(['ip', '-n', ns, '-o', 'link', 'show', 'type', 'veth'], capture_output=True, text=True,
                         check=True).stdout
    return out.split(':')[1].strip().split('@')[0]


def domain_shm_files(domain: int) -> set[str]:
    """Fast DDS port files of ``domain`` in this machine's /dev/shm (RTPS ports 7400 + 250 d ...)."""
    lo = 7400 + 250 * domain
    out = set()
    for name in os.listdir(SHM):
        found = re.match(r'(?:sem\.)?(?:fastdds|fastrtps)_port(\d+)', name)
        if found and lo <= int(found.group(1)) < lo + 250:
            out.add(name)
    return out


def attempt(tmp_path, system: pathlib.Path, env: dict) -> dict:
    """One run with the link down in RUNNING. {'void': why} when the run faulted before the cut."""
    why = unavailable()
    if why:
        pytest.skip(f'two hosts cannot be emulated here: {why}')
    domain = next_domain_id()
    shm_before = domain_shm_files(domain)
    hosts = TwoHosts()
    files, procs = {}, {}
    try:
        for host, part, other, extra in (('a', 'hardware', 'b', []),
                                         ('b', 'chain', 'a', ['--duration', DURATION, '--record', str(tmp_path)])):
            files[part] = (open(tmp_path / f'{part}.out', 'w'), open(tmp_path / f'{part}.err', 'w'))
            argv = hil_argv(str(system), '--part', part, '--realtime', '--time-scale', '1', '--seed', '3',
                            '--domain-id', str(domain), '--peers', hosts.addr[other], *extra)
            procs[part] = hosts.popen(host, argv, env, *files[part])
        chain_err = tmp_path / 'chain.err'
        end = time.monotonic() + TIMEOUT
        while 'mode RUNNING' not in chain_err.read_text():         # its progress lines
            if 'hil run: FAULT' in chain_err.read_text() or procs['chain'].poll() is not None:
                break
            assert time.monotonic() < end, chain_err.read_text()[-3000:]
            time.sleep(0.1)
        time.sleep(AFTER_RUNNING_S)
        early = re.search(r'hil run: FAULT: (.*)', chain_err.read_text())
        cut = early is None and procs['chain'].poll() is None
        if cut:
            veth = veth_of(hosts.ns['a'])
            subprocess.run(['ip', '-n', hosts.ns['a'], 'link', 'set', veth, 'down'], check=True)
            time.sleep(DOWN_S)
            subprocess.run(['ip', '-n', hosts.ns['a'], 'link', 'set', veth, 'up'], check=True)
        codes = {}
        for part, proc in procs.items():
            try:
                codes[part] = proc.wait(TIMEOUT)
            except subprocess.TimeoutExpired:
                codes[part] = None
    finally:
        for out, err in files.values():
            out.close()
            err.close()
        hosts.close()
    run = {part: (codes.get(part), summary_of((tmp_path / f'{part}.out').read_text()),
                  (tmp_path / f'{part}.err').read_text()) for part in procs}
    run.update(domain=domain, namespaces=list(hosts.ns.values()), shm_new=domain_shm_files(domain) - shm_before)
    if not cut:
        run['void'] = f'FAULT before the link went down: {early.group(1) if early else run["chain"][2][-500:]}'
    return run


@pytest.mark.timeout(ATTEMPTS * TIMEOUT)
def test_link_down_in_a_realtime_run(tmp_path):
    system = system_file(tmp_path)
    env = dict(os.environ)
    env.pop('FASTDDS_DEFAULT_PROFILES_FILE', None)      # hil run's own across hosts (cli.discovery)
    voids = []
    for i in range(ATTEMPTS):
        folder = tmp_path / f'attempt{i}'
        folder.mkdir()
        run = attempt(folder, system, env)
        if 'void' not in run:
            break
        voids.append(run['void'])
    else:
        pytest.fail(f'no run reached the link cut in {ATTEMPTS} attempts: {voids}')
    (ch_code, chain, ch_err), (hw_code, hw, hw_err) = run['chain'], run['hardware']

    # the chain's side: FAULT naming the lost node and its part, caught at the liveness limit in sim
    # time (the chain kept running), and the run never left FAULT
    assert ch_code == 1, ch_err[-3000:]
    assert chain['outcome'] == 'fault' and chain['modes'].endswith('RUNNING -> FAULT'), chain
    reason = chain['fault_reason']
    assert reason.startswith('node mock_hexapod (part hardware) is dead: last heartbeat '), reason
    assert 'in sim time (timeout 0.5 s): part hardware silent: link or host lost?' in reason, reason
    assert chain['link_latency'].startswith('p50 '), chain['link_latency']

    # the hardware side: its watchdog braked on its own (the chain's setpoints stopped), at most at
    # the planner's a_max (second difference of the slider positions, measured by the drives)
    # (the part's modes may end at RUNNING: the latched FAULT went out while the link was down and
    # is not always redelivered; the supervisor's status, read again once the link is back, says it)
    assert hw_code == 1, hw_err[-3000:]
    # its reason: the supervisor's FAULT, heard once the link is back, or, when the chain's
    # shutdown did not reach it within its liveness limit after that, its own end (part_run)
    assert hw['outcome'] == 'fault' and 'RUNNING' in hw['modes'], hw
    assert hw['reason'] in (reason, 'the supervisor (part chain) was gone for 3 s before the run ended'), hw
    assert int(hw['watchdog_trips']) == 1 and hw['watchdog_reason'].startswith('no valid command for '), hw
    assert 0.0 < float(hw['stop_peak_d2p']) <= planner_a_max() + 1e-9, hw['stop_peak_d2p']
    assert hw['link_latency'].startswith('p50 '), hw['link_latency']

    # nothing moved after the link came back: the joint states after the gap the link left in the
    # chain's bag (the longest one) are at one position, and there are some (the link did return)
    states = sorted(joint_state_payloads(chain['bag']))       # (retransmitted ones may come late)
    stamps = np.array([sec * 1_000_000_000 + ns for (sec, ns), *_ in states], dtype=np.int64)
    positions = np.array([s[2] for s in states])
    gap = int(np.argmax(np.diff(stamps))) + 1
    assert (stamps[gap] - stamps[gap - 1]) * 1e-9 > 0.5 * DOWN_S, 'no gap of the link in the joint states'
    after = positions[gap:]
    assert len(after) >= 2 and np.ptp(after, axis=0).max() < 1e-9, np.ptp(after, axis=0)

    # nothing left behind: processes, namespaces, Fast DDS files of the domain on this machine
    end = time.monotonic() + 30.0
    while processes_on_domain(run['domain']) and time.monotonic() < end:
        time.sleep(0.2)
    assert processes_on_domain(run['domain']) == []
    names = subprocess.run(['ip', 'netns', 'list'], capture_output=True, text=True).stdout
    assert not any(ns in names for ns in run['namespaces']), names
    assert run['shm_new'] == set()
