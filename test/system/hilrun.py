"""Helpers for system tests: run the `hil` command as a user would and parse its summary."""
from __future__ import annotations

import os
import subprocess
import sys

from conftest import next_domain_id


def hil_run(*args: str, timeout: float = 240.0, env: dict | None = None) -> tuple[int, dict[str, str], str]:
    """Run `hil run ...` on a fresh DDS domain (``env``: added to the environment); return
    (exit code, summary dict, stderr)."""
    cmd = [sys.executable, '-m', 'hil_nodes.cli.main', 'run', *args, '--domain-id', str(next_domain_id()), '--quiet']
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                          env=None if env is None else {**os.environ, **env})
    summary = {}
    for line in proc.stdout.splitlines():
        key, sep, value = line.partition(': ')
        if sep:
            summary[key.strip()] = value.strip()
    return proc.returncode, summary, proc.stderr


def joint_state_payloads(bag) -> list[tuple]:
    """The /joint_states frames of a bag as comparable tuples (stamp, names, pos, vel), one per
    stamp. Before the first command the lockstep mock re-publishes t_0 every 0.1 s wall (so late
    subscribers can start): how many copies a bag holds depends on wall time, so repeats are
    checked to be exact copies and kept once."""
    from hil_nodes.recorder.bag import read_messages
    out = []
    for _, _, msg in read_messages(bag, ['/joint_states']):
        item = ((msg.header.stamp.sec, msg.header.stamp.nanosec), tuple(msg.name),
                tuple(msg.position.tolist()), tuple(msg.velocity.tolist()))
        if out and item[0] == out[-1][0]:
            assert item == out[-1], f'two different joint states with stamp {item[0]} in {bag}'
            continue
        out.append(item)
    return out


def run_end_stamp(bag) -> tuple[int, int]:
    """Stamp of the `home_reached` event: the end of the run. After it the graph holds at home
    until `hil run` shuts it down, for a number of frames that depends on wall time."""
    from hil_nodes.recorder.bag import read_messages
    for _, _, msg in read_messages(bag, ['/hil/events']):
        if any(st.name == 'home_reached' for st in msg.status):
            return (msg.header.stamp.sec, msg.header.stamp.nanosec)
    raise AssertionError(f'no home_reached event in {bag}')


def processes_on_domain(domain_id: int) -> list[int]:
    """PIDs of processes whose environment has ROS_DOMAIN_ID=domain_id (children of a run)."""
    import os
    pids = []
    for entry in os.listdir('/proc'):
        if not entry.isdigit():
            continue
        try:
            with open(f'/proc/{entry}/environ', 'rb') as fh:
                env = fh.read().split(b'\0')
        except OSError:
            continue
        if f'ROS_DOMAIN_ID={domain_id}'.encode() in env and int(entry) != os.getpid():
            pids.append(int(entry))
    return pids
