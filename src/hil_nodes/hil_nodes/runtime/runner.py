"""Process entry points: spin one or several nodes with the EventsExecutor, exit cleanly.

The EventsExecutor costs about a third of the CPU of the SingleThreadedExecutor here, but
busy-loops if spun without a timeout: always spin_once with a finite timeout. Ctrl-C and
SIGTERM arrive as ExternalShutdownException / KeyboardInterrupt; nodes get ``process_exit``
(to flush files) and are destroyed; no traceback for a normal stop.
"""
from __future__ import annotations

import gc
import os
import sys
import time
from typing import Callable, Iterable

import rclpy
from rclpy.executors import ExternalShutdownException
from rclpy.experimental import EventsExecutor
from rclpy.node import Node

from hil_nodes.framework import base
from hil_nodes.runtime import caller_lookup, crash_report, kernel_loads, kernel_times
from hil_nodes.runtime import participant_ready
from hil_nodes.runtime import rt_setup
from hil_nodes.runtime.frame_loop import LOOP
from hil_nodes.runtime.intra_process import BUS
from hil_nodes.runtime.process_clock import PROCESS_CLOCKS
from hil_nodes.runtime.served import SERVED

FOREIGN_CHECK_PERIOD = 0.5     # wall s between checks for publishers outside the process
EXECUTOR_SLICE = 0.001         # at most this wall time (s) for the executor's events between two drains
# a turn that returned at once having served none of the nodes' callbacks: the process naps this
# long (at most until its next deadline) before the next turn (``spin_nodes``)
IDLE_NAP = 0.0005
TURNS = [0]                    # executor turns of the spin loop (a test counts them)


def spin_nodes(nodes: Iterable[Node], should_stop: Callable[[], bool] = lambda: False,
               timeout_sec: float = 0.1) -> None:
    """Spin ``nodes`` in one EventsExecutor until shutdown or ``should_stop()``; with the
    intra-process bus on, what the callback of each ``spin_once`` published in the process is
    delivered right after it (hil_nodes.runtime.intra_process). The loop also runs the process's
    frame and steady-clock deadlines itself (hil_nodes.runtime.frame_loop), with or without the
    bus: the executor's wait ends at the next one."""
    nodes = list(nodes)
    executor = EventsExecutor()
    for node in nodes:
        executor.add_node(node)
    next_check = time.monotonic() + FOREIGN_CHECK_PERIOD
    LOOP.driven = True        # every node process: its frame deadlines are the spin loop's
    try:
        while rclpy.ok() and not should_stop():
            if BUS.pending():
                # the last drain ran out of its budget (a lockstep chain feeds itself inside the
                # process): the executor's ready events (timers, services, DDS readers) get turns,
                # without waiting, until a turn runs no callback or the slice is over, so
                # heartbeats, the supervisor's checks and the hil command keep their pace. A turn
                # with nothing ready costs 18 us with the fine timer slack; turning for the whole
                # slice took 1 ms of every 6 from the chain, mostly in idle turns (served.py).
                end = time.monotonic() + EXECUTOR_SLICE
                while True:
                    before = SERVED[0]
                    executor.spin_once(timeout_sec=0.0)
                    if SERVED[0] == before or time.monotonic() >= end:
                        break
            else:
                wait = LOOP.wait_s(timeout_sec)
                before, start = SERVED[0], time.monotonic()
                executor.spin_once(timeout_sec=wait)
                if SERVED[0] == before and wait > 0.0 and time.monotonic() - start < 0.5 * wait:
                    # back at once with none of the nodes' callbacks run: rclpy's own entity, or
                    # a coroutine still awaiting (the supervisor's shutdown answer). The
                    # EventsExecutor re-queues a blocked coroutine at the start of every spin
                    # (events_executor.cpp, spin() -> PostOutstandingTasks), so turn after turn
                    # ran it and returned: one core at 100 % for the whole shutdown, and under
                    # SCHED_FIFO (--rt) on one core the timers and DDS threads that would complete
                    # it never ran (the drives' watchdog braked, the shutdown took 12 s). A nap
                    # lets them; a real event waits at most IDLE_NAP for its turn.
                    time.sleep(min(IDLE_NAP, LOOP.wait_s(timeout_sec)))
            TURNS[0] += 1
            LOOP.run_due()
            if BUS.enabled:
                BUS.drain()
            # what the frame made for observers, or prepares for the next one (frame_loop.after_frame)
            if LOOP.run_after() and BUS.enabled:
                BUS.drain()
            # a periodic check whose slack allowed it to wait for this turn: after the frame's
            # deliveries, not between its stages (frame_loop, "Lazy deadlines")
            if LOOP.run_lazy() and BUS.enabled:
                BUS.drain()
            if BUS.enabled:
                if time.monotonic() >= next_check:
                    next_check = time.monotonic() + FOREIGN_CHECK_PERIOD
                    _fall_back_for_outside_publishers(nodes[0])
                    BUS.replay_to_outside_readers()
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        LOOP.driven = False
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


