"""Helpers for system tests: run the `hil` command as a user would and parse its summary."""
from __future__ import annotations

import subprocess
import sys

from conftest import next_domain_id


def hil_run(*args: str, timeout: float = 240.0) -> tuple[int, dict[str, str], str]:
    """Run `hil run ...` on a fresh DDS domain; return (exit code, summary dict, stderr)."""
    cmd = [sys.executable, '-m', 'hil_nodes.cli.main', 'run', *args, '--domain-id', str(next_domain_id()), '--quiet']
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    summary = {}
    for line in proc.stdout.splitlines():
        key, sep, value = line.partition(': ')
        if sep:
            summary[key.strip()] = value.strip()
    return proc.returncode, summary, proc.stderr


def joint_state_payloads(bag) -> list[tuple]:
    """Every /joint_states message of a bag as comparable tuples (stamp, names, pos, vel)."""
    from hil_nodes.bag import read_messages
    out = []
    for _, _, msg in read_messages(bag, ['/joint_states']):
        out.append(((msg.header.stamp.sec, msg.header.stamp.nanosec), tuple(msg.name),
                    tuple(msg.position.tolist()), tuple(msg.velocity.tolist())))
    return out
