"""`hil report` on synthetic bags with known answers: a known filter, delays and gains
are recovered stage by stage (0.05 ms, 0.05 dB) and add up end to end; a lossy, real-time-like
bag, a robot that does not track and an attenuating planner get the right verdict and name the
stage; a single-segment bag reports coherence as not measurable."""
import json
import types

import numpy as np
import pytest
from report_bags import write_bag
from scipy.signal import sosfreqz

from hil_nodes.cli import report_cmd
from hil_nodes.report.analysis import analyse, to_json
from hil_nodes.report.bagdata import load_run

SERVO_DELAY = 0.0003


@pytest.fixture(scope='module')
def bags(tmp_path_factory):
    root = tmp_path_factory.mktemp('bags')
    cases = {
        'clean': dict(duration=11.0, onsets=(1.0, 6.0), servo_delay=SERVO_DELAY, points_per_message=8),
        'degraded': dict(duration=11.0, onsets=(1.0, 6.0), planner_gain=0.5, buffer_delay=0.0125),
        'realtime_like': dict(duration=11.0, onsets=(1.0, 6.0), planner_gain=0.14, drop={
            '/ft_sensor/wrench': (0.0, 99.0, 4), '/planner/safe_reference': (0.0, 99.0, 4),
            '/hexapod_controller/joint_trajectory': (0.0, 99.0, 8)}),
        'not_tracking': dict(duration=6.0, onsets=(1.0,), tracking=False),
        'single': dict(duration=6.0, onsets=(1.0,)),
    }
    out = {}
    for name, kw in cases.items():
        path = root / name
        signals = write_bag(path, **kw)
        run = load_run(path)
        out[name] = (path, signals, analyse(run))
    return out


def _stage(a, src, dst, kind='stage'):
    items = a.chain.transitions if kind == 'stage' else a.chain.cumulative
    return next(t for t in items if t.src == src and t.dst == dst)


def _filter_fit_delay(sos, freqs):
    """Independent: the no-intercept phase fit of the analytic filter response on the same bins."""
    _, h = sosfreqz(sos, worN=freqs, fs=400.0)
    phase = np.degrees(np.unwrap(np.angle(h)))
    return -float(np.dot(freqs, phase) / np.dot(freqs, freqs)) / 360.0


def test_clean_bag_stage_figures_are_the_known_ones(bags):
    _, s, a = bags['clean']
    frf = _stage(a, 'raw_force', 'filtered_force').result.frf
    band = frf.freqs[(frf.freqs > 0) & (frf.freqs <= 11.0)]
    expected = {('raw_force', 'filtered_force'): _filter_fit_delay(s['sos'], band),
                ('filtered_force', 'admittance_reference'): 0.0,
                ('admittance_reference', 'safe_reference'): 0.0,
                ('safe_reference', 'servo_setpoints'): 0.010,
                ('servo_setpoints', 'joint_states'): SERVO_DELAY,
                ('joint_states', 'tcp_pose'): 0.0}
    for (src, dst), delay in expected.items():
        t = _stage(a, src, dst)
        assert t.result.n_segments == 2
        assert t.result.widest.delay.value == pytest.approx(delay, abs=0.05e-3), (src, dst)
        assert abs(t.result.band(7.0).gain_db.value) < 0.05, (src, dst)
        assert t.holds is True, (src, dst, t.why)
    total, end_to_end = a.chain.delay_sum()
    assert total == pytest.approx(end_to_end, abs=0.1e-3)
    assert end_to_end == pytest.approx(sum(expected.values()), abs=0.05e-3)
    # the end-to-end analysis of the report says the same, with a measured coherence
    n = a.transparency.numbers()
    assert n['delay_ms_11hz'] == pytest.approx(end_to_end * 1e3, abs=1e-6)
    assert n['segments'] == 2 and n['coherence_min_11hz'] > 0.99
    assert a.verdict.status == 'transparent'
    assert a.verdict.text == (f'transparent: {end_to_end * 1e3:.1f} ms constant delay as designed, '
                              f'gain within {n["gain_dev_db_7hz"]:.1f} dB to 7 Hz')


def test_clean_bag_full_report_files(bags, tmp_path):
    path, _, a = bags['clean']
    out = tmp_path / 'report'
    assert report_cmd.run(types.SimpleNamespace(bag=str(path), out=str(out), axis=0)) == 0
    report = json.loads((out / 'report.json').read_text())
    html = (out / 'report.html').read_text()
    assert 'stages.png' in report['figures']
    for png in report['figures']:
        assert (out / png).stat().st_size > 1000 and f'src="{png}"' in html
    assert report['verdict']['text'] == a.verdict.text and a.verdict.text in html
    rows = [r for r in report['stages']['rows'] if r['kind'] == 'stage']
    assert [r['to'] for r in rows] == ['filtered force', 'admittance reference', 'safe reference',
                                       'servo setpoints', 'joint states', 'TCP pose']
    assert rows[3]['designed_delay_ms'] == pytest.approx(10.0) and rows[3]['delay_ms'] == pytest.approx(10.0, abs=0.05)
    assert all(r['flags'] == [] for r in report['accounting'])


