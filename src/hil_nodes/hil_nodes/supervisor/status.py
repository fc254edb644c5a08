"""The supervisor's periodic ``supervisor: run`` status on /diagnostics (hil_nodes.supervisor.node):
its level, message and key/values from what the supervisor hands over (docs/supervisor.md)."""
from __future__ import annotations

from hil_core.supervision.modes import HilMode, ModeMachine
from hil_nodes.framework.base import ERROR, OK, WARN
from hil_nodes.supervisor.health import HealthWatch

STATUS_TASK = 'run'      # the status on /diagnostics is "supervisor: run" (mode, nodes, health)


def run_status(machine: ModeMachine, lifecycle: str, run_time: float, frames: int, run_duration_reached: bool,
               unknown_events: int, stall_reasons: list[str], health: HealthWatch, states: dict[str, str],
               ages: dict, dead, bring_up_step: str) -> tuple[bytes, str, dict]:
    """(level, message, values) of the supervisor's own status: mode, run time (s), faults,
    ``lifecycle``, stalls, health, and per watched node its lifecycle state (``states``), its
    heartbeat ages in both clocks (``ages``: name -> (sim, wall) s or None) and whether it is alive
    (not in ``dead``); ``bring_up_step`` says what a bring-up is doing."""
    mode = machine.mode
    values = {'mode': mode.value, 'fault_reason': machine.fault_reason, 'run_time': run_time,
              'faults': machine.fault_count, 'lifecycle': lifecycle, 'frames': frames,
              'run_duration_reached': run_duration_reached, 'unknown_events': unknown_events,
              'stalls': len(stall_reasons), 'stall_reason': '; '.join(stall_reasons[:3]), **health.status_values()}
    for name, state in states.items():
        age_sim, age_wall = ages[name]
        values[f'state:{name}'] = state
        values[f'heartbeat_age:{name}'] = 'never' if age_wall is None else f'{age_wall:.3f}'
        values[f'heartbeat_age_sim:{name}'] = 'never' if age_sim is None else f'{age_sim:.3f}'
        values[f'alive:{name}'] = name not in dead
    if mode is HilMode.FAULT or lifecycle == 'bring_up_failed':
        return ERROR, f'FAULT: {machine.fault_reason}', values
    if lifecycle == 'bringing_up':
        return WARN, f'bringing up: {bring_up_step}', values
    if health.current.level:
        return WARN, f'{mode.value}; {health.current.reason}', values
    return OK, mode.value, values
