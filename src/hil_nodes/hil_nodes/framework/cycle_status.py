"""The ``<node>: cycle`` status of a node: its cycle monitors and published-message counters
turned into one DiagnosticStatus's level, message and key/values (docs/supervisor.md
"Real-time health"). ``hil_nodes.framework.base`` owns one and publishes it every ``status_period``.

Keys: ``cycles``, ``skipped``, ``late``, ``overruns``, ``deadline_misses``, ``cpu_s`` are totals
over the node's monitors; ``exec_p50_us``, ``exec_p99_us``, ``exec_max_us``, ``cpu_p50_us``,
``period_mean_us``, ``period_std_us``, ``period_max_us``, ``latency_p50_ms``,
``latency_p99_ms``, ``budget_us`` describe the node's first (main) monitor, and the same with a
``<monitor>.`` prefix describe any further one; ``published.<topic>`` counts messages.
"""
from __future__ import annotations

from hil_core.supervision.timing import CycleHealth

TOTALS = ('cycles', 'skipped', 'late', 'overruns', 'deadline_misses', 'cpu_s')
OK_LEVEL, WARN_LEVEL = 0, 1


class CycleReport:
    def __init__(self):
        self.monitors: dict[str, CycleHealth] = {}
        self.published: dict[str, int] = {}
        self._last = (0, 0, 0)

    def add(self, name: str, monitor: CycleHealth) -> CycleHealth:
        self.monitors[name] = monitor
        return monitor

    def clear(self) -> None:
        self.monitors.clear()
        self.published.clear()
        self._last = (0, 0, 0)

    def set_inject_delay(self, seconds: float) -> None:
        for monitor in self.monitors.values():
            monitor.inject_delay = float(seconds)

    def report(self) -> tuple[int, str, dict]:
        """(level, message, values); WARN when cycles were late or skipped since the last one."""
        values: dict = dict.fromkeys(TOTALS, 0)
        values['cpu_s'] = 0.0
        for i, (name, monitor) in enumerate(self.monitors.items()):
            snap = monitor.snapshot()
            for key in TOTALS:
                values[key] += snap[key]
            prefix = '' if i == 0 else f'{name}.'
            values.update({f'{prefix}{k}': v for k, v in snap.items() if k not in TOTALS or prefix})
        values['monitors'] = ','.join(self.monitors)
        values.update({f'published.{topic}': n for topic, n in sorted(self.published.items())})
        now = (values['cycles'], values['late'], values['skipped'])
        cycles, late, skipped = (a - b for a, b in zip(now, self._last))
        self._last = now
        message = f'{cycles} cycles since the last report, {late} late, {skipped} skipped'
        return (WARN_LEVEL if late or skipped else OK_LEVEL), message, values
