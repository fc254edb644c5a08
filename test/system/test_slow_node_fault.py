"""Real-time health end to end, deterministically: `hil run
hexafloat_scripted --lockstep --scenario slow_node` gives the mock drives' frame cycle 4 ms of
CPU work (inject_cycle_delay) against its 2.5 ms budget. CPU time is judged in lockstep, so
the verdict does not depend on the machine's load: the run must end in FAULT with the
real-time reason, stopped in a controlled way while the drives were homing (peak slider
acceleration from /joint_states no higher than the planner's a_max), and say so."""
import numpy as np
import pytest
from hilrun import hil_run

from controlled_stop import stop_figures

pytestmark = pytest.mark.slow

A_MAX = 6.0           # m/s^2, config/planner.yaml a_max (translation): the fault matrix's bound


def test_a_slow_node_in_lockstep_ends_in_the_real_time_fault_with_a_controlled_stop(tmp_path):
    code, summary, err = hil_run('hexafloat_scripted', '--lockstep', '--scenario', 'slow_node',
                                 '--record', str(tmp_path), timeout=120.0)
    assert code == 1, err[-3000:]
    assert summary['outcome'] == 'fault', summary
    reason = summary['fault_reason']
    assert reason.startswith('real time not held: ') and 'of mock_hexapod cycles late' in reason, reason
    assert summary['modes'].split(' -> ')[-1] == 'FAULT' and 'HOMING' in summary['modes']
    assert summary['realtime_held'].lower().startswith('no'), summary['realtime_held']
    stop = stop_figures(summary['bag'])
    assert len(stop.velocity) > 100
    assert stop.speed_at_fault > 1e-3, 'the drives were homing when the FAULT came'
    assert np.max(stop.accel) <= A_MAX, f'peak slider acceleration {np.max(stop.accel):.2f} m/s^2'
    assert np.max(np.abs(stop.velocity[-1])) < 1e-4                 # at rest at the end, no jump
    print(f"slow_node: {reason}; speed at FAULT {stop.speed_at_fault * 1e3:.1f} mm/s, "
          f"peak acceleration {np.max(stop.accel):.2f} m/s^2, FAULT at sim {stop.stamps[stop.at_fault]:.3f} s")
