"""The periodic status of a lockstep mock hardware node (mock hexapod, iiwa, hybrid5): one
wording for all three, so a person reading /diagnostics sees the same states everywhere."""
from __future__ import annotations

from hil_nodes.base import ERROR, OK, WARN


def lockstep_status(problem: str | None, late: int, late_action: str, lockstep: bool, started: bool,
                    active: bool) -> tuple[bytes, str]:
    """(level, message): a rejected command first, then late commands since the last status, then
    waiting for the first command (lockstep holds sim time at t_0), else running / inactive."""
    if problem:
        return ERROR, f'braking after a rejected command: {problem}'
    if late:
        return WARN, f'{late} late command(s): {late_action}'
    if lockstep and not started:
        return OK, 'waiting for the first command (sim time held at t_0)'
    return OK, 'running' if active else 'inactive'
