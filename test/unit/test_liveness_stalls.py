"""Stalls in hil_core.supervision.liveness (the fault hardening's "Dead and stalled nodes"): a node that comes back after
a wall gap longer than stall_wall, while the watcher kept checking, stalled (a SIGSTOP of 1 s was
a clean run before); gaps of the watcher's own, before the bring-up, shorter than the limit or
ending in a death are not stalls."""
from hil_core.supervision.liveness import LivenessMonitor

STALL = 0.75
CHECK = 0.02      # the supervisor's liveness_period


def monitor(stall=STALL):
    return LivenessMonitor(('a', 'b'), timeout_sim=0.5, timeout_wall=3.0, stall_wall=stall)


def run(m, start, end, beat_a=True, gap=None, check=True):
    """Wall time from start to end in CHECK steps (sim time stands still: lockstep waiting):
    b beats every 0.1 s, a too except inside ``gap``; the watcher checks every step."""
    t, next_beat = start, start
    while t < end - 1e-12:
        if t >= next_beat:
            m.beat('b', 1.0, t)
            if beat_a and not (gap and gap[0] <= t < gap[1]):
                m.beat('a', 1.0, t)
            next_beat = t + 0.1
        if check:
            m.check(1.0, t)
        t += CHECK


def test_a_one_second_gap_while_the_watcher_checks_is_one_stall_of_that_node():
    m = monitor()
    m.arm(1.0, 10.0)
    run(m, 10.0, 14.0, gap=(11.0, 12.0))
    assert len(m.peer_stalls) == 1
    node, gap = m.peer_stalls[0]
    assert node == 'a' and 1.0 <= gap <= 1.1 + 1e-9          # heartbeats every 0.1 s around the gap
    assert m.dead() == {}                                      # a stall is no death
    assert m.stall_reasons() == [f'node a stalled: no heartbeat for {gap:.3f} s of wall time (stall limit 0.75 s)']


def test_gaps_shorter_than_the_limit_are_not_stalls():
    m = monitor()
    m.arm(1.0, 10.0)
    run(m, 10.0, 14.0, gap=(11.0, 11.6))                      # 0.7 s without: gap <= 0.75
    assert m.peer_stalls == []


def test_a_gap_of_the_watcher_itself_is_no_stall_of_anyone():
    m = monitor()
    m.arm(1.0, 10.0)
    run(m, 10.0, 11.0)
    # the whole process stalled: neither beats nor checks for 1 s, then both resume
    m.beat('a', 1.0, 12.0)                                     # a heartbeat served before the check
    m.check(1.0, 12.01)
    m.beat('b', 1.0, 12.02)
    run(m, 12.03, 13.0)
    assert m.peer_stalls == []


def test_silence_during_the_bring_up_is_not_a_stall():
    m = monitor()
    m.beat('a', 0.0, 5.0)                                      # configure blocks a node for seconds
    m.arm(1.0, 10.0)
    run(m, 10.0, 11.0)
    assert m.peer_stalls == []


def test_a_node_declared_dead_that_beats_again_is_a_restart_not_a_stall():
    m = monitor()
    m.arm(1.0, 10.0)
    run(m, 10.0, 15.0, gap=(11.0, 14.5))                      # 3.5 s: dead after 3 s of wall time
    assert m.peer_stalls == []


def test_stalls_are_not_watched_with_a_zero_limit():
    m = monitor(stall=0.0)
    m.arm(1.0, 10.0)
    run(m, 10.0, 14.0, gap=(11.0, 12.0))
    assert m.peer_stalls == []


def test_the_watcher_keeps_its_own_stalls():
    m = monitor()
    m.arm(1.0, 10.0)
    run(m, 10.0, 11.0)
    m.check(1.0, 12.0)                   # no check for 1 s: the watcher's process stalled
    run(m, 12.02, 12.5)
    assert len(m.own_stalls) == 1 and 1.0 <= m.own_stalls[0] <= 1.0 + CHECK + 1e-9
    assert m.peer_stalls == []


