"""`hil plan`: print the bring-up plan that `hil run` and `ros2 launch hil_nodes hil.launch.py`
both execute, as YAML on stdout, without starting anything (what `ros2 launch --print` shows of
a launch description).

    hil plan <system> [--mode mock|hardware] [--part NAME] [--split NAME] [NAME:=VALUE ...]

NAME:=VALUE are the launch file's arguments in its syntax (``launch_plan.LAUNCH_ARGUMENTS``:
lockstep, record, rt, scenario, duration, time_scale, seed, netft_address, robot_address,
layout, namespace, ...). For every process, in start order: its node name and namespace (the
graph's with ``namespace:=/rig_a``; '/' = the root), package and
executable, kind (lab: ros2_control_node, robot_state_publisher, the spawners; hil: the
suite's nodes), its parameter files and the final values they and the plan give the node
(robot_state_publisher's ``robot_description``, the URDF text ros2_control_node reads, in full;
ros2_control_node's params file, which the launch file writes, as ``lab_parameters``),
remappings, arguments, environment and what it starts after. With ``layout:=one_process`` (the
default) the hil nodes run in one process, listed under ``container``. With ``hmi:=true`` the
operator's web HMI is a process of its own (kind hmi, first), its host, port and URDF among its
parameters (a control token shown as ``<hidden>``) and its address under ``hmi``. A system whose
file names parts (docs/lab.md, "Two or three hosts") shows its ``split`` and every ``parts``
entry (part: its processes); ``--part NAME`` (``part:=NAME``) lists that part's processes only.

Exit 0 with the plan; 2 with the reason when the plan cannot be made (an unknown system, a
refused argument, a URDF without what the mode needs).
"""
from __future__ import annotations

import argparse
import sys
from typing import Any

import yaml

from hil_nodes import topics
from hil_nodes.bringup.launch_plan import LAUNCH_ARGUMENTS, plan_kwargs, wants_layout
from hil_nodes.bringup.plan import MODES, bringup_plan, effective_parameters, final_parameters
from hil_nodes.bringup.system import BringupError


def add_parser(sub) -> None:
    p = sub.add_parser('plan', help='print the bring-up plan of a system (processes, parameters, URDF) as YAML')
    p.add_argument('system', help='system name (config/systems/<name>.yaml) or a YAML path')
    p.add_argument('arguments', nargs=argparse.REMAINDER, metavar='[--mode mock|hardware] [--part P] NAME:=VALUE',
                   help='the mode (default mock; also mode:=...), --part/--split (part:=, split:=) and launch arguments: '
                        + ', '.join(name for name, *_ in LAUNCH_ARGUMENTS))
    p.set_defaults(func=run)


def launch_values(system: str, arguments: list[str]) -> dict[str, str]:
    """The launch argument strings of ``hil plan``'s command line (BringupError on a bad token)."""
    values = {'system': system, 'mode': 'mock'}
    tokens = list(arguments)
    while tokens:
        token = tokens.pop(0)
        flag = next((f for f in ('--part', '--split') if token == f or token.startswith(f + '=')), '')
        if flag:     # `hil run`'s spelling of part:= and split:=
            value = token.partition('=')[2] if '=' in token else (tokens.pop(0) if tokens else '')
            if not value:
                raise BringupError(f'{flag} needs a name')
            values[flag[2:]] = value
            continue
        if token == '--mode' or token.startswith('--mode='):
            mode = token.partition('=')[2] if '=' in token else (tokens.pop(0) if tokens else '')
            if mode not in MODES:
                raise BringupError(f'--mode {mode!r}: one of {list(MODES)}')
            values['mode'] = mode
            continue
        name, sep, value = token.partition(':=')
        if not sep or not name:
            raise BringupError(f"argument {token!r} is not NAME:=VALUE (the launch file's syntax)")
        values[name] = value
    return values


def plan_document(values: dict[str, str]) -> dict[str, Any]:
    """The plan of the launch argument ``values`` as plain data (BringupError if it cannot be made)."""
    layout = wants_layout(values)
    plan = bringup_plan(**plan_kwargs({k: v for k, v in values.items() if k not in ('rviz', 'layout')}))
    processes = []
    for spec in plan.processes:
        entry = {'name': spec.name, 'namespace': topics.namespace(spec.namespace) or '/', 'package': spec.package,
                 'executable': spec.executable, 'kind': spec.kind, 'lifecycle': bool(spec.managed),
                 'parameter_files': [str(p) for p in spec.params], 'parameters': final_parameters(spec)}
        if spec.kind == 'lab' and spec.executable == 'ros2_control_node':
            # the params file the launch file writes (lab_parameters below): its own entry first
            own = effective_parameters([plan.lab_parameters], f'{topics.namespace(spec.namespace)}/{spec.name}')
            entry['parameter_files'].append('<lab_parameters, written by the launch file>')
            entry['parameters'] = {**own, **entry['parameters']}
        if 'control_token' in entry['parameters']:     # a secret: given, not printed
            entry['parameters']['control_token'] = '<hidden>'
        for key, value in (('remappings', dict(spec.remappings)), ('arguments', list(spec.arguments)),
                           ('environment', dict(spec.env)), ('start_after', spec.start_after)):
            if value:
                entry[key] = value
        processes.append(entry)
    doc = {'system': plan.system, 'mode': plan.mode, 'namespace': plan.namespace or '/', 'lockstep': plan.lockstep,
           'layout': layout,
           'clock_owner': plan.clock_owner or None, 'bag': str(plan.bag_path) if plan.bag_path else None}
    if plan.parts:   # every part of the split, whichever this plan starts (docs/lab.md)
        doc.update(split=plan.split, part=plan.part or None, parts={p: list(n) for p, n in plan.parts.items()})
    if layout == 'one_process':
        doc['container'] = [s.name for s in plan.hil_nodes]
    if plan.hmi is not None:
        host, port = plan.hmi.parameters['host'], plan.hmi.parameters['port']
        host = f'[{host}]' if ':' in host else host
        doc['hmi'] = f'http://{host}:{port}' if port else f'http://{host}:<any free port, printed at start>'
    doc['processes'] = processes
    if plan.lab_parameters:
        doc['lab_parameters'] = plan.lab_parameters
    return doc


class _Dumper(yaml.SafeDumper):
    """Multi-line strings (a URDF) as literal blocks, readable and copyable."""


def _str(dumper, value: str):
    style = '|' if '\n' in value else None
    return dumper.represent_scalar('tag:yaml.org,2002:str', value, style=style)


_Dumper.add_representer(str, _str)


def run(args) -> int:
    try:
        doc = plan_document(launch_values(args.system, args.arguments))
    except BringupError as exc:
        print(f'hil plan: {exc}', file=sys.stderr)
        return 2
    yaml.dump(doc, sys.stdout, Dumper=_Dumper, sort_keys=False, default_flow_style=False, width=1000)
    return 0
