"""Two Hexafloat graphs in one DDS domain under two namespaces (`hil run --namespace`): each runs
clean and transparent and neither hears the other -- its topics, its services, its clock.

Both runs are lockstep on simulated time at once, so each mock hardware publishes its own clock
(remapped under the namespace) and both produce the same frame stamps k * T: a message of the
other rig that reached a graph or its recorder would show as a duplicate stamp, a foreign
topic in the bag or a broken lockstep (late commands, an unclean run)."""
import json
import signal
import subprocess
import sys

import numpy as np
import pytest
from conftest import next_domain_id
from rosbags.rosbag2 import Reader

from hil_nodes import topics
from hil_nodes.recorder.bag import bag_namespace, message_counts, read_messages

pytestmark = pytest.mark.slow

RIGS = ('/rig_a', '/rig_b')
FRAME = 0.0025
DURATION = 30.0          # the impulse_6hz scenario's: the report measures its transparency to 11 Hz


def _summary(text: str) -> dict[str, str]:
    out = {}
    for line in text.splitlines():
        key, sep, value = line.partition(': ')
        if sep:
            out[key.strip()] = value.strip()
    return out


@pytest.fixture(scope='module')
def runs(tmp_path_factory):
    """Both rigs started at once on the SAME domain; {namespace: (exit code, summary, stderr)}."""
    root = tmp_path_factory.mktemp('two_rigs')
    domain = str(next_domain_id())
    procs = {ns: subprocess.Popen([sys.executable, '-m', 'hil_nodes.cli.main', 'run', 'hexafloat',
                                   '--scenario', 'impulse_6hz', '--namespace', ns, '--domain-id', domain,
                                   '--record', str(root / ns.strip('/')), '--quiet'],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for ns in RIGS}
    out = {}
    try:
        for ns, proc in procs.items():
            stdout, stderr = proc.communicate(timeout=280)
            out[ns] = (proc.returncode, _summary(stdout), stderr)
    finally:
        for proc in procs.values():       # a run that hung: stopped as Ctrl-C would (its processes too)
            if proc.poll() is None:
                proc.send_signal(signal.SIGINT)
                try:
                    proc.wait(60)
                except subprocess.TimeoutExpired:
                    proc.kill()
    return out


def test_both_rigs_run_clean_in_one_domain(runs):
    for ns, (code, summary, err) in runs.items():
        assert code == 0, (ns, summary.get('fault_reason'), err[-3000:])
        assert summary['outcome'] == 'done' and summary['namespace'] == ns
        assert summary['modes'].split(' -> ')[-4:] == ['SYNCHRONIZING', 'RUNNING', 'RETURNING_HOME', 'IDLE']
        assert summary['late_commands'] == '0' and summary['faults'] == '0', (ns, summary)
        assert summary['messages'].startswith('clean'), (ns, summary['messages'])
    domains = {summary['domain_id'] for _, summary, _ in runs.values()}
    assert len(domains) == 1


def test_each_bag_holds_its_own_namespace_only(runs):
    for ns, (_, summary, _) in runs.items():
        bag = summary['bag']
        assert bag_namespace(bag) == ns
        with Reader(bag) as reader:
            recorded = sorted(c.topic for c in reader.connections)
        # every recorded topic is under the run's own namespace, the clock included
        assert recorded and all(t.startswith(ns + '/') for t in recorded), (ns, recorded)
        assert f'{ns}/ft_sensor/wrench' in recorded and f'{ns}/joint_states' in recorded
        # read back by their names at the root, the names the report uses
        counts = message_counts(bag)
        assert set(counts) == {topics.strip_namespace(t, ns) for t in recorded}
        assert counts[topics.ROOT.FT_WRENCH] > DURATION / FRAME


@pytest.mark.parametrize('topic', [topics.ROOT.FT_WRENCH, topics.ROOT.KINEMATICS_TCP_POSE,
                                   topics.ROOT.HEXAPOD_JOINT_TRAJECTORY])
def test_each_stream_is_its_own_rigs_frames_once_each(runs, topic):
    """The stamps of a recorded stream are the rig's frames k * T, each once and in order: the
    other rig, which makes the same stamps, never reached the recorder (nor the graph, whose
    lockstep would then have taken a foreign frame)."""
    for ns, (_, summary, _) in runs.items():
        stamps = np.array([m.header.stamp.sec + m.header.stamp.nanosec * 1e-9
                           for _, _, m in read_messages(summary['bag'], [topic])])
        k = np.rint(stamps / FRAME)
        assert np.allclose(stamps, k * FRAME, atol=1e-9)              # on the frame grid
        assert np.all(np.diff(k) == 1), (ns, topic, np.unique(np.diff(k), return_counts=True))
        # the frames the rig's own drives integrated (its summary, taken shortly before the
        # shutdown: the graph holds at home a few frames more) are all in its bag
        assert len(stamps) >= int(summary['frames'])


def test_each_rig_is_transparent_in_its_report(runs, tmp_path):
    """`hil report` finds a namespaced bag's topics (its manifest's namespace) and gives the
    seed's verdict for each rig: unity gain with the designed constant delay."""
    for ns, (_, summary, _) in runs.items():
        out = tmp_path / ns.strip('/')
        proc = subprocess.run([sys.executable, '-m', 'hil_nodes.cli.main', 'report', summary['bag'],
                               '--out', str(out)], capture_output=True, text=True, timeout=240)
        assert proc.returncode == 0, proc.stderr[-2000:]
        report = json.loads((out / 'report.json').read_text())
        assert report['verdict']['status'] == 'transparent', (ns, report['verdict'])
        assert report['numbers']['segments'] == 4 and report['numbers']['gain_dev_db_11hz'] <= 1.0
        assert report['jtc_acceptance']['checked'] >= int(summary['frames'])
        assert report['jtc_acceptance']['refused'] == 0
