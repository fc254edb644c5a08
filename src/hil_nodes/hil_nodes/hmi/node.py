"""``hmi``: the operator's web HMI attached to a running graph (docs/hmi.md). A plain rclpy
node in a process of its own, outside every frame's chain:

* it reads through ``PolledReaders`` (hil_nodes.recorder.polled_readers): raw DDS readers that
  no message wakes, drained by two steady timers, the view's at ``view_rate`` (30 Hz) and the
  panel's at ``panel_rate`` (10 Hz). Streams are read best effort (a reader that never asks
  for a resend, whatever the writer offers), latched topics (/hil/mode, /tf_static,
  /robot_description) reliable and transient local to get their history;
* of a 400 Hz stream it deserializes only the newest message a tick (/tf: every message, each
  carries other frames); the scene is redrawn only while a browser is connected. Started with
  the run (``hil run --hmi``, ``hmi:=true``), the plan remaps each of those streams to the view
  throttle's copy at the view rate (hil_nodes.view_throttle, ``topics.VIEW_STREAMS``), so no
  reader of the HMI is left on a 400 Hz stream of the graph; started by hand it reads them as
  they are;
* it never subscribes to /hil/frame (a reader there makes the real-time supervisor publish
  frames at 400 Hz) nor to the marker topics (built only for a reader);
* its buttons call /hil/start, /hil/stop, /hil/reset and /hil/estop (std_srvs/Trigger). A click
  arrives in viser's thread: the request is queued and a guard condition wakes this node's
  executor, which sends it; the supervisor's answer (accepted or its reason for refusing) is
  shown when it comes, "no answer" after ``service_timeout``;
* the force joystick (hmi.joystick: a drag handle at the platform, force/torque in the panel) is
  published on topics.JOYSTICK_WRENCH (geometry_msgs/WrenchStamped) at ``joystick_rate`` while
  pushing; the F/T node limits and applies it. Motion commands (hmi.motion_commands, for the
  system whose node is on the graph) go to the node that checks them, and its answer is shown
  (space-iiwa's end-effector target: hmi.ee_target).
  The HMI's only publications are these two operator inputs, made only on an operator's action.
"""
from __future__ import annotations

import queue
import sys
import time

from diagnostic_msgs.msg import DiagnosticArray
from geometry_msgs.msg import PoseStamped, WrenchStamped
from rcl_interfaces.msg import Parameter as ParameterMsg, ParameterType, ParameterValue
from rcl_interfaces.srv import GetParameters, SetParameters
from rclpy.clock import Clock, ClockType
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from rclpy.serialization import deserialize_message
from sensor_msgs.msg import JointState
from std_msgs.msg import String
from std_srvs.srv import Trigger
from tf2_msgs.msg import TFMessage

from hil_nodes import qos, topics
from hil_nodes.hmi import live
from hil_nodes.hmi import motion_commands
from hil_nodes.hmi.ee_target import SPACE_PLANT_GET, EeTargetSender
from hil_nodes.hmi.app import build_scene, initial_camera, start_server, url
from hil_nodes.framework.param_table import ParameterError
from hil_nodes.framework.plain_params import run_plain
from hil_nodes.hmi.joystick import JoystickModel, JoystickPanel
from hil_nodes.hmi.motion_panel import MotionPanel, command_problem
from hil_nodes.hmi.panel import Panel
from hil_nodes.hmi.panel_model import PanelModel, is_duplicate_planner_event, level_int
from hil_nodes.hmi.params import PARAMS, load_parameters
from hil_nodes.hmi.view_state import ACHIEVED_TOPICS, REFERENCE_TOPICS, WRENCH_TOPICS, ViewState
from hil_nodes.recorder.polled_readers import PolledReaders

__all__ = ['PARAMS', 'HmiNode', 'main']

SERVICES = {'start': topics.HIL_START, 'stop': topics.HIL_STOP, 'reset': topics.HIL_RESET,
            'estop': topics.HIL_ESTOP}


# the service a system's motion command goes through (hil_nodes.hmi.motion_commands), relative:
# in the graph's namespace
COMMAND_SERVICES = {'hexafloat_scripted': (SetParameters, topics.node_service('reference_source', 'set_parameters')),
                    'space_iiwa': (GetParameters, SPACE_PLANT_GET),
                    'hybrid5': (SetParameters, topics.node_service('hybrid_controller', 'set_parameters'))}


def _best_effort(depth: int) -> QoSProfile:
    return QoSProfile(depth=depth, history=HistoryPolicy.KEEP_LAST, reliability=ReliabilityPolicy.BEST_EFFORT,
                      durability=DurabilityPolicy.VOLATILE)


