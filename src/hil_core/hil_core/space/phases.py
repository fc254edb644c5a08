"""How the space plant follows the supervisor's HIL modes (docs/CONTRACTS.md "HIL modes").

The space experiment has no homing motion: the robot's configuration at start is the seed's
initial configuration, so HOMING reports ``homed`` at once and SYNCHRONIZING (controller
integrators reset) reports ``synchronized`` on the next frame; RUNNING runs the control law.
IDLE, FAULT, RETURNING_HOME and SAFETY_RECOVERY ramp the joint velocity command to zero;
RETURNING_HOME reports ``home_reached`` once the command is zero. Without a supervisor
(``requested`` None, standalone use) the plant runs.
"""
from __future__ import annotations

from hil_core.supervision.modes import Event, HilMode

STOP_MODES = frozenset({HilMode.IDLE, HilMode.FAULT, HilMode.RETURNING_HOME, HilMode.SAFETY_RECOVERY})


class SpacePhases:
    def __init__(self):
        self.phase: HilMode | None = None
        self._request: HilMode | None = None

    def update(self, requested: str | None, stopped: bool) -> tuple[bool, bool, list[tuple[str, str]]]:
        """(control on, reset the controller now, events) for this frame."""
        events = []
        reset = False
        if requested is None:
            if self.phase is None:
                self.phase, reset = HilMode.RUNNING, True
            return True, reset, events
        try:
            mode = HilMode(requested)
        except ValueError:
            mode = HilMode.FAULT            # an unknown mode name: stop, like a fault
        if mode is not self._request:
            self._request = mode
            if mode is HilMode.HOMING:
                self.phase = HilMode.SYNCHRONIZING
                events.append((Event.HOMED.value, 'no homing motion: the start configuration is home'))
                return False, True, events
            if mode in STOP_MODES:
                self.phase = mode
            elif mode in (HilMode.SYNCHRONIZING, HilMode.RUNNING) and self.phase is None:
                self.phase, reset = HilMode.RUNNING, True      # joined a running system
        if self.phase is HilMode.SYNCHRONIZING:
            self.phase = HilMode.RUNNING
            events.append((Event.SYNCHRONIZED.value, 'controller synchronized (integrators reset)'))
            return True, True, events
        if self.phase is HilMode.RETURNING_HOME and stopped:
            self.phase = HilMode.IDLE
            events.append((Event.HOME_REACHED.value, 'joint velocity command ramped to zero'))
        return self.phase is HilMode.RUNNING, reset, events