def test_a_node_silent_at_a_fault_reported_by_another_is_named():
    """SIGSTOP of the planner: the drives' watchdog reports the missing command after 0.5 s, before
    the planner comes back as a stall; the fault names the silent node (half the stall limit)."""
    m = monitor()
    m.arm(1.0, 0.0)
    run(m, 0.0, 1.5, gap=(1.0, 2.0))
    silent = m.silent(1.5)
    assert [n for n, _ in silent] == ['a'] and 0.5 < silent[0][1] < 0.6 + CHECK     # last beat before 1.0 s
    assert m.silent(1.2) == []                                   # under 0.375 s: not yet


def test_nobody_is_silent_while_the_watcher_itself_did_not_check():
    m = monitor()
    m.arm(1.0, 0.0)
    run(m, 0.0, 1.0)
    run(m, 1.0, 1.5, beat_a=False, check=False)                  # the watcher stopped too
    assert m.silent(1.5) == []
    assert monitor(stall=0.0).silent(1.0) == []                  # stalls not watched: nothing named


def test_nobody_is_silent_across_the_watchers_own_stall_just_ended():
    """The whole process froze for 1.157 s (the faults scenario in CI): the first check after it
    records the watcher's own stall, and a fault reported right then names no node silent, since
    every heartbeat of that second may be in the queue, unread; a silence that begins after the
    stall is named again."""
    m = monitor()
    m.arm(1.0, 0.0)
    run(m, 0.0, 1.0)
    m.check(1.0, 2.157)                                          # the first check after the freeze
    assert len(m.own_stalls) == 1 and m.silent(2.16) == []
    run(m, 2.16, 3.0, gap=(2.4, 4.0))                            # a beats, then stops: after the stall
    assert [n for n, _ in m.silent(3.0)] == ['a']


def test_a_peer_silent_since_before_the_watchers_stall_is_named_once_the_watcher_is_back():
    """The exclusion lasts only until the watcher has been back for half the stall limit: its
    queue is read by then, and a peer still silent (stopped just before a short stall of the
    watcher, CI's fault matrix: the planner stopped, the container stood still ~0.4 s, and the
    drives' FAULT named nobody) is named."""
    m = monitor()
    m.arm(1.0, 0.0)
    run(m, 0.0, 1.0)
    for name in m.peers:                                         # everyone heard just before
        m.beat(name, 1.0, 1.0)
    m.check(1.0, 1.5)                                            # the watcher's own 0.5 s gap
    limit = 0.5 * m.stall_wall
    m.check(1.0, 1.5 + 0.5 * limit)
    assert m.silent(1.5 + 0.5 * limit) == []                     # just back: beats may be queued
    t = 1.5 + 0.5 * limit
    while t < 1.5 + 2 * limit:                                   # back, checking; nobody beats
        t += CHECK
        m.check(1.0, t)
    assert sorted(n for n, _ in m.silent(1.5 + 2 * limit)) == sorted(m.peers)


def test_a_peer_silent_across_the_watchers_stall_stalled_only_if_silent_a_limit_after_it():
    """A silence that began before the watcher's own stall counts from the watcher's return: a
    peer back within the stall limit of it did not stall (its beats may have waited in the
    queue); a peer silent for longer than the limit after it did, with the whole gap reported
    (it was a permanent exclusion: a node stopped just before a stall of the watcher was never
    reported)."""
    for back_after, stalled in ((0.6, False), (0.9, True)):
        m = monitor()
        m.arm(1.0, 0.0)
        run(m, 0.0, 1.0)
        m.beat('a', 1.0, 1.0)
        m.beat('b', 1.0, 1.0)
        m.check(1.0, 1.5)                                        # the watcher's own 0.5 s gap
        t = 1.5
        while t < 1.5 + back_after - 1e-9:                       # back, checking; b beats, a does not
            t += CHECK
            m.check(1.0, t)
            m.beat('b', 1.0, t)
        m.beat('a', 1.0, t)
        assert m.peer_stalls == ([('a', t - 1.0)] if stalled else []), (back_after, m.peer_stalls)
