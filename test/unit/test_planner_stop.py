"""The planner's controlled stop (hil_core.planner.stop; the fault hardening found "the planner's own stop
is a_max at its output and more at the sliders"): with room it brakes all DOFs together at stop_fraction of
the limits; without room it brakes at the limits, and it never ends farther out than the full
brake would have."""
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from hil_core.supervision.modes import HilMode
from hil_core.planner.envelope import brake_step
from hil_core.planner.stop import controlled_stop, stop_point, stop_time, synchronized_step
from test_planner_hardening import Run
from test_planner_invariants import A_MAX, DT, HOME, WS, assert_safe

A_LIM = np.array([6.0, 6.0, 6.0, 20.0, 20.0, 20.0])


def _stop(x, v, a_lim, fraction, inside, limit=100000):
    xs, vs, gentle = [np.array(x, float)], [np.array(v, float)], []
    while np.any(vs[-1]):
        x1, v1, g = controlled_stop(xs[-1], vs[-1], a_lim, fraction, DT, inside)
        xs.append(x1)
        vs.append(v1)
        gentle.append(g)
        assert len(xs) < limit
    return np.array(xs), np.array(vs), gentle


def test_the_synchronized_stop_decelerates_at_the_fraction_along_a_straight_line():
    """0.1 m/s along (3, 4, 0)/5 and a roll rate: the translational deceleration is 3 m/s^2 in norm
    (half of 6), the DOFs reach rest together after T = 0.1 / 3 s, on the segment to x + v T / 2."""
    v = np.array([0.06, 0.08, 0.0, 0.2, 0.0, 0.0])
    x0 = np.zeros(6)
    a_stop = 0.5 * A_LIM
    assert stop_time(v, a_stop) == 0.1 / 3.0
    xs, vs, gentle = _stop(x0, v, A_LIM, 0.5, lambda p: True)
    assert all(gentle)
    acc = np.diff(vs, axis=0) / DT
    np.testing.assert_allclose(np.linalg.norm(acc[:-1, :3], axis=1), 3.0, rtol=1e-12)
    assert np.linalg.norm(acc[-1, :3]) <= 3.0 + 1e-12
    assert len(xs) - 1 == int(np.ceil(stop_time(v, a_stop) / DT - 1e-9))
    end = stop_point(x0, v, a_stop)
    u = v / np.linalg.norm(v)
    along = xs @ u
    np.testing.assert_allclose(xs, np.outer(along, u), atol=1e-15)     # on the line through x0 along v
    assert np.all(np.diff(along) >= 0) and along[-1] <= end @ u + 1e-15


def test_without_room_the_stop_is_the_full_brake():
    x, v = np.zeros(6), np.array([0.1, 0.0, 0.0, 0.0, 0.0, 0.0])
    x1, v1, gentle = controlled_stop(x, v, A_LIM, 0.5, DT, lambda p: p[0] < 1e-3)
    xb, vb = brake_step(x, v, A_LIM, DT)
    assert not gentle and np.array_equal(x1, xb) and np.array_equal(v1, vb)
    assert controlled_stop(x, v, A_LIM, 1.0, DT, lambda p: True)[2] is False     # fraction 1: always full


_vel = st.lists(st.floats(-0.15, 0.15), min_size=3, max_size=3).map(lambda t: t + [0.0, 0.0, 0.0])
_rot = st.lists(st.floats(-1.0, 1.0), min_size=3, max_size=3)


@settings(max_examples=300, deadline=None)
@given(v_t=_vel, v_r=_rot, radius=st.floats(0.002, 0.05), fraction=st.floats(0.05, 1.0))
def test_the_stop_never_ends_farther_out_than_the_full_brake_nor_exceeds_the_limits(v_t, v_r, radius, fraction):
    """Inside = a ball of ``radius`` around 0 (a convex hard limit) and a +-0.3 rad box. From any state
    whose full brake stops inside, the controlled stop stops inside too; every cycle keeps
    |a_i| <= a_lim_i, never reverses a DOF nor speeds it up, and reaches rest."""
    v = np.array(v_t[:3] + v_r)
    x = np.zeros(6)

    def inside(p):
        return float(np.linalg.norm(p[:3])) < radius and bool(np.all(np.abs(p[3:]) <= 0.3))

    xb, vb = x, v
    while np.any(vb):
        xb, vb = brake_step(xb, vb, A_LIM, DT)
    xs, vs, _ = _stop(x, v, A_LIM, fraction, inside)
    acc = np.diff(vs, axis=0) / DT
    assert np.all(np.abs(acc) <= A_LIM * (1 + 1e-12))
    assert np.all(vs[1:] * vs[:-1] >= 0) and np.all(np.abs(vs[1:]) <= np.abs(vs[:-1]) + 1e-15)
    if inside(xb):
        assert all(inside(p) for p in xs)


def test_a_planner_fault_while_moving_stops_at_half_a_max_and_inside():
    """RUNNING at 0.1 m/s along x, then FAULT: the output decelerates at 3 m/s^2 (stop_fraction 0.5 of
    a_max 6; was 6), reaches rest and holds; every invariant of the planner holds."""
    run = Run().until_running()
    for i in range(120):
        run.step(np.r_[HOME[:3] + [0.1 * i * DT, 0.0, 0.0], HOME[3:]], HilMode.RUNNING)
    n = len(run.poses)
    for _ in range(200):
        run.step(None, HilMode.FAULT)
    x = np.array(run.poses)[n - 3:, 0]
    acc = np.diff(x, 2) / DT ** 2
    assert -3.0 - 1e-9 <= np.min(acc) < -2.9
    assert not np.any(run.pl.v)
    assert_safe(run.poses, 'FAULT stop')
    assert run.pl.guard_interventions == 0
    assert A_MAX[0] == 6.0


def test_synchronized_step_from_rest_stays_at_rest():
    x1, v1 = synchronized_step(np.ones(6), np.zeros(6), 0.5 * A_LIM, DT)
    assert np.array_equal(x1, np.ones(6)) and not np.any(v1)


def test_a_dropout_while_moving_stops_and_rejoins_at_the_stop_fraction():
    """RUNNING at 0.1 m/s, then 8 frames without reference (a stalled admittance), then the
    reference again: the output brakes at 3 m/s^2 (stop_fraction 0.5 of a_max) where it is and the
    limiter rejoins from there at 3 m/s^2 too. Before, the last reference was held: the ASC braked
    at a_max, pulled back to it and rejoined at a_max (the sliders saw up to 5.9 m/s^2)."""
    run = Run().until_running()
    ref = lambda i: np.r_[HOME[:3] + [0.1 * min(i, 100) * DT, 0.0, 0.0], HOME[3:]]     # noqa: E731
    for i in range(60):
        run.step(ref(i), HilMode.RUNNING)
    n = len(run.poses)
    for _ in range(8):
        run.step(None, HilMode.RUNNING)
    for i in range(68, 400):
        run.step(ref(i), HilMode.RUNNING)
    acc = np.diff(np.array(run.poses)[n - 3:, :3], 2, axis=0) / DT ** 2
    np.testing.assert_allclose(acc[1:9, 0], -3.0, rtol=1e-9)             # the gap: the gentle stop
    assert np.abs(acc).max() <= 0.5 * A_MAX[0] * (1 + 1e-9)             # and the rejoin
    np.testing.assert_allclose(run.poses[-1][:3], ref(399)[:3], atol=1e-6)
    assert 'safety_takeover' not in run.names() and run.pl.guard_interventions == 0
    assert_safe(run.poses, 'dropout')
