"""`hil run space-iiwa` end to end (seed 002 experiment, shortened): the summary carries the
plant's figures, the satellite moves as momentum demands, no fault, no late command."""
import pytest
from hilrun import hil_run

pytestmark = pytest.mark.slow


def test_space_iiwa_run_summary():
    code, summary, err = hil_run('space-iiwa', '--duration', '3')
    assert code == 0, err[-3000:]
    assert summary['outcome'] == 'done' and summary['faults'] == '0' and summary['late_commands'] == '0'
    for key in ('satellite_displacement_m', 'ee_position_error_m', 'ee_orientation_error_deg', 'loop_rate_hz'):
        assert summary[key] != '', key
        float(summary[key])
    assert float(summary['satellite_displacement_m']) > 1e-5      # reaction of the free-floating base
    assert int(summary['frames']) >= 3000                           # 1 kHz frames
