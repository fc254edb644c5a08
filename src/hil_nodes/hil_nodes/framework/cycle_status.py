"""The ``<node>: cycle`` status of a node: its cycle monitors and published-message counters
turned into one DiagnosticStatus's level, message and key/values (docs/supervisor.md
"Real-time health"). ``hil_nodes.framework.base`` owns one and publishes it every ``status_period``.

Keys: ``cycles``, ``skipped``, ``late``, ``overruns``, ``deadline_misses``, ``cpu_s`` are totals
over the node's monitors; ``exec_p50_us``, ``exec_p99_us``, ``exec_max_us``, ``cpu_p50_us``,
``period_mean_us``, ``period_std_us``, ``period_max_us``, ``latency_p50_ms``,
``latency_p99_ms``, ``budget_us`` (and with ``HIL_KERNEL_TIMES=1`` ``kernel_cpu_p50_us`` and
``glue_cpu_p50_us``: hil_nodes.runtime.kernel_times) describe the node's first (main) monitor,
and the same with a ``<monitor>.`` prefix describe any further one; ``published.<topic>`` counts messages (the topic
by its name at the root, ``topics.at_root``, as bags and accounting key it, in any namespace).

A monitor is a ``CycleMonitor``: ``hil_core.supervision.timing.CycleHealth`` that is also the one
way a node measures a cycle, ``with self._cycle(stamp_ns): ...`` (begin on entry, end on exit,
an exception included). One object per monitor, reused every cycle: measured with ``timeit``
here, the ``with`` adds ~0.4 us per cycle to the explicit ``begin``/``try``/``finally``/``end``
(1.4 us), a generator-based ``contextlib.contextmanager`` ~1.2 us and a generator per cycle.
Not re-entrant (one cycle of a monitor at a time): no callback re-enters its node
(hil_nodes.runtime.intra_process delivers after the publishing callback has returned).
"""
from __future__ import annotations

from hil_core.supervision.timing import CycleHealth, ring, ring_percentiles
from hil_nodes.runtime import kernel_times
from hil_nodes.topics import at_root

TOTALS = ('cycles', 'skipped', 'late', 'overruns', 'deadline_misses', 'cpu_s')
OK_LEVEL, WARN_LEVEL = 0, 1


class InjectedFault(RuntimeError):
    """The test-only exception of ``inject_exception_after`` (a stage that fails in its frame)."""


class CycleMonitor(CycleHealth):
    """A cycle-health accumulator that measures the cycle of a ``with`` block (module docstring).
    With ``HIL_KERNEL_TIMES=1`` (hil_nodes.runtime.kernel_times) it also splits each cycle's CPU
    into the part inside compiled kernels and the rest, the glue: ``kernel_cpu_p50_us`` and
    ``glue_cpu_p50_us`` in its figures."""

    _entry_stamp: int | None = None
    _t0 = 0.0
    _k0 = 0.0
    _split: tuple | None = None   # (kernel, glue) CPU rings (timing.ring), when timed
    _split_n = 0
    raise_after = 0          # test only: the cycle that raises InjectedFault (0: none)

    def __call__(self, stamp_ns: int | None = None) -> 'CycleMonitor':
        """The monitor for one cycle whose input is stamped ``stamp_ns`` (see ``begin``)."""
        self._entry_stamp = stamp_ns
        return self

    def __enter__(self) -> None:
        self._t0 = self.begin(self._entry_stamp)
        if kernel_times.ENABLED:
            self._k0 = kernel_times.spent()
        if self.raise_after and self.cycles + 1 >= self.raise_after:
            raise InjectedFault(f'injected in cycle {self.cycles + 1} (inject_exception_after)')

    def __exit__(self, *exc) -> None:
        self.end(self._t0)
        if kernel_times.ENABLED:
            self._record_split(kernel_times.spent() - self._k0)

    def _record_split(self, kernel: float) -> None:
        """The cycle that just ended spent ``kernel`` CPU s in compiled kernels."""
        size = self._mask + 1
        if self._split is None:
            self._split = (ring(size), ring(size))
        cpu = self._cpu_ring[(self._i - 1) & self._mask]
        j = self._split_n & self._mask
        self._split[0][j] = kernel
        self._split[1][j] = cpu - kernel
        self._split_n += 1

    def snapshot(self) -> dict[str, float]:
        figures = super().snapshot()
        if self._split is not None:
            n = min(self._split_n, self._mask + 1)
            (kernel,), (glue,) = (ring_percentiles(samples, n, (0.5,)) for samples in self._split)
            figures['kernel_cpu_p50_us'] = kernel * 1e6
            figures['glue_cpu_p50_us'] = glue * 1e6
        return figures


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
        values.update({f'published.{at_root(topic)}': n for topic, n in sorted(self.published.items())})
        now = (values['cycles'], values['late'], values['skipped'])
        cycles, late, skipped = (a - b for a, b in zip(now, self._last))
        self._last = now
        message = f'{cycles} cycles since the last report, {late} late, {skipped} skipped'
        return (WARN_LEVEL if late or skipped else OK_LEVEL), message, values
