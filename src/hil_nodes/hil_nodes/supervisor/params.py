"""The supervisor's parameters: its Param table (the only place they are declared; the
generated page docs/parameters/supervisor.md and config/supervisor.yaml are checked against it),
the one mapping to the real-time health judge's ``HealthConfig``, and their loading.

The supervisor is a plain rclpy node (nobody drives its lifecycle), so a bad value cannot
refuse a configure transition: it is reported by name, replaced by its default, and the
supervisor stays in FAULT without bringing anything up.
"""
from __future__ import annotations

from types import SimpleNamespace


from hil_core.supervision.lifecycle_plan import check_node_list
from hil_core.supervision.realtime_health import HealthConfig
from hil_core.supervision.timing import HIGH_LEVEL_PERIOD
from hil_nodes.framework.base import HilLifecycleNode, Param, ParameterError
from hil_nodes.framework.param_sources import unknown_parameters
from hil_nodes.framework.plain_params import declare_plain
from hil_nodes.framework.param_table import ConfigFields


def _node_list(value) -> str | None:
    try:
        check_node_list(value)
    except ValueError as exc:
        return str(exc)
    return None


def _node_parts(value) -> str | None:
    bad = [v for v in value if v.count(':') != 1 or not all(v.split(':'))]
    return f'entries are NODE:PART, not {bad}' if bad else None


_LOCKSTEP = next(p for p in HilLifecycleNode.COMMON_PARAMS if p.name == 'lockstep')
_STATUS_PERIOD = next(p for p in HilLifecycleNode.COMMON_PARAMS if p.name == 'status_period')
# the run's seed, which the bring-up gives every node (the supervisor has no random source: it
# declares it so that it does not warn of an unknown parameter in every run)
_SEED = next(p for p in HilLifecycleNode.COMMON_PARAMS if p.name == 'seed')

PARAMS = (
    Param('managed_nodes', 'str[]', [], 'lifecycle nodes to configure then activate, in this order '
          '(deactivated and cleaned up in reverse)', check=_node_list),
    Param('monitored_nodes', 'str[]', [], 'nodes whose heartbeat is watched but whose lifecycle is '
          'not driven', check=_node_list),
    Param('clock_owner', str, '', "the managed node whose frames drive the run (the mock drives; '' = none): "
          "in lockstep the shutdown deactivates it first, so that no frame of it waits for a command "
          "from a chain already deactivated (that wait would count a late command)"),
    Param('node_parts', 'str[]', [], "NODE:PART of the nodes another part of the plan starts (another host, "
          "docs/lab.md): named with their part while the bring-up waits for them", check=_node_parts),
    Param('nodes_timeout', float, 120.0, 'bring-up first waits this long (wall s) for the lifecycle services of '
          'the node_parts nodes, saying which it waits for; then FAULT naming them', range=(0.1, 3600.0)),
    Param('autostart', bool, True, 'bring the managed nodes up at start'),
    Param('autostart_run', bool, False, 'after an autostart bring-up, request START before the first frame'),
    _LOCKSTEP,
    Param('frame_period', float, HIGH_LEVEL_PERIOD, 'period of /hil/frame without lockstep (s, steady clock)',
          range=(1e-4, 1.0)),
    Param('run_duration', float, 0.0, 'sim time (s) at which a run is stopped, frame-aligned; 0: never',
          range=(0.0, 1e7)),
    Param('heartbeat_timeout_sim', float, 0.5, 'a node is dead after this long without heartbeat (sim s)',
          range=(0.01, 600.0)),
    Param('heartbeat_timeout_wall', float, 1.0, 'a node is dead after this long without heartbeat (wall s)',
          range=(0.05, 600.0)),
    Param('stall_timeout_wall', float, 0.75, 'a node silent this long (wall s) that comes back stalled: '
          'reported as a safety event, not a fault; 0: not watched', range=(0.0, 600.0)),
    Param('heartbeat_period', float, 0.1, "period of the supervisor's own heartbeat (s, wall and node clock)",
          range=(0.01, 5.0)),
    Param('service_timeout', float, 30.0, 'wait for a node\'s change_state service (wall s)', range=(0.1, 600.0)),
    Param('transition_timeout', float, 10.0, 'wait for a transition\'s answer (wall s)', range=(0.1, 600.0)),
    Param('shutdown_timeout', float, 2.0, 'shutdown: wait for a node\'s service or answer at most this long '
          '(wall s); a node that does not answer is left behind', range=(0.1, 600.0)),
    Param('shutdown_silence', float, 1.0, 'shutdown: a managed node without heartbeat for this long (wall s) '
          'is taken for dead and skipped', range=(0.05, 600.0)),
    Param('liveness_period', float, 0.02, 'period of the liveness check (wall s; also every /clock in lockstep)',
          range=(0.005, 1.0)),
    _STATUS_PERIOD,              # its "supervisor: run" status; the same name and meaning as every node's
    _SEED,
    Param('health_fault', bool, True, 'real time not held beyond the fault limits -> FAULT (false: report only)'),
    Param('health_window', float, 3.0, 'sliding window of the real-time health judgement (wall s)',
          range=(0.1, 600.0)),
    Param('health_warn_fraction', float, 0.01, 'late cycles / late frames / time-base off fraction that warns',
          range=(1e-6, 1.0)),
    Param('health_fault_fraction', float, 0.10, 'late cycles / late frames / time-base off fraction that '
          'faults', range=(1e-6, 1.0)),
    Param('health_min_samples', int, 100, 'cycles (frames) a window needs before a fraction is judged',
          range=(1, 1_000_000)),
    Param('health_min_span', float, 1.5, 'the window\'s samples must cover this long before a verdict (wall s): '
          'only a sustained share of late cycles is a fault', range=(0.0, 600.0)),
    Param('saturation_warn_s', float, 0.1, 'time-base saturation within the window that warns (s)',
          range=(1e-3, 600.0)),
    Param('saturation_fault_s', float, 1.0, 'time-base saturation within the window that faults (s)',
          range=(1e-3, 600.0)),
)


# the judge's field names are its own; the supervisor's say they are the health judgement's
HEALTH_CONFIG = ConfigFields(HealthConfig, renamed={
    'window': 'health_window', 'warn_fraction': 'health_warn_fraction', 'fault_fraction': 'health_fault_fraction',
    'min_samples': 'health_min_samples', 'min_span': 'health_min_span'})


def health_config(p: SimpleNamespace) -> HealthConfig:
    """The real-time health judge's configuration for the values ``p``."""
    return HEALTH_CONFIG.build(p)


def load_parameters(node) -> tuple[SimpleNamespace, list[str]]:
    """Declare and validate PARAMS on ``node``; a bad value is replaced by its default and
    reported (one line each, naming the parameter)."""
    values, problems = declare_plain(node, PARAMS, read_only=True)
    if not problems:
        overlap = set(check_node_list(values['managed_nodes'])) & set(check_node_list(values['monitored_nodes']))
        if overlap:
            problems.append(f"parameters 'managed_nodes' and 'monitored_nodes' both list {sorted(overlap)}")
        if node.get_name() in values['managed_nodes'] + values['monitored_nodes']:
            problems.append(f"parameters 'managed_nodes'/'monitored_nodes' list the supervisor itself "
                            f'({node.get_name()})')
        problem = health_config(SimpleNamespace(**values)).problem()
        if problem:
            problems.append(f'health parameters: {problem}')
    for problem in problems:
        node.get_logger().error(problem)
    for name in unknown_parameters(node):
        node.get_logger().warning(f"node {node.get_name()}: unknown parameter '{name}' ignored (not declared)")
    return SimpleNamespace(**values), problems
