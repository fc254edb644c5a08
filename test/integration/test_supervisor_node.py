"""Supervisor over real DDS: bring-up order, shutdown, refusals, event-driven modes, liveness
(a SIGKILLed node process -> FAULT within 1 s of sim time), frame gate, run_duration, latching.

Managed nodes are small HilLifecycleNodes (test/nodes/dummy_managed.py), in this process
(the one-process layout: the supervisor must never block the shared executor) or spawned.
"""
import importlib.util
import pathlib
import time

import pytest
from builtin_interfaces.msg import Time
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
from rclpy.parameter import Parameter
from rosgraph_msgs.msg import Clock
from std_msgs.msg import Header, String
from std_srvs.srv import Trigger

from hil_nodes import qos, topics
from hil_nodes.supervisor import SupervisorNode

_DUMMY_PATH = pathlib.Path(__file__).resolve().parents[1] / 'nodes' / 'dummy_managed.py'
_spec = importlib.util.spec_from_file_location('dummy_managed', _DUMMY_PATH)
_dummy = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_dummy)
DummyManaged = _dummy.DummyManaged

# Generous wall timeout in tests that are not about liveness: a loaded CI machine must not
# make a live in-process node look dead.
CALM = {'heartbeat_timeout_wall': 10.0, 'heartbeat_timeout_sim': 10.0}


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


def test_bring_up_in_order_then_shutdown_in_reverse(ros):
    journal = []
    dummies(ros, ['a', 'b', 'c'], journal)
    sup = supervisor(ros, managed_nodes=['a', 'b', 'c'], **CALM)
    ros.spin_until(lambda: sup.lifecycle == 'up', 30.0, 'bring-up')
    assert journal == [('a', 'configure'), ('b', 'configure'), ('c', 'configure'),
                       ('a', 'activate'), ('b', 'activate'), ('c', 'activate')]
    assert [ros.get_state(n) for n in 'abc'] == ['active'] * 3
    assert sup.machine.mode.value == 'IDLE'
    ok, message = trigger(ros, topics.HIL_SHUTDOWN)
    assert ok, message
    assert journal[6:] == [('c', 'deactivate'), ('b', 'deactivate'), ('a', 'deactivate'),
                           ('c', 'cleanup'), ('b', 'cleanup'), ('a', 'cleanup')]
    assert 'deactivate c, deactivate b, deactivate a, cleanup c' in message
    assert [ros.get_state(n) for n in 'abc'] == ['unconfigured'] * 3
    assert sup.machine.mode.value == 'IDLE'          # shutting down is not a fault
    ok, message = trigger(ros, topics.HIL_START)
    assert not ok and 'system is down' in message


def test_node_refusing_configure_faults_naming_it(ros):
    journal = []
    dummies(ros, ['a', 'c'], journal)
    dummies(ros, ['b'], journal, refuse_configure=True)
    sup = supervisor(ros, managed_nodes=['a', 'b', 'c'], **CALM)
    modes = ros.collect(String, topics.HIL_MODE, qos.latched())
    ros.spin_until(lambda: sup.lifecycle == 'bring_up_failed', 30.0, 'bring-up failure')
    ros.spin_until(lambda: modes and modes[-1].data == 'FAULT', 10.0, 'FAULT on /hil/mode')
    assert 'configure of node b' in sup.machine.fault_reason
    assert journal == [('a', 'configure')]           # c never touched, nothing activated
    assert ros.get_state('b') == 'unconfigured' and ros.get_state('c') == 'unconfigured'
    ok, message = trigger(ros, topics.HIL_RESET)
    assert not ok and 'bring-up failed' in message and 'node b' in message


def test_missing_node_times_out_to_fault_and_no_frame_before(ros):
    frames = ros.collect(Header, topics.HIL_FRAME, qos.stream(False))
    sup = supervisor(ros, managed_nodes=['ghost'], service_timeout=1.0, **CALM)
    ros.spin_for(0.3)
    assert frames == [] and sup.lifecycle == 'bringing_up'   # gate closed during bring-up
    ros.spin_until(lambda: sup.machine.mode.value == 'FAULT', 20.0, 'FAULT')
    assert 'configure of node ghost' in sup.machine.fault_reason
    assert 'not available' in sup.machine.fault_reason
    ros.spin_until(lambda: frames, 10.0, 'frames once bring-up ended')
    assert frames[-1].frame_id == 'FAULT'              # producers hold on it


