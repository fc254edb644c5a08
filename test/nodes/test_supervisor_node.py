"""Supervisor over real DDS: bring-up order, reverse shutdown (also during bring-up), refusals
with reasons, event-driven modes, a node leaving active, invalid parameters, /hil/mode latched,
the standalone process with config/supervisor.yaml, the one-process EventsExecutor layout, the
supervisor's own heartbeat, and real-time health: a node's cycle status over DDS and the
hardware/time-base counters turned into WARN, then FAULT with the reason.
Clock-driven behaviour (frame gate, run_duration, liveness kill) is in test_supervisor_clock_node.py.
"""
import pathlib
import time

import pytest
from diagnostic_msgs.msg import DiagnosticArray
from rclpy.parameter import Parameter
from std_msgs.msg import Header, String
from std_srvs.srv import Trigger

from diagnostic_msgs.msg import DiagnosticStatus, KeyValue

from hil_nodes import qos, topics
from hil_nodes.framework.base import HilLifecycleNode
from hil_nodes.supervisor.node import SupervisorNode
from rig import latest_values, start, statuses, values
from supervisor_fixtures import (CALM, DummyManaged, check_requests, drive_events, dummies, publish_event, supervisor,
                                 trigger, wait_mode)


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


@pytest.mark.parametrize('lockstep', [True, False])
def test_in_lockstep_the_clock_owner_is_deactivated_first(ros, lockstep):
    """Its frames wait for the chain's commands: deactivated after the chain, its next frame would
    wait for a command that never comes and count late (a safety event the shutdown made). In real
    time the drives hold at rest without a command: the reverse order stays."""
    journal = []
    dummies(ros, ['rec', 'drives', 'chain'], journal)
    sup = supervisor(ros, managed_nodes=['rec', 'drives', 'chain'], clock_owner='drives', lockstep=lockstep, **CALM)
    ros.spin_until(lambda: sup.lifecycle == 'up', 30.0, 'bring-up')
    ok, message = trigger(ros, topics.HIL_SHUTDOWN)
    assert ok, message
    first = ['drives', 'chain', 'rec'] if lockstep else ['chain', 'drives', 'rec']
    assert journal[6:] == [(n, 'deactivate') for n in first] + [(n, 'cleanup') for n in first]


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


def test_shutdown_during_bring_up_aborts_it_cleanly(ros):
    journal = []
    dummies(ros, ['a'], journal)
    sup = supervisor(ros, managed_nodes=['a', 'ghost', 'b'], **CALM)
    ros.spin_until(lambda: sup.driver.current == 'configure ghost', 20.0, 'waiting for the ghost service')
    ok, message = trigger(ros, topics.HIL_SHUTDOWN)
    assert ok, message
    assert message.startswith('bring-up aborted; shutdown: cleanup a') and 'ghost skipped' in message
    assert journal == [('a', 'configure'), ('a', 'cleanup')]
    assert sup.machine.mode.value == 'IDLE' and sup.lifecycle == 'down'


def test_requests_refused_with_reasons_and_events_drive_the_modes(ros):
    dummies(ros, ['a'])
    sup = supervisor(ros, managed_nodes=['a'], **CALM)
    modes = ros.collect(String, topics.HIL_MODE, qos.latched(depth=50))  # deep: keep every change
    diags = ros.collect(DiagnosticArray, topics.DIAGNOSTICS, 50)
    events = ros.node.create_publisher(DiagnosticArray, topics.HIL_EVENTS, qos.command(100))
    ros.spin_until(lambda: sup.lifecycle == 'up', 30.0, 'bring-up')
    ros.wait_for_subscribers(topics.HIL_EVENTS)
    ros.spin_until(lambda: modes, 10.0, 'latched IDLE')   # matched before the first change

    check_requests(ros, [(topics.HIL_STOP, False, 'nothing to stop'),
                         (topics.HIL_RESET, False, 'reset refused in mode IDLE'),
                         (topics.HIL_START, True, 'IDLE -> HOMING'),
                         (topics.HIL_START, False, 'start refused in mode HOMING')])
    drive_events(ros, sup, events, [(['homed'], 'SYNCHRONIZING'), (['synchronized'], 'RUNNING'),
                                    # teleported: unknown, counted, ignored; home_reached: does not
                                    # apply in RUNNING, ignored
                                    (['teleported', 'home_reached', 'safety_takeover'], 'SAFETY_RECOVERY')])
    assert sup.unknown_events == 1
    check_requests(ros, [(topics.HIL_STOP, False, 'returning home')])
    drive_events(ros, sup, events, [(['back_inside'], 'RETURNING_HOME'), (['home_reached'], 'IDLE')])
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

    ros.spin_until(lambda: _supervisor_values(diags).get('faults') == '2', 10.0, 'faults = 2 in diagnostics')
    status = _supervisor_values(diags)
    assert status['mode'] == 'FAULT' and status['fault_reason'] == 'planner: hard limit crossed'
    assert status['state:a'] == 'active' and float(status['heartbeat_age:a']) < 10.0

    # Latched: a subscriber joining now still gets the current mode, last. (The publisher keeps
    # 20 modes: the history can reach the subscriber in more than one take, oldest first, so the
    # first callback may be an older mode: CI once saw IDLE there.)
    late = []
    ros.node.create_subscription(String, topics.HIL_MODE, late.append, qos.latched())
    ros.spin_until(lambda: late and late[-1].data == 'FAULT', 10.0, 'the current mode for a late subscriber')
    ros.spin_for(0.2)
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


