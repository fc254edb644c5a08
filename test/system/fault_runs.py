"""Helpers of the fault matrix (test_fault_matrix.py): start a `hil run` of the
Hexafloat graph, find one node's process on the run's DDS domain, inject a fault at a sim time
(kill -9, SIGSTOP then SIGCONT, bad input on the node's input topic), follow what the graph does
about it (FAULT on /hil/mode, fault events on /hil/events) and collect the run's figures.

The watch runs in the test process on its own rclpy context. It reads /clock only to place the
injection (best effort, depth 1: it never slows the lockstep loop) and keeps the wall and sim
times of what it sees, so detection times come from the same observer as the injection.
"""
from __future__ import annotations

import os
import pathlib
import resource
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field

import rclpy
from diagnostic_msgs.msg import DiagnosticArray
from rclpy.context import Context
from rclpy.executors import SingleThreadedExecutor
from rclpy.qos import QoSProfile, ReliabilityPolicy
from rosgraph_msgs.msg import Clock
from std_msgs.msg import String

from hil_nodes import qos, topics

SYSTEM = 'hexafloat'
SCENARIO = 'fault_matrix'   # short homing/sync, one impulse at 0.55 s: the platform moves at 0.6 s


def _environ(pid: int) -> list[bytes]:
    try:
        with open(f'/proc/{pid}/environ', 'rb') as fh:
            return fh.read().split(b'\0')
    except OSError:
        return []


def _cmdline(pid: int) -> list[str]:
    try:
        with open(f'/proc/{pid}/cmdline', 'rb') as fh:
            return [a.decode(errors='replace') for a in fh.read().split(b'\0') if a]
    except OSError:
        return []


def domain_pids(domain: int) -> list[int]:
    """Live processes started for the run on ``domain`` (ROS_DOMAIN_ID in their environment),
    the test process excluded."""
    tag = f'ROS_DOMAIN_ID={domain}'.encode()
    out = []
    for entry in os.listdir('/proc'):
        if entry.isdigit() and int(entry) != os.getpid() and tag in _environ(int(entry)):
            out.append(int(entry))
    return out


def node_pid(domain: int, node: str) -> int | None:
    """The process hosting ``node`` on ``domain``: one process per node is started as
    ``python -m <module> --ros-args -r __node:=<node> ...`` (hil_nodes.bringup.system.node_command)."""
    for pid in domain_pids(domain):
        if f'__node:={node}' in _cmdline(pid):
            return pid
    return None


@dataclass
class Seen:
    wall: float     # time.monotonic() in the test process
    sim: float      # the last /clock the watch had received (s)
    what: str
    who: str = ''
    message: str = ''


