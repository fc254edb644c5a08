"""hil_nodes.cli.run_meter.RunMeter: CPU, wall time and progress come from the same instant (the
loop turn in which a fresh progress status came in), the window spans the run, and a window that
saw only part of the run gives no figure."""
import pytest

from hil_nodes.cli import run_meter


@pytest.fixture
def clock(monkeypatch):
    """Wall time and the CPU seconds of one process and of the hil command, set by the test."""
    now = {'wall': 100.0, 'container': 10.0, 'hil': 1.0}
    monkeypatch.setattr(run_meter.time, 'monotonic', lambda: now['wall'])
    monkeypatch.setattr(run_meter, '_cpu_of', lambda pid: now['container'])
    monkeypatch.setattr(run_meter, '_self_cpu', lambda: now['hil'])
    return now


def test_the_window_pairs_cpu_wall_and_progress_of_the_same_turns(clock):
    meter = run_meter.RunMeter({'container': 1234})
    meter.observe(False, (1, 0.0))               # before the run: nothing
    clock.update(wall=101.0, container=11.0)
    meter.observe(True, (2, 0.5))                # first fresh status of the run
    clock.update(wall=101.5, container=99.0)
    meter.observe(True, (2, 0.5))                # the same status again: not a sample
    clock.update(wall=103.0, container=12.0, hil=1.1)
    meter.observe(True, (3, 8.5))                # the last one before the end
    meter.stop()
    clock.update(wall=104.0, container=20.0)
    meter.observe(True, (4, 12.0))               # after the end: not counted
    fig = meter.figures(run_sim_s=9.0)
    assert fig['cpu_window_sim_s'] == '8.00' and fig['cpu_window_wall_s'] == '2.00'
    assert fig['sim_per_wall'] == '4.000'                    # 8 sim s in 2 wall s
    assert fig['cpu_s_per_sim_s'] == f'{(1.0 + 0.1) / 8:.3f}'
    assert fig['cpu_s_per_sim_s_by_process'] == f'container {1.0 / 8:.3f}, hil {0.1 / 8:.3f}'


def test_a_window_that_saw_only_the_end_of_the_run_is_no_figure(clock):
    meter = run_meter.RunMeter({'container': 1234})
    meter.observe(True, (7, 11.5))
    clock.update(wall=100.2, container=10.1)
    meter.observe(True, (8, 12.0))
    meter.stop()
    fig = meter.figures(run_sim_s=12.2)
    assert fig['cpu_s_per_sim_s'].startswith('not measured') and 'span 0.50 of its 12.20 sim s' in fig['sim_per_wall']
    assert 'cpu_window_sim_s' not in fig


def test_no_progress_during_the_run_is_no_figure(clock):
    meter = run_meter.RunMeter({'container': 1234})
    meter.observe(True, None)
    meter.observe(True, (1, 0.0))
    meter.stop()
    assert meter.figures(run_sim_s=1.0) == {'cpu_s_per_sim_s': 'not measured (no two progress statuses during '
                                                               'the run)'}
