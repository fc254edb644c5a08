"""`hil run --hmi`: the operator's web HMI started with the run as a process of its own
(docs/hmi.md, "Start"): its address printed first, its page served during the run, stopped with
the run, its death never a node's death, its CPU listed apart from the graph's total."""
import os
import signal
import socket
import subprocess
import sys
import urllib.request

import pytest
from conftest import next_domain_id
from hilrun import BackgroundRun, processes_on_domain

from hil_nodes.cli.run_meter import RunMeter

pytestmark = pytest.mark.slow

PROGRESS = '[hil] sim '


class _Run(BackgroundRun):
    """`hil run hexafloat ...` (not quiet: the progress lines are read) and its HMI's process."""

    def __init__(self, *args: str):
        super().__init__('hexafloat', *args, quiet=False)

    def hmi_pids(self) -> list[int]:
        out = []
        for pid in processes_on_domain(self.domain):
            try:
                with open(f'/proc/{pid}/cmdline', 'rb') as fh:
                    if b'hil_nodes.hmi.node' in fh.read():
                        out.append(pid)
            except OSError:
                pass
        return out


def test_hil_run_hmi_prints_its_address_first_serves_the_page_and_stops_with_the_run():
    run = _Run('--duration', '3', '--hmi', '--hmi-port', '0')
    try:
        first = run.until(lambda line: line.startswith(('hmi: ', PROGRESS)))
        assert first.startswith('hmi: http://127.0.0.1:'), run.lines      # before any progress line
        url = first.split(': ', 1)[1]
        assert int(url.rsplit(':', 1)[1]) > 0                               # port 0: the free one taken
        with urllib.request.urlopen(url, timeout=30) as page:                # served while the run runs
            assert page.status == 200 and b'<html' in page.read().lower()
        assert len(run.hmi_pids()) == 1
        code, summary = run.finish()
    finally:
        run.stop()
    assert code == 0, '\n'.join(run.lines[-60:])
    assert summary['outcome'] == 'done' and summary['faults'] == '0'
    assert summary['hmi'] == url and summary['killed_processes'] == ''     # it stopped when asked
    assert processes_on_domain(run.domain) == []                          # the HMI is gone with the rest
    if 'cpu_s_per_sim_s_by_process' in summary:                          # (a short run may have no figure)
        assert ' hmi ' in f" {summary['cpu_s_per_sim_s_by_process']}"


def test_a_dead_hmi_never_stops_the_run():
    """SIGKILL to the HMI while the run is RUNNING: said once, not reported to the supervisor as a
    node's death (no FAULT), and the run ends done with exit 0."""
    run = _Run('--duration', '4', '--time-scale', '1', '--hmi', '--hmi-port', '0')
    try:
        run.until(lambda line: line.startswith('hmi: http://'))
        run.until(lambda line: line.startswith(PROGRESS) and 'mode RUNNING' in line)
        [pid] = run.hmi_pids()
        os.kill(pid, signal.SIGKILL)
        code, summary = run.finish()
    finally:
        run.stop()
    assert code == 0, '\n'.join(run.lines[-60:])
    assert summary['outcome'] == 'done' and summary['faults'] == '0' and summary['fault_reason'] == ''
    assert summary['modes'].split(' -> ')[-3:] == ['RUNNING', 'RETURNING_HOME', 'IDLE']
    assert sum('the HMI was killed by SIGKILL' in line for line in run.lines) == 1, run.lines
    assert summary['hmi'].endswith('(its process was killed by SIGKILL during the run)')
    assert not any('process hmi' in line for line in run.lines)            # never a node death
    assert processes_on_domain(run.domain) == []


def test_a_busy_hmi_port_is_refused_before_anything_starts():
    with socket.socket() as taken:
        taken.bind(('127.0.0.1', 0))
        taken.listen()
        port = taken.getsockname()[1]
        domain = next_domain_id()
        res = subprocess.run([sys.executable, '-m', 'hil_nodes.cli.main', 'run', 'hexafloat', '--hmi', '--hmi-port',
                              str(port), '--domain-id', str(domain)], capture_output=True, text=True, timeout=120)
        assert res.returncode == 2 and res.stdout == ''
        assert f'--hmi-port {port}: port {port} on 127.0.0.1 is in use' in res.stderr
        assert processes_on_domain(domain) == []
        # and the HMI itself refuses it (viser alone would serve on the next port)
        from hil_nodes.hmi.app import start_server
        with pytest.raises(OSError, match=f'port {port} on 127.0.0.1 is in use'):
            start_server('127.0.0.1', port, 'test')


def test_the_hmi_cpu_is_listed_but_not_added_to_the_graph_total():
    meter = RunMeter({}, apart=('hmi',))
    meter.first = (0.0, {'container': 1.0, 'hmi': 0.5, 'hil': 0.1}, 0.0)
    meter.last = (4.0, {'container': 2.2, 'hmi': 0.9, 'hil': 0.3}, 4.0)
    figures = meter.figures(4.0)
    assert figures['cpu_s_per_sim_s'] == '0.350'                       # (1.2 + 0.2) / 4, the HMI left out
    assert figures['cpu_s_per_sim_s_by_process'] == 'container 0.300, hil 0.050, hmi 0.100'
