"""The space plant's command stream to the iiwa's joint_trajectory_controller
(hil_core.space.command_stream): every message passes a kilted JTC's acceptance with
config/controllers.yaml's settings, reaches the law's next positions exactly one period after its
stamp, and ends with each joint braking to rest within its acceleration limit. Fed to the port
of the JTC's update loop (hil_core.drives.jtc_sampling.JtcLoop), a stream that stops mid-motion
decelerates within the limits and comes to rest; while it runs, the JTC writes exactly the
positions a forward position controller would get."""
import numpy as np
import pytest
import yaml
from hypothesis import given, settings, strategies as st

from hil_core.data_paths import config_file
from hil_core.drives.joint_trajectory import JtcSettings, Trajectory, jtc_validate
from hil_core.drives.jtc_sampling import JtcLoop, State
from hil_core.space.command_stream import GRID_NS, MIN_SPAN_NS, braking_tail

P = 1_000_000                                   # 1 ms: the FRI rate
A = np.array([5.0] * 7)                         # config default acceleration_max (rad/s^2)
Q0 = np.array([-0.458149, 1.151219, 0.012566, 1.179319, -1.102175, -0.04468, 2.457249])   # seed 002
NAMES = tuple(f'iiwa_joint_{i}' for i in range(1, 8))


def jtc():
    params = yaml.safe_load(open(config_file('controllers.yaml')))['joint_trajectory_controller']['ros__parameters']
    return JtcSettings.from_parameters(params), params


def stop_profile(v, a, tau):
    """Independent closed form: constant deceleration |v|/T from v to rest at T = the stop time
    rounded up to the grid, then hold (position after the first point)."""
    T = np.ceil(np.abs(v) / a / (GRID_NS * 1e-9) - 1e-9) * GRID_NS * 1e-9
    T = np.where(v != 0, np.maximum(T, GRID_NS * 1e-9), 1.0)
    s = np.minimum(tau, T)
    return np.where(v != 0, v * s - v * s * s / (2 * T), 0.0), np.where(v != 0, v * (1 - s / T), 0.0)


@given(st.lists(st.floats(-1.2, 1.2), min_size=7, max_size=7), st.sampled_from([0, 1, 3]))
@settings(max_examples=200, deadline=None)
def test_each_message_is_accepted_and_brakes_to_rest_within_the_limits(v, zeros):
    v = np.array(v)
    v[:zeros] = 0.0
    times, pos, vel = braking_tail(Q0, v, A, P)
    s, params = jtc()
    assert not s.allow_nonzero_velocity_at_trajectory_end and params['interpolate_from_desired_state']
    traj = Trajectory.from_arrays(NAMES, 10 * P, np.asarray(times) * 1e-9, pos, vel)
    assert jtc_validate(traj, s, 10 * P + MIN_SPAN_NS)            # even that late: not "in the past"
    assert times[0] == P and np.all(np.diff(times) > 0) and times[-1] >= MIN_SPAN_NS
    np.testing.assert_array_equal(pos[0], Q0)
    np.testing.assert_array_equal(vel[0], v)
    assert np.all(vel[-1] == 0.0)
    # every point on the closed-form profile, and the stop within the braking distance bounds
    tau = (times - P)[:, None] * 1e-9
    p_ref, v_ref = stop_profile(v, A, tau)
    np.testing.assert_allclose(pos - Q0, p_ref, atol=1e-12)
    np.testing.assert_allclose(vel, v_ref, atol=1e-12)
    dist = np.abs(pos[-1] - Q0)
    assert np.all(dist >= v * v / (2 * A) - 1e-12)
    assert np.all(dist <= v * v / (2 * A) + np.abs(v) * GRID_NS * 1e-9 / 2 + 1e-12)


