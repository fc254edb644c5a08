"""hil_core.drives.jtc_sampling: the JTC's interpolation and update loop against independent references.

References: scipy's CubicHermiteSpline (cubic), the quintic through six boundary conditions
solved with numpy.linalg.solve, plain line equations (linear), and the semantics read from
ros2_controllers ``kilted`` trajectory.cpp / joint_trajectory_controller.cpp (docs/lab_ros2_control.md).
"""
import numpy as np
import pytest
from scipy.interpolate import CubicHermiteSpline

from hil_core.drives.joint_trajectory import JtcSettings, Trajectory
from hil_core.drives.jtc_sampling import JtcLoop, SampledTrajectory, State, interpolate

MS = 1_000_000
rng = np.random.default_rng(3)


def test_cubic_segment_is_the_hermite_spline():
    p0, p1, v0, v1 = rng.normal(size=(4, 5))
    ref = CubicHermiteSpline([0.0, 0.004], np.vstack([p0, p1]), np.vstack([v0, v1]))
    for t_ns in (0, 1, 1_234_567, 2_000_000, 3_999_999):
        s = interpolate(0, State(p0, v0), 4 * MS, State(p1, v1), t_ns)
        np.testing.assert_allclose(s.positions, ref(t_ns / 1e9), rtol=0, atol=1e-14)
        np.testing.assert_allclose(s.velocities, ref(t_ns / 1e9, 1), rtol=0, atol=1e-10)
        np.testing.assert_allclose(s.accelerations, ref(t_ns / 1e9, 2), rtol=0, atol=1e-6)


