"""Parts of a plan: which nodes run on which host (docs/lab.md, "Two or three hosts").

A system file's ``parts:`` names one or more *splits* of its graph, each a mapping of part name
to the nodes that part starts, e.g. Hexafloat's ``two_hosts`` (``hardware``: the drives and
their watchdog; ``chain``: the F/T driver, admittance, planner, time base, kinematics,
supervisor) and ``three_hosts`` (the admittance model on a ``model`` host of its own, seed
000's external model CPU). The first split is the default. Every node of the system is in
exactly one part of each split; the nodes a run adds (the recorder, a scenario's nodes, the
HMI) go to the part that holds the supervisor, which is also the part the scenario, the
duration and the recording are given to; the lab side of mode:=hardware (ros2_control_node,
robot_state_publisher, spawners) goes to the part of the sim_only nodes it replaces.

A part is a subset of the plan's processes: every part computes the same whole plan (same
parameters, same managed list: the supervisor manages the nodes of every part) and starts its
own processes only. No ROS import: tested on its own.
"""
from __future__ import annotations

import re
from typing import Any



class PartsError(ValueError):
    """A parts block, split or part that cannot be used (the bring-up makes it a BringupError:
    this module is imported by the system loader, it does not import it)."""

SUPERVISOR = 'supervisor'
_NAME = re.compile(r'[a-z][a-z0-9_]*')


def parse_parts(entry: Any, where: str, nodes) -> dict[str, dict[str, tuple[str, ...]]]:
    """The ``parts:`` block of a system file (``nodes``: its NodeSpecs) checked: split and part
    names, every node in exactly one part of each split, one part with the supervisor, the
    sim_only nodes in one part."""
    if entry is None:
        return {}
    if not isinstance(entry, dict) or not entry:
        raise PartsError(f'{where} must map split names to {{part: [nodes]}}')
    names = [n.name for n in nodes]
    sim_only = {n.name for n in nodes if n.sim_only}
    out = {}
    for split, parts in entry.items():
        here = f'{where}.{split}'
        if not isinstance(split, str) or not _NAME.fullmatch(split):
            raise PartsError(f'{here}: a split name is lower-case letters, digits and _')
        if not isinstance(parts, dict) or len(parts) < 2:
            raise PartsError(f'{here} must map two or more part names to lists of nodes')
        seen: dict[str, str] = {}
        for part, members in parts.items():
            if not isinstance(part, str) or not _NAME.fullmatch(part):
                raise PartsError(f'{here}: part name {part!r}: lower-case letters, digits and _')
            if not isinstance(members, list) or not members or not all(isinstance(m, str) for m in members):
                raise PartsError(f'{here}.{part} must be a non-empty list of node names')
            for m in members:
                if m not in names:
                    raise PartsError(f'{here}.{part}: no node {m!r} in the system (nodes: {", ".join(names)})')
                if m in seen:
                    raise PartsError(f'{here}: node {m!r} is in two parts ({seen[m]} and {part})')
                seen[m] = part
        missing = [n for n in names if n not in seen]
        if missing:
            raise PartsError(f'{here}: node(s) {missing} in no part (every node is in exactly one)')
        if SUPERVISOR in names and SUPERVISOR not in seen:
            raise PartsError(f'{here}: no part holds the supervisor')
        if len({seen[n] for n in sim_only}) > 1:
            raise PartsError(f'{here}: the sim_only nodes {sorted(sim_only)} are in more than one part '
                               '(the lab side that replaces them runs on one host)')
        out[split] = {part: tuple(members) for part, members in parts.items()}
    return out


def split_of(desc, split: str = '') -> tuple[str, dict[str, tuple[str, ...]]]:
    """(split name, its parts) of a system: ``split`` or the first one; ('', {}) for a system
    that names no parts and no split asked."""
    if not desc.parts:
        if split:
            raise PartsError(f'split {split!r}: system {desc.name} names no parts (its file has no parts: block)')
        return '', {}
    if not split:
        split = next(iter(desc.parts))
    if split not in desc.parts:
        raise PartsError(f'unknown split {split!r} of {desc.name} (splits: {", ".join(desc.parts)})')
    return split, desc.parts[split]


def supervisor_part(parts: dict[str, tuple[str, ...]]) -> str:
    return next((p for p, members in parts.items() if SUPERVISOR in members), '')


def part_of(spec, parts: dict[str, tuple[str, ...]], sim_only: set[str]) -> str:
    """The part a planned process belongs to (see the module docstring)."""
    for part, members in parts.items():
        if spec.name in members:
            return part
    if spec.kind == 'lab' and sim_only:
        return next(p for p, members in parts.items() if sim_only & set(members))
    return supervisor_part(parts)


def remote_nodes(processes, parts, sim_only, part: str) -> list[str]:
    """``NODE:PART`` of every hil node outside ``part`` (the supervisor's ``node_parts``)."""
    return [f'{s.name}:{p}' for s in processes if s.kind == 'hil'
            for p in [part_of(s, parts, sim_only)] if p != part]


def check_scenario(scenario, parts, sim_only, desc_nodes) -> None:
    """A scenario is given to the supervisor's part only: started as one part, it may not set
    values of another part's nodes (they would never get them)."""
    if scenario is None or not parts:
        return
    home = supervisor_part(parts)
    touched = set(scenario.parameters) | set(scenario.remap)
    foreign = sorted(n for n in touched for spec in desc_nodes
                     if spec.name == n and part_of(spec, parts, sim_only) != home)
    if foreign:
        raise PartsError(f'scenario {scenario.name} sets values of {foreign}, outside the part {home} '
                           'that holds the supervisor (a scenario is given to that part only)')
