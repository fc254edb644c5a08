"""Tell the supervisor that a process ended (``/hil/process_exit``), so the nodes it hosted are
dead at once instead of one heartbeat timeout later (docs/supervisor.md "Death and stalls").

The launcher (``hil run``) knows when a child process exits; the supervisor knows which
nodes matter. One DiagnosticStatus per node: ``name`` = node name, ``hardware_id`` = process
name, ``message`` = how it ended ('exited with code 1', 'was killed by SIGKILL').

    reporter = ProcessExitReporter(node)                 # a node of the launcher's own
    reporter.report('timebase', ['timebase'], -9)        # ProcessGroup.dead() gives name -> code
"""
from __future__ import annotations

import signal

from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus

from hil_nodes import qos, topics
from hil_nodes.msgs.convert import diagnostic_status


def describe_exit(returncode: int | None) -> str:
    """'was killed by SIGKILL' / 'exited with code 1' / 'exited' (Popen's return codes)."""
    if returncode is None:
        return 'exited'
    if returncode < 0:
        try:
            return f'was killed by {signal.Signals(-returncode).name}'
        except ValueError:
            return f'was killed by signal {-returncode}'
    return f'exited with code {returncode}'


def process_exit_message(process: str, nodes, returncode: int | None) -> DiagnosticArray:
    how = describe_exit(returncode)
    return DiagnosticArray(status=[diagnostic_status(DiagnosticStatus.ERROR, str(n), how, process, {}) for n in nodes])


class ProcessExitReporter:
    """Publisher of ``/hil/process_exit`` on a node the caller spins (reliable: it is rare and
    must arrive)."""

    def __init__(self, node):
        self._pub = node.create_publisher(DiagnosticArray, topics.HIL_PROCESS_EXIT, qos.command(50))
        self.reported: set[str] = set()

    def report(self, process: str, nodes, returncode: int | None) -> bool:
        """Publish once per process; False if this process was reported already."""
        if process in self.reported:
            return False
        self.reported.add(process)
        self._pub.publish(process_exit_message(process, nodes, returncode))
        return True
