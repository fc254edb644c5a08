"""`hil` entry point: one sub-command per module in hil_nodes.cli (each has add_parser/run)."""
from __future__ import annotations

import argparse
import importlib
import os
import signal
import sys

from hil_nodes.runtime import crash_report

# Sub-command modules; each exposes add_parser(subparsers) and run(args) -> int.
COMMANDS = ['run_cmd', 'plan_cmd', 'bench_cmd']
OPTIONAL_COMMANDS = ['workspace_cmd', 'report_cmd', 'hmi_cmd']


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog='hil', description='hil_suite: robotic hardware-in-the-loop on ROS 2.')
    sub = parser.add_subparsers(dest='command', required=True)
    for name in COMMANDS + [n for n in OPTIONAL_COMMANDS if _exists(n)]:
        importlib.import_module(f'hil_nodes.cli.{name}').add_parser(sub)
    return parser


def _exists(name: str) -> bool:
    return os.path.exists(os.path.join(os.path.dirname(__file__), f'{name}.py'))


def _interrupt(signum, frame):
    raise KeyboardInterrupt(f'signal {signum}')


def main(argv: list[str] | None = None) -> int:
    crash_report.enable()   # a crash of the launcher (rclpy, Fast DDS) names its thread and call
    # SIGTERM (timeout, systemd, a CI runner) must take the same clean path as Ctrl-C: stop every
    # process the command started, close the bag, print the summary.
    signal.signal(signal.SIGTERM, _interrupt)
    signal.signal(signal.SIGHUP, _interrupt)
    os.environ.setdefault('ROS_AUTOMATIC_DISCOVERY_RANGE', 'LOCALHOST')
    os.environ.setdefault('MPLBACKEND', 'Agg')
    args = build_parser().parse_args(sys.argv[1:] if argv is None else argv)
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        print('hil: interrupted', file=sys.stderr)
        return 130


if __name__ == '__main__':
    sys.exit(main())
