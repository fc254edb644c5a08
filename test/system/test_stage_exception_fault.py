"""A chain stage that raises in its frame, end to end: `hil run hexafloat --lockstep --scenario
stage_exception` makes the admittance raise in its frame 2040, 0.1 s after the first impulse,
while the platform moves. The node stops in place (hil_nodes.framework.liveness.fail_in_place) and
its process, with the supervisor and the drives, goes on: the run ends in FAULT naming the node
and the exception, nothing is killed, and the platform stops in a controlled way (peak slider
acceleration from /joint_states within the planner's a_max, at rest at the end)."""
import numpy as np
import pytest
from hilrun import hil_run

from controlled_stop import stop_figures

pytestmark = pytest.mark.slow

A_MAX = 6.0           # m/s^2, config/planner.yaml a_max (translation): the fault matrix's bound


def test_a_stage_that_raises_stops_in_place_and_the_run_stops_in_a_controlled_way(tmp_path):
    code, summary, err = hil_run('hexafloat', '--lockstep', '--scenario', 'stage_exception',
                                 '--record', str(tmp_path), timeout=180.0)
    assert code == 1, err[-3000:]
    assert summary['outcome'] == 'fault', summary
    reason = summary['fault_reason']
    assert reason.startswith('admittance: exception in its delivery of /ft_sensor/wrench: InjectedFault'), reason
    assert summary['modes'].split(' -> ')[-1] == 'FAULT' and 'RUNNING' in summary['modes']
    assert not summary.get('killed_processes', '').strip(), summary['killed_processes']
    stop = stop_figures(summary['bag'])
    assert len(stop.velocity) > 1000
    assert stop.speed_at_fault > 1e-3, 'the platform was moving when the FAULT came'
    assert np.max(stop.accel) <= A_MAX, f'peak slider acceleration {np.max(stop.accel):.2f} m/s^2'
    assert np.max(np.abs(stop.velocity[-1])) < 1e-4                 # at rest at the end, no jump
    print(f"stage_exception: {reason}; speed at FAULT {stop.speed_at_fault * 1e3:.1f} mm/s, "
          f"peak acceleration {np.max(stop.accel):.2f} m/s^2, FAULT at sim {stop.stamps[stop.at_fault]:.3f} s")
