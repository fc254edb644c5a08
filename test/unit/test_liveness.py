"""Liveness in two clocks (hil_core.supervision.liveness) and the lifecycle transition order
(hil_core.supervision.lifecycle_plan): deaths caught in sim time and in wall time, bad clock input."""
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hil_core.supervision.lifecycle_plan import Step, bring_up_plan, check_node_list, shutdown_plan
from hil_core.supervision.liveness import LivenessMonitor

SIM, WALL = 0.5, 1.0


def monitor(names=('a', 'b')):
    return LivenessMonitor(names, timeout_sim=SIM, timeout_wall=WALL)


def test_nothing_is_checked_before_arm():
    m = monitor()
    m.beat('a', 0.0, 0.0)
    assert m.check(100.0, 100.0) == []


def test_death_caught_in_sim_time_while_sim_runs_fast():
    m = monitor()
    m.arm(0.0, 10.0)
    m.beat('/a', 1.0, 10.0)             # fully qualified name as on the wire
    assert m.check(1.5, 10.01) == []     # exactly at the timeout: still alive
    # past the sim timeout, but its wall heartbeat is 20 ms old: slow (sim runs fast), not dead
    assert m.check(1.5001, 10.02) == []
    # 1.5 s of sim time but only 0.3 s of wall: a node the lockstep clock does not wait for,
    # starved by a loaded machine (CI's second worker), is slow, not dead
    assert m.check(2.5, 10.30) == []
    dead = m.check(2.6, 10.51)           # silent > 0.5 s in both clocks
    assert [n for n, _ in dead] == ['a']
    assert 'sim time' in dead[0][1] and 'node a' in dead[0][1]
    assert m.check(3.0, 11.0) == []      # reported once
    assert 'a' in m.dead() and 'node a is dead' in m.blocking_reason()


def test_death_caught_in_wall_time_while_sim_stands_still():
    m = monitor()
    m.arm(0.0, 10.0)
    m.beat('a', 2.0, 10.0)
    assert m.check(2.0, 10.45) == [] and m.check(2.0, 10.9) == []
    dead = m.check(2.0, 11.2)
    assert dead and 'wall time' in dead[0][1]


def test_unseen_nodes_are_not_checked_unless_required():
    m = monitor(('a', 'b', 'c'))
    m.beat('a', 0.0, 0.0)
    m.arm(0.0, 0.0, required=['c'])
    dead = dict(m.check(0.0, 0.4) + m.check(0.0, 0.8) + m.check(0.0, 1.2))
    assert m.stalls == 0
    assert set(dead) == {'a', 'c'}                      # b was never seen and is not required
    assert 'no heartbeat since bring-up' in dead['c']
    ages = m.ages(0.0, 5.0)
    assert ages['b'] == (None, None) and ages['a'] == (0.0, 5.0)  # ages() never skips


def test_a_dead_node_beating_again_is_alive():
    m = monitor()
    m.arm(0.0, 0.0, required=['a'])
    assert m.check(0.5, 0.3) == []
    assert m.check(1.0, 0.6)             # silent 1.0 s of sim time and 0.6 s of wall time
    m.beat('a', 1.0, 0.6)
    assert m.dead() == {} and m.blocking_reason() == ''


def test_unknown_and_bad_input():
    m = monitor()
    assert not m.beat('intruder', 0.0, 0.0) and m.unknown_beats == 1
    for bad in (math.nan, math.inf, -math.inf):
        with pytest.raises(ValueError):
            m.beat('a', bad, 0.0)
        with pytest.raises(ValueError):
            m.check(0.0, bad)
    with pytest.raises(ValueError):
        LivenessMonitor(['a', '/a'], SIM, WALL)
    with pytest.raises(ValueError):
        LivenessMonitor(['a'], 0.0, WALL)
    with pytest.raises(ValueError):
        LivenessMonitor([''], SIM, WALL)


def test_sim_time_going_backwards_restarts_the_sim_age():
    m = monitor()
    m.arm(0.0, 1.0)
    m.beat('a', 100.0, 1.0)
    assert m.check(3.0, 1.1) == []       # clock owner restarted at t=3: not a negative age
    assert m.ages(3.2, 1.2)['a'][0] == pytest.approx(0.2)
    assert m.check(3.6, 1.3) == []       # 0.6 s of sim time since the jump, 0.3 s of wall time
    assert m.check(3.6, 1.55)            # and the sim age counts again from the jump


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.floats(0, 0.2), st.floats(0, 0.2), st.booleans()), min_size=1, max_size=60))
def test_dead_iff_an_age_exceeds_its_timeout(steps):
    """Independent bookkeeping: a node is reported dead exactly when the time since its last
    beat exceeds the wall timeout, or the sim timeout while its wall heartbeat is at least
    as old in wall time too (sim time may run far faster than wall time), checked after
    every step."""
    m = LivenessMonitor(['a'], SIM, WALL)
    sim = wall = 0.0
    m.arm(sim, wall, required=['a'])
    last_sim = last_wall = 0.0
    dead = False
    for dsim, dwall, beat in steps:
        sim += dsim
        wall += dwall
        if beat:
            m.beat('a', sim, wall)
            last_sim, last_wall, dead = sim, wall, False
        newly = m.check(sim, wall)
        min_wall = min(SIM, WALL)
        should = (sim - last_sim > SIM and wall - last_wall > min_wall) or (wall - last_wall > WALL)
        assert bool(newly) == (should and not dead)
        dead = dead or should
        assert bool(m.dead()) == dead


