"""hil_core.supervision.lockstep.OwnPause: a lockstep wait timed on the wall clock tells its own
process's pause from a late message. A check, or a sign of life, more than ``limit`` after the
previous one is a pause; any other rhythm of checks is not, whatever its length in all."""
import pytest
from hypothesis import given, strategies as st

from hil_core.supervision.lockstep import OwnPause


def test_a_gap_longer_than_the_limit_is_one_pause_and_its_length_is_kept():
    pause = OwnPause(0.25)
    assert not pause.paused(10.0)                     # the first check: nothing to measure from
    assert not pause.paused(10.01)
    assert pause.paused(11.167)                       # 1.157 s without a check: the CI freeze
    assert not pause.paused(11.177)
    assert pause.pauses == 1 and pause.longest == pytest.approx(1.157)


def test_a_sign_of_life_counts_like_a_check():
    pause = OwnPause(0.25)
    pause.alive(5.0)                                  # a frame published before any check
    assert pause.paused(6.0)                          # the first check, 1 s later: a pause
    pause.alive(6.2)
    assert not pause.paused(6.3)
    pause.alive(6.1)                                  # an older sign of life never moves it back
    assert pause.paused(6.6)


@given(st.lists(st.floats(min_value=0.0, max_value=0.25), min_size=1, max_size=200))
def test_checks_never_further_apart_than_the_limit_find_no_pause(steps):
    pause, t = OwnPause(0.25), 100.0
    for dt in steps:
        t += dt
        assert not pause.paused(t)
    assert pause.pauses == 0


@pytest.mark.parametrize('limit', [0.0, -1.0, float('nan')])
def test_a_limit_that_is_not_positive_is_refused(limit):
    with pytest.raises(ValueError):
        OwnPause(limit)
