"""Timebase stages in isolation: ring buffer, time-base control, triangular blending, B-spline
(seed 000 sections 4.2-4.3). Expected values come from closed forms (polynomials, direct
superposition of individual moves), never from the code under test."""
import numpy as np
import pytest

from hil_core.timebase import (RingBuffer, TimeBaseConfig, TimeBaseControl, blend, blend_history,
                               control_points, evaluate, pose6_to_pose7, pose7_to_pose6,
                               triangle_profile)

T = 0.0025


# --- triangular-velocity moves -----------------------------------------------------------------
def test_single_move_reaches_its_target_at_rest_after_two_move_times():
    x = np.linspace(0, 2, 2001)
    s = triangle_profile(x)
    v = np.gradient(s, x)
    assert s[0] == 0.0 and s[-1] == 1.0
    # velocity is the triangle: peak 1 at the middle, zero at both ends
    assert np.allclose(v[1:-1], np.where(x <= 1, x, 2 - x)[1:-1], atol=2e-3)
    targets = np.array([[0.0, 1.0], [0.3, -2.0]])     # move 1 starts at u = 1, ends at u = 3
    assert np.allclose(blend_history(targets, [2.0]), 0.5 * (targets[0] + targets[1]))
    assert np.allclose(blend_history(targets, [3.0, 7.0]), targets[1])


def test_merged_curve_is_the_superposition_of_moves_and_passes_each_midpoint():
    rng = np.random.default_rng(3)
    p = rng.normal(size=(12, 3))
    p[:3] = p[0]
    for m in range(3, 12):
        x = np.linspace(0, 1, 7)
        pos, vel = blend(p[m - 2:m + 1], x)
        direct = blend_history(p, m + x)
        assert np.allclose(pos, direct, atol=1e-12)
        # merge instant u = m: halfway through move m-1, at its mean velocity
        assert np.allclose(pos[0], 0.5 * (p[m - 2] + p[m - 1]), atol=1e-12)
        assert np.allclose(vel[0], p[m - 1] - p[m - 2], atol=1e-12)
    # velocity is continuous across move boundaries (C1)
    _, v_end = blend(p[4:7], np.array([1.0]))
    _, v_start = blend(p[5:8], np.array([0.0]))
    assert np.allclose(v_end, v_start, atol=1e-12)


def test_every_buffered_pose_is_reached_when_the_stream_holds():
    p = np.array([[0.0], [1.0], [1.0], [1.0], [3.0], [3.0], [3.0]])
    # after two further moves to the same pose the curve sits exactly on it, velocity zero
    assert np.allclose(blend_history(p, [4.0]), [1.0])
    assert np.allclose(blend_history(p, [7.0, 9.0]), [3.0])


# --- cubic B-spline ----------------------------------------------------------------------------
def _cubic(coef, t):
    return sum(c * t ** k for k, c in enumerate(coef))


@pytest.mark.parametrize('seed', range(4))
def test_bspline_with_exact_prefilter_reproduces_cubic_polynomials(seed):
    rng = np.random.default_rng(seed)
    coef = rng.normal(size=(4, 6)) * np.array([1e-2, 1e-1, 1.0, 5.0])[:, None]
    j = np.arange(40)
    f = _cubic(coef, j[:, None].astype(float))
    c = control_points(f, 'exact')
    v = rng.uniform(6, 36, 200)
    pos, vel = evaluate(c, v)
    assert np.allclose(pos, _cubic(coef, v[:, None]), atol=1e-9)
    dpoly = sum(k * coef[k] * v[:, None] ** (k - 1) for k in range(1, 4))
    assert np.allclose(vel, dpoly, atol=1e-9)


def test_plain_bspline_is_exact_for_lines_only():
    j = np.arange(30.0)[:, None]
    v = np.linspace(6, 25, 77)[:, None]
    pos, _ = evaluate(control_points(2.0 + 0.5 * j, 'none'), v[:, 0])
    assert np.allclose(pos, 2.0 + 0.5 * v)
    pos, _ = evaluate(control_points(j ** 3, 'none'), v[:, 0])
    assert np.abs(pos - v ** 3).max() > 1.0          # smooths by f''/6 = v: not exact


