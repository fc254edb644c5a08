"""The supervisor's real-time health watch: every node's ``<node>: cycle`` status, the hardware's
frame counters and the time base's counters in (from /diagnostics), a verdict out
(``hil_core.supervision.realtime_health``; docs/supervisor.md "Real-time health").

Only the run is judged: the windows start when the system is up (``arm``), so the CPU spent
configuring nodes is not taken for a real-time failure. Beyond a fault limit the owner is
told once (``on_fault``, which makes the FAULT and with it the controlled stop); ``held``
stays false for the rest of the run, with the first reason, so the run summary can say
whether real time was held.
"""
from __future__ import annotations

from typing import Callable

from diagnostic_msgs.msg import DiagnosticArray

from hil_core.supervision.realtime_health import CYCLE, FAULT, HARDWARE, OK, TIMEBASE, WARN, Assessment, HealthConfig, HealthJudge, classify, numeric_values
from hil_core.supervision.status_names import status_node
from hil_nodes import topics

LEVEL_NAMES = {OK: 'OK', WARN: 'WARN', FAULT: 'FAULT'}


class HealthWatch:
    def __init__(self, node, config: HealthConfig, on_fault: Callable[[str], None], now: Callable[[], float],
                 fault_enabled: bool = True, lockstep: bool = False):
        self._node = node
        # In lockstep the time base's reader clock is the frame clock: its factor and W-R follow
        # the content of the run (a writer gap, a mode change), not whether anything kept up with
        # the wall clock, so only cycles and late frames are judged there.
        self.kinds = {CYCLE, HARDWARE} if lockstep else {CYCLE, HARDWARE, TIMEBASE}
        self._own = node.get_name()
        self._on_fault = on_fault
        self._now = now
        self.fault_enabled = fault_enabled
        self.judge = HealthJudge(config)
        self.armed = False
        self.held = True
        self.reason = ''             # the first fault-level reason of the run
        self.current = Assessment()
        self.warnings = 0            # times the verdict went from OK to WARN
        node.create_subscription(DiagnosticArray, topics.DIAGNOSTICS, self._on_diagnostics, 100)

    def arm(self) -> None:
        """Start judging (the end of a bring-up): forget what came before."""
        self.judge.clear()
        self.current = Assessment()
        self.armed = True

    def disarm(self) -> None:
        self.armed = False

    def _on_diagnostics(self, msg: DiagnosticArray) -> None:
        now = self._now()
        seen = False
        for st in msg.status:
            who = status_node(st.name)     # "<node>: <task>" (hardware_id names the hardware)
            if who == self._own:
                continue
            values = numeric_values((kv.key, kv.value) for kv in st.values)
            kind = classify(st.name, values)
            if kind in self.kinds:
                self.judge.observe(who, kind, now, values)
                seen = True
        if seen:
            self.evaluate(now)

    def evaluate(self, now: float) -> Assessment:
        assessment = self.judge.assess(now)
        previous, self.current = self.current.level, assessment
        if not self.armed:
            return assessment
        if assessment.level >= FAULT and previous < FAULT:
            if self.held:
                self.held, self.reason = False, assessment.reason
            self._node.get_logger().error(assessment.reason)
            if self.fault_enabled:
                self._on_fault(assessment.reason)
        elif assessment.level == WARN and previous == OK:
            self.warnings += 1
            self._node.get_logger().warning(assessment.reason)
        return assessment

    def blocking_reason(self) -> str:
        """The current fault-level verdict (RESET waits until real time is held again)."""
        if self.armed and self.fault_enabled and self.current.level >= FAULT:
            return self.current.reason
        return ''

    def status_values(self) -> dict:
        values = {'realtime_held': self.held, 'realtime_reason': self.reason,
                  'health_level': LEVEL_NAMES[self.current.level], 'health': self.current.reason,
                  'health_warnings': self.warnings, 'health_judged': self.judge.judged}
        for f in self.current.findings:
            values[f'health:{f.node}:{f.what}'] = f.value
        return values
