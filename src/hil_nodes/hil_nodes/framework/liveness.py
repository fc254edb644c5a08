"""What the supervisor knows of a node being alive (a mixin of ``HilLifecycleNode``): its heartbeat,
and its stop in place when one of its callbacks raises.

Heartbeat: a ``std_msgs/Header`` on ``/hil/heartbeat`` every ``heartbeat_period`` of wall time, and
with ``use_sim_time`` a second beat on the node clock, so a node whose sim-time timers stopped is
seen (on the wall clock the two would be the same beat twice: timer calls cost ~60 us).

Stop in place (``fail_in_place``): an exception that escapes one of the node's callbacks
(hil_nodes.runtime.served, intra_process and grid_timer catch it) stops the node, and its
process, with the supervisor and the drives where they share it, goes on, as ros2_control's
controller manager deactivates a controller whose update returns an error instead of ending
(docs/supervisor.md, "A stage that raises"). The node tells the supervisor a FAULT naming the
exception on ``/hil/events`` (its publisher is made with the node: one made at the failure could
miss the supervisor's reader), so the run ends in the controlled stop with the reason; its
callbacks are skipped from then on and its heartbeat stops. The same alone in a process (the
isolated layout): the process stays, idle, until the run ends.
"""
from __future__ import annotations

import sys
import traceback

from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
from rclpy.clock import Clock, ClockType
from std_msgs.msg import Header

from hil_core.supervision.modes import Event
from hil_nodes import qos, topics
from hil_nodes.msgs.convert import status_array
from hil_nodes.runtime.local_beats import LOCAL_BEATS


class Liveness:
    """Mixin: ``_start_liveness()`` in the node's constructor, after its parameters are declared."""

    def _start_liveness(self) -> None:
        self.failure = ''            # what stopped the node in place, '' while it works
        self._heartbeat_pub = self.create_publisher(Header, topics.HIL_HEARTBEAT, 10)
        self._fault_pub = self.create_publisher(DiagnosticArray, topics.HIL_EVENTS, qos.command(100))
        period = self.get_parameter('heartbeat_period').value
        self._steady = Clock(clock_type=ClockType.STEADY_TIME)
        self.create_group_timer(period, self._heartbeat, clock=self._steady)
        if self.get_parameter('use_sim_time').value:
            self.create_group_timer(period, self._heartbeat)

    def _heartbeat(self) -> None:
        if self.failure:             # a node stopped in place is not alive for the supervisor
            return
        msg = Header(frame_id=self.get_fully_qualified_name())
        msg.stamp = self.get_clock().now().to_msg()
        LOCAL_BEATS.publish(self._heartbeat_pub, msg)

    def fail_in_place(self, exc: BaseException, where: str) -> None:
        """Stop this node: ``exc`` escaped its callback ``where`` (module docstring)."""
        if self.failure:
            return
        text = ' '.join(f'{type(exc).__name__}: {exc}'.split())[:300]
        self.failure = f'exception in {where}: {text}'
        self.active = False
        try:
            self.get_logger().error(f'{self.failure}; the node stopped its work, the process goes on\n'
                                    + ''.join(traceback.format_exception(exc)))
            stamp = self.get_clock().now().to_msg()
            self._fault_pub.publish(status_array(stamp, DiagnosticStatus.ERROR, Event.FAULT.value,
                                                 f'{self.failure}: the node stopped its work', self.get_name(), {}))
            self.status(DiagnosticStatus.ERROR, f'stopped: {self.failure}')
        except Exception as report_exc:      # noqa: BLE001 - the telling must not raise again
            print(f'{self.get_name()}: {self.failure}; telling it failed: {report_exc}', file=sys.stderr, flush=True)
