"""Process entry points: spin one or several nodes with the EventsExecutor, exit cleanly.

The EventsExecutor costs about a third of the CPU of the SingleThreadedExecutor here, but
busy-loops if spun without a timeout: always spin_once with a finite timeout. Ctrl-C and
SIGTERM arrive as ExternalShutdownException / KeyboardInterrupt; nodes get ``process_exit``
(to flush files) and are destroyed; no traceback for a normal stop.
"""
from __future__ import annotations

import gc
import sys
from typing import Callable, Iterable

import rclpy
from rclpy.executors import ExternalShutdownException
from rclpy.experimental import EventsExecutor
from rclpy.node import Node

from hil_nodes import base, rt_setup


def spin_nodes(nodes: Iterable[Node], should_stop: Callable[[], bool] = lambda: False,
               timeout_sec: float = 0.1) -> None:
    """Spin ``nodes`` in one EventsExecutor until shutdown or ``should_stop()``."""
    nodes = list(nodes)
    executor = EventsExecutor()
    for node in nodes:
        executor.add_node(node)
    try:
        while rclpy.ok() and not should_stop():
            executor.spin_once(timeout_sec=timeout_sec)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        for node in nodes:
            exit_hook = getattr(node, 'process_exit', None)
            if exit_hook is not None:
                try:
                    exit_hook()
                except Exception as exc:  # a failing flush must not hide the others
                    print(f'{node.get_name()}: process_exit failed: {exc}', file=sys.stderr)
        executor.shutdown(timeout_sec=1.0)
        for node in nodes:
            node.destroy_node()


def run(factories: Iterable[Callable[[], Node]], args: list[str] | None = None) -> int:
    """Init rclpy with ``args`` (``--ros-args`` included), build the nodes, spin, shut down."""
    # DDS discovery range: left to the environment (the hil command, Makefile, tests and CI set
    # LOCALHOST; `hil run --network` and a lab's ros2 launch must be able to reach the nodes)
    # real-time settings asked for by `hil run --rt` / the launch file (before DDS threads exist)
    for line in rt_setup.apply_from_env():
        print(f'rt: {line}', file=sys.stderr, flush=True)
    rclpy.init(args=sys.argv if args is None else args)
    try:
        nodes = [make() for make in factories]
        # Everything built so far (numpy, scipy, numba, pinocchio, the nodes) lives as long as the
        # process: moved out of the garbage collector's generations, a full collection no longer
        # walks it. Without this a gen-2 collection stalled a busy node process for 50-200 ms,
        # long enough for the drives' watchdog to stop a real-time run.
        gc.collect()
        gc.freeze()
        base.FREEZE_AFTER_ACTIVATION = True
        spin_nodes(nodes)
    finally:
        rclpy.try_shutdown()
    return 0


def main_for(node_class: type[Node]) -> Callable[[list[str] | None], int]:
    """Build the ``main`` of a node module: ``main = main_for(MyNode)``."""
    def main(args: list[str] | None = None) -> int:
        return run([node_class], args)
    main.node_class = node_class  # the one-process container builds nodes from it
    main.__doc__ = f'Run {node_class.__name__} standalone (python -m / ros2 run).'
    return main
