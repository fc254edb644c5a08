"""Synchronization coefficient (seed 000 4.1.1), ASC (4.1.3) and the ruckig alternative."""
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
import pytest
from scipy.spatial.transform import Rotation, Slerp

from hil_core.planner.asc import AccelerationSaturationControl, RuckigLimiter
from hil_core.planner.ramps import PEAK_CURVATURE, PEAK_RATE, SHAPES, ramp, ramp_rate
from hil_core.planner.sync_ramp import SyncRamp, slerp, slerp_numpy

DT = 0.0025
A_MAX = np.array([5.0, 5.0, 5.0, 20.0, 20.0, 20.0])
V_MAX = np.array([0.3, 0.3, 0.3, 2.0, 2.0, 2.0])


@pytest.mark.parametrize('shape', SHAPES)
def test_ramp_shapes_are_c1_at_both_ends_with_closed_form_peaks(shape):
    t = np.linspace(0, 1, 200001)
    s = ramp(t, shape)
    assert s[0] == 0.0 and s[-1] == 1.0 and np.all(np.diff(s) >= 0)
    assert ramp_rate(0.0, shape) == 0.0 and abs(ramp_rate(1.0, shape)) < 1e-12
    np.testing.assert_allclose(np.gradient(s, t)[1:-1], ramp_rate(t, shape)[1:-1], atol=1e-6)
    assert abs(ramp_rate(t, shape).max() - PEAK_RATE[shape]) < 1e-6
    curv = np.gradient(ramp_rate(t, shape), t)
    assert abs(np.abs(curv[1:-1]).max() - PEAK_CURVATURE[shape]) < 1e-3


def test_slerp_matches_scipy():
    rng = np.random.default_rng(3)
    q0, q1 = Rotation.random(2, random_state=4).as_quat()
    for c in rng.uniform(0, 1, 20):
        ref = Slerp([0, 1], Rotation.from_quat([q0, q1]))([c]).as_quat()[0]
        got = slerp(q0, q1, c)
        assert min(np.linalg.norm(got - ref), np.linalg.norm(got + ref)) < 1e-12


@settings(max_examples=300, deadline=None)
@given(st.lists(st.floats(-1, 1), min_size=8, max_size=8), st.floats(0, 1),
       st.sampled_from([1.0, 1e-9, 1e-13, 0.0]))
def test_slerp_of_one_pair_matches_its_numpy_twin(values, c, spread):
    """The plain-float path (one pair, one coefficient) against ``slerp_numpy``, near-identical
    and opposite quaternions included (``spread`` squeezes q1 onto q0 or its negative)."""
    q0 = np.array(values[:4]) + np.array([0, 0, 0, 1.5])          # never near zero length
    q1 = q0 * np.sign(values[4] or 1.0) + spread * np.array(values[4:])
    if np.linalg.norm(q1) < 1e-6:
        q1 = q0.copy()
    got, want = slerp(q0, q1, c), slerp_numpy(q0, q1, c)
    assert got.shape == (4,)
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)


def test_slerp_takes_arrays_the_numpy_way():
    q0, q1 = Rotation.random(6, random_state=5).as_quat(), Rotation.random(6, random_state=6).as_quat()
    c = np.linspace(0, 1, 6)
    np.testing.assert_array_equal(slerp(q0, q1, c), slerp_numpy(q0, q1, c))


def test_sync_ramp_blends_then_is_transparent():
    start = np.array([0.0, 0.0, 0.15, 0.0, 0.0, 0.0, 1.0])
    ref = np.array([0.02, -0.01, 0.16, *Rotation.from_euler('xyz', [0.05, -0.08, 0.02]).as_quat()])
    sync = SyncRamp(0.5, DT, 'quintic')
    sync.start(start)
    out = np.array([sync.step(ref) for _ in range(sync.steps)])
    c = ramp(np.arange(1, sync.steps + 1) / sync.steps)
    np.testing.assert_allclose(out[:, :3], (1 - c)[:, None] * start[:3] + c[:, None] * ref[:3], atol=1e-15)
    assert sync.done
    # transparent once c = 1: the very object, bit-identical
    assert sync.step(ref) is ref
    # C1 start: the first increments are tiny (c'(0) = 0), C1 end: they vanish again
    steps = np.linalg.norm(np.diff(out[:, :3], axis=0), axis=1)
    assert steps[0] < 1e-3 * steps.max() and steps[-1] < 1e-3 * steps.max()
    with pytest.raises(ValueError):
        SyncRamp(0.0, DT)
    with pytest.raises(ValueError):
        SyncRamp(1.0, DT, 'linear')


def _run(lim, refs):
    lim.reset(refs[0])
    return np.array([lim.step(r)[0] for r in refs])


