"""HIL mode machine (seed 000, section 5: the primary state machine).

The supervisor owns one ``ModeMachine``. Two kinds of input drive it:

* **requests** from people or the ``hil`` command (start, stop, reset, estop), which may be
  refused with a reason when the current mode does not allow them;
* **events** reported by the motion side (the secondary state machine of the seed: homed,
  synchronized, safety takeover, back inside, home reached) and faults from anywhere.

Requests flow *down* (the motion side obeys the mode the supervisor publishes);
progress flows *up* as events. The machine is a pure transition table: no clock, no I/O.

Flow::

    IDLE --start--> HOMING --homed--> SYNCHRONIZING --synchronized--> RUNNING
    HOMING | SYNCHRONIZING | RUNNING --stop--> RETURNING_HOME --home_reached--> IDLE
    SYNCHRONIZING | RUNNING --safety_takeover--> SAFETY_RECOVERY --back_inside--> RETURNING_HOME
    any mode --estop | fault--> FAULT --reset (no fault present)--> IDLE
"""
from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class HilMode(str, Enum):
    IDLE = 'IDLE'
    HOMING = 'HOMING'
    SYNCHRONIZING = 'SYNCHRONIZING'
    RUNNING = 'RUNNING'
    SAFETY_RECOVERY = 'SAFETY_RECOVERY'
    RETURNING_HOME = 'RETURNING_HOME'
    FAULT = 'FAULT'


class Request(str, Enum):
    START = 'start'
    STOP = 'stop'
    RESET = 'reset'
    ESTOP = 'estop'


class Event(str, Enum):
    """Progress reported by the motion side (names used on /hil/events)."""
    HOMED = 'homed'
    SYNCHRONIZED = 'synchronized'
    SAFETY_TAKEOVER = 'safety_takeover'
    BACK_INSIDE = 'back_inside'
    HOME_REACHED = 'home_reached'
    FAULT = 'fault'


# Modes in which the robot may be moving under model (or recovery) control.
MOVING_MODES = frozenset({HilMode.HOMING, HilMode.SYNCHRONIZING, HilMode.RUNNING,
                          HilMode.SAFETY_RECOVERY, HilMode.RETURNING_HOME})

# Modes that are *requested* by the supervisor and executed by the motion side; the others
# are reached by the motion side's own progress and only mirrored by the supervisor.
REQUESTED_MODES = frozenset({HilMode.IDLE, HilMode.HOMING, HilMode.RETURNING_HOME, HilMode.FAULT})

# Modes in which a stop has nothing left to do because the robot already heads home.
RETURNING_MODES = frozenset({HilMode.SAFETY_RECOVERY, HilMode.RETURNING_HOME})

REQUEST_TABLE: dict[Request, dict[HilMode, HilMode]] = {
    Request.START: {HilMode.IDLE: HilMode.HOMING},
    Request.STOP: {HilMode.HOMING: HilMode.RETURNING_HOME,
                   HilMode.SYNCHRONIZING: HilMode.RETURNING_HOME,
                   HilMode.RUNNING: HilMode.RETURNING_HOME},
    Request.RESET: {HilMode.FAULT: HilMode.IDLE},
}

EVENT_TABLE: dict[Event, dict[HilMode, HilMode]] = {
    Event.HOMED: {HilMode.HOMING: HilMode.SYNCHRONIZING},
    Event.SYNCHRONIZED: {HilMode.SYNCHRONIZING: HilMode.RUNNING},
    Event.SAFETY_TAKEOVER: {HilMode.SYNCHRONIZING: HilMode.SAFETY_RECOVERY,
                            HilMode.RUNNING: HilMode.SAFETY_RECOVERY},
    Event.BACK_INSIDE: {HilMode.SAFETY_RECOVERY: HilMode.RETURNING_HOME},
    Event.HOME_REACHED: {HilMode.RETURNING_HOME: HilMode.IDLE},
}

# Why a request is refused, beyond "not allowed here": what the operator should do instead.
_HINTS: dict[tuple[Request, HilMode], str] = {
    (Request.START, HilMode.FAULT): 'reset first',
    (Request.STOP, HilMode.IDLE): 'nothing to stop',
    (Request.STOP, HilMode.SAFETY_RECOVERY): 'already recovering and returning home',
    (Request.STOP, HilMode.RETURNING_HOME): 'already returning home',
    (Request.STOP, HilMode.FAULT): 'motion is already held; reset to leave FAULT',
    (Request.RESET, HilMode.IDLE): 'no fault to reset',
}


