"""`hil run`: a node process that ends before the run does is a fault, never an 'error' run
(docs/supervisor.md "Death and stalls": death and stalls are faults).

The launcher is the one that knows at once when a process ended: it tells the supervisor on
``/hil/process_exit`` (one status per node the process hosted), and the supervisor makes the
FAULT with the node named, without waiting for a heartbeat timeout. If the supervisor itself
died nobody else can say so: the run is a FAULT with the launcher's reason, after the hardware
has had the time to brake on its own watchdog (its ``fault`` event on ``/hil/events``), so the
bag holds the stop.
"""
from __future__ import annotations

import sys
import time

from diagnostic_msgs.msg import DiagnosticArray
from sensor_msgs.msg import JointState

from hil_nodes import qos, topics
from hil_nodes.runtime.process_exit import ProcessExitReporter, describe_exit

# wall s the supervisor has to turn a reported exit into FAULT; then the launcher says it. A
# peer's death can freeze the processes that publish to it for a second or two at a time (Fast
# DDS shared memory, docs/fault_matrix.md "A frozen process freezes its publishers"): the fault
# matrix saw the supervisor's container frozen twice for 2 s after a kill, and the run ended
# 'error' where it was a FAULT with its cause known
FAULT_WAIT = 3.0
HARDWARE_STOP_WAIT = 6.0  # wall s the hardware has, once the supervisor died, to report its watchdog stop
AFTER_HARDWARE_STOP = 0.5  # wall s of braking frames kept after that report
REST_WAIT = 3.0           # wall s a FAULT's stop has before the shutdown deactivates the drives
REST_SPEED = 1e-4         # m/s or rad/s: every joint slower than this ...
REST_STATES = 3           # ... in this many joint states in a row is at rest


def hosted_nodes(cmd: list[str]) -> list[str]:
    """Node names a process command hosts: ``-r __node:=NAME`` (one process per node) or the
    container's ``--node module:NAME`` arguments."""
    nodes = [a.split(':', 1)[1] for prev, a in zip(cmd, cmd[1:]) if prev == '--node' and ':' in a]
    nodes += [a.split(':=', 1)[1] for a in cmd if a.startswith('__node:=')]
    return nodes


class ExitWatch:
    def __init__(self, node, commands, supervisor: str = 'supervisor'):
        self._reporter = ProcessExitReporter(node)
        self.hosted = {name: hosted_nodes(cmd) for name, cmd, _ in commands}
        self.supervisor = supervisor
        self.first_exit: float | None = None
        self.deaths: list[str] = []         # 'node N is dead: its process P ...', the supervisor's words
        self.dead_nodes: set[str] = set()   # the nodes of the processes that ended
        self.supervisor_death = ''          # the reason, once the supervisor's process ended
        self.hardware_stop: tuple[float, str] | None = None   # (wall, 'who: message') of a watchdog stop
        node.create_subscription(DiagnosticArray, topics.HIL_EVENTS, self._on_events, qos.command(100))

    @property
    def supervisor_alive(self) -> bool:
        return not self.supervisor_death

    def _on_events(self, msg: DiagnosticArray) -> None:
        for st in msg.status:
            if st.name == 'fault' and self.hardware_stop is None and self.supervisor_death:
                self.hardware_stop = (time.monotonic(), f'{st.hardware_id}: {st.message}')

    def poll(self, dead: dict[str, int | None], now: float, log_dir) -> None:
        """Report every process that ended since the last call."""
        for name, code in dead.items():
            nodes = self.hosted.get(name) or [name]
            if not self._reporter.report(name, nodes, code):
                continue
            print(f'hil run: process {name} {describe_exit(code)} (nodes {", ".join(nodes)}; logs in {log_dir})',
                  file=sys.stderr, flush=True)
            if self.first_exit is None:
                self.first_exit = now
            self.deaths += [f'node {n} is dead: its process {name} {describe_exit(code)}' for n in nodes]
            self.dead_nodes.update(nodes)
            if self.supervisor in nodes:
                self.supervisor_death = f'supervisor is dead: its process {name} {describe_exit(code)}'

    def verdict(self, now: float) -> tuple[str, str] | None:
        """(outcome, reason) when the run must end for an exit, None while the supervisor may still
        turn it into FAULT (the caller sees that on /hil/mode)."""
        if self.first_exit is None:
            return None
        if self.supervisor_death:
            if self.hardware_stop is not None:
                if now - self.hardware_stop[0] < AFTER_HARDWARE_STOP:
                    return None
                return 'fault', f'{self.supervisor_death}; {self.hardware_stop[1]}'
            if now - self.first_exit < HARDWARE_STOP_WAIT:
                return None
            return 'fault', f'{self.supervisor_death}; no watchdog stop reported by the hardware'
        if now - self.first_exit > FAULT_WAIT:       # a death is a fault, whoever says it
            return 'fault', (f'{"; ".join(self.deaths)} (the supervisor, alive, did not go to FAULT '
                             f'within {FAULT_WAIT:g} s)')
        return None


def wait_until_at_rest(client, lockstep: bool, timeout: float = REST_WAIT) -> bool:
    """After a FAULT, before the shutdown: spin until the drives are at rest (``REST_STATES``
    joint states in a row with every joint slower than ``REST_SPEED``) or ``timeout`` wall s.
    A mock deactivated in the middle of its stop freezes its world with the robot moving: the
    bag would not hold the stop, and a lab's drives would take the deactivation as the stop."""
    still, heard = [0], [0]

    def on_joint_states(msg: JointState) -> None:
        heard[0] += 1
        fast = any(abs(v) >= REST_SPEED for v in msg.velocity)
        still[0] = 0 if fast else still[0] + 1

    sub = client.node.create_subscription(JointState, topics.JOINT_STATES, on_joint_states,
                                          qos.joint_states(lockstep))
    end = time.monotonic() + timeout
    try:
        while time.monotonic() < end and still[0] < REST_STATES:
            client.spin_once(0.05)
    finally:
        client.node.destroy_subscription(sub)
    if not heard[0]:        # a bring-up that failed before the drives ran: nothing moved
        print(f'hil run: no joint states heard within {timeout:g} s after the FAULT: '
              'shutting down', file=sys.stderr)
    elif still[0] < REST_STATES:
        print(f'hil run: the drives were not at rest {timeout:g} s after the FAULT: shutting down anyway',
              file=sys.stderr)
    return still[0] >= REST_STATES
