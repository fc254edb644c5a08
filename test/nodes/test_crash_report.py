"""A native crash of a suite process leaves the Python stack of every thread in its output
(hil_nodes.runtime.crash_report): a node process (both shells) and the `hil` launcher."""
from __future__ import annotations

import os
import re
import signal
import subprocess
import sys

import pytest

from hil_nodes.runtime import participant_ready


def _started(module: str, domain_id: int) -> subprocess.Popen:
    env = {**os.environ, 'ROS_DOMAIN_ID': str(domain_id), 'ROS_AUTOMATIC_DISCOVERY_RANGE': 'LOCALHOST',
           participant_ready.ENV: '1'}
    return subprocess.Popen([sys.executable, '-m', module], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)


@pytest.mark.parametrize('module', ['hil_nodes.supervisor.node',     # runtime.runner.run
                                    'hil_nodes.joy_wrench.node'])    # framework.plain_params.run_plain
def test_a_node_process_that_segfaults_prints_every_threads_stack(module, domain_id):
    proc = _started(module, domain_id)
    try:
        for line in proc.stderr:          # rclpy is up: the process has its DDS threads
            if line.strip() == participant_ready.LINE:
                break
        else:
            pytest.fail(f'{module} ended before its participant was up ({proc.wait()})')
        os.kill(proc.pid, signal.SIGSEGV)
        err = proc.stderr.read()
        assert proc.wait(timeout=30) == -signal.SIGSEGV
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert 'Fatal Python error: Segmentation fault' in err
    # the main thread's stack at least: 'Current thread 0x...' when the signal landed on it, else
    # 'Thread 0x...' (a DDS thread took the signal: CI saw that once, the node still constructing)
    assert re.search(r'(Current thread|Thread) 0x[0-9a-f]+ \(most recent call first\):\n  File "', err), err


def test_the_hil_launcher_turns_the_fault_handler_on(monkeypatch):
    # the call itself, not the global state: the test process's own handler (pytest's) stays as it is
    from hil_nodes.cli import main
    calls = []
    monkeypatch.setattr(main.crash_report, 'enable', lambda: calls.append('enable'))
    with pytest.raises(SystemExit):
        main.main(['plan', '--help'])
    assert calls == ['enable']
