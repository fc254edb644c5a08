"""The operator's end-effector target for space-iiwa (docs/hmi.md, "Motion commands"): checked for
reachability as space_plant's own loop would reach it, then sent on ``space_plant/ee_setpoint``,
and space_plant's status about it shown as its answer.

The check needs space_plant's parameters (asked over its ``get_parameters`` service) and the
measured state (the view's joint positions and frames); it runs the space plant's loop (up to
0.14 s, 0.3 s under load), so in a worker thread, its verdict handed back to the HMI's executor
through a guard condition as a click is. The HMI node owns one ``EeTargetSender`` and calls it
from its executor only.
"""
from __future__ import annotations

import queue
import time
from concurrent.futures import ThreadPoolExecutor

from geometry_msgs.msg import PoseStamped
from rcl_interfaces.msg import ParameterType as PType
from rcl_interfaces.srv import GetParameters
from rclpy.parameter import parameter_value_to_python

from hil_nodes import qos, topics
from hil_nodes.hmi import motion_commands, space_target

SPACE_PLANT_GET = topics.node_service('space_plant', 'get_parameters')


class EeTargetSender:
    """Check, send and follow one EE target at a time for the HMI node ``node`` (its service
    clients, its view, its pending requests) and its ``motion_panel``."""

    def __init__(self, node, motion_panel):
        self.node, self.panel = node, motion_panel
        self._pub = node.create_publisher(PoseStamped, topics.SPACE_EE_SETPOINT, qos.command())
        self._checker = ThreadPoolExecutor(max_workers=1, thread_name_prefix='hmi-reach')
        self._checked: queue.SimpleQueue = queue.SimpleQueue()
        self._wake = node.create_guard_condition(self._send_checked)
        self.waiting = None                       # (wall time sent, the check's verdict)

    def check(self, values) -> None:
        """Ask space_plant for its parameters, then check the target from the measured state."""
        node = self.node
        client = node.service_client(GetParameters, SPACE_PLANT_GET)
        if not client.service_is_ready():
            self.panel.show_answer('ee_target', None, f'{node.resolve_service_name(SPACE_PLANT_GET)} is not '
                                   'available: no space_plant on this DDS domain')
            return
        self.panel.answer.content = "**ee_target:** checking reachability with space_plant's parameters…"
        future = client.call_async(GetParameters.Request(names=list(space_target.NAMES)))
        node.track('ee_target', future)
        future.add_done_callback(lambda f: self._parameters(values, f))

    def _parameters(self, values, future) -> None:
        self.node.untrack(future)
        if future.cancelled() or future.result() is None:     # expired: "no answer" already shown
            return
        got = {name: parameter_value_to_python(v) for name, v in zip(space_target.NAMES, future.result().values)
               if v.type != PType.PARAMETER_NOT_SET}
        p = space_target.node_values(got)
        view = self.node.view
        state = space_target.state_of(p, dict(view.positions), view.tf.copy())
        if isinstance(state, str):
            self.panel.show_answer('ee_target', False, f'cannot check reachability: {state}')
            return
        self._checker.submit(self._reach, p, state, values)

    def _reach(self, p, state, values) -> None:
        """(worker thread) the check; its verdict goes back to the executor."""
        try:
            verdict = space_target.check(p, *state, *values)
        except (ValueError, RuntimeError) as exc:        # a model the node's values do not build
            verdict = exc
        self._checked.put((p, values, verdict))
        self._wake.trigger()

    def _send_checked(self) -> None:
        while True:
            try:
                p, (position, euler), verdict = self._checked.get_nowait()
            except queue.Empty:
                return
            if isinstance(verdict, Exception):
                self.panel.show_answer('ee_target', False, f'cannot check reachability: {verdict}')
                continue
            if not verdict.reachable:
                self.panel.show_answer('ee_target', False, f'unreachable from the measured state: {verdict.reason}')
                continue
            msg = PoseStamped()
            msg.header.stamp = self.node.get_clock().now().to_msg()
            msg.header.frame_id = p.world_frame
            msg.pose.position.x, msg.pose.position.y, msg.pose.position.z = (float(v) for v in position)
            q = msg.pose.orientation
            q.x, q.y, q.z, q.w = (float(v) for v in motion_commands.euler_zyx_deg_to_quat_xyzw(euler))
            self._pub.publish(msg)
            self.waiting = (time.monotonic(), verdict.reason)
            self.panel.answer.content = (f'**ee_target:** reachable ({verdict.reason}); sent on '
                                         f"{topics.SPACE_EE_SETPOINT}, waiting for space_plant's answer…")

    def answer(self, message: str, level: int) -> None:
        """space_plant's status about the set-point it received (its answer to the target)."""
        _, reason = self.waiting
        self.waiting = None
        self.panel.show_answer('ee_target', level == 0, f'space_plant: {message} (checked: {reason})')

    def expire(self, now: float, timeout: float) -> None:
        """No answer from space_plant ``timeout`` wall s after the target was sent: said so."""
        if self.waiting and now - self.waiting[0] > timeout:
            self.waiting = None
            self.panel.show_answer('ee_target', None, f'sent on {topics.SPACE_EE_SETPOINT}, but space_plant '
                                   f'said nothing within {timeout:g} s (is it active?)')

    def shutdown(self) -> None:
        self._checker.shutdown(wait=True, cancel_futures=True)
