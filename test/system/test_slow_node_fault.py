"""Real-time health end to end, deterministically: `hil run
hexafloat_scripted --lockstep --scenario slow_node` gives the mock drives' frame cycle 4 ms of
CPU work (inject_cycle_delay) against its 2.5 ms budget. CPU time is judged in lockstep, so
the verdict does not depend on the machine's load: the run must end in FAULT with the
real-time reason, stopped in a controlled way while the drives were homing (peak slider
acceleration from /joint_states no higher than the planner's a_max), and say so."""
import pytest
from hilrun import hil_run

from controlled_stop import assert_controlled_stop

pytestmark = pytest.mark.slow


def test_a_slow_node_in_lockstep_ends_in_the_real_time_fault_with_a_controlled_stop(tmp_path):
    code, summary, err = hil_run('hexafloat_scripted', '--lockstep', '--scenario', 'slow_node',
                                 '--record', str(tmp_path), timeout=120.0)
    assert code == 1, err[-3000:]
    assert summary['outcome'] == 'fault', summary
    reason = summary['fault_reason']
    assert reason.startswith('real time not held: ') and 'of mock_hexapod cycles late' in reason, reason
    assert summary['modes'].split(' -> ')[-1] == 'FAULT' and 'HOMING' in summary['modes']
    assert summary['realtime_held'].lower().startswith('no'), summary['realtime_held']
    assert_controlled_stop(summary['bag'], 100, 'the drives were homing', 'slow_node', reason)
