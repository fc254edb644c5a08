"""Supervisor: lifecycle manager of a system's nodes, bond-style liveness, HIL mode machine
and frame gate (seed 000 section 5: the primary state machine; seed 004: lockstep).

A plain rclpy node (like nav2's lifecycle_manager: it drives the others, nobody drives it).
Everything it does is asynchronous: it may share one executor with all the nodes it manages.
It beats on /hil/heartbeat itself, so the hardware side can tell when it is gone.
One watch for deaths, stalls and real time: heartbeats (two clocks), transition events,
process exits reported by the launcher (/hil/process_exit), and the real-time health of every
node (health.py); each ends in FAULT with the reason, and FAULT is the controlled stop.
This file wires those together with the bring-up and shutdown and the mode requests; its
helpers in this folder each hold one part: params.py, health.py, node_wait.py, status.py and
frame_gate.py (/hil/frame, run time and run duration).
See docs/supervisor.md for the modes, services and their refusal rules, liveness, health and
frame gate.
"""
from __future__ import annotations

import time

from diagnostic_msgs.msg import DiagnosticArray
from lifecycle_msgs.msg import State, TransitionEvent
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.clock import Clock, ClockType
from rclpy.node import Node
from rclpy.task import Future
from std_msgs.msg import Header, String
from std_srvs.srv import Trigger

from hil_core.supervision.lifecycle_plan import bring_up_plan, check_node_list, shutdown_plan
from hil_core.supervision.liveness import LivenessMonitor, normalize_name
from hil_core.supervision.modes import Event, HilMode, ModeMachine, Request, Transition
from hil_core.supervision.status_names import NO_HARDWARE, status_name
from hil_nodes import qos, topics
from hil_nodes.framework.throttle import due
from hil_nodes.msgs.status_bytes import status_array_bytes
from hil_nodes.runtime.intra_process_node import IntraProcessNode
from hil_nodes.runtime.local_beats import LOCAL_BEATS
from hil_nodes.framework.lifecycle_driver import LifecycleDriver, SequenceResult
from hil_nodes.runtime.runner import run
from hil_nodes.supervisor.frame_gate import FrameGate
from hil_nodes.supervisor.health import HealthWatch
from hil_nodes.supervisor.node_wait import NodeWait, parse_node_parts
from hil_nodes.supervisor.status import STATUS_TASK, run_status
from hil_nodes.supervisor.params import PARAMS, health_config, load_parameters

__all__ = ['PARAMS', 'SupervisorNode', 'main']

EXIT_GRACE = 1.0     # wall s after a reported process exit during which its heartbeats are stale
RESTARTED = 'unknown (heartbeat back after death)'   # state label of a node that came back


