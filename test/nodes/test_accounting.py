"""Message accounting of `hil report`: expected = rate x duration + 1, and a run that skipped cycles,
lost messages or has gaps is flagged so that it cannot pass for a clean run."""
import numpy as np
import pytest

from hil_core.accounting import (AccountRow, TopicCount, account, clean, expected_count, largest_gap,
                                 summary_lines)

RATE = 400.0
DURATION = 15.0
EXPECTED = 6001          # 400 Hz over [0, 15] s, both ends included


def _row(rows, topic) -> AccountRow:
    return next(r for r in rows if r.topic == topic)


def test_expected_count_and_largest_gap():
    assert expected_count(RATE, DURATION) == EXPECTED
    assert expected_count(100.0, 0.0) == 1
    t = np.arange(EXPECTED) / RATE
    assert largest_gap(t) == pytest.approx(0.0025)
    assert largest_gap(np.delete(t, [10, 11, 12])) == pytest.approx(4 * 0.0025)
    assert largest_gap([1.0]) is None


def test_a_complete_stream_is_clean():
    rows = account({'/a': TopicCount(EXPECTED, EXPECTED, 0.0025)}, DURATION, {'/a': RATE}, {'/a': EXPECTED})
    r = rows[0]
    assert (r.expected, r.published, r.recorded, r.skipped, r.lost, r.missing, r.flags) == (
        EXPECTED, EXPECTED, EXPECTED, 0, 0, 0, ())
    assert clean(rows)


def test_start_stop_alignment_is_not_a_loss():
    # one frame less at each end is within the slack (2 messages or 0.5 %)
    rows = account({'/a': TopicCount(EXPECTED - 2, EXPECTED - 2, 0.0025)}, DURATION, {'/a': RATE})
    assert clean(rows)


def test_skipped_cycles_lost_messages_and_gaps_are_flagged():
    # a real-time run that fell behind: 104 of 400 per second published, some of them not recorded
    published = 104 * 15
    rows = account({'/ft_sensor/wrench': TopicCount(published - 39, published - 39, 0.020)}, DURATION,
                   {'/ft_sensor/wrench': RATE}, published={'/ft_sensor/wrench': published})
    r = rows[0]
    assert r.skipped == EXPECTED - published
    assert r.lost == 39
    assert r.flags == ('skipped', 'lost', 'gap')
    assert not clean(rows)
    line = summary_lines(rows)[0]
    assert f'expected {EXPECTED}' in line and f'published {published}' in line
    assert f'SKIPPED {EXPECTED - published}' in line and 'LOST 39' in line and 'GAP' in line


def test_unknown_producer_count_gives_missing_and_recorder_drops_are_lost():
    rows = account({'/b': TopicCount(5000, 4990, 0.0025)}, DURATION, {'/b': RATE})
    r = rows[0]
    assert r.lost == 10                       # received but not written: the recorder dropped them
    assert r.missing == EXPECTED - 4990 - 10  # the rest: skipped or lost upstream, cannot tell which
    assert r.flags == ('lost', 'missing')
    assert 'MISSING' in summary_lines(rows)[0]


def test_producer_reported_skips_and_topics_without_rate():
    rows = account({'/c': 7, '/hil/mode': 3}, DURATION, {'/c': RATE}, skipped_cycles={'/c': 5},
                   published={'/c': EXPECTED})
    c, mode = _row(rows, '/c'), _row(rows, '/hil/mode')
    assert c.skipped == 5 and 'skipped' in c.flags
    assert c.lost == EXPECTED - 7
    assert mode.expected is None and mode.flags == () and mode.recorded == 3
    assert [r.topic for r in rows] == ['/c', '/hil/mode']
    assert mode.as_dict()['flags'] == []
    # a stream that only runs in RUNNING is expected over its own stretch
    late = account({'/d': 2001}, DURATION, {'/d': RATE}, durations={'/d': 5.0})
    assert late[0].expected == 2001 and clean(late)


def test_tally_counts_receive_gaps_in_the_bag_clock():
    from hil_core.accounting import Tally
    tally = Tally()
    for ns in (0, 2_500_000, 5_000_000, 20_000_000, 22_500_000):
        tally.receive(ns)
    tally.written = 4
    c = tally.count()
    assert (c.received, c.written) == (5, 4)
    assert c.largest_gap_s == pytest.approx(0.015) and c.first_s == 0.0 and c.last_s == pytest.approx(0.0225)
    one = Tally()
    one.receive(7)
    assert one.count().largest_gap_s is None


