"""The node tests' one rig: a node under test built in the test's rclpy context (the `ros`
fixture, rosutil.RosHarness) and spun by its executor, brought up through its own lifecycle
services, what the test hears collected per topic, and its statuses picked out of /diagnostics.
``MockDrives`` is the rig around the mock hardware with the test playing its controller.
Every wait is on a condition (``spin_until``), never a fixed sleep."""
from __future__ import annotations

import pathlib

import yaml
from diagnostic_msgs.msg import DiagnosticArray
from rclpy.parameter import Parameter
from rclpy.qos import QoSProfile, ReliabilityPolicy
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from hil_core.data_paths import config_file
from hil_core.drives.plants.controllers import JTC_TYPE
from hil_core.supervision.status_names import status_name, status_node
from hil_nodes import qos, topics
from hil_nodes.msgs.convert import ns_to_stamp, sec_to_duration, stamp_to_ns
from hil_sim.mock_hardware.system_mock import system_mock

ERROR = b'\x02'
SLIDERS = [f'slider_{i}' for i in range(1, 7)]
SUBSTEP = 0.000625                   # the hexapod's servo points: four per 2.5 ms frame


def overrides(params: dict) -> list[Parameter]:
    return [Parameter(k, value=v) for k, v in params.items()]


def build(ros, node_class, *args, **params):
    """``node_class`` in the test's context with ``params`` as its parameter overrides."""
    return node_class(*args, context=ros.context, parameter_overrides=overrides(params))


def start(ros, node_class, *args, **params):
    """``build`` and spin it in the test's executor (unconfigured: bringing it up is the test's)."""
    return ros.add_node(build(ros, node_class, *args, **params))


def statuses(diags, node: str | None = None, name: str | None = None, level: bytes | None = None,
             text: str = '') -> list:
    """The statuses in the DiagnosticArrays ``diags`` (oldest first) of ``node`` (the head of their
    name "<node>: <task>"), or of exactly ``name``, at ``level``, whose message holds ``text``."""
    return [st for d in diags for st in d.status
            if (node is None or status_node(st.name) == node) and (name is None or st.name == name)
            and (level is None or st.level == level) and text in st.message]


def values(status) -> dict:
    return {kv.key: kv.value for kv in status.values}


def run_status(node: str, message: str, **values) -> DiagnosticArray:
    """A ``<node>: run`` status as the node publishes it, with ``values`` as its key/values."""
    from diagnostic_msgs.msg import DiagnosticStatus, KeyValue
    return DiagnosticArray(status=[DiagnosticStatus(name=status_name(node, 'run'), message=message, values=[
        KeyValue(key=k, value=str(v)) for k, v in values.items()])])


def latest_values(diags, name: str, key: str | None = None) -> dict:
    """The key/values of the newest status called ``name`` (among those that have ``key``), {}
    while there is none."""
    return next((v for v in map(values, reversed(statuses(diags, name=name))) if key is None or key in v), {})


def check_up_and_down(ros, name: str) -> None:
    """configure + activate, then deactivate + cleanup back to unconfigured, each end state checked."""
    ros.bring_up(name)
    assert ros.get_state(name) == 'active'
    assert ros.change_state(name, 'deactivate')
    assert ros.change_state(name, 'cleanup')
    assert ros.get_state(name) == 'unconfigured'


class NodeRig:
    """A node under test (built with ``build``) and the topics ``up`` waits on: the node's
    subscriptions on ``inputs`` matched by the test's publishers, its ``outputs`` discovered."""

    def __init__(self, ros, node, inputs=(), outputs=()):
        self.ros = ros
        self.node = ros.add_node(node)
        self.name = node.get_name()
        self.inputs, self.outputs = tuple(inputs), tuple(outputs)

    def up(self):
        """configure + activate through the node's services, then wait until the topics match."""
        self.ros.bring_up(self.name)
        for topic in self.inputs:
            self.ros.wait_for_subscribers(topic)
        for topic in self.outputs:
            self.ros.wait_for_publishers(topic)
        return self