def test_requests_refused_with_reasons_and_events_drive_the_modes(ros):
    dummies(ros, ['a'])
    sup = supervisor(ros, managed_nodes=['a'], **CALM)
    modes = ros.collect(String, topics.HIL_MODE, qos.latched(depth=50))  # deep: keep every change
    diags = ros.collect(DiagnosticArray, topics.DIAGNOSTICS, 50)
    events = ros.node.create_publisher(DiagnosticArray, topics.HIL_EVENTS, qos.command(100))
    ros.spin_until(lambda: sup.lifecycle == 'up', 30.0, 'bring-up')
    ros.wait_for_subscribers(topics.HIL_EVENTS)

    ok, message = trigger(ros, topics.HIL_STOP)
    assert not ok and 'nothing to stop' in message
    ok, message = trigger(ros, topics.HIL_RESET)
    assert not ok and 'reset refused in mode IDLE' in message
    ok, message = trigger(ros, topics.HIL_START)
    assert ok and 'IDLE -> HOMING' in message
    ok, message = trigger(ros, topics.HIL_START)
    assert not ok and 'start refused in mode HOMING' in message

    publish_event(ros, events, 'homed')
    wait_mode(ros, sup, 'SYNCHRONIZING')
    publish_event(ros, events, 'synchronized')
    wait_mode(ros, sup, 'RUNNING')
    publish_event(ros, events, 'teleported')           # unknown: counted, ignored
    publish_event(ros, events, 'home_reached')         # does not apply in RUNNING: ignored
    publish_event(ros, events, 'safety_takeover')
    wait_mode(ros, sup, 'SAFETY_RECOVERY')
    assert sup.unknown_events == 1
    ok, message = trigger(ros, topics.HIL_STOP)
    assert not ok and 'returning home' in message
    publish_event(ros, events, 'back_inside')
    wait_mode(ros, sup, 'RETURNING_HOME')
    publish_event(ros, events, 'home_reached')
    wait_mode(ros, sup, 'IDLE')
    ros.spin_until(lambda: modes and modes[-1].data == 'IDLE', 10.0, '/hil/mode IDLE')
    assert [m.data for m in modes] == ['IDLE', 'HOMING', 'SYNCHRONIZING', 'RUNNING', 'SAFETY_RECOVERY',
                                       'RETURNING_HOME', 'IDLE']

    ok, message = trigger(ros, topics.HIL_ESTOP)
    assert ok and sup.machine.mode.value == 'FAULT'
    ok, message = trigger(ros, topics.HIL_ESTOP)           # an estop never fails
    assert ok and 'already in FAULT' in message
    ok, message = trigger(ros, topics.HIL_START)
    assert not ok and 'reset first' in message
    ok, message = trigger(ros, topics.HIL_RESET)
    assert ok and sup.machine.mode.value == 'IDLE'
    publish_event(ros, events, 'fault', who='planner', message='hard limit crossed')
    wait_mode(ros, sup, 'FAULT')
    assert sup.machine.fault_reason == 'planner: hard limit crossed'

    def supervisor_status():
        for msg in reversed(diags):
            for st in msg.status:
                if st.hardware_id == 'supervisor':
                    return {kv.key: kv.value for kv in st.values}
        return None
    ros.spin_until(lambda: (supervisor_status() or {}).get('faults') == '2', 10.0, 'faults = 2 in diagnostics')
    status = supervisor_status()
    assert status['mode'] == 'FAULT' and status['fault_reason'] == 'planner: hard limit crossed'
    assert status['state:a'] == 'active' and float(status['heartbeat_age:a']) < 10.0

    # Latched: a subscriber joining now still gets the current mode.
    late = []
    ros.node.create_subscription(String, topics.HIL_MODE, late.append, qos.latched())
    ros.spin_until(lambda: late, 10.0, 'latched mode for a late subscriber')
    assert late[-1].data == 'FAULT'