def test_error_processing_and_finalized_fault_in_manual_mode(ros):
    """autostart off: someone else drives the lifecycles; the supervisor still watches them."""
    a, = dummies(ros, ['a'])
    dummies(ros, ['b'], raise_on_activate=True)
    sup = supervisor(ros, managed_nodes=['a', 'b'], autostart=False, **CALM)
    assert sup.lifecycle == 'manual'
    ros.spin_until(lambda: ros.node.count_subscribers('/a/transition_event') >= 1, 10.0,
                   'transition_event subscription')
    ros.bring_up('a')
    ros.spin_until(lambda: sup.states['a'] == 'active', 10.0, 'state of a tracked from its events')
    assert trigger(ros, topics.HIL_START)[0]          # manual mode: START allowed
    assert ros.change_state('b', 'configure')
    assert not ros.change_state('b', 'activate')      # raises -> ErrorProcessing -> unconfigured
    wait_mode(ros, sup, 'FAULT')
    assert 'managed node b entered ErrorProcessing' in sup.machine.fault_reason
    assert trigger(ros, topics.HIL_RESET)[0]           # manual: b is not required to be active
    a.trigger_shutdown()                               # a: active -> finalized
    wait_mode(ros, sup, 'FAULT')
    assert 'managed node a was finalized' in sup.machine.fault_reason


def test_invalid_parameters_keep_the_supervisor_in_fault(ros):
    sup = supervisor(ros, heartbeat_timeout_sim=-1.0, run_duration=5, managed_nodes=['a', 'a'])
    assert sup.machine.mode.value == 'FAULT'
    reason = sup.machine.fault_reason
    assert "'heartbeat_timeout_sim'" in reason and "'run_duration'" in reason and "'managed_nodes'" in reason
    ok, message = trigger(ros, topics.HIL_RESET)
    assert not ok and 'heartbeat_timeout_sim' in message


@pytest.mark.parametrize('params, needle', [
    ({'managed_nodes': ['a'], 'monitored_nodes': ['a']}, 'both list'),
    ({'monitored_nodes': ['supervisor']}, 'the supervisor itself'),
    ({'frame_period': float('nan')}, "'frame_period' must be finite"),
    ({'heartbeat_timeout_wall': float('inf')}, "'heartbeat_timeout_wall' must be finite"),
    ({'autostart': 'yes'}, "'autostart'"),
])
def test_more_invalid_parameters(ros, params, needle):
    sup = supervisor(ros, **params)
    assert sup.machine.mode.value == 'FAULT' and needle in sup.machine.fault_reason
    assert sup.lifecycle == 'bring_up_failed'


CONFIG = pathlib.Path(__file__).resolve().parents[2] / 'config' / 'supervisor.yaml'


def test_standalone_process_with_params_file(ros):
    """`python -m hil_nodes.supervisor.node --ros-args --params-file config/supervisor.yaml`: the
    runner's EventsExecutor drives bring-up and the (awaiting) shutdown service."""
    journal = []
    dummies(ros, ['a', 'b'], journal)
    diags = ros.collect(DiagnosticArray, topics.DIAGNOSTICS, 50)
    proc = ros.spawn('hil_nodes.supervisor.node', ['--params-file', str(CONFIG), '-p', 'managed_nodes:=[a, b]',
                                              '-p', 'heartbeat_timeout_wall:=10.0', '-p', 'frame_period:=0.05'])

    def lifecycle():
        return [v['lifecycle'] for v in map(values, statuses(diags, name='supervisor: run'))]
    ros.spin_until(lambda: 'up' in lifecycle() or proc.proc.poll() is not None, 40.0,
                   f'bring-up by the supervisor process: {journal}')
    assert proc.proc.poll() is None, f'supervisor process exited: {proc.output()}'
    assert journal == [('a', 'configure'), ('b', 'configure'), ('a', 'activate'), ('b', 'activate')]
    ok, message = trigger(ros, topics.HIL_SHUTDOWN)
    assert ok, message
    assert journal[4:] == [('b', 'deactivate'), ('a', 'deactivate'), ('b', 'cleanup'), ('a', 'cleanup')]
    assert proc.stop() == 0, proc.output()


