"""`hil run hexafloat` end to end: the supervisor drives the run, the summary is complete, no
process is left behind, and lockstep runs are deterministic (same seed -> identical joint
states, in one process and isolated)."""
import subprocess

import pytest
from hilrun import hil_run, joint_state_payloads

from hil_nodes.bag import message_counts

pytestmark = pytest.mark.slow

SUMMARY_KEYS = {'system', 'outcome', 'frames', 'late_commands', 'faults', 'bag', 'modes', 'sim_time_s'}


def _no_orphans():
    out = subprocess.run(['pgrep', '-f', 'hil_nodes.container|hil_sim.mock_hexapod'], capture_output=True, text=True)
    return out.stdout.strip() == ''


@pytest.fixture(scope='module')
def two_runs(tmp_path_factory):
    root = tmp_path_factory.mktemp('runs')
    runs = []
    for layout in ([], [], ['--isolated']):
        code, summary, err = hil_run('hexafloat', '--lockstep', '--seed', '7', '--duration', '5',
                                     '--record', str(root), *layout)
        runs.append((code, summary, err))
    return runs


def test_run_completes_with_summary_and_no_orphans(two_runs):
    code, summary, err = two_runs[0]
    assert code == 0, err[-3000:]
    assert SUMMARY_KEYS <= set(summary), summary
    assert summary['outcome'] == 'done'
    assert summary['modes'].split(' -> ')[-4:] == ['SYNCHRONIZING', 'RUNNING', 'RETURNING_HOME', 'IDLE']
    assert int(summary['frames']) >= 2000          # 5 s of 2.5 ms frames, plus homing and return
    assert summary['late_commands'] == '0' and summary['faults'] == '0'
    assert _no_orphans()
    counts = message_counts(summary['bag'])
    assert counts['/joint_states'] >= 2000 and counts['/hil/mode'] >= 5


def test_same_seed_gives_identical_joint_states_across_runs_and_layouts(two_runs):
    bags = [summary['bag'] for code, summary, err in two_runs]
    assert all(code == 0 for code, _, _ in two_runs), [err[-2000:] for _, _, err in two_runs]
    first = joint_state_payloads(bags[0])
    assert len(first) >= 2000
    assert joint_state_payloads(bags[1]) == first
    assert joint_state_payloads(bags[2]) == first   # --isolated: one process per node


def test_unknown_system_is_refused_before_starting_anything():
    code, summary, err = hil_run('no_such_system')
    assert code == 2 and 'unknown system' in err
