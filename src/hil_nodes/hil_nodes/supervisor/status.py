"""The supervisor's periodic ``supervisor: run`` status on /diagnostics (hil_nodes.supervisor.node)."""
from __future__ import annotations

from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue

from hil_core.supervision.modes import HilMode
from hil_core.supervision.status_names import NO_HARDWARE, status_name
from hil_nodes.framework.base import ERROR, OK, WARN, _fmt

STATUS_TASK = 'run'      # the status on /diagnostics is "supervisor: run" (mode, nodes, health)


def publish_status(node) -> None:
    """The supervisor's own status: mode, run time, faults, lifecycle, stalls, health, and per
    managed node its lifecycle state and heartbeat ages in both clocks (docs/supervisor.md)."""
    mode = node.machine.mode
    values = {'mode': mode.value, 'fault_reason': node.machine.fault_reason, 'run_time': node.run_time_ns * 1e-9,
              'faults': node.machine.fault_count, 'lifecycle': node.lifecycle,
              'frames': node.frames, 'run_duration_reached': node.run_duration_reached,
              'unknown_events': node.unknown_events, 'stalls': len(node._stall_reasons()),
              'stall_reason': '; '.join(node._stall_reasons()[:3]), **node.health.status_values()}
    ages = node.liveness.ages(node._sim_now(), node._wall_now())
    dead = node.liveness.dead()
    for name, state in node.states.items():
        age_sim, age_wall = ages[name]
        values[f'state:{name}'] = state
        values[f'heartbeat_age:{name}'] = 'never' if age_wall is None else f'{age_wall:.3f}'
        values[f'heartbeat_age_sim:{name}'] = 'never' if age_sim is None else f'{age_sim:.3f}'
        values[f'alive:{name}'] = name not in dead
    if mode is HilMode.FAULT or node.lifecycle == 'bring_up_failed':
        level, message = ERROR, f'FAULT: {node.machine.fault_reason}'
    elif node.lifecycle == 'bringing_up':
        level, message = WARN, f'bringing up: {node.driver.current}'
    elif node.health.current.level:
        level, message = WARN, f'{mode.value}; {node.health.current.reason}'
    else:
        level, message = OK, mode.value
    msg = DiagnosticArray()
    msg.header.stamp = node.get_clock().now().to_msg()
    status = DiagnosticStatus(level=level, name=status_name(node.get_name(), STATUS_TASK),
                              message=message, hardware_id=NO_HARDWARE)
    status.values = [KeyValue(key=k, value=_fmt(v)) for k, v in values.items()]
    msg.status = [status]
    node._diag_pub.publish(msg)