def test_one_process_layout_events_executor(ros):
    """Supervisor and managed nodes in ONE EventsExecutor (the one-process container): the
    asynchronous lifecycle calls and the awaiting shutdown service must not deadlock it."""
    import rclpy
    from rclpy.context import Context
    from rclpy.experimental import EventsExecutor
    ctx = Context()
    rclpy.init(context=ctx, domain_id=ros.domain_id)
    executor = EventsExecutor(context=ctx)
    journal = []
    record = lambda node, transition: journal.append((node, transition))  # noqa: E731
    nodes = [DummyManaged(n, journal=record, context=ctx) for n in ('a', 'b')]
    sup = SupervisorNode(context=ctx, parameter_overrides=[Parameter('managed_nodes', value=['a', 'b']),
                                                           *(Parameter(k, value=v) for k, v in CALM.items())])
    nodes.append(sup)
    for node in nodes:
        executor.add_node(node)

    def spin_until(predicate, what, timeout=30.0):
        end = time.monotonic() + timeout
        while not predicate():
            assert time.monotonic() < end, what
            executor.spin_once(timeout_sec=0.01)
            ros.executor.spin_once(timeout_sec=0.001)
    try:
        spin_until(lambda: sup.lifecycle == 'up', 'bring-up in one executor')
        client = ros.node.create_client(Trigger, topics.HIL_SHUTDOWN)
        spin_until(client.service_is_ready, 'shutdown service')
        future = client.call_async(Trigger.Request())
        spin_until(future.done, f'shutdown answer (journal {journal}, lifecycle {sup.lifecycle}, '
                                f'driver busy {sup.driver.busy} at {sup.driver.current!r})')
        assert future.result().success, future.result().message
        assert journal == [('a', 'configure'), ('b', 'configure'), ('a', 'activate'), ('b', 'activate'),
                           ('b', 'deactivate'), ('a', 'deactivate'), ('b', 'cleanup'), ('a', 'cleanup')]
    finally:
        executor.shutdown(timeout_sec=1.0)
        for node in nodes:
            node.destroy_node()
        rclpy.try_shutdown(context=ctx)


def _supervisor_values(diags):
    """Key/values of the supervisor's last status."""
    return latest_values(diags, 'supervisor: run')


class Ticker(HilLifecycleNode):
    """A node with one monitored cycle: a 100 Hz timer that publishes a counter."""

    def configure_node(self):
        self.mon = self.cycle_monitor('tick', 0.01)
        self.pub = self.create_lifecycle_publisher(Header, '/ticker/out', 10)

    def activate_node(self):
        self.timer = self.create_timer(0.01, self._tick)

    def deactivate_node(self):
        self.destroy_timer(self.timer)

    def _tick(self):
        t0 = self.mon.begin()
        self.pub.publish(Header(frame_id='tick'))
        self.count_published('/ticker/out')
        self.mon.end(t0)


