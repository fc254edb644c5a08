"""One process hosting the nodes of a system (the default layout of `hil run`).

    python -m hil_nodes.container --system hexafloat [--nodes a,b] [--extra-node pkg.module:name] \
        --ros-args --params-file ...

Node classes come from each module's ``main.node_class``; every node runs in one
EventsExecutor. Parameter files are keyed by node name, so the same files serve this layout and
the one-process-per-node layout (`--isolated`) alike.
"""
from __future__ import annotations

import argparse
import importlib
import sys

from rclpy.utilities import remove_ros_args

from hil_nodes import runner
from hil_nodes.system import apply_scenario, load_scenario, load_system


def node_factory(module_name: str, node_name: str):
    module = importlib.import_module(module_name)
    node_class = getattr(getattr(module, 'main', None), 'node_class', None)
    if node_class is None:
        raise SystemExit(f'{module_name} has no main.node_class: not a hil_suite node module')
    return lambda: node_class(node_name=node_name)


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog='python -m hil_nodes.container', description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--system', required=True, help='system name or YAML path')
    parser.add_argument('--scenario', default='', help='scenario of the system (adds its nodes)')
    parser.add_argument('--nodes', default='', help='comma-separated subset of node names (default: all)')
    parser.add_argument('--no-mock', action='store_true', help='leave out sim_only nodes (real hardware)')
    parser.add_argument('--extra-node', action='append', default=[],
                        help='additional node as package.module:node_name (e.g. the recorder)')
    return parser.parse_args(remove_ros_args(argv)[1:])


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv if argv is None else argv
    args = parse_args(argv)
    system = load_system(args.system)
    if args.scenario:
        system = apply_scenario(system, load_scenario(system, args.scenario))
    specs = system.select(use_mock=not args.no_mock)
    if args.nodes:
        wanted = [n.strip() for n in args.nodes.split(',') if n.strip()]
        unknown = set(wanted) - {s.name for s in specs}
        if unknown:
            raise SystemExit(f'unknown node(s) {sorted(unknown)} in system {system.name}')
        specs = [s for s in specs if s.name in wanted]
    factories = [node_factory(s.module, s.name) for s in specs]
    for extra in args.extra_node:
        module_name, _, node_name = extra.partition(':')
        factories.append(node_factory(module_name, node_name or module_name.rsplit('.', 1)[-1]))
    return runner.run(factories, argv)


if __name__ == '__main__':
    sys.exit(main())