@dataclass
class Watch:
    """The test's view of a run on ``domain`` (see the module docstring)."""
    domain: int
    sim: float = -1.0
    modes: list[Seen] = field(default_factory=list)
    events: list[Seen] = field(default_factory=list)
    exits: list[Seen] = field(default_factory=list)      # /hil/process_exit from hil run
    problems: list[Seen] = field(default_factory=list)   # WARN/ERROR statuses on /diagnostics

    def __post_init__(self):
        self.context = Context()
        rclpy.init(context=self.context, domain_id=self.domain, args=[])
        self.node = rclpy.create_node('fault_matrix_watch', context=self.context)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        clock_qos = QoSProfile(depth=1, reliability=ReliabilityPolicy.BEST_EFFORT)
        self.node.create_subscription(Clock, topics.CLOCK, self._on_clock, clock_qos)
        self.node.create_subscription(String, topics.HIL_MODE, self._on_mode, qos.latched(20))
        self.node.create_subscription(DiagnosticArray, topics.HIL_EVENTS, self._on_events, qos.command(100))
        self.node.create_subscription(DiagnosticArray, topics.HIL_PROCESS_EXIT, self._on_exit, qos.command(50))
        self.node.create_subscription(DiagnosticArray, topics.DIAGNOSTICS, self._on_diagnostics, 100)

    def _on_clock(self, msg: Clock) -> None:
        self.sim = msg.clock.sec + msg.clock.nanosec * 1e-9

    def _on_mode(self, msg: String) -> None:
        if not self.modes or self.modes[-1].what != msg.data:
            self.modes.append(Seen(time.monotonic(), self.sim, msg.data))

    def _on_events(self, msg: DiagnosticArray) -> None:
        for st in msg.status:
            self.events.append(Seen(time.monotonic(), self.sim, st.name, st.hardware_id, st.message))

    def _on_exit(self, msg: DiagnosticArray) -> None:
        for st in msg.status:
            self.exits.append(Seen(time.monotonic(), self.sim, 'process_exit', st.name, st.message))

    def _on_diagnostics(self, msg: DiagnosticArray) -> None:
        for st in msg.status:
            level = st.level[0] if isinstance(st.level, bytes) else int(st.level)
            if level >= 1:
                self.problems.append(Seen(time.monotonic(), self.sim, st.name, st.hardware_id, st.message))

    def publisher(self, msg_type, topic: str, qos_profile):
        """The watch's publisher on ``topic`` (made before the run: matched by the time of use)."""
        pubs = self.__dict__.setdefault('_pubs', {})
        if topic not in pubs:
            pubs[topic] = self.node.create_publisher(msg_type, topic, qos_profile)
        return pubs[topic]

    def publish(self, msg_type, topic: str, qos_profile, messages, wait: float = 5.0) -> None:
        """Publish ``messages`` on ``topic`` once a subscriber has matched (bad input)."""
        pub = self.publisher(msg_type, topic, qos_profile)
        self.spin_until(lambda: pub.get_subscription_count() > 0, wait)
        for m in messages:
            pub.publish(m)
        self.spin(0.1)

    def problem_from(self, who: str, after_wall: float) -> Seen | None:
        """The first WARN/ERROR status of node ``who`` (status name '<node>: <task>') seen after
        ``after_wall``."""
        return next((p for p in self.problems if p.wall >= after_wall
                     and (p.what.split(':')[0].strip('/') == who or p.who == who)), None)

    @property
    def mode(self) -> str:
        return self.modes[-1].what if self.modes else ''

    def spin(self, seconds: float) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            self.executor.spin_once(timeout_sec=min(0.02, max(end - time.monotonic(), 0.0)))

    def spin_until(self, done, timeout: float, proc: subprocess.Popen | None = None) -> bool:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if done():
                return True
            if proc is not None and proc.poll() is not None:
                return done()
            self.executor.spin_once(timeout_sec=0.02)
        return done()

    def close(self) -> None:
        self.executor.shutdown(timeout_sec=1.0)
        self.node.destroy_node()
        rclpy.try_shutdown(context=self.context)


@dataclass
class HilRun:
    """One `hil run` in a subprocess (its stdout is the `key: value` summary)."""
    domain: int
    record_dir: pathlib.Path
    args: tuple[str, ...] = ()
    scenario: str = SCENARIO
    proc: subprocess.Popen | None = None
    code: int | None = None
    summary: dict[str, str] = field(default_factory=dict)
    stderr: str = ''
    cpu_s: float = 0.0          # CPU of the hil command and every node process (children)

    def start(self) -> None:
        self.record_dir.mkdir(parents=True, exist_ok=True)
        cmd = [sys.executable, '-m', 'hil_nodes.cli.main', 'run', SYSTEM, '--scenario', self.scenario,
               '--record', str(self.record_dir), '--domain-id', str(self.domain), '--quiet', *self.args]
        self._out = (self.record_dir / 'hil_stdout.txt').open('w+')
        self._err = (self.record_dir / 'hil_stderr.txt').open('w+')
        self._cpu0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        self.proc = subprocess.Popen(cmd, stdout=self._out, stderr=self._err, text=True)

    def wait(self, timeout: float) -> int | None:
        try:
            self.code = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.send_signal(signal.SIGTERM)   # the clean stop path: summary still printed
            self.proc.wait(60)
            self.code = None
        ru = resource.getrusage(resource.RUSAGE_CHILDREN)
        self.cpu_s = (ru.ru_utime + ru.ru_stime) - (self._cpu0.ru_utime + self._cpu0.ru_stime)
        for fh in (self._out, self._err):
            fh.flush()
            fh.seek(0)
        out = self._out.read()
        self.stderr = self._err.read()
        self._out.close()
        self._err.close()
        for line in out.splitlines():
            key, sep, value = line.partition(': ')
            if sep:
                self.summary[key.strip()] = value.strip()
        return self.code

    def why_ended(self) -> str:
        """What an ended run says of its end (after ``wait``): the summary's lines that give the
        reason, the node logs' folder, and the end of its stderr."""
        keys = ('outcome', 'modes', 'fault_reason', 'faults', 'late_commands', 'safety_events', 'realtime_held',
                'killed_processes', 'logs')
        said = ', '.join(f'{k}: {self.summary[k]}' for k in keys if k in self.summary)
        return f'{said or "no summary"}; stderr:\n{self.stderr[-3000:]}'