def test_a_slow_cycle_over_dds_faults_with_the_real_time_reason(ros):
    """A node's '<node>: cycle' status (base class) reaches the supervisor; with a CPU delay
    injected above its budget (lockstep judge: CPU time, so a loaded test machine cannot cause
    it), the supervisor goes to FAULT naming the node, and its status says real time was not held."""
    ticker = start(ros, Ticker, 'ticker', lockstep=True, status_period=0.2)
    diags = ros.collect(DiagnosticArray, topics.DIAGNOSTICS, 200)
    sup = supervisor(ros, managed_nodes=['ticker'], health_window=1.0, health_min_samples=20, health_min_span=0.5,
                     saturation_fault_s=0.5, **{**CALM, 'status_period': 0.2})
    ros.spin_until(lambda: sup.lifecycle == 'up', 30.0, 'bring-up')

    def cycle_status():
        return latest_values(diags, 'ticker: cycle')
    ros.spin_until(lambda: float(cycle_status().get('cycles', 0)) >= 30, 20.0, 'cycle statuses')
    healthy = cycle_status()
    assert healthy['monitors'] == 'tick' and float(healthy['overruns']) == 0 and float(healthy['exec_p50_us']) > 0
    assert int(healthy['published./ticker/out']) >= int(healthy['cycles']) - 1
    assert sup.machine.mode.value == 'IDLE' and sup.health.held
    # once the cycle statuses span health_min_span the verdict is a judgement (run_summary says so)
    ros.spin_until(lambda: _supervisor_values(diags).get('health_judged') == 'True', 10.0, 'a judged window')
    assert ticker.set_parameters([Parameter('inject_cycle_delay', value=0.015)])[0].successful   # > 10 ms budget
    wait_mode(ros, sup, 'FAULT', timeout=20.0)
    assert sup.machine.fault_reason.startswith('real time not held: ')
    assert 'of ticker cycles late' in sup.machine.fault_reason
    ros.spin_until(lambda: _supervisor_values(diags).get('realtime_held') == 'False', 10.0, 'realtime_held false')
    assert float(cycle_status()['overruns']) > 0
    ok, message = trigger(ros, topics.HIL_RESET)
    assert not ok and 'real time not held' in message      # still beyond the limit: no reset


def _counters(status_name, **values):
    """A status named "<node>: <task>"; its hardware_id names hardware, not the node (the
    supervisor must key it by the name)."""
    msg = DiagnosticArray()
    msg.status = [DiagnosticStatus(name=status_name, hardware_id='some drives', message='counters',
                                   values=[KeyValue(key=k, value=str(v)) for k, v in values.items()])]
    return msg


def test_hardware_and_time_base_counters_warn_then_fault(ros):
    """Late frames at 2 % warn (no FAULT, real time still held); then late frames at 20 % and
    a saturated time base: FAULT with both reasons; the supervisor beats on /hil/heartbeat."""
    dummies(ros, ['a'])
    beats = ros.collect(Header, topics.HIL_HEARTBEAT, 100)
    diags = ros.collect(DiagnosticArray, topics.DIAGNOSTICS, 200)
    sup = supervisor(ros, managed_nodes=['a'], health_window=2.0, health_min_span=0.5, saturation_fault_s=0.5,
                     **{**CALM, 'status_period': 0.2})
    ros.spin_until(lambda: sup.lifecycle == 'up', 30.0, 'bring-up')
    pub = ros.node.create_publisher(DiagnosticArray, topics.DIAGNOSTICS, 100)
    ros.wait_for_subscribers(topics.DIAGNOSTICS, 2)
    frames = late = servo = saturated = 0
    for k in range(8):                                    # 2 % late frames
        frames, late, servo = frames + 100, late + 2, servo + 400
        pub.publish(_counters('mock_hexapod: drives', frames=frames, late_commands=late, realtime_overruns=0))
        pub.publish(_counters('timebase: buffer', frames=frames, servo_cycles=servo, saturated_cycles=0,
                              factor_off_cycles=0, distance_off_frames=0))
        ros.spin_for(0.1)
    ros.spin_until(lambda: sup.health.current.level == 1, 10.0, 'health WARN')
    assert sup.machine.mode.value == 'IDLE' and sup.health.held
    ros.spin_until(lambda: _supervisor_values(diags).get('health_level') == 'WARN', 10.0, 'WARN in the status')
    assert '2% of frames late (mock_hexapod)' in _supervisor_values(diags)['health']
    for k in range(8):                                    # 20 % late, time base at its bound
        frames, late, servo, saturated = frames + 100, late + 20, servo + 400, saturated + 400
        pub.publish(_counters('mock_hexapod: drives', frames=frames, late_commands=late, realtime_overruns=0))
        pub.publish(_counters('timebase: buffer', frames=frames, servo_cycles=servo, saturated_cycles=saturated,
                              factor_off_cycles=saturated, distance_off_frames=0))
        ros.spin_for(0.1)
        if sup.machine.mode.value == 'FAULT':
            break
    wait_mode(ros, sup, 'FAULT')
    reason = sup.machine.fault_reason
    assert reason.startswith('real time not held: ') and 'of frames late (mock_hexapod)' in reason
    assert sup.health.reason == reason and not sup.health.held
    ros.spin_until(lambda: _supervisor_values(diags).get('realtime_held') == 'False', 10.0, 'realtime_held false')
    assert any(b.frame_id == '/supervisor' for b in beats)
