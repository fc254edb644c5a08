"""A chain stage that raises in its frame, end to end: `hil run hexafloat --lockstep --scenario
stage_exception` makes the admittance raise in its frame 2040, 0.1 s after the first impulse,
while the platform moves. The node stops in place (hil_nodes.framework.liveness.fail_in_place) and
its process, with the supervisor and the drives, goes on: the run ends in FAULT naming the node
and the exception, nothing is killed, and the platform stops in a controlled way (peak slider
acceleration from /joint_states within the planner's a_max, at rest at the end)."""
import pytest
from hilrun import hil_run

from controlled_stop import assert_controlled_stop

pytestmark = pytest.mark.slow


def test_a_stage_that_raises_stops_in_place_and_the_run_stops_in_a_controlled_way(tmp_path):
    code, summary, err = hil_run('hexafloat', '--lockstep', '--scenario', 'stage_exception',
                                 '--record', str(tmp_path), timeout=180.0)
    assert code == 1, err[-3000:]
    assert summary['outcome'] == 'fault', summary
    reason = summary['fault_reason']
    assert reason.startswith('admittance: exception in its delivery of /ft_sensor/wrench: InjectedFault'), reason
    assert summary['modes'].split(' -> ')[-1] == 'FAULT' and 'RUNNING' in summary['modes']
    assert not summary.get('killed_processes', '').strip(), summary['killed_processes']
    assert_controlled_stop(summary['bag'], 1000, 'the platform was moving', 'stage_exception', reason)
