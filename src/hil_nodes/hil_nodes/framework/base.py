"""A small base for hil_suite lifecycle nodes.

What every node gets from ``HilLifecycleNode``:

* parameters declared from a ``PARAMS`` table of :class:`Param` (descriptor with description,
  range and choices written out, read-only flags), validated in ``on_configure``: a bad or
  missing value fails the transition with an error that names the parameter;
* ``self.p``: the validated values as attributes;
* online changes: refused while active unless the parameter is ``dynamic`` (the node then
  applies it itself, bumplessly); accepted while inactive and applied through
  ``apply_parameters`` (this parameter half: hil_nodes.framework.node_params);
* a DiagnosticArray status publisher (``self.status(level, message, **values)``), alive in
  every lifecycle state so a refused configuration is visible; statuses are named
  ``"<node>: <task>"`` as diagnostic_updater names them (``STATUS_TASK``, or ``task=`` per
  call) and carry ``self.hardware_id()`` (what the status is about; ``'none'`` for software),
  so consumers key them by the node name before ``': '`` (hil_core.supervision.status_names);
* a bond-style heartbeat on ``/hil/heartbeat`` (std_msgs/Header, ``frame_id`` = node name),
  sent on a wall timer *and* on the node clock, so the supervisor can tell a dead node both
  when simulated time runs faster than real time and when it stands still, and the stop in
  place of a node whose callback raised (hil_nodes.framework.liveness);
* cycle health: ``self.cycle_monitor(name, period)`` (in ``configure_node``) gives a
  ``CycleMonitor`` (hil_nodes.framework.cycle_status) that measures each cycle of the hot path
  (``with mon(stamp_ns): ...``; ``mon.skipped(n)`` for dropped ones), ``self.count_published(topic)``
  counts outputs; the figures go out as one ``<node>: cycle`` status every ``status_period``;
* problems on a per-message path reported through one throttle: ``self.report_problem(kind,
  level, message, ...)`` publishes the status (and logs) at most once per interval for ``kind``
  (hil_nodes.framework.throttle; the caller counts every occurrence);
* parameter types checked in every source (hil_nodes.framework.param_sources): a wrong type in any
  params file refuses configure with one line, an unknown parameter name is a warning;
* hooks ``configure_node``, ``activate_node``, ``deactivate_node``, ``cleanup_node``,
  ``error_node``, ``process_exit`` that subclasses override instead of the raw callbacks.

Teardown, one way in every node: what ``configure_node`` creates ``cleanup_node`` releases, what
``activate_node`` creates ``deactivate_node`` releases, each through ``self.release(...)``
(publishers, subscriptions, timers, services and helpers with a ``destroy()`` alike; None is
skipped). ``on_shutdown`` runs ``deactivate_node`` and ``cleanup_node`` as needed. ``error_node``
leaves the hardware safe: a node whose deactivation stops motion (the drives, the time base, the
controllers) runs its ``deactivate_node``; a node that holds a thread or a file closes it and
releases what configure created (``on_error`` leads to the unconfigured state without a cleanup).
A node that runs a thread of its own also stops it in ``destroy_node``, since a node can be
destroyed without a shutdown transition (tests, containers).
"""
from __future__ import annotations

import gc
import time
from typing import Any, Sequence

from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
from rclpy.lifecycle import LifecycleNode, LifecyclePublisher, LifecycleState, TransitionCallbackReturn
from rclpy.publisher import Publisher
from rclpy.service import Service
from rclpy.subscription import Subscription
from rclpy.timer import Timer

from hil_core.supervision.status_names import CYCLE_TASK, NO_HARDWARE, status_name
from hil_nodes import qos, topics
from hil_nodes.framework import throttle
from hil_nodes.framework.cycle_status import CycleMonitor, CycleReport
from hil_nodes.framework.liveness import Liveness
from hil_nodes.framework.node_params import TableParameters
from hil_nodes.msgs.status_bytes import status_array_bytes
from hil_nodes.runtime import caller_lookup, kernel_loads
from hil_nodes.runtime.intra_publisher import IntraPublisher
from hil_nodes.runtime.intra_subscription import IntraSubscription
from hil_nodes.runtime.intra_process_node import IntraProcessNode
from hil_nodes.runtime.process_clock import PROCESS_CLOCKS
from hil_nodes.framework.param_sources import unknown_parameters
from hil_nodes.framework.param_table import REQUIRED, Param, ParameterError  # noqa: F401 (nodes import them from here)

