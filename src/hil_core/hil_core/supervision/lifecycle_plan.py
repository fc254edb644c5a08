"""Order of lifecycle transitions a supervisor drives (nav2 lifecycle_manager style).

Bring-up: configure every managed node in the listed order, then activate every one in the
listed order (so every node is configured, its publishers and parameters checked, before
anything starts producing output). Shutdown: deactivate in reverse order, then clean up in
reverse order, each step only for nodes in a state where it applies; one node may be named to
go first (the lockstep clock owner: see ``shutdown_plan``).

Pure logic on node names and lifecycle state labels ('unconfigured', 'inactive', 'active',
'finalized', 'unknown', ...) as ``lifecycle_msgs/State.label`` spells them.
"""
from __future__ import annotations

from dataclasses import dataclass

# Primary state a successful transition ends in, and the state it must start from.
TARGET_STATE = {'configure': 'inactive', 'activate': 'active',
                'deactivate': 'inactive', 'cleanup': 'unconfigured'}
SOURCE_STATE = {'configure': 'unconfigured', 'activate': 'inactive',
                'deactivate': 'active', 'cleanup': 'inactive'}


@dataclass(frozen=True)
class Step:
    node: str
    transition: str   # 'configure' | 'activate' | 'deactivate' | 'cleanup'

    def __str__(self) -> str:
        return f'{self.transition} {self.node}'


def check_node_list(names) -> list[str]:
    """Node names as given, or ValueError naming the problem (empty or duplicated name)."""
    out = []
    for name in names:
        key = str(name).strip().strip('/')
        if not key:
            raise ValueError('empty node name')
        if key in out:
            raise ValueError(f'node {key} listed twice')
        out.append(key)
    return out


def bring_up_plan(nodes) -> list[Step]:
    nodes = check_node_list(nodes)
    return [Step(n, 'configure') for n in nodes] + [Step(n, 'activate') for n in nodes]


def shutdown_plan(nodes, states: dict[str, str], first: str = '') -> tuple[list[Step], list[str]]:
    """Steps that bring every node down to 'unconfigured', reverse order, and notes for the
    nodes that are skipped (state unknown, dead, finalized, already unconfigured).

    ``first``: a node deactivated (and cleaned up) before the others, whatever its place. In
    lockstep that is the clock owner: its frames wait for the chain's commands, and a chain
    deactivated before it leaves its next frame waiting; past its lockstep wait that frame
    counts as a late command (a safety event) that the shutdown itself made."""
    nodes = check_node_list(nodes)
    order = list(reversed(nodes))
    if first and first in order:
        order.remove(first)
        order.insert(0, first)
    deactivate, cleanup, notes = [], [], []
    for node in order:
        state = states.get(node, 'unknown')
        if state == 'active':
            deactivate.append(Step(node, 'deactivate'))
            cleanup.append(Step(node, 'cleanup'))
        elif state == 'inactive':
            cleanup.append(Step(node, 'cleanup'))
        elif state != 'unconfigured':
            notes.append(f'{node} skipped (state {state})')
    return deactivate + cleanup, notes