def test_the_jtc_stops_a_stream_that_stops_mid_motion_within_the_limits():
    """A kilted JTC (JtcLoop) at 1 kHz fed one message per update, each received before the
    update at its stamp, writes the forward path's positions (q_k + v_k P) while the stream
    runs; the stream stops at full speed and the JTC's commands decelerate at no more than
    acceleration_max (second differences of the written positions) and come to rest."""
    s, params = jtc()
    loop = JtcLoop(s, 1000.0, Q0, interpolate_from_desired_state=params['interpolate_from_desired_state'])
    v_target = np.array([0.6, -0.4, 0.5, 0.3, -0.7, 0.9, 1.1])
    q_cmd, v = Q0.copy(), np.zeros(7)
    written, forward = [], []
    for k in range(550):                                     # 1.1 rad/s stops in 0.22 s
        t = k * P
        if k < 250:                                          # the law: ramp up at a_max, then cruise
            v = v + np.clip(v_target - v, -A * 1e-3, A * 1e-3)
            q_cmd = q_cmd + v * 1e-3
            times, pos, vel = braking_tail(q_cmd, v, A, P)
            assert loop.receive(Trajectory.from_arrays(NAMES, t, np.asarray(times) * 1e-9, pos, vel), t)
            forward.append(q_cmd.copy())
        cmd = loop.update(t, P, State(np.zeros(7)))
        written.append(cmd.positions.copy())
    written = np.array(written)
    # while the stream runs the JTC writes exactly the forward path's next positions
    np.testing.assert_allclose(written[1:250], np.array(forward)[1:], atol=1e-12)
    vel = np.diff(written, axis=0) / 1e-3
    acc = np.diff(vel, axis=0) / 1e-3
    assert np.abs(vel[248]).max() > 0.5                           # stopped at speed
    # ramp-up at a_max, cruise, stop: never above a_max (1e-6 rad/s^2: rounding of the sums)
    assert np.all(np.abs(acc) <= A + 1e-6)
    assert np.all(vel[-1] == 0.0)                                 # at rest, holding
    stop = written[-1] - written[248]
    np.testing.assert_array_less(0.0, stop * v_target)           # kept going the same way


def test_rest_and_bad_arguments():
    times, pos, vel = braking_tail(Q0, np.zeros(7), A, P)
    assert list(times) == [P, MIN_SPAN_NS] and np.all(pos == Q0) and np.all(vel == 0)
    with pytest.raises(ValueError):
        braking_tail(Q0, np.zeros(7), [0.0] * 7, P)


@given(st.lists(st.floats(-3.0, 3.0), min_size=7, max_size=7), st.lists(st.floats(0.05, 20.0), min_size=7, max_size=7),
       st.lists(st.floats(-3.0, 3.0), min_size=7, max_size=7), st.sampled_from([0, 2, 5, 7]),
       st.sampled_from([(P, GRID_NS, MIN_SPAN_NS), (2_500_000, 5_000_000, 10_000_000), (P, 1_000_000, 0)]))
@settings(max_examples=300, deadline=None)
def test_the_compiled_tail_is_the_numpy_oracle_bit_for_bit(v, a, q, zeros, grid):
    from hil_core.space import command_stream_numpy
    v = np.array(v)
    v[:zeros] = 0.0                              # joints at rest among moving ones
    period, grid_ns, span = grid
    got = braking_tail(np.array(q), v, np.array(a), period, grid_ns, span)
    want = command_stream_numpy.braking_tail(np.array(q), v, np.array(a), period, grid_ns, span)
    for g, w in zip(got, want):
        assert g.shape == w.shape and g.dtype == w.dtype
        assert np.array_equal(g, w)


def test_a_non_finite_command_is_refused():
    for bad in (np.nan, np.inf):
        with pytest.raises(ValueError, match='finite'):
            braking_tail(Q0, np.array([0.1, bad, 0, 0, 0, 0, 0]), A, P)
        with pytest.raises(ValueError, match='finite'):
            braking_tail(np.array([bad, 0, 0, 0, 0, 0, 0]), np.zeros(7), A, P)
