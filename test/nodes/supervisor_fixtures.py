"""Helpers shared by the supervisor tests: the dummy managed node (one definition,
dummy_managed.py next to this file, used in-process and as a subprocess), a supervisor
factory, service and event shortcuts."""
import pathlib

from builtin_interfaces.msg import Time
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
from std_srvs.srv import Trigger

from dummy_managed import DummyManaged
from hil_nodes.supervisor.node import SupervisorNode
from rig import overrides, start

DUMMY_PATH = pathlib.Path(__file__).resolve().with_name('dummy_managed.py')

# Tests that are not about liveness or frames: generous heartbeat timeouts (a loaded CI machine
# must not make a live in-process node look dead) and slow real-time frames (a 400 Hz Python
# timer would flood the shared test executor on a loaded machine).
CALM = {'heartbeat_timeout_wall': 10.0, 'heartbeat_timeout_sim': 10.0, 'frame_period': 0.05}


def supervisor(ros, **params) -> SupervisorNode:
    return start(ros, SupervisorNode, **params)


def dummies(ros, names, journal=None, **params):
    record = (lambda node, transition: journal.append((node, transition))) if journal is not None else None
    return [ros.add_node(DummyManaged(n, journal=record, context=ros.context, parameter_overrides=overrides(params)))
            for n in names]


def trigger(ros, service):
    res = ros.call(Trigger, service, timeout=30.0)
    return res.success, res.message


def check_requests(ros, expected):
    """Each (service, accepted, text) of ``expected`` in turn: the request is accepted or refused as
    expected, and its answer says ``text``."""
    for service, accepted, text in expected:
        ok, message = trigger(ros, service)
        assert ok == accepted and text in message, (service, message)


def drive_events(ros, sup, pub, steps):
    """Each (event names, mode) of ``steps`` in turn: the events published, then the mode reached."""
    for names, mode in steps:
        for name in names:
            publish_event(ros, pub, name)
        wait_mode(ros, sup, mode)


def publish_event(ros, pub, name, who='test_motion', message=''):
    msg = DiagnosticArray()
    msg.status = [DiagnosticStatus(name=name, hardware_id=who, message=message)]
    pub.publish(msg)


def wait_mode(ros, sup, mode, timeout=10.0):
    ros.spin_until(lambda: sup.machine.mode.value == mode, timeout, f'mode {mode} (now {sup.machine.mode.value})')


def stamp(ns: int) -> Time:
    return Time(sec=ns // 1_000_000_000, nanosec=ns % 1_000_000_000)