def test_bring_up_configures_all_then_activates_all_in_order():
    assert bring_up_plan(['x', 'y', 'z']) == [
        Step('x', 'configure'), Step('y', 'configure'), Step('z', 'configure'),
        Step('x', 'activate'), Step('y', 'activate'), Step('z', 'activate')]
    assert bring_up_plan([]) == []


def test_shutdown_deactivates_then_cleans_up_in_reverse():
    steps, notes = shutdown_plan(['x', 'y', 'z'], {'x': 'active', 'y': 'inactive', 'z': 'active'})
    assert [str(s) for s in steps] == ['deactivate z', 'deactivate x', 'cleanup z', 'cleanup y', 'cleanup x']
    assert notes == []
    steps, notes = shutdown_plan(['x', 'y', 'w'], {'x': 'unconfigured', 'y': 'finalized'})
    assert steps == [] and notes == ['w skipped (state unknown)', 'y skipped (state finalized)']


def test_shutdown_takes_the_named_node_first_and_the_others_in_reverse():
    states = {'rec': 'active', 'drives': 'active', 'ft': 'active', 'tb': 'active'}
    steps, _ = shutdown_plan(['rec', 'drives', 'ft', 'tb'], states, first='drives')
    assert [str(s) for s in steps] == ['deactivate drives', 'deactivate tb', 'deactivate ft', 'deactivate rec',
                                       'cleanup drives', 'cleanup tb', 'cleanup ft', 'cleanup rec']
    # a first node that is not managed (hardware mode: the drives are ros2_control's) changes nothing
    assert shutdown_plan(['rec', 'ft'], states, first='drives') == shutdown_plan(['rec', 'ft'], states)


def test_node_list_errors():
    assert check_node_list(['/a', 'ns/b']) == ['a', 'ns/b']
    with pytest.raises(ValueError, match='listed twice'):
        bring_up_plan(['a', 'a'])
    with pytest.raises(ValueError, match='empty'):
        bring_up_plan(['a', ' '])


def test_a_stalled_watcher_skips_one_check():
    m = monitor()
    m.arm(0.0, 0.0)
    m.beat('a', 0.0, 0.0)
    assert m.check(0.0, 0.4) == []
    # The watcher ran nothing for 1.5 s (> WALL / 2): its queue may hold heartbeats; skip.
    assert m.check(0.0, 1.9) == [] and m.stalls == 1
    m.beat('a', 0.0, 1.91)               # the queued heartbeat, processed after the stall
    assert m.check(0.0, 1.92) == []
    # A real death is still caught on the next check after a stall.
    assert m.check(0.0, 3.5) == [] and m.stalls == 2
    assert [n for n, _ in m.check(0.0, 3.52)] == ['a']


def test_a_death_known_otherwise_is_immediate_and_stays_until_a_beat():
    """A process exit reported by the launcher: dead now, no timeout; once only; a heartbeat
    (a restarted process) makes it alive again, as for a timeout death."""
    m = monitor(('a', 'b'))
    m.arm(0.0, 0.0, required=['a', 'b'])
    assert m.mark_dead('/a', 'node a is dead: its process a was killed by SIGKILL')
    assert not m.mark_dead('a', 'again') and not m.mark_dead('zz', 'not watched')
    assert m.dead() == {'a': 'node a is dead: its process a was killed by SIGKILL'}
    assert m.check(0.1, 0.1) == []                      # not reported a second time by the timeout
    m.beat('a', 0.2, 0.2)
    assert m.dead() == {}


def test_a_node_of_another_part_is_named_with_its_part():
    """Split over hosts: a silent node of another part says which part (host) and asks the
    operator's question; a node of the watcher's own part is named as before."""
    m = LivenessMonitor(['mock_hexapod', 'planner'], timeout_sim=SIM, timeout_wall=WALL, stall_wall=0.75,
                        parts={'/mock_hexapod': 'hardware'})
    m.arm(0.0, 0.0, required=['mock_hexapod', 'planner'])
    for t in (0.1, 0.2):
        m.beat('planner', t, t)
        m.check(t, t)
    m.beat('planner', 0.5, 0.5)
    assert m.silent_reasons(0.5) == [
        'node mock_hexapod (part hardware) silent: no heartbeat for 0.500 s of wall time: part hardware silent: '
        'link or host lost?']
    dead = m.check(0.6, 0.6)
    assert dead == [('mock_hexapod', 'node mock_hexapod (part hardware) is dead: no heartbeat since bring-up '
                     '0.600 s ago in sim time (timeout 0.5 s): part hardware silent: link or host lost?')]
    m.beat('planner', 0.6, 0.6)
    assert m.check(1.0, 1.0) == []
    assert m.check(1.3, 1.3) == [('planner', 'node planner is dead: last heartbeat 0.700 s ago in sim time '
                                             '(timeout 0.5 s)')]