def test_managed_node_leaving_active_faults(ros):
    dummies(ros, ['a', 'b'])
    sup = supervisor(ros, managed_nodes=['a', 'b'], **CALM)
    ros.spin_until(lambda: sup.lifecycle == 'up', 30.0, 'bring-up')
    assert ros.change_state('b', 'deactivate')        # someone else than the supervisor
    wait_mode(ros, sup, 'FAULT')
    assert 'managed node b left the active state' in sup.machine.fault_reason
    ok, message = trigger(ros, topics.HIL_RESET)
    assert not ok and 'managed node b is inactive' in message


def test_invalid_parameters_keep_the_supervisor_in_fault(ros):
    sup = supervisor(ros, heartbeat_timeout_sim=-1.0, run_duration=5, managed_nodes=['a', 'a'])
    assert sup.machine.mode.value == 'FAULT'
    reason = sup.machine.fault_reason
    assert "'heartbeat_timeout_sim'" in reason and "'run_duration'" in reason and "'managed_nodes'" in reason
    ok, message = trigger(ros, topics.HIL_RESET)
    assert not ok and 'heartbeat_timeout_sim' in message


def _first_frame(ros, clock_pub, frames, t_ns=0, timeout=20.0):
    """Publish /clock = t until the gate answers: repeats of one time are legitimate (the mock
    re-publishes t_0 until the first command) and absorb DDS discovery."""
    end = time.monotonic() + timeout
    while not frames:
        assert time.monotonic() < end, 'no /hil/frame for /clock'
        clock_pub.publish(Clock(clock=stamp(t_ns)))
        ros.spin_for(0.05)


def _step(ros, clock_pub, frames, t_ns):
    n = len(frames)
    clock_pub.publish(Clock(clock=stamp(t_ns)))
    ros.spin_until(lambda: len(frames) > n, 10.0, f'frame for /clock {t_ns} ns')
    assert len(frames) == n + 1, 'exactly one frame per /clock message'
    return frames[-1]


def test_frame_gate_one_frame_per_clock_and_run_duration_is_frame_aligned(ros):
    frames = ros.collect(Header, topics.HIL_FRAME, qos.stream(True))
    clock_pub = ros.node.create_publisher(Clock, topics.CLOCK, qos.stream(True))
    events = ros.node.create_publisher(DiagnosticArray, topics.HIL_EVENTS, qos.command(100))
    sup = supervisor(ros, lockstep=True, use_sim_time=True, autostart_run=True, run_duration=0.01, **CALM)
    _first_frame(ros, clock_pub, frames)
    # START was applied before the first frame: a lockstep run starts deterministically at t_0.
    assert all(f.frame_id == 'HOMING' for f in frames)
    assert all((f.stamp.sec, f.stamp.nanosec) == (0, 0) for f in frames)
    ros.wait_for_subscribers(topics.HIL_EVENTS)
    publish_event(ros, events, 'homed')
    publish_event(ros, events, 'synchronized')
    wait_mode(ros, sup, 'RUNNING')
    period = 2_500_000
    expected = []
    for k in (1, 1, 2, 3, 4, 5):   # a repeated time gets its own frame too (late joiners)
        f = _step(ros, clock_pub, frames, k * period)
        expected.append((k * period, 'RUNNING' if k * period < 10_000_000 else 'RETURNING_HOME'))
        assert (f.stamp.sec * 10**9 + f.stamp.nanosec, f.frame_id) == expected[-1]
    assert sup.run_duration_reached
    count = len(frames)
    ros.spin_for(0.2)
    assert len(frames) == count, 'no frame without a /clock message in lockstep'


