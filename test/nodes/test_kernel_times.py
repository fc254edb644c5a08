"""The split of a cycle's CPU into compiled kernels and glue (hil_nodes.runtime.kernel_times,
hil_nodes.framework.cycle_status.CycleMonitor), on a clock the test moves: every call into a
numba kernel is made to take 3 ms of it, the Python around the calls 1.5 ms a cycle."""
import numpy as np
import pytest

import hil_core.supervision.timing as timing
from hil_core.maths.jit import njit_cached
from hil_nodes.framework.cycle_status import CycleMonitor, CycleReport
from hil_nodes.runtime import kernel_times

Dispatcher = kernel_times.dispatcher_class()


@njit_cached
def _total(a):
    return a.sum()


@pytest.fixture
def clock(monkeypatch):
    """The thread CPU clock of the cycle monitor and of the hook, moved by hand; a kernel call
    takes 3 ms of it. The hook is uninstalled again afterwards (monkeypatch restores both)."""
    now = [0.0]
    monkeypatch.setattr(timing, '_cpu', lambda: now[0])
    monkeypatch.setattr(kernel_times, '_thread_time', lambda: now[0])
    monkeypatch.setattr(kernel_times, 'ENABLED', False)
    real = Dispatcher.__call__

    def three_ms(self, *args, **kwargs):
        now[0] += 0.003
        return real(self, *args, **kwargs)
    monkeypatch.setattr(Dispatcher, '__call__', three_ms)
    return now


def _cycles(monitor, now, n):
    x = np.ones(6)
    for _ in range(n):
        with monitor():
            now[0] += 0.001                    # glue before the kernels
            assert _total(x) == 6.0 and _total(x) == 6.0
            now[0] += 0.0005                   # and after


def test_without_the_hook_a_cycle_reports_its_cpu_only(clock):
    monitor = CycleMonitor(0.0025)
    _cycles(monitor, clock, 4)
    figures = monitor.snapshot()
    assert figures['cpu_p50_us'] == pytest.approx(7500.0)
    assert 'kernel_cpu_p50_us' not in figures and 'glue_cpu_p50_us' not in figures


def test_with_the_hook_the_cpu_splits_into_kernel_and_glue(clock):
    kernel_times.install()
    monitor = CycleMonitor(0.0025)
    report = CycleReport()
    report.add('frame', monitor)
    _cycles(monitor, clock, 5)
    clock[0] += 1.0                            # outside any cycle: counted nowhere
    _total(np.ones(3))
    _cycles(monitor, clock, 5)
    figures = report.report()[2]
    assert figures['cpu_p50_us'] == pytest.approx(7500.0)
    assert figures['kernel_cpu_p50_us'] == pytest.approx(6000.0)
    assert figures['glue_cpu_p50_us'] == pytest.approx(1500.0)


def test_the_hook_installs_once(clock):
    kernel_times.install()
    wrapped = Dispatcher.__call__
    kernel_times.install()
    assert Dispatcher.__call__ is wrapped