def _fall_back_for_outside_publishers(node: Node) -> None:
    for topic, n in BUS.fall_back_to_dds(node):
        node.get_logger().info(f'{topic}: {n} publisher(s) outside this process as well: delivered over '
                               f'DDS in this process too, so every publisher is heard')


def _param(node: Node, name: str) -> bool:
    return node.has_parameter(name) and bool(node.get_parameter(name).value)


def intra_process_wanted(n_nodes: int) -> bool:
    """The bus serves a process hosting several nodes, unless HIL_INTRA_PROCESS=0 (to compare)."""
    return n_nodes > 1 and os.environ.get('HIL_INTRA_PROCESS', '1') != '0'


def run(factories: Iterable[Callable[[], Node]], args: list[str] | None = None) -> int:
    """Init rclpy with ``args`` (``--ros-args`` included), build the nodes, spin, shut down."""
    # DDS discovery range: left to the environment (the hil command, Makefile, tests and CI set
    # LOCALHOST; `hil run --network` and a lab's ros2 launch must be able to reach the nodes)
    # real-time settings asked for by `hil run --rt` / the launch file (before DDS threads exist)
    crash_report.enable()                  # a native crash names its thread and call
    for line in rt_setup.apply_from_env():
        print(f'rt: {line}', file=sys.stderr, flush=True)
    rt_setup.fine_timer_slack()            # before any thread exists: they all inherit it
    kernel_loads.install_from_env()       # HIL_KERNEL_LOADS: record kernel loads after activation
    kernel_times.install_from_env()       # HIL_KERNEL_TIMES=1: kernel and glue CPU per cycle
    rclpy.init(args=sys.argv if args is None else args)
    participant_ready.announce()           # `hil run` joins with its client after this (the module says why)
    factories = list(factories)
    BUS.enable(intra_process_wanted(len(factories)))
    # the nodes are spun by ``spin_nodes``: the periodic checks their constructors make are
    # deadlines of its loop too (frame_loop), not rcl timers that wake the process on their own
    LOOP.driven = True
    PROCESS_CLOCKS.enable(BUS.enabled)     # one simulated clock for the process's nodes
    try:
        nodes = [make() for make in factories]
        # the recorder's deliveries wait for the graph's own, with their publish time: the last
        # /clock published in the process on simulated time (intra_process)
        BUS.sim_clock = any(_param(n, 'use_sim_time') for n in nodes)
        # Everything built so far (numpy, scipy, numba, pinocchio, the nodes) lives as long as the
        # process: moved out of the garbage collector's generations, a full collection no longer
        # walks it. Without this a gen-2 collection stalled a busy node process for 50-200 ms,
        # long enough for the drives' watchdog to stop a real-time run.
        caller_lookup.warm()        # the first log call's module scan, now rather than in a run
        gc.collect()
        gc.freeze()
        base.FREEZE_AFTER_ACTIVATION = True
        if os.environ.get('HIL_CPROFILE'):
            import cProfile
            prof = cProfile.Profile()
            try:
                prof.runcall(spin_nodes, nodes)
            finally:
                prof.dump_stats(os.environ['HIL_CPROFILE'] + f'.{os.getpid()}')
        else:
            spin_nodes(nodes)
    finally:
        LOOP.driven = False
        rclpy.try_shutdown()
    return 0


def main_for(node_class: type[Node]) -> Callable[[list[str] | None], int]:
    """Build the ``main`` of a node module: ``main = main_for(MyNode)``."""
    def main(args: list[str] | None = None) -> int:
        return run([node_class], args)
    main.node_class = node_class  # the one-process container builds nodes from it
    main.__doc__ = f'Run {node_class.__name__} standalone (python -m / ros2 run).'
    return main