def test_attenuating_planner_and_late_time_base_are_named(bags):
    _, _, a = bags['degraded']
    planner = _stage(a, 'admittance_reference', 'safe_reference')
    assert planner.result.band(7.0).gain_db.value == pytest.approx(20 * np.log10(0.5), abs=0.05)
    assert planner.holds is False
    timebase = _stage(a, 'safe_reference', 'servo_setpoints')
    assert timebase.result.widest.delay.value == pytest.approx(0.0125, abs=0.05e-3)
    assert timebase.holds is False and 'designed 10.00 ms' in timebase.why
    assert a.chain.findings['attenuating_stage'] == 'safe_reference'
    assert a.verdict.status == 'NOT transparent'
    assert 'attenuating stage: admittance reference -> safe reference (planner)' in a.verdict.text
    assert 'constant delay' in a.verdict.text and 'gain off by up to 6.0 dB' in a.verdict.text


def test_realtime_like_bag_is_not_transparent_and_shows_where_the_loss_began(bags):
    _, _, a = bags['realtime_like']
    assert a.verdict.status == 'NOT transparent'
    assert a.verdict.text.startswith('NOT transparent: messages missing: filtered force /ft_sensor/wrench')
    assert a.chain.findings['first_incomplete_stage'] == 'filtered_force'
    assert 'loss begins at filtered force' in a.verdict.text
    # the ideal motion of the gappy force is never used: those stages are not measurable
    for src, dst in (('raw_force', 'filtered_force'), ('filtered_force', 'admittance_reference')):
        t = _stage(a, src, dst)
        assert t.result.n_segments == 0 and t.result.widest is None
        assert 'gaps in /ft_sensor/wrench' in t.result.reason
    # the planner's output is gappy too, but its amplitude still shows the loss
    planner = _stage(a, 'admittance_reference', 'safe_reference')
    assert planner.amplitude.value == pytest.approx(0.14, abs=0.005)
    assert a.chain.findings['attenuating_stage'] == 'safe_reference'
    acc = {r['topic']: r for r in to_json(a)['accounting']}
    assert acc['/ft_sensor/wrench']['missing'] == 4401 - 1101 and 'gap' in acc['/ft_sensor/wrench']['flags']
    assert acc['/hexapod_controller/joint_trajectory']['recorded'] == 551


def test_robot_that_does_not_track(bags):
    _, _, a = bags['not_tracking']
    assert a.verdict.status == 'NOT transparent'
    assert 'the achieved motion does not follow the ideal one (correlation peak' in a.verdict.text
    assert a.chain.findings['first_not_following_stage'] == 'joint_states'
    n = a.transparency.numbers()
    for key in ('delay_ms', 'delay_ms_7hz', 'delay_ms_11hz', 'gain_dev_db_7hz', 'phase_rmse_deg_11hz'):
        assert n[key] is None, key


def test_single_segment_coherence_not_measurable(bags):
    _, s, a = bags['single']
    n = a.transparency.numbers()
    assert n['segments'] == 1
    assert n['coherence_min_7hz'] is None and n['coherence_min_11hz'] is None
    coherence = a.transparency.pair.band(11.0).coherence_min
    assert coherence.text().startswith('not measurable: 1 segment averaged')
    frf = a.transparency.result.frf
    band = frf.freqs[(frf.freqs > 0) & (frf.freqs <= 11.0)]
    known = _filter_fit_delay(s['sos'], band) + 0.010 + SERVO_DELAY
    assert n['delay_ms_11hz'] == pytest.approx(known * 1e3, abs=0.05)    # still measured (correlation, residual)
    assert a.verdict.status == 'transparent'


def test_a_run_that_never_reached_running_has_no_window_and_says_so(tmp_path):
    """A run that went to FAULT during HOMING (a real-time run that could not keep up) has no
    analysis window: no figure, a NOT transparent / not measurable verdict with the reason, and no
    grid built from t = 0 (on a wall-clock bag that was a grid from 1970 on)."""
    write_bag(tmp_path / 'bag')
    run = load_run(tmp_path / 'bag')
    run.modes[:] = [(t + 1.7e9, m) for t, m in [(0.0, 'IDLE'), (0.1, 'HOMING'), (0.2, 'FAULT')]]
    a = analyse(run)
    assert a.transparency is None and a.chain is None
    assert 'never reached RUNNING' in a.not_measurable
    assert a.verdict.status != 'transparent'
