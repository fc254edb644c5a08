"""`hil run hybrid5` end to end: the supervisor drives the CTM controller and the mock drives
through every mode in lockstep at 10 kHz (one frame per control cycle), the run is recorded,
the legs track the AGH path within the seed's 10 um, and no process is left behind."""
import subprocess

import pytest
from hilrun import hil_run

from hil_nodes.recorder.bag import message_counts, read_messages

pytestmark = pytest.mark.slow


def test_hil_run_hybrid5_lockstep_records_and_tracks(tmp_path):
    code, summary, err = hil_run('hybrid5', '--lockstep', '--duration', '0.15', '--record', str(tmp_path))
    assert code == 0, err[-3000:]
    assert summary['outcome'] == 'done'
    assert summary['modes'].endswith('RETURNING_HOME -> IDLE')   # the client may join after the start
    assert summary['late_commands'] == '0' and summary['faults'] == '0' and summary['rejected_commands'] == '0'
    assert int(summary['frames']) >= 1500                       # >= 0.15 s of 100 us frames
    assert 0 < float(summary['max_leg_error_um']) < 10.0        # seed 003: 10 um
    counts = message_counts(summary['bag'])
    assert counts['/joint_states'] >= 1500 and counts['/effort_controller/commands'] >= 1500
    assert counts['/kinematics/tcp_pose'] >= 1500
    # no fixed joint, no sensor frame: nothing static, so no /tf_static a replay would miss
    assert '/tf_static' not in counts and 'NO MESSAGE' not in summary.get('msgs /tf_static', '')
    events = [s.name for _, _, m in read_messages(summary['bag'], ['/hil/events']) for s in m.status]
    # 'homed' falls on the first frame (home = path start), possibly before the recorder matched
    assert events[-2:] == ['synchronized', 'home_reached'], events
    out = subprocess.run(['pgrep', '-f', 'hil_nodes.runtime.container.*hybrid5|hil_sim.mock_hybrid5'],
                         capture_output=True, text=True)
    assert out.stdout.strip() == ''