def trajectory(stamp_ns, positions, velocities=None, names=SLIDERS, times=None) -> JointTrajectory:
    """A hexapod_controller command: one point per position row, ``times`` from the stamp
    (default one servo substep apart)."""
    msg = JointTrajectory(joint_names=list(names))
    msg.header.stamp = ns_to_stamp(stamp_ns)
    times = times if times is not None else [SUBSTEP * (i + 1) for i in range(len(positions))]
    for i, pos in enumerate(positions):
        pt = JointTrajectoryPoint(positions=[float(x) for x in pos], time_from_start=sec_to_duration(times[i]))
        if velocities is not None:
            pt.velocities = [float(x) for x in velocities[i]]
        msg.points.append(pt)
    return msg


class MockDrives(NodeRig):
    """The mock hardware under test, the test its controller: /joint_states, /clock, statuses and
    events heard, commands published on the topic of the node's ``controller`` (a trajectory for
    a joint_trajectory_controller, a Float64MultiArray for any other: the controller's type in
    the node's controllers file, as the node reads it; a controller the node will refuse gets a
    forward command topic). In lockstep each command is answered by the next frame."""

    def __init__(self, ros, node):
        controller = node.get_parameter('controller').value
        path = node.get_parameter('controllers_file').value or config_file('controllers.yaml')
        manager = (yaml.safe_load(pathlib.Path(path).read_text()) or {}).get('controller_manager') or {}
        ctype = ((manager.get('ros__parameters') or {}).get(controller) or {}).get('type')
        takes_trajectory = ctype == JTC_TYPE
        self.topic = topics.controller_command_topic(controller, takes_trajectory)
        super().__init__(ros, node, inputs=[self.topic])
        lockstep = node.get_parameter('lockstep').value
        # /clock first: the executor takes ready subscriptions in creation order, so a frame's
        # /clock is in by the time its joint state is
        self.clock = ros.collect(Clock, topics.CLOCK)
        # deep enough for every frame of a test; real time streams are best effort
        self.js = ros.collect(JointState, topics.JOINT_STATES, qos.joint_states(True, depth=5000) if lockstep
                              else QoSProfile(depth=5000, reliability=ReliabilityPolicy.BEST_EFFORT))
        self.diag = ros.collect(DiagnosticArray, topics.DIAGNOSTICS, 200)
        self.events = ros.collect(DiagnosticArray, topics.HIL_EVENTS, qos.command(50))
        self.pub = ros.node.create_publisher(JointTrajectory if takes_trajectory else Float64MultiArray,
                                             self.topic, qos.command(50, lockstep=True))

    def up(self):
        super().up()
        self.ros.spin_until(lambda: self.js, 10, 'first joint state')
        return self

    def stamp(self) -> int:
        return stamp_to_ns(self.js[-1].header.stamp)

    def send(self, command, frames=1) -> JointState:
        """Publish a command (a message, or the values of a forward command) and wait for the
        frame that answers it (lockstep; t_0 is re-published until the first command)."""
        if not isinstance(command, (JointTrajectory, Float64MultiArray)):
            command = Float64MultiArray(data=[float(v) for v in command])
        before = self.stamp()
        self.pub.publish(command)
        self.ros.spin_until(lambda: self.stamp() >= before + frames * self.node.frame_ns, 10, 'next frame')
        return self.js[-1]

    def messages(self, level=ERROR) -> list[str]:
        return [st.message for st in statuses(self.diag, node=self.name, level=level)]

    def values(self) -> list[dict]:
        """The key/values of the node's drive statuses (those that count frames), oldest first."""
        return [v for v in map(values, statuses(self.diag, node=self.name)) if 'frames' in v]

    def fault(self):
        return next(iter(statuses(self.events, name='fault')), None)


def system_drives(ros, system: str, **params) -> MockDrives:
    """The mock drives of config/systems/<system>.yaml as ``hil run`` builds them, with ``params``
    on top, in the test's process and up."""
    return MockDrives(ros, system_mock(system, params, context=ros.context)).up()