def test_run_duration_ignored_while_already_returning(ros):
    frames = ros.collect(Header, topics.HIL_FRAME, qos.stream(True))
    clock_pub = ros.node.create_publisher(Clock, topics.CLOCK, qos.stream(True))
    events = ros.node.create_publisher(DiagnosticArray, topics.HIL_EVENTS, qos.command(100))
    sup = supervisor(ros, lockstep=True, use_sim_time=True, autostart_run=True, run_duration=0.005, **CALM)
    _first_frame(ros, clock_pub, frames)
    ros.wait_for_subscribers(topics.HIL_EVENTS)
    for name in ('homed', 'synchronized', 'safety_takeover'):
        publish_event(ros, events, name)
    wait_mode(ros, sup, 'SAFETY_RECOVERY')
    f = _step(ros, clock_pub, frames, 5_000_000)
    assert f.frame_id == 'SAFETY_RECOVERY' and sup.run_duration_reached


def test_realtime_frames_on_a_timer(ros):
    frames = ros.collect(Header, topics.HIL_FRAME, qos.stream(False))
    supervisor(ros, lockstep=False, frame_period=0.01, **CALM)
    ros.spin_until(lambda: len(frames) >= 5, 20.0, 'timer frames')
    stamps = [f.stamp.sec * 10**9 + f.stamp.nanosec for f in frames]
    assert stamps == sorted(stamps) and all(f.frame_id == 'IDLE' for f in frames)


def test_killed_node_process_faults_within_one_second_of_sim_time(ros):
    """A managed node in another process is SIGKILLed mid-run while this test drives /clock
    (sim time paced at about real time): FAULT, naming it, within 1 s of sim time."""
    proc = ros.spawn(str(_DUMMY_PATH), ['-r', '__node:=victim', '-p', 'use_sim_time:=true'])
    dummies(ros, ['survivor'], use_sim_time=True)
    clock_pub = ros.node.create_publisher(Clock, topics.CLOCK, qos.stream(True))
    events = ros.node.create_publisher(DiagnosticArray, topics.HIL_EVENTS, qos.command(100))
    # Default sim timeout (0.5 s); a larger wall one so only the sim path can fire here.
    sup = supervisor(ros, managed_nodes=['victim', 'survivor'], lockstep=True, use_sim_time=True,
                     heartbeat_timeout_wall=3.0)
    sim_ns, period = 0, 2_500_000

    def tick():
        clock_pub.publish(Clock(clock=stamp(sim_ns)))
        ros.executor.spin_once(timeout_sec=0.002)

    end = time.monotonic() + 40.0
    while sup.lifecycle != 'up':
        assert sup.lifecycle == 'bringing_up', sup.bring_up_failure
        assert time.monotonic() < end, 'bring-up of the subprocess node'
        tick()
    ros.wait_for_subscribers(topics.HIL_EVENTS)
    assert trigger(ros, topics.HIL_START)[0]
    for name in ('homed', 'synchronized'):
        publish_event(ros, events, name)
    ros.spin_until(lambda: sup.machine.mode.value == 'RUNNING', 10.0, 'RUNNING')
    # Run a little with live heartbeats in sim time, then kill.
    wall0, sim0 = time.monotonic(), sim_ns
    while sim_ns - sim0 < 300_000_000:
        sim_ns = sim0 + int((time.monotonic() - wall0) * 1e9) // period * period
        tick()
    assert sup.machine.mode.value == 'RUNNING', sup.machine.fault_reason
    proc.kill()                                 # SIGKILL, then clean_dead_shm()
    kill_ns = sim_ns
    wall0, sim0 = time.monotonic(), sim_ns
    while sup.machine.mode.value != 'FAULT':
        assert sim_ns - kill_ns < 2_000_000_000, 'no FAULT within 2 s of sim time'
        sim_ns = sim0 + int((time.monotonic() - wall0) * 1e9) // period * period
        tick()
    detected_after = (sim_ns - kill_ns) * 1e-9
    assert detected_after < 1.0, f'FAULT {detected_after:.3f} s of sim time after the kill'
    assert 'node victim is dead' in sup.machine.fault_reason and 'sim time' in sup.machine.fault_reason
    ok, message = trigger(ros, topics.HIL_RESET)
    assert not ok and 'victim is dead' in message
    ok, message = trigger(ros, topics.HIL_SHUTDOWN)
    assert 'victim skipped (state dead)' in message and 'deactivate survivor' in message
