"""The ROS side of `hil run`: watch modes, sim time and diagnostics of a running system."""
from __future__ import annotations

import time
from typing import Callable

import rclpy
from diagnostic_msgs.msg import DiagnosticArray
from rclpy.context import Context
from rclpy.experimental import EventsExecutor
from rclpy.task import Future
from std_msgs.msg import String
from std_srvs.srv import Trigger

from hil_core.supervision.status_names import status_node
from hil_nodes import qos, topics


PROGRESS_KEYS = frozenset(('frames', 'run_time'))   # the mock's frames, the supervisor's run time


class RunClient:
    """A plain node (own context) that follows /hil/mode and /diagnostics, in the graph's
    namespace (``namespace``: '' = the root): the run's names resolve as its nodes' do."""

    def __init__(self, domain_id: int, namespace: str = ''):
        self.context = Context()
        rclpy.init(context=self.context, domain_id=domain_id, args=[])
        self.node = rclpy.create_node('hil_cli', namespace=namespace or None, context=self.context)
        self.executor = EventsExecutor(context=self.context)
        self.executor.add_node(self.node)
        self.modes: list[tuple[float, str]] = []      # (sim time, mode)
        self.sim_time = 0.0
        self.last_progress_wall = time.monotonic()
        # node name (of the status name "<node>: <task>") -> last key/values of all its statuses
        self.diag: dict[str, dict[str, str]] = {}
        self.diag_messages: dict[str, str] = {}
        self.diag_counts: dict[str, int] = {}
        # nodes whose latest lifecycle status was their deactivation ("inactive", not followed by
        # "active": hil_nodes.framework.base): the statuses they sent before it, their final
        # counters, were heard too (one writer, in order)
        self.deactivated: set[str] = set()
        # (node, key) -> statuses that carried the key: a fresh progress value (hil_nodes.cli.run_meter)
        self.key_counts: dict[tuple[str, str], int] = {}
        self.node.create_subscription(String, topics.HIL_MODE, self._on_mode, qos.latched(20))
        # Progress comes from the supervisor's status (a few Hz: run_time = sim time since the
        # first frame) and the mock hardware's (sim_time); following /clock would cost a callback
        # per frame (21 CPU-s for a 10 s lockstep run).
        self.node.create_subscription(DiagnosticArray, topics.DIAGNOSTICS, self._on_diag, 100)

    @property
    def mode(self) -> str:
        return self.modes[-1][1] if self.modes else ''

    def _on_mode(self, msg: String) -> None:
        if not self.modes or self.modes[-1][1] != msg.data:
            self.modes.append((self.sim_time, msg.data))

    def _on_diag(self, msg: DiagnosticArray) -> None:
        for st in msg.status:
            name = status_node(st.name)
            values = self.diag.setdefault(name, {})
            fresh = {kv.key: kv.value for kv in st.values}
            values.update(fresh)
            for key in PROGRESS_KEYS & fresh.keys():
                self.key_counts[name, key] = self.key_counts.get((name, key), 0) + 1
            if name == 'supervisor' and 'run_time' in values:
                self._progress(float(values['run_time']))
            self.diag_messages[name] = st.message
            if st.message == 'inactive':
                self.deactivated.add(name)
            elif st.message == 'active':
                self.deactivated.discard(name)
            self.diag_counts[name] = self.diag_counts.get(name, 0) + 1

    def _progress(self, t: float) -> None:
        if t > self.sim_time:
            self.sim_time = t
            self.last_progress_wall = time.monotonic()

    def spin_once(self, timeout: float = 0.05) -> None:
        """Serve every callback that comes within ``timeout`` (the EventsExecutor waits in C++:
        a few Hz of statuses cost next to nothing, where a polling loop cost 0.1 CPU-s per s)."""
        self.executor.spin_until_future_complete(Future(), timeout_sec=timeout)

    def call_trigger(self, service: str, timeout: float = 10.0) -> tuple[bool, str]:
        client = self.node.create_client(Trigger, service)
        try:
            end = time.monotonic() + timeout
            while not client.service_is_ready():
                if time.monotonic() > end:
                    return False, f'service {service} not available'
                self.spin_once(0.05)
            future = client.call_async(Trigger.Request())
            while not future.done():
                if time.monotonic() > end:
                    return False, f'no answer from {service} within {timeout} s'
                self.spin_once(0.05)
            res = future.result()
            return bool(res.success), res.message
        finally:
            self.node.destroy_client(client)

    def spin_until(self, done: Callable[[], bool], timeout: float) -> bool:
        """Spin until ``done()`` or ``timeout`` wall s passed; whether it came."""
        end = time.monotonic() + timeout
        while not done():
            if time.monotonic() >= end:
                return False
            self.spin_once(0.05)
        return True

    def wait_fresh_diagnostics(self, nodes: list[str], timeout: float = 3.0) -> None:
        """Spin until each node has sent one more status (its counters then cover the whole run)."""
        before = {n: self.diag_counts.get(n, 0) for n in nodes}
        self.spin_until(lambda: all(self.diag_counts.get(n, 0) > c for n, c in before.items()), timeout)

    def wait_deactivated(self, nodes: list[str], timeout: float = 3.0) -> None:
        """Spin until each node's deactivation status came in (its counters are then final)."""
        self.spin_until(lambda: self.deactivated.issuperset(nodes), timeout)

    def progress(self, node: str, key: str) -> tuple[int, str] | None:
        """(statuses of ``node`` that carried ``key`` so far, its latest value), None before one."""
        n = self.key_counts.get((node, key), 0)
        return (n, self.value(node, key)) if n else None

    def value(self, node: str, key: str, default: str = '') -> str:
        return self.diag.get(node, {}).get(key, default)

    def close(self) -> None:
        self.executor.shutdown(timeout_sec=1.0)
        self.node.destroy_node()
        rclpy.try_shutdown(context=self.context)
