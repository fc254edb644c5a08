"""One process hosting the nodes of a system (the default layout of `hil run`).

    python -m hil_nodes.runtime.container --node hil_sim.mock_hardware.node:mock_hexapod --node ... \
        --ros-args --params-file ...

The nodes and their order come from the bring-up plan (hil_nodes.bringup.plan.process_commands).
Node classes come from each module's ``main.node_class``; every node runs in one
EventsExecutor. Parameter files are keyed by node name, so the same files serve this layout and
the one-process-per-node layout (`--isolated`) alike.
"""
from __future__ import annotations

import argparse
import importlib
import sys

from rclpy.utilities import remove_ros_args

from hil_nodes.runtime import runner


def node_factory(module_name: str, node_name: str):
    module = importlib.import_module(module_name)
    node_class = getattr(getattr(module, 'main', None), 'node_class', None)
    if node_class is None:
        raise SystemExit(f'{module_name} has no main.node_class: not a hil_suite node module')
    return lambda: node_class(node_name=node_name)


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog='python -m hil_nodes.runtime.container', description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--node', action='append', default=[], required=True,
                        help='a node as package.module:node_name, in start order (repeat)')
    return parser.parse_args(remove_ros_args(argv)[1:])


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv if argv is None else argv
    args = parse_args(argv)
    factories = []
    for item in args.node:
        module_name, _, node_name = item.partition(':')
        factories.append(node_factory(module_name, node_name or module_name.rsplit('.', 1)[-1]))
    return runner.run(factories, argv)


if __name__ == '__main__':
    sys.exit(main())