def test_from_the_recorder_file_and_the_run_parameters_to_the_table():
    """The path `hil run` takes: accounting.yaml + designed rates + producers' counts -> rows."""
    from hil_core.accounting import topic_counts
    from hil_nodes.report.rates import expected_rates
    recorder_file = {'final': True, 'clock': 'sim', 'write_errors': 0, 'topics': {
        '/joint_states': {'received': 6001, 'written': 6001, 'largest_gap_s': 0.0025, 'first_s': 0.0, 'last_s': 15.0},
        '/ft_sensor/wrench': {'received': 1560, 'written': 1560, 'largest_gap_s': 0.02, 'first_s': 0.0, 'last_s': 15.0},
        '/hil/mode': {'received': 5, 'written': 5, 'largest_gap_s': 7.5, 'first_s': 0.0, 'last_s': 15.0}}}
    parameters = {'ft_sensor': {'publish_rate': 400.0}, 'mock_hexapod': {'frame_period': 0.0025},
                  'timebase': {'move_time': 0.0025}, 'admittance': {'period': 0.0025}, 'planner': {}}
    rates = expected_rates(parameters)
    assert rates['/ft_sensor/wrench'] == 400.0 and rates['/joint_states'] == 400.0
    assert rates['/hexapod_controller/joint_trajectory'] == 400.0 and rates['/planner/safe_reference'] == 400.0
    assert '/hil/mode' not in rates
    rows = account(topic_counts(recorder_file), DURATION, rates, published={'/ft_sensor/wrench': 1560})
    by = {r.topic: r for r in rows}
    assert by['/joint_states'].flags == ()
    assert by['/ft_sensor/wrench'].flags == ('skipped', 'gap') and by['/ft_sensor/wrench'].skipped == EXPECTED - 1560
    assert by['/hil/mode'].flags == ()
    assert not clean(rows) and len(summary_lines(rows)) == 3


def test_the_gap_is_judged_on_the_stamps_where_there_are_stamps():
    """On the wall clock a stalled process delivers every sample late: a receive gap of 9 ms
    with stamps 2.5 ms apart is no sample missing. Stamps missing in a row are, however evenly
    the rest arrives. Without stamps the receive times stand in (older bags, unstamped types)."""
    late = account({'/w': TopicCount(EXPECTED, EXPECTED, 0.009, largest_stamp_gap_s=0.0025)}, DURATION, {'/w': RATE})
    assert clean(late) and late[0].largest_stamp_gap_s == 0.0025
    assert summary_lines(late)[0].endswith('largest gap 9.0 ms (stamps 2.5 ms)')
    holes = account({'/w': TopicCount(EXPECTED, EXPECTED, 0.0026, largest_stamp_gap_s=0.0075)}, DURATION,
                    {'/w': RATE})
    assert holes[0].flags == ('gap',) and summary_lines(holes)[0].endswith(': GAP')
    unstamped = account({'/w': TopicCount(EXPECTED, EXPECTED, 0.009)}, DURATION, {'/w': RATE})
    assert unstamped[0].flags == ('gap',)


def test_tally_reads_stamp_gaps_only_when_every_message_had_a_stamp():
    from hil_core.accounting import Tally
    tally = Tally()
    for now, stamp in ((0, 100), (9_000_000, 2_500_100), (9_100_000, 5_000_100), (9_200_000, 10_000_100)):
        tally.receive(now, stamp)
    c = tally.count()
    assert c.largest_gap_s == pytest.approx(0.009) and c.largest_stamp_gap_s == pytest.approx(0.005)
    tally.receive(9_300_000, None)                 # a message whose stamp could not be read
    assert tally.count().largest_stamp_gap_s is None
    back = Tally()
    for stamp in (10, 5, 2_500_005):               # a stamp going back is no gap
        back.receive(stamp, stamp)
    assert back.count().largest_stamp_gap_s == pytest.approx(0.0025)


@pytest.mark.parametrize('endian', ['<', '>'])
def test_header_stamp_from_the_serialized_bytes(endian):
    import struct
    from hil_core.accounting import header_stamp_ns
    head = bytes([0, 1 if endian == '<' else 0, 0, 0])
    data = head + struct.pack(endian + 'iI', 12, 345) + b'\x00' * 8
    assert header_stamp_ns(data) == 12_000_000_345
    assert header_stamp_ns(head + b'\x00' * 4) is None
