"""What the HIL panel shows, digested from the supervisor's and the nodes' messages (no rclpy):
the mode and its history (/hil/mode), the run time, fault reason and real-time health of the
"supervisor: run" status, the time-base factor and W-R distance of the "timebase: buffer"
status as strip charts, the late cycles of every "<node>: cycle" status, the last event and
the last safety event (/hil/events, /planner/events: level WARN or worse), the workspace level
h(P) of the achieved TCP (1 = soft limit), and the supervisor's answer to the last request.
The live node and the replay feed it the same way; ``t`` is the time axis of the charts (the
run time live, the bag time in replay)."""
from __future__ import annotations

from dataclasses import dataclass, field

from hil_core.supervision.status_names import status_node
from hil_nodes.hmi.strip import StripChart

SUPERVISOR_TASK = 'run'
TIMEBASE_TASK = 'buffer'
CYCLE_TASK = 'cycle'
WARN = 1


def _float(value) -> float | None:
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def _bool(value) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ('true', 'false'):
        return value.lower() == 'true'
    return None


@dataclass
class EventInfo:
    t: float
    source: str
    name: str
    message: str
    level: int


@dataclass
class PanelModel:
    span: float = 30.0
    mode: str = 'unknown'
    modes: list = field(default_factory=list)            # [(t, mode)], the history
    run_time: float | None = None
    fault_reason: str = ''
    realtime_held: bool | None = None
    health_judged: bool | None = None        # False until the judge's first full window
    health_level: str = ''
    health: str = ''
    lifecycle: str = ''
    late: dict = field(default_factory=dict)               # node -> late cycles (total)
    last_event: EventInfo | None = None
    last_safety_event: EventInfo | None = None
    workspace_level: float | None = None
    answer: str = ''                                      # the supervisor's answer to the last request
    factor_value: float | None = None
    distance_value: float | None = None

    def __post_init__(self):
        self.factor = StripChart(self.span)
        self.distance = StripChart(self.span)

    def on_mode(self, t: float, mode: str) -> None:
        if mode != self.mode or not self.modes:
            self.modes.append((t, mode))
        self.mode = mode

    def on_status(self, t: float, name: str, values: dict) -> None:
        node, _, task = name.partition(': ')
        node = status_node(name)
        if task == SUPERVISOR_TASK and node == 'supervisor':
            self.run_time = _float(values.get('run_time', self.run_time))
            self.fault_reason = values.get('fault_reason', self.fault_reason) or ''
            held = _bool(values.get('realtime_held'))
            self.realtime_held = held if held is not None else self.realtime_held
            judged = _bool(values.get('health_judged'))
            self.health_judged = judged if judged is not None else self.health_judged
            self.health_level = values.get('health_level', self.health_level)
            self.health = values.get('health', self.health) or ''
            self.lifecycle = values.get('lifecycle', self.lifecycle)
            mode = values.get('mode')
            if mode:
                self.on_mode(t, mode)
        elif task == TIMEBASE_TASK and 'factor' in values:
            self.factor_value = _float(values.get('factor'))
            dist = _float(values.get('fractional_distance', values.get('distance')))
            self.distance_value = dist
            self.factor.append(t, self.factor_value)
            self.distance.append(t, dist)
        elif task == CYCLE_TASK and 'late' in values:
            late = _float(values['late'])
            if late is not None:
                self.late[node] = int(late)

    def on_event(self, t: float, source: str, name: str, message: str, level: int) -> None:
        info = EventInfo(t, source, name, message, int(level))
        self.last_event = info
        if info.level >= WARN or name in ('safety_takeover', 'fault'):
            self.last_safety_event = info

    @property
    def late_cycles(self) -> int:
        return sum(self.late.values())

    def summary_lines(self) -> list[str]:
        """The panel's text, one fact a line (also what a test reads from the page)."""
        held = {True: 'yes', False: 'NO', None: '?'}[self.realtime_held]
        if self.realtime_held and self.health_judged is False:
            held = 'not judged yet'          # an OK before the first full health window says nothing
        rt = '?' if self.run_time is None else f'{self.run_time:.2f} s'
        factor = '?' if self.factor_value is None else f'{self.factor_value:.4f}'
        dist = '?' if self.distance_value is None else f'{self.distance_value:.2f}'
        lines = [f'**Mode:** {self.mode}', f'**Run time:** {rt}']
        if self.factor_value is not None or self.distance_value is not None:   # a time base runs (Hexafloat)
            lines += [f'**Time-base factor:** {factor}', f'**W-R distance:** {dist} frames']
        lines += [f'**Real time held:** {held}', f'**Late cycles:** {self.late_cycles}']
        if self.health and self.health_level != 'OK':
            lines.append(f'**Health:** {self.health_level} {self.health}')
        if self.workspace_level is not None:
            lines.append(f'**Workspace level h:** {self.workspace_level:.2f} (soft limit 1)')
        if self.fault_reason:
            lines.append(f'**Fault reason:** {self.fault_reason}')
        if self.last_safety_event is not None:
            e = self.last_safety_event
            lines.append(f'**Last safety event:** {e.name} from {e.source} at {e.t:.2f} s: {e.message}')
        return lines

    def history_text(self, last: int = 8) -> str:
        return ' → '.join(f'{m} ({t:.1f} s)' for t, m in self.modes[-last:])


def level_int(level) -> int:
    """DiagnosticStatus.level as an int (rclpy gives a byte string, rosbags an int)."""
    if isinstance(level, (bytes, bytearray)):
        return level[0] if level else 0
    return int(level)


def is_duplicate_planner_event(name: str) -> bool:
    """The planner sends its HIL events on /hil/events and /planner/events: read them once."""
    from hil_core.supervision.modes import Event
    return name in {e.value for e in Event}
