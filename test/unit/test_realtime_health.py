"""The supervisor's real-time verdict (hil_core.supervision.realtime_health): fractions over a sliding
window against warn and fault limits, time-base saturation as time, the reason's wording,
restarts of counters, and a property against independent bookkeeping."""
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hil_core.supervision.realtime_health import (CYCLE, FAULT, HARDWARE, OK, TIMEBASE, WARN, HealthConfig, HealthJudge,
                                      classify, numeric_values)

# min_span 0 here: the fraction logic alone; the span rule has its own test
CFG = HealthConfig(window=3.0, warn_fraction=0.01, fault_fraction=0.10, min_samples=100, min_span=0.0,
                   saturation_warn_s=0.1, saturation_fault_s=1.0, frame_period=0.0025)


def hw(frames, late=0, dropped=0):
    return {'frames': frames, 'late_commands': late, 'realtime_overruns': dropped}


def tb(frames, servo, saturated=0, factor_off=0, distance_off=0):
    return {'frames': frames, 'servo_cycles': servo, 'saturated_cycles': saturated,
            'factor_off_cycles': factor_off, 'distance_off_frames': distance_off}


def test_the_example_reason():
    """Late frames and 2.1 s of saturation: the reason worded as in the real-time health requirement."""
    j = HealthJudge(CFG)
    j.observe('mock_hexapod', HARDWARE, 0.0, hw(1000))
    j.observe('mock_hexapod', HARDWARE, 2.5, hw(1900, late=72, dropped=100))
    # late frames: (72 held + 100 dropped) of (900 integrated + 100 dropped) = 17.2%
    j.observe('timebase', TIMEBASE, 0.0, tb(1000, 4000))
    j.observe('timebase', TIMEBASE, 2.5, tb(2000, 8000, saturated=3360))       # 3360 x 0.625 ms = 2.1 s
    a = j.assess(2.5)
    assert a.level == FAULT
    assert a.reason == 'real time not held: 17.2% of frames late (mock_hexapod), time-base saturated for 2.1 s'


def test_warn_then_fault_then_back_to_ok_as_the_window_slides():
    j = HealthJudge(CFG)
    cycles = late = 0
    levels = []
    for k in range(30):                       # statuses every 0.5 s, 200 cycles each
        t = 0.5 * k
        cycles += 200
        late += 4 if 4 <= k < 10 else 40 if 10 <= k < 14 else 0     # 2 %, then 20 %, then none
        j.observe('timebase', CYCLE, t, {'cycles': cycles, 'late': late, 'skipped': 0})
        levels.append(j.assess(t).level)
    assert levels[:4] == [OK] * 4
    assert WARN in levels[4:10] and FAULT not in levels[4:10]
    assert levels[12] == FAULT
    assert levels[-1] == OK                    # 3 s after the last late cycle the window is clean


def test_fractions_need_min_samples():
    j = HealthJudge(CFG)
    j.observe('planner', CYCLE, 0.0, {'cycles': 0, 'late': 0, 'skipped': 0})
    j.observe('planner', CYCLE, 1.0, {'cycles': 99, 'late': 99, 'skipped': 0})
    assert j.assess(1.0).level == OK           # 99 cycles: too few to judge (a start-up, a JIT)
    j.observe('planner', CYCLE, 1.5, {'cycles': 100, 'late': 99, 'skipped': 0})
    a = j.assess(1.5)
    assert a.level == FAULT and a.reason == 'real time not held: 99% of planner cycles late'


def test_skipped_cycles_count_as_late():
    j = HealthJudge(CFG)
    j.observe('timebase', CYCLE, 0.0, {'cycles': 0, 'late': 0, 'skipped': 0})
    j.observe('timebase', CYCLE, 1.0, {'cycles': 180, 'late': 0, 'skipped': 20})
    a = j.assess(1.0)
    assert a.level == FAULT and a.findings[0].value == pytest.approx(0.1)


def test_time_base_fractions_and_saturation_levels():
    j = HealthJudge(CFG)
    j.observe('timebase', TIMEBASE, 0.0, tb(0, 0))
    j.observe('timebase', TIMEBASE, 1.0, tb(400, 1600, saturated=200, factor_off=40, distance_off=8))
    a = j.assess(1.0)
    found = {f.what: f for f in a.findings}
    assert found['saturation'].level == WARN and found['saturation'].value == pytest.approx(0.125)
    assert found['factor_off'].level == WARN and found['factor_off'].value == pytest.approx(0.025)
    assert found['distance_off'].level == WARN and found['distance_off'].value == pytest.approx(0.02)
    assert a.level == WARN and a.reason.startswith('real time at risk: ')