@dataclass(frozen=True)
class Transition:
    """Outcome of one input: ``accepted`` with the new mode, or refused with a reason.

    An accepted input may leave the mode unchanged (estop or fault while already in FAULT):
    ``changed`` tells the owner whether to publish a new mode.
    """
    accepted: bool
    previous: HilMode
    mode: HilMode
    reason: str

    @property
    def changed(self) -> bool:
        return self.previous is not self.mode


class ModeMachine:
    """The HIL mode machine: IDLE -> HOMING -> SYNCHRONIZING -> RUNNING
    -> (SAFETY_RECOVERY -> RETURNING_HOME) -> IDLE, FAULT reachable from every mode.

    ``fault_reason`` keeps the *first* cause of the current FAULT (later faults while in FAULT
    are consequences, the first one is what the operator must fix); ``fault_count`` counts
    entries into FAULT over the machine's life.
    """

    def __init__(self, mode: HilMode = HilMode.IDLE):
        self.mode = HilMode(mode)
        self.fault_reason = ''
        self.fault_count = 1 if self.mode is HilMode.FAULT else 0

    def allowed(self, request: Request) -> frozenset[HilMode]:
        """Modes in which ``request`` is accepted (ESTOP: all of them)."""
        request = Request(request)
        if request is Request.ESTOP:
            return frozenset(HilMode)
        return frozenset(REQUEST_TABLE[request])

    def request(self, request: Request, blocking_fault: str = '') -> Transition:
        """Apply a request. ``blocking_fault``: a fault that is still present (a dead node,
        a hard-limit crossing not yet cleared); while it is non-empty RESET is refused."""
        request = Request(request)
        previous = self.mode
        if request is Request.ESTOP:
            return self._enter_fault('emergency stop requested')
        if request is Request.RESET and previous is HilMode.FAULT and blocking_fault:
            return Transition(False, previous, previous,
                              f'reset refused: fault still present ({blocking_fault})')
        target = REQUEST_TABLE[request].get(previous)
        if target is None:
            allowed = ', '.join(m.value for m in REQUEST_TABLE[request])
            hint = _HINTS.get((request, previous))
            return Transition(False, previous, previous,
                              f'{request.value} refused in mode {previous.value} '
                              f'(allowed in: {allowed})' + (f': {hint}' if hint else ''))
        self.mode = target
        if target is HilMode.IDLE:
            self.fault_reason = ''
        return Transition(True, previous, target, f'{request.value}: {previous.value} -> {target.value}')

    def event(self, event: Event, reason: str = '') -> Transition:
        """Apply a progress event of the motion side; events that do not apply are ignored
        (returned as not accepted) so a late or duplicated report can never move the mode."""
        event = Event(event)
        previous = self.mode
        if event is Event.FAULT:
            return self._enter_fault(reason or 'fault reported')
        target = EVENT_TABLE[event].get(previous)
        if target is None:
            return Transition(False, previous, previous,
                              f'event {event.value} ignored in mode {previous.value}')
        self.mode = target
        return Transition(True, previous, target, f'{event.value}: {previous.value} -> {target.value}')

    def fault(self, reason: str) -> Transition:
        return self._enter_fault(reason)

    def add_cause(self, cause: str) -> bool:
        """While in FAULT, a cause confirmed after it (a process death that the launcher
        reported, whose silence the first reason may have seen as a missing command or
        heartbeat) is added to the reason: the first stays first. True when added."""
        if self.mode is not HilMode.FAULT or cause in self.fault_reason:
            return False
        self.fault_reason = f'{self.fault_reason}; then confirmed: {cause}'
        return True

    def _enter_fault(self, reason: str) -> Transition:
        """FAULT is accepted from every mode; while already in FAULT the first reason stays."""
        previous = self.mode
        if previous is not HilMode.FAULT:
            self.fault_reason = reason
            self.fault_count += 1
            self.mode = HilMode.FAULT
            return Transition(True, previous, HilMode.FAULT, reason)
        return Transition(True, previous, HilMode.FAULT,
                          f'already in FAULT ({self.fault_reason}); also: {reason}')