def _reliable_volatile(depth: int) -> QoSProfile:
    return QoSProfile(depth=depth, history=HistoryPolicy.KEEP_LAST, reliability=ReliabilityPolicy.RELIABLE,
                      durability=DurabilityPolicy.VOLATILE)


class HmiNode(Node):
    """See the module docstring."""

    PARAMS = PARAMS

    def __init__(self, node_name: str = 'hmi', **kwargs):
        super().__init__(node_name, **kwargs)
        self.p = load_parameters(self)
        self.server = start_server(self.p.host, self.p.port, 'hil_suite operator station')
        self.url = url(self.server)
        self.view = ViewState()
        self.model = PanelModel(span=self.p.chart_span)
        self.scene = None
        self.description = ''
        self._t0 = time.monotonic()
        self._newest: dict[str, bytes] = {}         # view streams: the newest message of a tick
        self._tf: list[bytes] = []
        self._panel_msgs: list[tuple[str, bytes]] = []
        self.ticks = {'view': 0, 'panel': 0, 'redraws': 0}

        self._view_readers = PolledReaders(self.context, f'{node_name}_view')
        for topic, kind in ((topics.JOINT_STATES, JointState), *((t, WrenchStamped) for t in WRENCH_TOPICS),
                            *((t, PoseStamped) for t in REFERENCE_TOPICS + ACHIEVED_TOPICS)):
            self._view_readers.add(kind, topic, _best_effort(50), lambda raw, _, t=topic: self._keep(t, raw))
        self._view_readers.add(TFMessage, topics.TF, _best_effort(200), lambda raw, _: self._tf.append(raw))
        self._view_readers.add(TFMessage, topics.TF_STATIC, qos.tf_static(), lambda raw, _: self._tf.append(raw))
        self._view_readers.add(String, topics.ROBOT_DESCRIPTION, qos.latched(),
                               lambda raw, _: self._keep(topics.ROBOT_DESCRIPTION, raw))
        self._panel_readers = PolledReaders(self.context, f'{node_name}_panel')
        for topic, kind, profile in ((topics.HIL_MODE, String, qos.latched(20)),
                                     (topics.DIAGNOSTICS, DiagnosticArray, _best_effort(500)),
                                     (topics.HIL_EVENTS, DiagnosticArray, _reliable_volatile(100)),
                                     (topics.PLANNER_EVENTS, DiagnosticArray, _reliable_volatile(100))):
            self._panel_readers.add(kind, topic, profile, lambda raw, _, t=topic: self._panel_msgs.append((t, raw)))

        self._triggers = {name: self.create_client(Trigger, service) for name, service in SERVICES.items()}
        self._requests: queue.SimpleQueue = queue.SimpleQueue()
        self._pending: list = []                      # (request, future, wall time sent)
        self._wake = self.create_guard_condition(self._send_requests)
        self.panel = Panel(self.server, self._queue_request, self.p.control_token)
        self.joystick = JoystickModel(self.p.joystick_gain, self.p.joystick_torque_gain)
        self.joystick_panel = JoystickPanel(self.server, self.joystick, self.panel.token_ok, self.p.joystick_frame)
        self._joy_pub = self.create_publisher(WrenchStamped, topics.JOYSTICK_WRENCH, 10)
        self.motion_panel = MotionPanel(self.server, self._queue_command, self.panel.token_ok)
        self._param_clients = {}
        self._commands: queue.SimpleQueue = queue.SimpleQueue()
        self._wake_commands = self.create_guard_condition(self._send_commands)
        self.ee_target = EeTargetSender(self, self.motion_panel)
        self._system_check = 0.0
        steady = Clock(clock_type=ClockType.STEADY_TIME)
        self.create_timer(1.0 / self.p.view_rate, self._view_tick, clock=steady)
        self.create_timer(1.0 / self.p.panel_rate, self._panel_tick, clock=steady)
        self.create_timer(1.0 / self.p.joystick_rate, self._joystick_tick, clock=steady)
        if self.p.urdf:
            with open(self.p.urdf) as fh:
                self._build_scene(fh.read())

    # --- view -----------------------------------------------------------------------------
    def _keep(self, topic: str, raw: bytes) -> None:
        self._newest[topic] = raw

    def _build_scene(self, urdf_text: str) -> None:
        self.description = urdf_text
        self.scene = build_scene(self.server, urdf_text, self.p.wrench_scale, self.p.sensor_frame)
        initial_camera(self.server, self.scene, lambda: (dict(self.view.positions), self.view.tf.copy()))

    def _view_tick(self) -> None:
        self.ticks['view'] += 1
        self._view_readers.drain()
        newest, self._newest = self._newest, {}
        tf, self._tf = self._tf, []
        for raw in tf:
            live.apply_tf(self.view, deserialize_message(raw, TFMessage))
        raw = newest.pop(topics.ROBOT_DESCRIPTION, None)
        if raw is not None and self.scene is None:
            self._build_scene(deserialize_message(raw, String).data)
        raw = newest.pop(topics.JOINT_STATES, None)
        if raw is not None:
            live.apply_joint_state(self.view, deserialize_message(raw, JointState))
        for topic, raw in newest.items():
            if topic in WRENCH_TOPICS:
                self.view.wrench = live.wrench_of(deserialize_message(raw, WrenchStamped))
            elif topic in REFERENCE_TOPICS:
                self.view.reference = live.pose_of(deserialize_message(raw, PoseStamped))
            elif topic in ACHIEVED_TOPICS:
                self.view.achieved = live.pose_of(deserialize_message(raw, PoseStamped))
        if self.scene is not None and self.server.get_clients():
            self.scene.update(self.view)
            self.ticks['redraws'] += 1
        if self.view.achieved is not None:
            self.joystick_panel.place(self.view.achieved.xyz)

    # --- panel ----------------------------------------------------------------------------
    def _panel_tick(self) -> None:
        self.ticks['panel'] += 1
        self._panel_readers.drain()
        msgs, self._panel_msgs = self._panel_msgs, []
        t = time.monotonic() - self._t0
        m = self.model
        for topic, raw in msgs:
            if topic == topics.HIL_MODE:
                m.on_mode(t, deserialize_message(raw, String).data)
                continue
            for st in deserialize_message(raw, DiagnosticArray).status:
                if topic == topics.DIAGNOSTICS:
                    m.on_status(t, st.name, {kv.key: kv.value for kv in st.values})
                    if self.ee_target.waiting and st.name.startswith('space_plant:') and 'EE set-point' in st.message:
                        self.ee_target.answer(st.message, level_int(st.level))
                elif not (topic == topics.PLANNER_EVENTS and is_duplicate_planner_event(st.name)):
                    who = st.hardware_id or topic.strip('/').split('/')[0]
                    m.on_event(t, who, st.name, st.message, level_int(st.level))
        if self.scene is not None:
            m.workspace_level = self.scene.workspace_level
        self._expire_requests()
        now = time.monotonic()
        if now - self._system_check > 1.0:       # which system runs: the node that takes commands
            self._system_check = now
            # the nodes of this graph only: another rig may share the domain under another namespace
            names = [n for n, ns in self.get_node_names_and_namespaces() if ns == self.get_namespace()]
            system = motion_commands.running_system(names)
            self.motion_panel.set_system(system)
            if system in COMMAND_SERVICES:
                self.service_client(*COMMAND_SERVICES[system])
            self.joystick_panel.set_available('ft_sensor' in names)
        if self.server.get_clients():
            self.panel.update(m, now)

    # --- force joystick -------------------------------------------------------------------------
    def _joystick_tick(self) -> None:
        w = self.joystick.next_message()
        if w is None:
            return
        msg = WrenchStamped()
        msg.header.stamp = self.get_clock().now().to_msg()
        msg.header.frame_id = self.p.joystick_frame
        f, t = msg.wrench.force, msg.wrench.torque
        f.x, f.y, f.z, t.x, t.y, t.z = (float(v) for v in w)
        self._joy_pub.publish(msg)
        self.ticks['joystick'] = self.ticks.get('joystick', 0) + 1

    # --- motion commands ------------------------------------------------------------------------
    def _queue_command(self, kind: str, values) -> None:
        """From viser's thread: hand the command to the executor (woken at once)."""
        self._commands.put((kind, values))
        self._wake_commands.trigger()

    def _send_commands(self) -> None:
        while True:
            try:
                kind, values = self._commands.get_nowait()
            except queue.Empty:
                return
            self.send_command(kind, values)

    def send_command(self, kind: str, values) -> None:
        """Check a motion command as its node does, then send it (executor thread)."""
        problem = command_problem(kind, values)
        if problem:
            self.motion_panel.show_answer(kind, False, problem)
            return
        if kind == 'ee_target':
            self.ee_target.check(values)
            return
        if kind == 'via_points':
            node, value = 'reference_source', ParameterValue(
                type=ParameterType.PARAMETER_DOUBLE_ARRAY, double_array_value=motion_commands.parse_via_text(values))
        else:
            node, value = 'hybrid_controller', ParameterValue(type=ParameterType.PARAMETER_STRING,
                                                              string_value=str(values))
        name = {'via_points': 'via_points', 'gcode': 'gcode_file', 'jog': 'jog'}[kind]
        service = topics.node_service(node, 'set_parameters')
        client = self.service_client(SetParameters, service)
        if not client.service_is_ready():
            self.motion_panel.show_answer(kind, None, f'{self.resolve_service_name(service)} is not available')
            return
        self.motion_panel.answer.content = (f'**{kind}:** sent to {self.resolve_service_name(service)}, '
                                            'waiting for its answer…')
        future = client.call_async(SetParameters.Request(parameters=[ParameterMsg(name=name, value=value)]))
        self.track(kind, future)
        future.add_done_callback(lambda f, k=kind: self._command_answered(k, f))

    def track(self, name: str, future) -> None:
        """A request sent: answered or expired after ``service_timeout`` (``_expire_requests``)."""
        self._pending.append((name, future, time.monotonic()))

    def untrack(self, future) -> None:
        self._pending = [p for p in self._pending if p[1] is not future]

    def service_client(self, srv_type, name: str):
        """One client per service, made when first asked for (the system check makes the running
        system's ahead of a click: a new client needs its discovery before it can call)."""
        client = self._param_clients.get(name)
        if client is None:
            client = self._param_clients[name] = self.create_client(srv_type, name)
        return client

    def _command_answered(self, kind: str, future) -> None:
        self.untrack(future)
        if future.cancelled() or future.result() is None:     # expired: "no answer" already shown
            return
        result = future.result().results[0]
        self.get_logger().info(f'{kind}: {"accepted" if result.successful else "refused"}: {result.reason}')
        self.motion_panel.show_answer(kind, bool(result.successful), result.reason or 'taken from the next frame')

    # --- requests to the supervisor ---------------------------------------------------------
    def _queue_request(self, name: str) -> None:
        """From viser's thread: hand the request to the executor (woken at once)."""
        self._requests.put(name)
        self._wake.trigger()

    def _send_requests(self) -> None:
        while True:
            try:
                name = self._requests.get_nowait()
            except queue.Empty:
                return
            client = self._triggers[name]
            if not client.service_is_ready():
                service = self.resolve_service_name(SERVICES[name])     # in the graph's namespace
                self.panel.show_answer(name, None, f'{service} is not available: no supervisor on this DDS domain')
                continue
            future = client.call_async(Trigger.Request())
            # a line per operator request (not per frame): an emergency stop that did nothing can
            # then be told apart, in the HMI's log, from one that never left the page
            self.get_logger().info(f'{name}: requested on the page, {SERVICES[name]} called')
            self.track(name, future)
            future.add_done_callback(lambda f, n=name: self._answered(n, f))

    def _answered(self, name: str, future) -> None:
        self.untrack(future)
        result = future.result()
        self.get_logger().info(f'{name}: {"accepted" if result.success else "refused"}: {result.message}')
        self.panel.show_answer(name, bool(result.success), result.message)

    def _expire_requests(self) -> None:
        now = time.monotonic()
        self.ee_target.expire(now, self.p.service_timeout)
        for name, future, sent in list(self._pending):
            if not future.done() and now - sent > self.p.service_timeout:
                self._pending.remove((name, future, sent))
                if name in self._triggers:
                    self._triggers[name].remove_pending_request(future)
                    self.panel.show_answer(name, None, f'no answer from {SERVICES[name]} within '
                                           f'{self.p.service_timeout:g} s')
                else:
                    future.cancel()
                    self.motion_panel.show_answer(name, None, f'no answer within {self.p.service_timeout:g} s')

    def destroy_node(self) -> None:
        self.ee_target.shutdown()
        self._view_readers.destroy()
        self._panel_readers.destroy()
        self.server.stop()
        super().destroy_node()


def main(args: list[str] | None = None, parameter_overrides=None) -> int:
    """Run the HMI on the DDS domain of the environment (python -m hil_nodes.hmi.node / hil hmi --live)."""
    # a bad value or a busy port: said in one line, no trace
    return run_plain(lambda: HmiNode(parameter_overrides=parameter_overrides or []), 'hmi', args,
                     refused=(ParameterError, OSError), started=lambda node: print(f'hmi: {node.url}', flush=True))


if __name__ == '__main__':
    sys.exit(main())
