"""The mock hardware's watchdog (docs/supervisor.md "Hardware-side watchdog"): the ROS side of
``hil_core.drives.command_watchdog`` for a mock drive node.

It listens to the supervisor's heartbeat (``/hil/heartbeat``, ``frame_id`` = the supervisor's
name) and is told of every valid command; when commands stop (real time: ``command_timeout``
of wall time; lockstep: the node judges ``command_timeout`` of sim time and calls ``trip``) or the
supervisor's heartbeat is lost for ``supervisor_timeout`` (wall), it trips once: the node then
brakes from its current setpoint to rest at ``brake_deceleration`` per joint (synchronised,
velocity continuous), ignores further commands until it is activated again, publishes a
``fault`` event on ``/hil/events`` naming the reason, and counts the trip. A safe stop thus
needs nothing upstream: no supervisor, no controller.
"""
from __future__ import annotations

import re
import time

from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
from rclpy.subscription import ContentFilterOptions
from std_msgs.msg import Header

from hil_core.drives.command_watchdog import COMMAND_TIMEOUT, CommandWatchdog, WatchdogConfig
from hil_core.drives.plants.protocol import per_joint
from hil_nodes import qos, topics
from hil_nodes.framework.base import Param, ParameterError
from hil_nodes.msgs.convert import status_array
from hil_nodes.runtime.local_beats import LOCAL_BEATS

PARAMS = (
    Param('watchdog', bool, True, 'brake on the drives\' own when commands stop or the supervisor dies'),
    Param('command_timeout', float, 0.2, 'brake after this long without a valid command, counted from the first '
          'one (real time: wall s; lockstep: sim s since the frame of the last valid command)', range=(1e-3, 60.0)),
    Param('supervisor_timeout', float, 3.0, 'brake after this long without a supervisor heartbeat (wall s; '
          '0 = not watched)', range=(0.0, 600.0)),
    Param('supervisor_name', str, 'supervisor', 'name of the supervisor node whose heartbeat is watched',
          check=lambda v: None if re.fullmatch(r'/?[A-Za-z_][A-Za-z0-9_]*', v) else
          'a node name (letters, digits and _, not starting with a digit): it goes into a DDS content filter'),
    Param('brake_deceleration', 'float[]', [5.0], 'braking deceleration, one value or one per joint (m/s^2 or '
          'rad/s^2; no higher than the planner\'s a_max)', range=(1e-3, 1e3)),
)


class HardwareWatchdog:
    def __init__(self, node, joints: int):
        """The watchdog of ``node`` (its parameters, ``joints`` drives); ParameterError refuses them."""
        p = node.p
        self._node = node
        self.enabled = bool(p.watchdog)
        try:
            self.deceleration = per_joint(p.brake_deceleration, joints, 'brake_deceleration')
            self.core = CommandWatchdog(WatchdogConfig(p.command_timeout, p.supervisor_timeout,
                                                       tuple(self.deceleration)))
        except ValueError as exc:
            raise ParameterError(str(exc)) from None
        # the supervisor's fully qualified name: a relative supervisor_name is in this node's namespace
        self._supervisor = topics.resolve(p.supervisor_name, node.get_namespace())
        # only the supervisor's beats reach the callback: every node beats on this topic, twice
        # in lockstep (wall and sim time), ~300 a second at 3x, each an executor event
        # (filtered in DDS; the name check in the callback stays for an rmw without filters)
        names = [f"'{self._supervisor}'", f"'{self._supervisor[1:]}'"]
        self._sub = node.create_subscription(
            Header, topics.HIL_HEARTBEAT, self._on_heartbeat, 50,
            content_filter_options=ContentFilterOptions('frame_id = %0 OR frame_id = %1', names))
        LOCAL_BEATS.listen(node, self._on_heartbeat)        # the supervisor's beats in this process
        self._events = node.create_lifecycle_publisher(DiagnosticArray, topics.HIL_EVENTS,
                                                       qos.command(depth=50, lockstep=p.lockstep))

    @property
    def braking(self) -> bool:
        return self.core.braking

    def destroy(self) -> None:
        LOCAL_BEATS.stop(self._on_heartbeat)
        self._node.release(self._sub, self._events)

    def rearm(self) -> None:
        self.core.rearm()

    def command_ok(self) -> None:
        self.core.command(time.monotonic())

    def _on_heartbeat(self, msg: Header) -> None:
        if msg.frame_id == self._supervisor or msg.frame_id == self._supervisor[1:]:
            self.core.supervisor_beat(time.monotonic())

    def check(self, commands_watched: bool) -> str | None:
        """Trip reason now (once), or None. ``commands_watched``: judge the command age too
        (real time); lockstep judges a missing command by its frame and calls ``trip``."""
        if not self.enabled:
            return None
        now = time.monotonic()
        reason = self.core.check(now, commands=commands_watched)
        if reason is not None and self.core.cause == COMMAND_TIMEOUT:
            reason = self.core.reason = self._and_silent_supervisor(reason, now, self.core.cfg.command_timeout)
        return reason

    def trip(self, reason: str, waited: float | None = None) -> str | None:
        """Brake for ``reason`` the node found (lockstep: the frame's command did not come within
        ``waited`` wall s). None if disabled or tripped already."""
        if not self.enabled:
            return None
        if waited is not None:
            reason = self._and_silent_supervisor(reason, time.monotonic(), waited)
        return self.core.trip(reason)

    def _and_silent_supervisor(self, reason: str, now: float, waited: float) -> str:
        """``reason`` for missing commands, naming the supervisor too when its heartbeat has been
        silent for more than half the time the commands were waited for (its last beat may come
        a little after the last command): a stopped or frozen supervisor host can stall the chain
        that commands the drives (a frozen shared-memory reader blocks its writers,
        docs/fault_matrix.md), and the stop must then name it, not only its symptom."""
        silence = self.core.supervisor_silence(now, 0.5 * waited)
        if silence is None:
            return reason
        return f'{reason}; node {self._supervisor.lstrip("/")} silent: no heartbeat for {silence:.3f} s of wall time'

    def brake(self, reason: str, controller, now: float, setpoint_period: float, stamp) -> None:
        """The watchdog tripped for ``reason``: the controlled stop of ``controller`` from its
        current command at ``now`` (its time, s), and the ``fault`` event stamped ``stamp``."""
        end = controller.end()
        # A trajectory ending at this frame ends at start + time_from_start, which can round one ulp
        # below the frame's time (t_ns - start_ns) * 1e-9; sampled at the frame it would be over
        # (zero velocity) and the brake a dead stop. Times are whole ns: within half a ns it ends now.
        at = end if end is not None and now - 5e-10 < end < now else now
        controller.brake(at, self.deceleration, setpoint_period)
        node = self._node
        node.get_logger().error(f'watchdog: braking to rest: {reason}')
        self._events.publish(status_array(stamp, DiagnosticStatus.ERROR, 'fault', f'watchdog: braking to rest at '
                                          f'{self.deceleration.max():g} m/s^2: {reason}', node.get_name(),
                                          {'reason': reason}))