def test_linear_segment_without_velocities():
    p0, p1 = np.array([0.0, 1.0]), np.array([2.0, -1.0])
    s = interpolate(0, State(p0), 2 * MS, State(p1), MS // 2)
    np.testing.assert_allclose(s.positions, p0 + 0.25 * (p1 - p0), atol=1e-15)
    np.testing.assert_allclose(s.velocities, (p1 - p0) / 0.002)
    assert not s.accelerations.any()
    # velocities on one side only: still linear (both ends need them for the cubic)
    assert np.allclose(interpolate(0, State(p0, np.ones(2)), 2 * MS, State(p1), MS).positions, (p0 + p1) / 2)


def test_quintic_segment_meets_six_boundary_conditions():
    T = 0.003
    p0, v0, a0, p1, v1, a1 = rng.normal(size=6)
    rows = [[1, 0, 0, 0, 0, 0], [0, 1, 0, 0, 0, 0], [0, 0, 2, 0, 0, 0],
            [1, T, T**2, T**3, T**4, T**5], [0, 1, 2 * T, 3 * T**2, 4 * T**3, 5 * T**4],
            [0, 0, 2, 6 * T, 12 * T**2, 20 * T**3]]
    c = np.linalg.solve(np.array(rows), [p0, v0, a0, p1, v1, a1])
    x = 0.0011
    s = interpolate(0, State(np.array([p0]), np.array([v0]), np.array([a0])), 3 * MS,
                    State(np.array([p1]), np.array([v1]), np.array([a1])), 1_100_000)
    assert s.positions[0] == pytest.approx(np.polyval(c[::-1], x), abs=1e-12)
    assert s.velocities[0] == pytest.approx(np.polyval(np.polyder(c[::-1]), x), abs=1e-9)


def _traj(stamp=10 * MS, vel=True):
    times = [1 * MS, 2 * MS, 3 * MS]
    pos = [[1.0], [2.0], [4.0]]
    v = [[1000.0], [1500.0], [700.0]] if vel else None
    return SampledTrajectory(stamp, times, pos, v)


def test_past_the_last_point_the_last_point_is_held_as_given():
    tr = _traj()
    tr.set_point_before(10 * MS, State(np.array([0.0])))
    s = tr.sample(10 * MS + 3 * MS + 5 * MS)
    assert s.positions[0] == 4.0 and s.velocities[0] == 700.0     # non-zero velocity kept
    tr = _traj(vel=False)
    tr.set_point_before(10 * MS, State(np.array([0.0])))
    s = tr.sample(20 * MS)
    assert s.positions[0] == 4.0 and s.velocities[0] == 0.0


def test_before_the_first_point_interpolates_from_the_point_before():
    tr = _traj()
    tr.set_point_before(10 * MS + 200_000, State(np.array([0.5])))   # no velocity: zero is used
    ref = CubicHermiteSpline([0.0102, 0.011], [0.5, 1.0], [0.0, 1000.0])
    assert tr.sample(10 * MS + 600_000).positions[0] == pytest.approx(float(ref(0.0106)), abs=1e-14)
    assert tr.sample(10 * MS + 100_000) is None                      # before the point before
    # at a knot exactly, the segment starting there is used
    assert tr.sample(12 * MS).positions[0] == pytest.approx(2.0, abs=1e-15)


def test_stamp_zero_starts_at_the_first_sample():
    tr = _traj(stamp=0)
    tr.set_point_before(50 * MS, State(np.array([1.0]), np.array([0.0])))
    tr.sample(50 * MS)
    assert tr.start_ns == 50 * MS
    assert tr.sample(52 * MS).positions[0] == pytest.approx(2.0, abs=1e-15)


SET = JtcSettings(('j',), allow_nonzero_velocity_at_trajectory_end=True)


def _msg(stamp, times_ms, pos, vel=None):
    return Trajectory.from_arrays(['j'], stamp, np.array(times_ms) * 1e-3, [[p] for p in pos],
                                  None if vel is None else [[v] for v in vel])


def test_loop_commands_one_period_ahead_and_holds_on_activation():
    loop = JtcLoop(SET, 1000.0, [0.25])
    c = loop.update(5 * MS, MS, State(np.array([0.25])))
    assert c.positions[0] == 0.25                 # the hold trajectory queued by on_activate
    assert loop.receive(_msg(6 * MS, [1, 2, 3], [0.0, 1.0, 2.0]), 6 * MS)
    c = loop.update(6 * MS, MS, State(np.array([0.25])))
    # measured-state start (interpolate_from_desired_state false): command = sample at 7 ms = point 1
    assert c.positions[0] == pytest.approx(0.0, abs=1e-15)
    c = loop.update(7 * MS, MS, State(np.array([0.0])))
    assert c.positions[0] == pytest.approx(1.0, abs=1e-15)


def test_refused_message_is_counted_and_the_running_trajectory_goes_on():
    loop = JtcLoop(SET, 1000.0, [0.0])
    loop.receive(_msg(1 * MS, [1, 2, 3, 4], [0.0, 1.0, 2.0, 3.0]), 1 * MS)
    loop.update(1 * MS, MS, State(np.array([0.0])))
    v = loop.receive(_msg(1 * MS, [1, 1.5], [9.0, 9.0]), 4 * MS)      # ends at 2.5 ms < now 4 ms
    assert (v.accepted, v.reason) == (False, 'ends_in_past') and loop.refused == {'ends_in_past': 1}
    c = loop.update(2 * MS, MS, State(np.array([0.0])))
    assert c.positions[0] == pytest.approx(1.0, abs=1e-15)        # the first message's point at 3 ms


def test_interpolate_from_desired_state_uses_the_last_command_at_its_update_time():
    loop = JtcLoop(SET, 1000.0, [0.0], interpolate_from_desired_state=True)
    loop.receive(_msg(0, [1, 2], [1.0, 2.0]), 0)
    loop.update(10 * MS, MS, State(np.array([0.0])))       # stamp 0: starts at 10 ms, cmd = p(11 ms)
    last = loop.last_commanded.positions[0]
    assert (last, loop.last_commanded_ns) == (pytest.approx(1.0), 10 * MS)
    # a new message: the point before is (10 ms, p(11 ms)) although p(11 ms) belongs to 11 ms,
    # so a new trajectory whose first point is after the next command time sees a 1-period shift
    loop.receive(_msg(11 * MS, [2, 3], [5.0, 6.0]), 11 * MS)
    loop.update(11 * MS, MS, State(np.array([123.0])))     # the measured state is ignored
    expected = 1.0 + (5.0 - 1.0) * (12 - 10) / (13 - 10)   # linear: no velocities in the message
    assert loop.command.positions[0] == pytest.approx(expected, abs=1e-12)
