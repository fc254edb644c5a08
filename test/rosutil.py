"""Test-side ROS helpers: spin until a condition (never a fixed sleep), lifecycle calls,
node subprocesses with guaranteed teardown, Fast DDS shared-memory cleanup."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from typing import Any, Callable

import rclpy
from lifecycle_msgs.msg import State, Transition
from lifecycle_msgs.srv import ChangeState, GetState
from rclpy.context import Context
from rclpy.executors import SingleThreadedExecutor
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy

from hil_nodes.cli.processes import clean_dead_shm

# Test-side QoS that match hil_suite nodes in either clock mode (hil_nodes.qos: lockstep streams
# and commands are reliable + transient-local, real-time streams best effort): a reliable
# *volatile* subscriber accepts transient-local and volatile publishers; a reliable
# *transient-local* publisher serves transient-local (lockstep) and volatile subscribers.
SUB_RELIABLE = QoSProfile(depth=5000, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.VOLATILE)
PUB_RELIABLE = QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE,
                          durability=DurabilityPolicy.TRANSIENT_LOCAL)

TRANSITIONS = {
    'configure': Transition.TRANSITION_CONFIGURE,
    'activate': Transition.TRANSITION_ACTIVATE,
    'deactivate': Transition.TRANSITION_DEACTIVATE,
    'cleanup': Transition.TRANSITION_CLEANUP,
    'shutdown': Transition.TRANSITION_UNCONFIGURED_SHUTDOWN,
}
STATE_LABELS = {State.PRIMARY_STATE_UNCONFIGURED: 'unconfigured', State.PRIMARY_STATE_INACTIVE: 'inactive',
                State.PRIMARY_STATE_ACTIVE: 'active', State.PRIMARY_STATE_FINALIZED: 'finalized'}


class NodeProcess:
    """A node module run as `python -m module --ros-args ...` on the test's domain."""

    def __init__(self, module: str, domain_id: int, ros_args: list[str] = (), args: list[str] = (),
                 env: dict[str, str] | None = None):
        full_env = dict(os.environ, ROS_DOMAIN_ID=str(domain_id), ROS_AUTOMATIC_DISCOVERY_RANGE='LOCALHOST',
                        PYTHONUNBUFFERED='1')
        full_env.update(env or {})
        # A module name runs as `python -m module`; a path to a .py file (test nodes) by path.
        cmd = [sys.executable, *([module] if module.endswith('.py') else ['-m', module]), *args]
        if ros_args:
            cmd += ['--ros-args', *ros_args]
        self.cmd = cmd
        self.proc = subprocess.Popen(cmd, env=full_env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                     text=True, start_new_session=True)
        self._output = None

    def stop(self, timeout: float = 10.0) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.kill()
        return self.proc.returncode

    def kill(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(10)
        clean_dead_shm()

    def output(self) -> str:
        if self._output is None and self.proc.poll() is not None:
            self._output = self.proc.stdout.read() if self.proc.stdout else ''
        return self._output or ''


class RosHarness:
    """One rclpy context on ``domain_id`` with a test node and helpers."""

    def __init__(self, domain_id: int):
        self.domain_id = domain_id
        os.environ['ROS_DOMAIN_ID'] = str(domain_id)
        self.context = Context()
        rclpy.init(context=self.context, domain_id=domain_id)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.node = rclpy.create_node(f'test_harness_{os.getpid()}', context=self.context)
        self.executor.add_node(self.node)
        self._extra_nodes = []
        self._procs: list[NodeProcess] = []

    # --- nodes in this process --------------------------------------------------------------
    def add_node(self, node):
        """Spin a node (created with context=harness.context) in the test's executor."""
        self.executor.add_node(node)
        self._extra_nodes.append(node)
        return node

    def spawn(self, module: str, ros_args: list[str] = (), args: list[str] = (), env=None) -> NodeProcess:
        proc = NodeProcess(module, self.domain_id, ros_args, args, env)
        self._procs.append(proc)
        return proc

    # --- spinning ---------------------------------------------------------------------------
    def spin_for(self, seconds: float) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            self.executor.spin_once(timeout_sec=min(0.05, max(0.0, end - time.monotonic())))

    def spin_until(self, predicate: Callable[[], Any], timeout: float = 10.0, what: str = 'condition') -> Any:
        end = time.monotonic() + timeout
        while True:
            value = predicate()
            if value:
                return value
            if time.monotonic() > end:
                raise TimeoutError(f'timed out after {timeout} s waiting for {what}')
            self.executor.spin_once(timeout_sec=0.02)

    def call(self, srv_type, name: str, request=None, timeout: float = 30.0):
        client = self.node.create_client(srv_type, name)
        try:
            self.spin_until(lambda: client.service_is_ready(), timeout, f'service {name}')
            future = client.call_async(request if request is not None else srv_type.Request())
            self.spin_until(future.done, timeout, f'response of {name}')
            return future.result()
        finally:
            self.node.destroy_client(client)

    # --- lifecycle ----------------------------------------------------------------------------
    def change_state(self, node_name: str, transition: str, timeout: float = 30.0) -> bool:
        req = ChangeState.Request()
        req.transition.id = TRANSITIONS[transition]
        return bool(self.call(ChangeState, f'/{node_name}/change_state', req, timeout).success)

    def get_state(self, node_name: str, timeout: float = 30.0) -> str:
        # asked again if no answer comes: a service reply written before the server matched the
        # client's reply reader is lost (Fast DDS discovery on a loaded machine); asking is harmless
        for attempt in range(3):
            try:
                res = self.call(GetState, f'/{node_name}/get_state', GetState.Request(), timeout / 3)
                return res.current_state.label
            except TimeoutError:
                if attempt == 2:
                    raise
        raise AssertionError('unreachable')

    def bring_up(self, node_name: str, timeout: float = 30.0) -> None:
        assert self.change_state(node_name, 'configure', timeout), f'{node_name}: configure failed'
        assert self.change_state(node_name, 'activate', timeout), f'{node_name}: activate failed'

    # --- topics ---------------------------------------------------------------------------------
    def collect(self, msg_type, topic: str, qos=10) -> list:
        """Subscribe and return the list that incoming messages are appended to."""
        received: list = []
        self.node.create_subscription(msg_type, topic, received.append, qos)
        return received

    def wait_for_subscribers(self, topic: str, count: int = 1, timeout: float = 10.0) -> None:
        self.spin_until(lambda: self.node.count_subscribers(topic) >= count, timeout, f'subscriber on {topic}')

    def wait_for_publishers(self, topic: str, count: int = 1, timeout: float = 10.0) -> None:
        self.spin_until(lambda: self.node.count_publishers(topic) >= count, timeout, f'publisher on {topic}')

    def close(self) -> None:
        for proc in self._procs:
            proc.stop()
        for node in self._extra_nodes:
            try:
                node.destroy_node()
            except Exception:
                pass
        self.executor.shutdown(timeout_sec=1.0)
        self.node.destroy_node()
        rclpy.try_shutdown(context=self.context)
        clean_dead_shm()
