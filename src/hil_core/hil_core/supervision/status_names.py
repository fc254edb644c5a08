"""Names of the statuses on /diagnostics (docs/CONTRACTS.md "Diagnostics").

Every status is named ``"<node>: <task>"``, as diagnostic_updater names its tasks (e.g.
``ft_sensor: signal chain``, ``timebase: buffer``, and the base's ``<node>: cycle``). Its
``hardware_id`` says what hardware the status is about ("ATI Net F/T 192.168.1.1", "mock hexapod
drives (hil_sim)", "none" for software), so it cannot tell which node spoke: every consumer keys
a status by the node name before the first ``': '`` of its name (``status_node``). A name
without a task (a foreign publisher, an old bag's ``/ft_sensor``) is the node itself.
"""
from __future__ import annotations

SEPARATOR = ': '
CYCLE_TASK = 'cycle'
NO_HARDWARE = 'none'     # diagnostic_updater's hardware_id for a software-only status


def status_name(node: str, task: str) -> str:
    """``"<node>: <task>"`` (the node name without namespace slashes)."""
    return f'{node.strip("/")}{SEPARATOR}{task}'


def status_node(name: str) -> str:
    """The node a status name belongs to: the part before the first ``': '``, without slashes
    (``'timebase: buffer'`` -> ``'timebase'``, ``'/ft_sensor'`` -> ``'ft_sensor'``)."""
    return name.split(SEPARATOR, 1)[0].strip('/')


def status_task(name: str) -> str:
    """The task of a status name (``''`` when it has none)."""
    node, sep, task = name.partition(SEPARATOR)
    return task if sep else ''


def is_cycle_status(name: str) -> bool:
    """The base's per-node cycle-health status (``"<node>: cycle"``)."""
    return status_task(name) == CYCLE_TASK