def test_a_counter_going_down_restarts_the_window():
    j = HealthJudge(CFG)
    j.observe('planner', CYCLE, 0.0, {'cycles': 10000, 'late': 5000, 'skipped': 0})
    j.observe('planner', CYCLE, 0.5, {'cycles': 100, 'late': 0, 'skipped': 0})     # re-configured
    j.observe('planner', CYCLE, 1.0, {'cycles': 300, 'late': 0, 'skipped': 0})
    assert j.assess(1.0).level == OK and j.resets == 1


def test_a_silent_node_is_not_judged_on_old_samples():
    j = HealthJudge(CFG)
    j.observe('planner', CYCLE, 0.0, {'cycles': 0, 'late': 0, 'skipped': 0})
    j.observe('planner', CYCLE, 1.0, {'cycles': 200, 'late': 200, 'skipped': 0})
    assert j.assess(1.0).level == FAULT
    assert j.assess(10.0).level == OK            # its liveness is the heartbeat's business


def test_a_start_up_transient_is_no_verdict_only_a_sustained_share():
    """The default min_span (1.5 s): 100 % late for 1 s (statuses every 0.5 s) is judged only
    once the samples cover 1.5 s; by then the transient is over and the share is below 10 %."""
    j = HealthJudge(HealthConfig())
    assert HealthConfig().min_span == 1.5
    levels = []
    for k, (cycles, late) in enumerate([(0, 0), (200, 200), (400, 400), (2400, 400), (4400, 400)]):
        j.observe('timebase', CYCLE, 0.5 * k, {'cycles': cycles, 'late': late, 'skipped': 0})
        levels.append(j.assess(0.5 * k).level)
    assert levels[:3] == [OK, OK, OK]             # 100 % late, but only 1 s covered
    assert levels[3] == FAULT                     # 400 of 2400 over 1.5 s: sustained
    assert levels[4] == WARN                      # 400 of 4400 over the 2 s since: 9 %


def test_a_verdict_is_judged_only_once_a_window_spans_min_span():
    """Before the samples cover min_span the verdict OK says nothing: ``judged`` stays False (a run
    that ends, or stops for another reason, within its first window was never judged); a
    clear() (the next bring-up) forgets it."""
    j = HealthJudge(HealthConfig())
    for k, cycles in enumerate([0, 200, 400]):          # statuses every 0.5 s: 1 s covered
        j.observe('timebase', CYCLE, 0.5 * k, {'cycles': cycles, 'late': 0, 'skipped': 0})
        assert j.assess(0.5 * k).level == OK and not j.judged
    j.observe('timebase', CYCLE, 1.5, {'cycles': 600, 'late': 0, 'skipped': 0})
    assert j.assess(1.5).level == OK and j.judged        # 1.5 s covered: OK now means held
    j.clear()
    assert not j.judged


def test_classify_and_parse():
    assert classify('timebase: cycle', {}) == CYCLE
    assert classify('timebase: buffer', tb(1, 4)) == TIMEBASE
    assert classify('mock_hexapod: drives', hw(1)) == HARDWARE
    assert classify('planner: workspace', {'frames': 3}) is None
    assert classify('timebase: cycle', tb(1, 4)) == CYCLE     # the name decides first
    assert numeric_values([('a', '1.5'), ('b', 'x'), ('c', 'nan'), ('d', 'True'), ('e', '7')]) == {'a': 1.5, 'e': 7.0}


@pytest.mark.parametrize('changes', [dict(window=0.0), dict(warn_fraction=0.2), dict(fault_fraction=math.nan),
                                     dict(min_samples=0), dict(saturation_warn_s=2.0), dict(min_span=4.0),
                                     dict(saturation_fault_s=5.0)])
def test_bad_config_is_refused(changes):
    cfg = HealthConfig(**{**CFG.__dict__, **changes})
    assert cfg.problem()
    with pytest.raises(ValueError):
        HealthJudge(cfg)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 400), st.integers(0, 400)), min_size=2, max_size=40))
def test_late_fraction_over_the_window_matches_bookkeeping(steps):
    """Statuses every 0.5 s with (new cycles, new late <= new cycles): the verdict equals the
    one computed from the increments of the last 3 s (6 statuses), independently."""
    j = HealthJudge(CFG)
    cycles = late = 0
    increments = []
    for k, (dc, dl) in enumerate(steps):
        dl = min(dl, dc)
        cycles, late = cycles + dc, late + dl
        increments.append((dc, dl))
        j.observe('n', CYCLE, 0.5 * k, {'cycles': cycles, 'late': late, 'skipped': 0})
    now = 0.5 * (len(steps) - 1)
    window = increments[-6:] if len(increments) > 6 else increments[1:]
    den, num = sum(c for c, _ in window), sum(x for _, x in window)
    if den >= CFG.min_samples and num > 0 and num / den >= CFG.warn_fraction:
        expected = FAULT if num / den >= CFG.fault_fraction else WARN
    else:
        expected = OK
    assert j.assess(now).level == expected
