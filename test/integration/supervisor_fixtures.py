"""Helpers shared by the supervisor integration tests: the dummy managed node (one
definition, test/nodes/dummy_managed.py, used in-process and as a subprocess), a supervisor
factory, service and event shortcuts."""
import importlib.util
import pathlib

from builtin_interfaces.msg import Time
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
from rclpy.parameter import Parameter
from std_srvs.srv import Trigger

from hil_nodes.supervisor.node import SupervisorNode

DUMMY_PATH = pathlib.Path(__file__).resolve().parents[1] / 'nodes' / 'dummy_managed.py'
_spec = importlib.util.spec_from_file_location('dummy_managed', DUMMY_PATH)
_dummy = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_dummy)
DummyManaged = _dummy.DummyManaged

# Tests that are not about liveness or frames: generous heartbeat timeouts (a loaded CI machine
# must not make a live in-process node look dead) and slow real-time frames (a 400 Hz Python
# timer would flood the shared test executor on a loaded machine).
CALM = {'heartbeat_timeout_wall': 10.0, 'heartbeat_timeout_sim': 10.0, 'frame_period': 0.05}


def supervisor(ros, **params) -> SupervisorNode:
    overrides = [Parameter(k, value=v) for k, v in params.items()]
    return ros.add_node(SupervisorNode(context=ros.context, parameter_overrides=overrides))


def dummies(ros, names, journal=None, **params):
    overrides = [Parameter(k, value=v) for k, v in params.items()]
    record = (lambda node, transition: journal.append((node, transition))) if journal is not None else None
    return [ros.add_node(DummyManaged(n, journal=record, context=ros.context, parameter_overrides=overrides))
            for n in names]


def trigger(ros, service):
    res = ros.call(Trigger, service, timeout=30.0)
    return res.success, res.message


def publish_event(ros, pub, name, who='test_motion', message=''):
    msg = DiagnosticArray()
    msg.status = [DiagnosticStatus(name=name, hardware_id=who, message=message)]
    pub.publish(msg)


def wait_mode(ros, sup, mode, timeout=10.0):
    ros.spin_until(lambda: sup.machine.mode.value == mode, timeout, f'mode {mode} (now {sup.machine.mode.value})')


def stamp(ns: int) -> Time:
    return Time(sec=ns // 1_000_000_000, nanosec=ns % 1_000_000_000)
