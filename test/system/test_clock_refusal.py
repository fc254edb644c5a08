"""Real time across hosts is refused when the hosts' clocks are too far apart (docs/realtime.md,
"Clocks across hosts"): Hexafloat's two parts in real time on this machine, one of them with the
test-only clock shift (``HIL_TEST_CLOCK_SHIFT_S``: what that part reports as its clock in the
ping/pong, never a node's clock). Before either starts a process, each measures the other's
clock, finds it off by the shift (the machine's true offset is 0: one kernel clock), beyond the
bound of half a frame, and refuses with the parts, the offset and the bound: both exit 2,
nothing was started, nothing moved. And the check itself, without any node: two parts' checks
with a small shift measure it."""
import json
import os
import re
import subprocess
import sys

import pytest
from conftest import next_domain_id
from hilrun import processes_on_domain
from netns_hosts import hil_argv, summary_of

from hil_core.supervision.clock_bound import offset_bound

pytestmark = pytest.mark.slow

FRAME = 0.0025            # Hexafloat's drives' frame_period (config/mock_hexapod)
SHIFT = 0.005             # s: four times the bound, far beyond the measurement's noise here
TIMEOUT = 120.0           # wall s for either part (a guard, not a figure)


def _start(argv, env_extra, out, err):
    return subprocess.Popen(argv, env={**os.environ, **env_extra}, stdout=out, stderr=err, start_new_session=True)


def test_real_time_is_refused_when_one_part_clock_is_shifted(tmp_path):
    domain = str(next_domain_id())
    runs = {'hardware': ({'HIL_TEST_CLOCK_SHIFT_S': str(SHIFT)}, []), 'chain': ({}, ['--duration', '2'])}
    procs, files = {}, {}
    try:
        for part, (env_extra, extra) in runs.items():
            files[part] = (open(tmp_path / f'{part}.out', 'w'), open(tmp_path / f'{part}.err', 'w'))
            argv = hil_argv('hexafloat', '--part', part, '--realtime', '--domain-id', domain, '--part-timeout', '60',
                            *extra)
            procs[part] = _start(argv, env_extra, *files[part])
        codes = {part: proc.wait(TIMEOUT) for part, proc in procs.items()}
    finally:
        for proc in procs.values():
            if proc.poll() is None:
                os.killpg(proc.pid, 9)
                proc.wait(30)
        for pair in files.values():
            for f in pair:
                f.close()
    out = {p: summary_of((tmp_path / f'{p}.out').read_text()) for p in runs}
    err = {p: (tmp_path / f'{p}.err').read_text() for p in runs}
    assert codes == {'hardware': 2, 'chain': 2}, err
    bound_ms = offset_bound(FRAME) * 1e3
    for part, other, side in (('chain', 'hardware', 'ahead of'), ('hardware', 'chain', 'behind')):
        s = out[part]
        assert (s['part'], s['outcome'], s['clock_bound_ms']) == (part, 'refused', f'{bound_ms:.3f}'), s
        found = re.search(rf"part {other}'s clock is ([0-9.]+) ms {side} part {part}'s", s['reason'])
        assert found, s['reason']
        # the measured offset is the shift, up to half a round trip (hil_core.supervision.clock_offset)
        rtt_max = float(re.search(r'rtt at most ([0-9.]+) ms', s['clocks']).group(1))
        assert abs(float(found.group(1)) - SHIFT * 1e3) <= rtt_max / 2 + 0.001, s['clocks']
        assert f'tolerates {bound_ms:.3f} ms' in s['reason'] and s['reason'] in err[part]
        # refused before anything started: no node, no supervisor heard, no frame
        assert 'frames' not in s and 'waiting for the supervisor' not in err[part]
    assert processes_on_domain(int(domain)) == []


def test_the_check_measures_the_shift_of_the_other_part():
    """Two parts' checks alone (`python -m hil_nodes.cli.part_clock`), one shifted by a fifth of
    the bound: each measures the other's clock off by that shift, with the sign of who is ahead
    (within half its round trip), and both end once the other has its samples too (each lingers
    answering until the other stops pinging)."""
    domain = str(next_domain_id())
    shift = offset_bound(FRAME) / 5
    cmd = [sys.executable, '-m', 'hil_nodes.cli.part_clock', '--domain-id', domain, '--timeout', '60']
    procs = {'a': _start(cmd + ['--part', 'a', '--others', 'b'], {'HIL_TEST_CLOCK_SHIFT_S': str(shift)},
                         subprocess.PIPE, subprocess.PIPE),
             'b': _start(cmd + ['--part', 'b', '--others', 'a'], {}, subprocess.PIPE, subprocess.PIPE)}
    from hil_core.supervision.clock_offset import estimate
    for part, sign in (('a', -1), ('b', +1)):       # a's clock reads ahead: b sees it ahead, a sees b behind
        stdout, stderr = procs[part].communicate(timeout=TIMEOUT)
        assert procs[part].returncode == 0, stderr[-2000:]
        other = 'b' if part == 'a' else 'a'
        samples = json.loads(stdout.strip().splitlines()[-1])
        est = estimate([tuple(s) for s in samples[other]])
        assert est.samples == 9
        assert abs(est.offset_s - sign * shift) <= est.rtt_max_s / 2 + 1e-6, est