def test_asc_is_bit_identical_inside_the_limits():
    t = np.arange(800) * DT
    refs = np.zeros((800, 6))
    refs[:, 0] = 0.02 * (1 - np.cos(2 * np.pi * 1.0 * t))      # starts at rest, 0.79 m/s^2 peak < 5
    refs[:, 4] = 0.1 * (1 - np.cos(2 * np.pi * 0.5 * t))       # 0.99 rad/s^2 < 20
    asc = AccelerationSaturationControl(DT, A_MAX, V_MAX)
    asc.reset(refs[0])
    for r in refs:
        out, passthrough = asc.step(r)
        assert passthrough and np.array_equal(out, r)
    assert asc.saturated_cycles == 0


@pytest.mark.parametrize('kind', ['step', 'spike', 'dropout'])
def test_asc_limits_acceleration_and_restores_alignment(kind):
    n = 1600
    refs = np.zeros((n, 6))
    t = np.arange(n) * DT
    refs[:, 1] = 0.01 * np.sin(2 * np.pi * 0.5 * t)
    if kind == 'step':
        refs[200:, 0] += 0.03
    elif kind == 'spike':
        refs[200, :] += [0.05, -0.05, 0.05, 0.3, 0.3, -0.3]
    else:
        refs[200:260, 1] = refs[199, 1]                          # held reference
    asc = AccelerationSaturationControl(DT, A_MAX, V_MAX)
    out = _run(asc, refs)
    acc = np.diff(out, 2, axis=0) / DT ** 2
    assert np.all(np.abs(acc) <= A_MAX + 1e-9)
    assert np.all(np.abs(np.diff(out, axis=0) / DT) <= V_MAX + 1e-9)
    assert asc.saturated_cycles > 0
    # alignment restored: bit-identical pass-through again at the end
    assert not asc.saturated
    np.testing.assert_array_equal(out[-100:], refs[-100:])


def test_asc_back_calculation_keeps_the_integrator_bounded_under_long_saturation():
    refs = np.zeros((2000, 6))
    refs[10:, 0] = 0.5                                             # far step: long saturation at v_max
    asc = AccelerationSaturationControl(DT, A_MAX, V_MAX)
    out = _run(asc, refs)
    overshoot = out[:, 0].max() - 0.5
    assert overshoot < 0.01, f'overshoot {overshoot}'              # wind-up would overshoot by far more
    assert abs(out[-1, 0] - 0.5) < 1e-6


def test_ruckig_respects_limits_on_a_step_and_converges():
    refs = np.zeros((1200, 6))
    refs[100:, 2] = 0.03
    lim = RuckigLimiter(DT, A_MAX, V_MAX, np.full(6, 500.0))
    out = _run(lim, refs)
    acc = np.diff(out, 2, axis=0) / DT ** 2
    assert np.all(np.abs(acc) <= A_MAX + 1e-9)
    jerk = np.diff(acc, axis=0) / DT
    assert np.abs(jerk).max() < 600.0                              # jerk-limited (discretisation slack)
    assert abs(out[-1, 2] - 0.03) < 1e-6 and lim.failures == 0


def test_scalar_pose_dof_maps_match_the_vectorised_ones():
    from hil_core.planner.dof import dof_to_pose, dof_to_pose_1, pose_to_dof, pose_to_dof_1
    rng = np.random.default_rng(11)
    poses = np.concatenate([rng.normal(size=(200, 3)), Rotation.random(200, random_state=12).as_quat()], axis=1)
    poses[:5, 3:] = [0, 0, 0, 1]
    poses[5:10, 3:] *= -1.7                      # sign flip and unnormalised quaternions
    np.testing.assert_allclose([pose_to_dof_1(p) for p in poses], pose_to_dof(poses), atol=1e-13)
    x = pose_to_dof(poses)
    np.testing.assert_allclose([dof_to_pose_1(v) for v in x], dof_to_pose(x), atol=1e-15)


def test_orientation_clamp_against_the_rotations_module():
    from hil_core.planner.dof import clamp_orientation
    from hil_core.maths.rotations import quat_to_rpy, rpy_to_quat
    rng = np.random.default_rng(13)
    half = (0.087, 0.14, 0.052)
    for rpy in rng.uniform(-0.5, 0.5, size=(300, 3)):
        pose = np.r_[0.0, 0.0, 0.15, rpy_to_quat(rpy)]
        out, clamped = clamp_orientation(pose, half)
        expected = np.clip(rpy, -np.array(half), half)
        assert clamped == bool(np.any(np.abs(rpy) > half))
        np.testing.assert_allclose(quat_to_rpy(out[3:]), expected, atol=1e-12)
        if not clamped:
            assert out is pose