class SupervisorNode(IntraProcessNode, Node):
    """See the module docstring. ``lifecycle`` is the system's bring-up state: 'manual'
    (autostart off), 'bringing_up', 'up', 'bring_up_failed', 'shutting_down', 'down'."""

    PARAMS = PARAMS     # its own table only (supervisor/params.py): not a HilLifecycleNode

    def __init__(self, node_name: str = 'supervisor', **kwargs):
        super().__init__(node_name, **kwargs)
        self.machine = ModeMachine()
        self.p, self.param_problems = load_parameters(self)
        self.managed = check_node_list(self.p.managed_nodes)
        self.monitored = check_node_list(self.p.monitored_nodes)
        watched = self.managed + [n for n in self.monitored if n not in self.managed]
        self.states = {n: 'unknown' for n in watched}
        # the other parts' nodes (other hosts) are named with their part when they fall silent
        self.liveness = LivenessMonitor(watched, self.p.heartbeat_timeout_sim, self.p.heartbeat_timeout_wall,
                                        self.p.stall_timeout_wall, parts=parse_node_parts(self.p.node_parts))
        self.lifecycle = 'bringing_up' if self.p.autostart else 'manual'
        self.bring_up_failure = ''
        self.unknown_events = 0
        self._due_last: dict[str, float] = {}
        self._exited: dict[str, float] = {}      # node -> wall time its process exit was reported
        self._steady = Clock(clock_type=ClockType.STEADY_TIME)

        # Latched with the last 20 modes: a late subscriber (hil run, the recorder) gets the history.
        self._mode_pub = self.create_publisher(String, topics.HIL_MODE, qos.latched(20))
        self._diag_pub = self.create_publisher(DiagnosticArray, topics.DIAGNOSTICS, 10)
        # Events before /clock: in one wait set the executor takes them first, so a frame
        # reflects every event already received.
        self.create_subscription(DiagnosticArray, topics.HIL_EVENTS, self._on_events, qos.command(100))
        self.create_subscription(Header, topics.HIL_HEARTBEAT, self._on_heartbeat, 100)
        LOCAL_BEATS.listen(self, self._on_heartbeat)        # the beats of this process (runtime.local_beats)
        self.create_subscription(DiagnosticArray, topics.HIL_PROCESS_EXIT, self._on_process_exit, qos.command(50))
        self._heartbeat_pub = self.create_publisher(Header, topics.HIL_HEARTBEAT, 10)
        self.create_group_timer(self.p.heartbeat_period, self._heartbeat, clock=self._steady)
        self.create_group_timer(self.p.heartbeat_period, self._heartbeat)
        self.health = HealthWatch(self, health_config(self.p), self._fault, self._wall_now,
                                  fault_enabled=self.p.health_fault, lockstep=self.p.lockstep)
        for name in watched:
            self.create_subscription(TransitionEvent, topics.lifecycle_service(name, 'transition_event'),
                                     lambda msg, n=name: self._on_transition_event(n, msg), 10)
        for request, name in ((Request.START, topics.HIL_START), (Request.STOP, topics.HIL_STOP),
                              (Request.RESET, topics.HIL_RESET), (Request.ESTOP, topics.HIL_ESTOP)):
            self.create_service(Trigger, name, lambda req, resp, r=request: self._on_request(r, resp))
        # The shutdown answer waits for the whole sequence: its coroutine must not hold the
        # default (mutually exclusive) group the sequence's own callbacks run in.
        self.create_service(Trigger, topics.HIL_SHUTDOWN, self._on_shutdown,
                            callback_group=ReentrantCallbackGroup())
        # its /clock subscription comes after the events one (see above)
        self.gate = FrameGate(self, self.machine, self.p.lockstep, self.p.frame_period, self.p.run_duration,
                              self._steady, lambda: self.gate_open, self._check_liveness,
                              lambda: self._apply(Request.STOP))
        self.create_group_timer(self.p.liveness_period, self._check_liveness, clock=self._steady)
        self.create_timer(self.p.status_period, self._publish_status, clock=self._steady)
        self.driver = LifecycleDriver(self, self.managed, self.p.service_timeout, self.p.transition_timeout,
                                      self._set_state, state_of=lambda n: self.states.get(n, 'unknown'))
        self._publish_mode()
        self._wait: NodeWait | None = None
        if self.param_problems:
            self.lifecycle = 'bring_up_failed'
            self.bring_up_failure = 'invalid parameters: ' + '; '.join(self.param_problems)
            self._fault(self.bring_up_failure)
        elif self.p.autostart and self.p.node_parts:    # the other parts' nodes there first (other hosts)
            parts = parse_node_parts(self.p.node_parts)
            self._wait = NodeWait(self, lambda: [n for n in self.driver.missing() if n in parts], parts,
                                  self.p.nodes_timeout, self._bring_up, self._nodes_missing)
        elif self.p.autostart:
            self._bring_up()
        else:
            self.liveness.arm(self._sim_now(), self._wall_now())
            self.health.arm()

    # --- clocks ---------------------------------------------------------------------------------
    def _sim_now(self) -> float:
        ns = self.get_clock().now().nanoseconds
        if self.gate.last_clock_ns is not None:
            ns = max(ns, self.gate.last_clock_ns)  # the gate may see a /clock before the time source
        return ns * 1e-9

    def _wall_now(self) -> float:
        return time.monotonic()

    # --- lifecycle management ---------------------------------------------------------------------
    def _set_state(self, node: str, label: str) -> None:
        self.states[node] = label

    def _bring_up(self) -> None:
        self.driver.start('bring-up', bring_up_plan(self.managed), self._on_bring_up_done)

    def _nodes_missing(self, text: str) -> None:
        self.lifecycle = 'bring_up_failed'
        self.bring_up_failure = text
        self._fault(f'bring-up failed: {text}')

    def _on_bring_up_done(self, result: SequenceResult) -> None:
        self.get_logger().info(result.summary())
        if self.lifecycle == 'shutting_down':
            return  # aborted by a shutdown request: not a fault, the shutdown takes over
        if not result.ok:
            self.lifecycle = 'bring_up_failed'
            self.bring_up_failure = '; '.join(result.failures)
            self._fault(f'bring-up failed: {self.bring_up_failure}')
            return
        self.lifecycle = 'up'
        self.liveness.arm(self._sim_now(), self._wall_now(), required=self.managed)
        self.health.arm()
        if self.p.autostart_run:
            self._apply(Request.START)  # before the first frame: the run starts at t_0

    async def _on_shutdown(self, request, response):
        if self.lifecycle == 'shutting_down':
            response.success = False
            response.message = 'shutdown already in progress'
            return response
        aborted = self.lifecycle == 'bringing_up'
        self.lifecycle = 'shutting_down'
        if self._wait is not None:
            self._wait.cancel()
        self.liveness.armed = False       # nodes going away now are not a fault
        self.health.disarm()
        # A bring-up still running stops after its transition in flight (if any): the
        # shutdown plan then starts from the states the nodes really are in.
        idle = Future()
        self.driver.when_idle(lambda: idle.set_result(True))
        self.driver.abort('shutdown requested')
        await idle
        # dead, restarted and silent nodes are skipped: a dead node's services would only be
        # waited for; the others get shutdown_timeout each at most
        steps, notes = shutdown_plan(self.managed, self._states_for_shutdown(),
                                     first=self.p.clock_owner if self.p.lockstep else '')
        done = Future()
        self.driver.start('shutdown', steps, done.set_result, stop_on_failure=False,
                          service_timeout=self.p.shutdown_timeout, transition_timeout=self.p.shutdown_timeout)
        result: SequenceResult = await done
        self.lifecycle = 'down'
        response.success = result.ok
        response.message = (('bring-up aborted; ' if aborted else '') + result.summary()
                            + ''.join(f'; {n}' for n in notes))
        self.get_logger().info(response.message)
        self._publish_status()
        return response

    def _on_transition_event(self, node: str, msg: TransitionEvent) -> None:
        self.states[node] = msg.goal_state.label
        if node not in self.managed or self.lifecycle not in ('up', 'manual'):
            return
        goal, start = msg.goal_state.id, msg.start_state.id
        if goal == State.TRANSITION_STATE_ERRORPROCESSING:
            self._fault(f'managed node {node} entered ErrorProcessing during {msg.transition.label or "a transition"}')
        elif goal == State.PRIMARY_STATE_FINALIZED:
            self._fault(f'managed node {node} was finalized')
        elif self.lifecycle == 'up' and start == State.PRIMARY_STATE_ACTIVE:
            self._fault(f'managed node {node} left the active state ({msg.transition.label}) while the system is up')

    def _states_for_shutdown(self) -> dict[str, str]:
        states = dict(self.states)
        ages = self.liveness.ages(self._sim_now(), self._wall_now())
        for name in self.managed:
            age = ages[name][1]
            if states[name] in ('active', 'inactive') and age is not None and age > self.p.shutdown_silence:
                states[name] = f'silent for {age:.1f} s'
        return states

    # --- liveness ---------------------------------------------------------------------------------
    def _heartbeat(self) -> None:
        msg = Header(frame_id=self.get_fully_qualified_name())
        msg.stamp = self.get_clock().now().to_msg()
        LOCAL_BEATS.publish(self._heartbeat_pub, msg)

    def _on_process_exit(self, msg: DiagnosticArray) -> None:
        """The launcher (`hil run`) saw a process end: its nodes are dead now, no timeout to wait."""
        for st in msg.status:
            name = normalize_name(st.name)
            if name not in self.states:
                continue
            reason = f'node {name} is dead: its process {st.hardware_id or name} {st.message or "exited"}'
            if self.liveness.mark_dead(name, reason):
                self.states[name] = 'dead'
                self._exited[name] = self._wall_now()
                if self.lifecycle in ('shutting_down', 'down'):
                    continue
                if self.machine.add_cause(reason):     # already in FAULT (e.g. the drives' watchdog first)
                    self._publish_status()
                else:
                    self._fault(reason)

    def _on_heartbeat(self, msg: Header) -> None:
        # a beat carries the node's fully qualified name: '/rig_a/planner' is 'planner' of this
        # graph under --namespace /rig_a (the managed nodes share the supervisor's namespace)
        name = normalize_name(topics.strip_namespace(msg.frame_id, self.get_namespace()))
        if name == self.get_name():
            return
        if name in self._exited and self._wall_now() - self._exited[name] < EXIT_GRACE:
            return    # sent before its process died, delivered after: not a restart
        stalls = len(self.liveness.peer_stalls)
        if self.liveness.beat(name, self._sim_now(), self._wall_now()) and self.states.get(name) == 'dead':
            # Alive again means restarted: its lifecycle state is not what we last knew.
            self.states[name] = RESTARTED
        if len(self.liveness.peer_stalls) > stalls:    # back after a stall: a safety event, not a fault
            self.get_logger().warning(self.liveness.stall_reasons()[-1])
            self._publish_status()

    def _check_liveness(self) -> None:
        if self.lifecycle in ('shutting_down', 'down'):
            return
        own = len(self.liveness.own_stalls)
        for name, reason in self.liveness.check(self._sim_now(), self._wall_now()):
            self.states[name] = 'dead'
            self._fault(reason)
        if len(self.liveness.own_stalls) > own:      # this process stalled: a safety event too
            self.get_logger().warning(self._stall_reasons()[-1])
            self._publish_status()

    def _stall_reasons(self) -> list[str]:
        own = [f'{self.get_name()} stalled: no liveness check for {gap:.3f} s of wall time'
               for gap in self.liveness.own_stalls]
        return self.liveness.stall_reasons() + own

    def _blocking_fault(self) -> str:
        """Why the system cannot leave FAULT now (empty: it can)."""
        reasons = []
        if self.lifecycle == 'bring_up_failed':
            reasons.append(self.bring_up_failure if self.param_problems
                           else f'bring-up failed: {self.bring_up_failure}')
        elif self.lifecycle in ('bringing_up', 'shutting_down', 'down'):
            reasons.append(f'system is {self.lifecycle.replace("_", " ")}')
        dead = self.liveness.blocking_reason()
        if dead:
            reasons.append(dead)
        health = self.health.blocking_reason()
        if health:
            reasons.append(health)
        if self.lifecycle == 'up':
            reasons += [f'managed node {n} is {self.states[n]}' for n in self.managed
                        if self.states[n] != 'active']
        return '; '.join(reasons)

    # --- mode machine -----------------------------------------------------------------------------
    def _apply(self, request: Request) -> Transition:
        mode = self.machine.mode
        if request is Request.START and self.lifecycle not in ('up', 'manual'):
            t = Transition(False, mode, mode, f'start refused: system is {self.lifecycle.replace("_", " ")}')
        elif request is Request.RESET:
            t = self.machine.request(request, blocking_fault=self._blocking_fault())
        else:
            t = self.machine.request(request)
        self._after(t, f'request {request.value}')
        return t

    def _on_request(self, request: Request, response):
        t = self._apply(request)
        response.success = t.accepted
        response.message = t.reason
        return response

    def _fault(self, reason: str) -> None:
        self._after(self.machine.fault(reason), 'fault')

    def _on_events(self, msg: DiagnosticArray) -> None:
        for status in msg.status:
            try:
                event = Event(status.name)
            except ValueError:
                self.unknown_events += 1
                # counted every time, logged once per 5 s (longer than the default throttle): an
                # unknown event name is a sender's bug, not a state of the run to follow closely
                if due(self._due_last, 'unknown_event', 5.0):
                    self.get_logger().warning(f'unknown event {status.name!r} from {status.hardware_id!r} ignored')
                continue
            who = status.hardware_id or 'unknown node'
            if event is Event.FAULT:      # with the nodes silent now: who stopped what the reporter missed
                silent = self.liveness.silent_reasons(self._wall_now())
                t = self.machine.fault('; '.join([f'{who}: {status.message or "fault reported"}', *silent]))
            else:
                t = self.machine.event(event)
            self._after(t, f'event {event.value} from {who}')

    def _after(self, t: Transition, what: str) -> None:
        log = self.get_logger()
        if t.changed:
            text = f'{what}: {t.previous.value} -> {t.mode.value} ({t.reason})'
            # one call site per severity: rclpy's logger refuses two severities at one site
            if t.mode is HilMode.FAULT:
                log.error(text)
            else:
                log.info(text)
            self._publish_mode()
            self._publish_status()
        elif not t.accepted:
            log.info(f'{what}: {t.reason}')

    def _publish_mode(self) -> None:
        self._mode_pub.publish(String(data=self.machine.mode.value))

    # --- frame gate -------------------------------------------------------------------------------
    @property
    def gate_open(self) -> bool:
        """No frame before an autostart bring-up has finished (succeeded or failed)."""
        return self.lifecycle != 'bringing_up'

    # the gate's counters, read by the run status and by whoever watches the supervisor (tests)
    @property
    def frames(self) -> int:
        return self.gate.frames

    @property
    def run_time_ns(self) -> int:
        return self.gate.run_time_ns

    @property
    def run_duration_reached(self) -> bool:
        return self.gate.run_duration_reached

    # --- diagnostics ------------------------------------------------------------------------------
    def _publish_status(self) -> None:
        level, message, values = run_status(
            self.machine, self.lifecycle, self.run_time_ns * 1e-9, self.frames, self.run_duration_reached,
            self.unknown_events, self._stall_reasons(), self.health, self.states,
            self.liveness.ages(self._sim_now(), self._wall_now()), self.liveness.dead(),
            self.driver.current or (f'waiting for {self._wait.text}' if self._wait is not None and self._wait.text
                                    else ''))
        sec, nanosec = divmod(self.get_clock().now().nanoseconds, 1_000_000_000)
        self._diag_pub.publish(status_array_bytes(sec, nanosec, level, status_name(self.get_name(), STATUS_TASK),
                                                  message, NO_HARDWARE, values))


def main(args: list[str] | None = None) -> int:
    """Run the supervisor standalone (python -m hil_nodes.supervisor.node / ros2 run)."""
    return run([SupervisorNode], args)


main.node_class = SupervisorNode  # the one-process container builds nodes from it

if __name__ == '__main__':
    main()