# --- ring buffer -------------------------------------------------------------------------------
def test_ring_buffer_indices_six_slots_and_distance():
    b = RingBuffer(6, T)
    for k in range(3):
        assert b.write(np.full(6, k), k * T) == 'ok'
    assert (b.w, b.r, b.distance) == (2, -1, 3)
    pose, stamp = b.read()
    assert pose[0] == 0 and stamp == 0 and b.distance == 2
    assert b.poses.shape == (6, 6)


def test_ring_buffer_refuses_duplicates_out_of_order_and_nan():
    b = RingBuffer(6, T)
    b.write(np.zeros(6), 1.0)
    assert b.write(np.ones(6), 1.0) == 'stale'
    assert b.write(np.ones(6), 1.0 - T) == 'stale'
    assert b.write(np.full(6, np.nan), 1.0 + T) == 'invalid'
    assert b.write(np.ones(5), 1.0 + T) == 'invalid'
    assert b.distance == 1 and b.refused == 4


def test_ring_buffer_fills_dropped_references_by_interpolation():
    b = RingBuffer(6, T, max_gap_fill=2)
    b.write(np.zeros(6), 0.0)
    assert b.write(np.full(6, 3.0), 3 * T) == 'filled:2'
    got = [b.read() for _ in range(4)]
    assert [g[0][0] for g in got] == pytest.approx([0.0, 1.0, 2.0, 3.0])
    assert [g[1] for g in got] == pytest.approx([0.0, T, 2 * T, 3 * T])
    # after a long gap (restart) only the last two periods are filled, interpolated in time
    assert b.write(np.full(6, 9.0), 9 * T) == 'filled:2'
    got = [b.read() for _ in range(3)]
    assert [g[0][0] for g in got] == pytest.approx([7.0, 8.0, 9.0])
    assert [g[1] for g in got] == pytest.approx([7 * T, 8 * T, 9 * T])


def test_ring_buffer_overrun_drops_the_oldest_unread():
    b = RingBuffer(6, T)
    for k in range(8):
        b.write(np.full(6, k), k * T)
    assert b.overruns == 2 and b.distance == 6
    assert b.read()[0][0] == 2
    b2 = RingBuffer(6, T)
    assert b2.read() is None                      # underrun: the reader gets nothing


def test_pose_chart_round_trip():
    rng = np.random.default_rng(0)
    p6 = np.column_stack([rng.normal(size=(20, 3)), 0.4 * rng.normal(size=(20, 3))])
    p7 = pose6_to_pose7(p6)
    assert np.allclose(np.linalg.norm(p7[:, 3:], axis=1), 1.0)
    assert np.allclose(pose7_to_pose6(p7), p6)


# --- time-base control ---------------------------------------------------------------------------
def test_control_is_gentle_for_a_small_phase_error_and_relaxes_to_true_time():
    c = TimeBaseControl(2, 0.01, gentle_steps=2, max_steps=10, patience=4)
    ns = []
    d = 2.0 + 0.01                                      # 25 us late
    for _ in range(200):
        ns.append(c.update(d))
        d -= c.n * c.per_step_cycle
    assert max(abs(n) for n in ns) <= 2
    assert abs(d - 2.0) <= c.deadband and ns[-1] == 0


def test_control_escalates_when_steps_do_not_help_and_stays_bounded():
    c = TimeBaseControl(2, 0.01, gentle_steps=2, max_steps=10, patience=4)
    ns = [c.update(3.0) for _ in range(100)]            # persistent error: nothing changes d
    assert max(ns) == 10 and min(ns) >= 0
    assert np.all(np.abs(np.diff([0] + ns)) <= 1)       # one 1 % step per servo cycle at most
    assert 1.0 - 0.1 <= c.factor <= 1.1
    c2 = TimeBaseControl(2, 0.01, gentle_steps=2, max_steps=10, patience=4, enabled=False)
    assert c2.update(5.0) == 0 and c2.factor == 1.0


def test_config_validates_times_and_options():
    cfg = TimeBaseConfig()
    assert (cfg.n_seg, cfg.n_sub, cfg.servo_per_move) == (2, 2, 4)
    assert cfg.default_delay == pytest.approx(0.010)    # seed 000 section 5: four poses, 10 ms
    with pytest.raises(ValueError):
        TimeBaseConfig(segmentation_time=0.001)
    with pytest.raises(ValueError):
        TimeBaseConfig(prefilter='quintic')
    with pytest.raises(ValueError):
        TimeBaseConfig(default_distance=6)
    with pytest.raises(ValueError):
        TimeBaseConfig(servo_period=float('nan'))
