"""The run summary's message accounting (hil_nodes.cli.run_accounting): the recorder's counts,
the designed rates from the run's parameters and the producers' own counts give one line per
topic, and a run with a skipped or lost message is never summarised as clean."""
import yaml

from hil_nodes.cli.run_accounting import accounting_summary, run_accounting

PARAMS = {'ft_sensor': {'publish_rate': 400.0, 'sample_rate': 1600.0}, 'timebase': {'move_time': 0.0025}}


def _bag(tmp_path, topics):
    (tmp_path / 'accounting.yaml').write_text(yaml.safe_dump({'topics': topics}))
    return tmp_path


def _stream(n, rate=400.0, gap_s=None):
    return {'received': n, 'written': n, 'first_s': 0.0, 'last_s': (n - 1) / rate,
            'largest_gap_s': gap_s if gap_s is not None else 1.0 / rate}


def test_complete_streams_are_clean(tmp_path):
    bag = _bag(tmp_path, {'/ft_sensor/wrench': _stream(4001), '/hexapod_controller/joint_trajectory': _stream(4001)})
    statuses = {'ft_sensor': {'published./ft_sensor/wrench': '4001'}}
    rows, lines = run_accounting(bag, PARAMS, statuses)
    assert [r.expected for r in rows] == [4001, 4001] and not any(r.flags for r in rows)
    summary = accounting_summary(rows)
    assert summary['messages'].startswith('clean')
    assert summary['msgs /ft_sensor/wrench'] == 'expected 4001, published 4001, recorded 4001, largest gap 2.5 ms'


def test_a_quarter_rate_stream_is_skipped_and_the_run_not_clean(tmp_path):
    # the real-time run of the issue: the F/T node published a quarter of its frames
    bag = _bag(tmp_path, {'/ft_sensor/wrench': _stream(1001, rate=100.0, gap_s=0.02)})
    rows, _ = run_accounting(bag, PARAMS, {'ft_sensor': {'published./ft_sensor/wrench': '1001'}})
    (row,) = rows
    assert row.expected == 4001 and row.skipped == 3000 and set(row.flags) == {'skipped', 'gap'}
    assert accounting_summary(rows)['messages'] == 'NOT clean: /ft_sensor/wrench skipped/gap'


def test_lost_messages_are_told_apart_from_skipped_ones(tmp_path):
    bag = _bag(tmp_path, {'/ft_sensor/wrench': {**_stream(4001), 'written': 3900}})
    rows, _ = run_accounting(bag, PARAMS, {'ft_sensor': {'published./ft_sensor/wrench': '4001'}})
    assert rows[0].lost == 101 and 'lost' in rows[0].flags and rows[0].skipped == 0


def test_a_producer_count_older_than_the_recording_is_not_used(tmp_path):
    # a periodic status sent before the stream ended counts fewer than were recorded: it would
    # make a complete stream look skipped
    bag = _bag(tmp_path, {'/ft_sensor/wrench': _stream(4001)})
    rows, _ = run_accounting(bag, PARAMS, {'ft_sensor': {'published./ft_sensor/wrench': '3950'}})
    assert rows[0].published is None and not rows[0].flags


def test_no_recorder_accounting_is_said(tmp_path):
    rows, lines = run_accounting(tmp_path, PARAMS, {})
    assert rows is None and 'accounting.yaml' in lines[0]
    assert accounting_summary(None)['messages'].startswith('NOT accounted')
