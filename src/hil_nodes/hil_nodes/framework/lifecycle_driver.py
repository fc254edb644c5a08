"""Drive lifecycle transitions of other nodes without ever blocking the executor.

The supervisor may share its process (and executor) with every node it manages: a blocking
wait for a ``change_state`` answer would then deadlock the one-process container. So each
transition is an asynchronous ``call_async``; a steady timer (running only while a sequence
is in progress) moves on when the answer is in, and gives up on a service that does not
appear within ``service_timeout`` or a transition not answered within ``transition_timeout``
(both wall seconds).

A request or its answer can be lost while DDS still matches a freshly started process's
service endpoints (the service already looks ready to the client). So a transition without
an answer after ``retry_period`` is not simply waited for: the node's state (from its
transition events, else asked through ``get_state``) tells whether it was done (accept it),
never arrived (send it again) or went elsewhere (fail).

A sequence may bring its own, shorter timeouts (the supervisor's shutdown does: a node that
died without anyone noticing yet must not hold the shutdown for 30 s). A step of a node the
owner already knows to be dead (``state_of`` says 'dead') fails at once, and once a node did
not answer, its later steps in the sequence are not tried: each dead node costs one timeout.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable

from lifecycle_msgs.msg import Transition as TransitionMsg
from lifecycle_msgs.srv import ChangeState, GetState
from rclpy.clock import Clock, ClockType
from rclpy.node import Node

from hil_core.supervision.lifecycle_plan import SOURCE_STATE, TARGET_STATE, Step
from hil_nodes import topics

TRANSITION_IDS = {
    'configure': TransitionMsg.TRANSITION_CONFIGURE,
    'activate': TransitionMsg.TRANSITION_ACTIVATE,
    'deactivate': TransitionMsg.TRANSITION_DEACTIVATE,
    'cleanup': TransitionMsg.TRANSITION_CLEANUP,
}


@dataclass
class SequenceResult:
    kind: str
    ok: bool
    done: list[str] = field(default_factory=list)      # steps that succeeded, in order
    failures: list[str] = field(default_factory=list)  # why steps failed

    def summary(self) -> str:
        text = f'{self.kind}: ' + (', '.join(self.done) if self.done else 'nothing to do')
        if self.failures:
            text += '; FAILED: ' + '; '.join(self.failures)
        return text


class LifecycleDriver:
    """Runs one sequence of lifecycle steps at a time (see the module docstring).

    ``on_state(node, label)`` is called after every successful transition with the node's new
    primary state. A sequence either stops at the first failure (bring-up) or goes on with
    the remaining steps (shutdown: bring down as much as possible).
    """

    def __init__(self, node: Node, names, service_timeout: float, transition_timeout: float,
                 on_state: Callable[[str, str], None], state_of: Callable[[str], str] = lambda n: 'unknown',
                 poll_period: float = 0.01):
        self._node = node
        self.service_timeout = float(service_timeout)
        self.transition_timeout = float(transition_timeout)
        self._on_state = on_state
        self._state_of = state_of
        # Without an answer after this long, check the node's state and resend if needed.
        self.retry_period = min(2.0, self.transition_timeout / 3.0)
        self._retry = self.retry_period        # of the running sequence (its timeout may be shorter)
        self.resends = 0
        self._retry_at = 0.0
        self._resent = False
        self._call = None              # change_state future of the step in flight
        self._query = None             # get_state future of the step in flight
        self._clients = {n: node.create_client(ChangeState, topics.lifecycle_service(n, 'change_state'))
                         for n in names}
        self._state_clients = {n: node.create_client(GetState, topics.lifecycle_service(n, 'get_state'))
                               for n in names}
        self._steps: list[Step] = []
        self._result: SequenceResult | None = None
        self._stop_on_failure = True
        self._on_done: Callable[[SequenceResult], None] | None = None
        self._timeouts = (self.service_timeout, self.transition_timeout)   # of the running sequence
        self._phase = 'idle'           # idle | wait_service | call
        self._idle_callbacks: list[Callable[[], None]] = []
        self._deadline = 0.0
        self._timer = node.create_timer(poll_period, self._tick,
                                        clock=Clock(clock_type=ClockType.STEADY_TIME))
        self._timer.cancel()           # runs only while a sequence is in progress

    def missing(self) -> list[str]:
        """The nodes whose change_state or get_state service is not there (yet), in order."""
        return [n for n, c in self._clients.items()
                if not (c.service_is_ready() and self._state_clients[n].service_is_ready())]

    @property
    def busy(self) -> bool:
        return self._result is not None

    @property
    def current(self) -> str:
        return str(self._steps[0]) if self._steps and self.busy else ''

    def start(self, kind: str, steps: list[Step], on_done: Callable[[SequenceResult], None],
              stop_on_failure: bool = True, service_timeout: float | None = None,
              transition_timeout: float | None = None) -> None:
        if self.busy:
            raise RuntimeError(f'{self._result.kind} still in progress ({self.current})')
        unknown = [s.node for s in steps if s.node not in self._clients]
        if unknown:
            raise ValueError(f'not a managed node: {unknown}')
        self._steps = list(steps)
        self._result = SequenceResult(kind, ok=True)
        self._stop_on_failure = stop_on_failure
        self._on_done = on_done
        self._timeouts = (self.service_timeout if service_timeout is None else float(service_timeout),
                          self.transition_timeout if transition_timeout is None else float(transition_timeout))
        self._retry = min(self.retry_period, self._timeouts[1] / 3.0)
        self._phase = 'idle'
        self._timer.reset()
        self._tick()

    def abort(self, why: str) -> None:
        """Stop the running sequence as soon as it is safe: a transition already sent is left
        to finish (its outcome decides the node's state), nothing after it is started."""
        if not self.busy:
            return
        keep = 1 if self._phase == 'call' else 0
        skipped = self._steps[keep:]
        del self._steps[keep:]
        if skipped:
            self._result.ok = False
            self._result.failures.append(f'{why}: not run: ' + ', '.join(map(str, skipped)))
        self._tick()

    def when_idle(self, callback: Callable[[], None]) -> None:
        """Call ``callback`` once no sequence runs (now, or after the current one's on_done)."""
        if self.busy:
            self._idle_callbacks.append(callback)
        else:
            callback()

    def _tick(self) -> None:
        # Several steps may complete in one tick (answers already in): loop until we wait.
        while self.busy:
            if not self._steps:
                self._finish()
                return
            step = self._steps[0]
            now = time.monotonic()
            service_timeout, transition_timeout = self._timeouts
            if self._phase != 'call' and self._state_of(step.node) == 'dead':
                self._fail(step, 'node is dead', silent=True)
                continue
            if self._phase == 'idle':
                self._phase, self._deadline = 'wait_service', now + service_timeout
            if self._phase == 'wait_service':
                client = self._clients[step.node]
                if not client.service_is_ready():
                    if now > self._deadline:
                        # (the resolved name: in the graph's namespace, e.g. /rig_a/planner/change_state)
                        self._fail(step, f'service {client.service_name} not available after '
                                         f'{service_timeout:g} s', silent=True)
                        continue
                    return
                self._send(step, now)
                self._resent = False
                self._phase, self._deadline = 'call', now + transition_timeout
            verdict = self._verdict(step, now)
            if verdict is None:
                if now > self._deadline:
                    self._fail(step, f'no answer within {transition_timeout:g} s', silent=True)
                    continue
                return
            if verdict == 'ok':
                self._clear(step)
                self._result.done.append(str(step))
                self._on_state(step.node, TARGET_STATE[step.transition])
                self._steps.pop(0)
                self._phase = 'idle'
            else:
                self._fail(step, verdict)

    def _verdict(self, step: Step, now: float) -> str | None:
        """'ok', a failure reason, or None (still waiting) for the step in flight."""
        target = TARGET_STATE[step.transition]
        if self._call is not None and self._call.done():
            response, self._call = self._call.result(), None
            if response is not None and response.success:
                return 'ok'
            if not self._resent:
                return 'refused or failed by the node'
            self._query_state(step, now)   # a resend refused: did the first request arrive after all?
        if self._state_of(step.node) == target:
            return 'ok'                    # its transition event is in: only the answer was lost
        if self._query is not None and self._query.done():
            label, self._query = self._query.result().current_state.label, None
            if label == target:
                return 'ok'
            if label == SOURCE_STATE[step.transition]:
                if not self._resent:       # the request never arrived: send it once more
                    self._send(step, now)
                    self._resent = True
                    self.resends += 1
                elif self._call is None:   # the resend was refused and nothing changed
                    return f'refused or failed by the node (node is {label})'
            elif not label.endswith('ing'):  # not in a transition state: it went elsewhere
                return f'transition not done (node is {label})'
        if self._query is None and now >= self._retry_at:
            self._query_state(step, now)   # no answer yet: ask which state the node is in
        return None

    def _send(self, step: Step, now: float) -> None:
        if self._call is not None and not self._call.done():
            self._clients[step.node].remove_pending_request(self._call)
        req = ChangeState.Request()
        req.transition.id = TRANSITION_IDS[step.transition]
        self._call = self._clients[step.node].call_async(req)
        self._retry_at = now + self._retry

    def _query_state(self, step: Step, now: float) -> None:
        self._query = self._state_clients[step.node].call_async(GetState.Request())
        self._retry_at = now + self._retry

    def _clear(self, step: Step) -> None:
        """Forget the requests in flight of ``step`` (late answers are then ignored)."""
        if self._call is not None and not self._call.done():
            self._clients[step.node].remove_pending_request(self._call)
        if self._query is not None and not self._query.done():
            self._state_clients[step.node].remove_pending_request(self._query)
        self._call = self._query = None

    def _fail(self, step: Step, why: str, silent: bool = False) -> None:
        """``silent``: the node did not answer at all (or is dead): its later steps are dropped."""
        self._clear(step)
        self._result.ok = False
        self._result.failures.append(f'{step.transition} of node {step.node}: {why}')
        self._steps.pop(0)
        self._phase = 'idle'
        if self._stop_on_failure:
            self._steps.clear()
        elif silent:
            dropped = [s for s in self._steps if s.node == step.node]
            if dropped:
                self._steps = [s for s in self._steps if s.node != step.node]
                self._result.failures.append(f'not run (node {step.node} does not answer): '
                                             + ', '.join(map(str, dropped)))

    def _finish(self) -> None:
        result, on_done = self._result, self._on_done
        self._result, self._on_done, self._phase = None, None, 'idle'
        self._timer.cancel()
        if on_done is not None:
            on_done(result)
        callbacks, self._idle_callbacks = self._idle_callbacks, []
        for callback in callbacks:
            callback()