OK = DiagnosticStatus.OK
WARN = DiagnosticStatus.WARN
ERROR = DiagnosticStatus.ERROR
STALE = DiagnosticStatus.STALE

FREEZE_AFTER_ACTIVATION = False   # set by hil_nodes.runtime.runner in node processes (see on_activate)


class HilLifecycleNode(TableParameters, Liveness, IntraProcessNode, LifecycleNode):
    """Base class of every hil_suite lifecycle node (see the module docstring)."""

    PARAMS: Sequence[Param] = ()
    # the task of this node's own statuses: they are named "<node>: <STATUS_TASK>"
    STATUS_TASK = 'status'
    COMMON_PARAMS: Sequence[Param] = (
        Param('lockstep', bool, False,
              'running in a lockstep simulation: reliable streams, outputs gated per frame'),
        Param('heartbeat_period', float, 0.1, 'period of the liveness heartbeat (s, wall and node clock)',
              range=(0.01, 5.0)),
        # one name for one meaning in every node: how often the node's periodic statuses go
        # out; a node with a summary status of its own publishes it at this period too
        Param('status_period', float, 0.5, 'wall s between periodic statuses on /diagnostics (the '
              '"<node>: cycle" health status and the node\'s own summary, if it has one)',
              range=(0.01, 60.0)),
        Param('cycle_budget', float, 1.0, 'a cycle overruns when it takes more than this fraction of its '
              'period (CPU time in lockstep, execution time in real time)', range=(0.01, 10.0)),
        Param('inject_cycle_delay', float, 0.0, 'test only: CPU busy-wait added to every monitored cycle (s), '
              'to emulate a slow node', range=(0.0, 1.0), dynamic=True),
        Param('inject_exception_after', int, 0, 'test only: the main monitored cycle that raises an exception '
              '(counted from 1; 0 = never), to emulate a stage that fails in its frame', range=(0, 10**9)),
        # every node of a run gets the run's seed (hil run --seed, the launch argument); nodes
        # with random sources use it, and no node warns about it as unknown
        Param('seed', int, 0, 'seed of the run (random sources of the node, if any)'),
    )
    _BASE_DYNAMIC = frozenset({'inject_cycle_delay'})      # (node_params: applied by the base)
    # the node's default name (a node is started under another with node_name= or __node:=)
    NODE_NAME = ''

    def __init_subclass__(cls, *, name: str | None = None, task: str | None = None,
                          params: Sequence[Param] | None = None, **kwargs):
        """A node declares what it is in its class statement, in one place:
        ``class PlannerNode(HilLifecycleNode, name='planner', task='workspace', params=PARAMS)``
        (its default name, the task of its own statuses, its Param table)."""
        super().__init_subclass__(**kwargs)
        if name is not None:
            cls.NODE_NAME = name
        if task is not None:
            cls.STATUS_TASK = task
        if params is not None:
            cls.PARAMS = params

    def __init__(self, node_name: str | None = None, **kwargs):
        node_name = node_name or self.NODE_NAME
        if not node_name:
            raise TypeError(f'{type(self).__name__} has no default name: pass node_name')
        super().__init__(node_name, **kwargs)
        self.active = False
        self.configured = False
        self._declare_table((*self.COMMON_PARAMS, *self.PARAMS), kwargs.get('cli_args'))   # (node_params)
        self._due_last: dict[str, float] = {}
        self._diag_pub = self.create_publisher(DiagnosticArray, topics.DIAGNOSTICS, 10)
        self._start_liveness()       # heartbeat, stop in place (framework.liveness)
        self._cycles = CycleReport()
        self._cycle_status_name = status_name(self.get_name(), CYCLE_TASK)
        # (a timer of its own: grouped, nine statuses built and published in one callback took
        # longer than a frame at twice the pace; runtime.timer_group groups light checks only)
        self.create_timer(self._declared_or_default('status_period'), self._publish_cycle_status,
                          clock=self._steady)

    # --- parameters (framework.node_params) ---------------------------------------------------
    def _apply_base_dynamic(self, changed: set[str]) -> None:
        if 'inject_cycle_delay' in changed:
            self._cycles.set_inject_delay(self.p.inject_cycle_delay)

    # --- lifecycle --------------------------------------------------------------------------
    def on_configure(self, state: LifecycleState) -> TransitionCallbackReturn:
        for name in unknown_parameters(self):
            self.get_logger().warning(f"node {self.get_name()}: unknown parameter '{name}' ignored "
                                      '(not declared by this node)')
        try:
            self.p = self.load_parameters()
            self.configure_node()
        except ParameterError as exc:
            self.get_logger().error(f'configuration refused: {exc}')
            self.status(ERROR, f'configuration refused: {exc}')
            return TransitionCallbackReturn.FAILURE
        except (ValueError, OSError) as exc:
            self.get_logger().error(f'configuration failed: {exc}')
            self.status(ERROR, f'configuration failed: {exc}')
            return TransitionCallbackReturn.FAILURE
        self.configured = True
        self.status(OK, 'configured')
        return super().on_configure(state)

    def on_activate(self, state: LifecycleState) -> TransitionCallbackReturn:
        result = super().on_activate(state)
        if result != TransitionCallbackReturn.SUCCESS:
            return result
        self.activate_node()
        self.active = True
        self.status(OK, 'active')
        # what configure and activate built (kernels, models, buffers) lives until cleanup: out of
        # the collector's generations, so a full collection never walks it in the middle of a run
        # (a full collection of such a process took ~230 ms here: longer than any watchdog allows).
        # Only in a node process (hil_nodes.runtime.runner): a test process creating and destroying
        # nodes would keep their cyclic garbage (DDS entities included) for good.
        if FREEZE_AFTER_ACTIVATION:
            caller_lookup.warm()    # the modules configure imported: a log call in the run stays 0.2 ms
            gc.freeze()
        kernel_loads.arm()
        return TransitionCallbackReturn.SUCCESS

    def on_deactivate(self, state: LifecycleState) -> TransitionCallbackReturn:
        self.active = False
        self.deactivate_node()
        self.status(OK, 'inactive')
        return super().on_deactivate(state)

    def on_cleanup(self, state: LifecycleState) -> TransitionCallbackReturn:
        self.cleanup_node()
        self._cycles.clear()
        self.configured = False
        return super().on_cleanup(state)

    def on_shutdown(self, state: LifecycleState) -> TransitionCallbackReturn:
        if self.active:
            self.active = False
            self.deactivate_node()
        if self.configured:
            self.cleanup_node()
        self._cycles.clear()
        self.configured = False
        return super().on_shutdown(state)

    def on_error(self, state: LifecycleState) -> TransitionCallbackReturn:
        self.active = False
        self.error_node()
        self.status(ERROR, 'error processing: node left in a safe state')
        return TransitionCallbackReturn.SUCCESS

    # hooks for subclasses --------------------------------------------------------------------
    def configure_node(self) -> None:
        """Create publishers/subscriptions/core objects; raise ParameterError/ValueError to refuse."""

    def activate_node(self) -> None:
        """Start producing output."""

    def deactivate_node(self) -> None:
        """Stop motion smoothly (hold) and stop producing output."""

    def cleanup_node(self) -> None:
        """Release what configure_node created."""

    def error_node(self) -> None:
        """Leave hardware in a safe state."""

    def process_exit(self) -> None:
        """Last chance to flush files when the process ends (ROS may be shut down already)."""

    # --- cycle health ---------------------------------------------------------------------------
    def cycle_monitor(self, name: str, period: float, deadline: float | None = None) -> CycleMonitor:
        """A cycle-health accumulator for one periodic cycle of this node (call in
        ``configure_node``; ``period`` in s). The first one is the node's main cycle."""
        p = self.p
        monitor = CycleMonitor(period, budget_fraction=p.cycle_budget, lockstep=p.lockstep,
                               wall_stamps=not self.get_parameter('use_sim_time').value, deadline=deadline,
                               inject_delay=p.inject_cycle_delay)
        if not self._cycles.monitors:            # the node's main cycle
            monitor.raise_after = p.inject_exception_after
        return self._cycles.add(name, monitor)

    def count_published(self, topic: str, n: int = 1) -> None:
        """Count ``n`` messages published on ``topic`` (reported as ``published.<topic>``)."""
        published = self._cycles.published
        published[topic] = published.get(topic, 0) + n

    def _publish_cycle_status(self) -> None:
        if not self._cycles.monitors and not self._cycles.published:
            return
        level, message, values = self._cycles.report()
        values.update(self.cycle_figures())
        self._send_status(self._cycle_status_name, level, message, values)

    def cycle_figures(self) -> dict:
        """A node's own figures for its ``<node>: cycle`` status (none by default)."""
        return {}

    # --- helpers ------------------------------------------------------------------------------
    def now_ns(self) -> int:
        """``get_clock().now().nanoseconds``: the simulated time while it is active, else the system
        clock (what rcl's ROS_TIME clock reads then) read directly. rclpy's ``now()`` builds a Time
        object: 2.9 us against 0.8 here, and a real-time graph asks ~3000 times a second."""
        clock = self.get_clock()
        if clock is PROCESS_CLOCKS.sim:          # the process's simulated clock (runtime.process_clock)
            return PROCESS_CLOCKS.sim_ns
        return clock.now().nanoseconds if clock.ros_time_is_active else time.time_ns()

    def report_problem(self, kind: str, level: int, message: str, *, interval: float = throttle.INTERVAL,
                       log: bool = False, figures=None, **values: Any) -> bool:
        """The status ``message`` with ``values`` (then ``figures()``, when given: built only when
        it goes out), and a warning in the log with ``log``, at most once per ``interval`` wall s
        for ``kind`` (hil_nodes.framework.throttle). True when it went out."""
        if not throttle.due(self._due_last, kind, interval):
            return False
        if log:
            self.get_logger().warning(message)
        if figures is not None:
            values.update(figures())
        self.status(level, message, **values)
        return True

    def release(self, *entities) -> None:
        """Destroy what a hook created (the module docstring's teardown): publishers (lifecycle
        ones included), subscriptions, timers, services, and helpers that own entities of their
        own (``destroy()``); None is skipped."""
        for entity in entities:
            if entity is None:
                continue
            if isinstance(entity, (IntraPublisher, Publisher)):
                lifecycle = entity.lifecycle if isinstance(entity, IntraPublisher) else (
                    isinstance(entity, LifecyclePublisher))
                (self.destroy_lifecycle_publisher if lifecycle else self.destroy_publisher)(entity)
            elif isinstance(entity, (IntraSubscription, Subscription)):
                self.destroy_subscription(entity)
            elif isinstance(entity, Timer) or hasattr(entity, 'leave_grid'):    # (a grid_timer entry)
                self.destroy_timer(entity)
            elif isinstance(entity, Service):
                self.destroy_service(entity)
            else:
                entity.destroy()

    def stream_qos(self):
        """QoS of high-rate streams: reliable in lockstep, sensor-data otherwise."""
        return qos.stream(reliable=bool(getattr(self.p, 'lockstep', False)))

    def driver_output_qos(self):
        """QoS of a driver output's publisher (F/T wrench, TCP pose): ``qos.driver_output``."""
        return qos.driver_output(bool(getattr(self.p, 'lockstep', False)))

    def status(self, level: int, message: str, task: str | None = None, **values: Any) -> None:
        """Publish a status ``"<node>: <task>"`` on /diagnostics (``task`` defaults to
        ``STATUS_TASK``; key/values as strings)."""
        self._send_status(status_name(self.get_name(), task or self.STATUS_TASK), level, message, values)

    def hardware_id(self) -> str:
        """The status's hardware_id: what hardware the node's statuses are about (a node that
        talks to hardware or simulates it overrides this); ``'none'`` for software, as
        diagnostic_updater has it."""
        return NO_HARDWARE

    def _send_status(self, name: str, level: int, message: str, values: dict) -> None:
        # its CDR bytes, written directly: the message and rclpy's serialization of it cost twice
        # as much, between two frames (hil_nodes.msgs.status_bytes)
        sec, nanosec = divmod(self.get_clock().now().nanoseconds, 1_000_000_000)
        self._diag_pub.publish(status_array_bytes(sec, nanosec, level, name, message, self.hardware_id(), values))
