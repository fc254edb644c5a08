"""LTI admittance model: exact ZOH vs an independent adaptive integration (solve_ivp), modal
identification, bumpless changes, masks, scaling, equilibrium, rotations at large angles."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.integrate import solve_ivp
from scipy.spatial.transform import Rotation

from hil_core.admittance import LtiAdmittanceModel, ideal_response, matrices_from_frequency, matrices_from_mass
from hil_core.transparency.frf import identify_modal
from hil_core.admittance import pose_offset

T = 0.0025
SEED_K = [5000.0] * 3 + [200.0] * 3


def seed_model(fn=3.0, **kw):
    return LtiAdmittanceModel(*matrices_from_frequency(fn, 0.2, SEED_K), T, **kw)


def continuous_reference(M, D, K, wrench_of_interval, n_steps, period=T):
    """Integrate M q'' + D q' + K q = u on every hold interval with tight tolerances."""
    Mi = np.linalg.inv(M)
    x = np.zeros(12)
    out = []
    for k in range(n_steps):
        u = wrench_of_interval(k)
        sol = solve_ivp(lambda t, s: np.concatenate([s[6:], Mi @ (u - D @ s[6:] - K @ s[:6])]),
                        (0.0, period), x, method='DOP853', rtol=1e-13, atol=1e-16)
        x = sol.y[:, -1]
        out.append(x.copy())
    return np.array(out)


@pytest.mark.parametrize('fn', [3.0, 6.0])
@pytest.mark.parametrize('kind', ['step', 'impulse'])
def test_zoh_matches_solve_ivp(fn, kind):
    M, D, K = matrices_from_frequency(fn, 0.2, SEED_K)
    model = LtiAdmittanceModel(M, D, K, T)
    w0 = np.array([100.0, -60.0, 40.0, 3.0, -2.0, 1.5])
    wrench = (lambda k: w0) if kind == 'step' else (lambda k: 20 * w0 if k == 0 else np.zeros(6))
    n = 240
    ref = continuous_reference(M, D, K, wrench, n)
    ours = np.array([np.concatenate([model.step(wrench(k)), model.qd]) for k in range(n)])
    assert np.max(np.abs(ours[:, :6] - ref[:, :6])) < 1e-9
    assert np.max(np.abs(ours[:, 6:] - ref[:, 6:])) < 1e-8
    assert np.max(np.abs(ref[:, 0])) > 1e-3  # the test moved something measurable


def test_coupled_matrices_match_solve_ivp():
    rng = np.random.default_rng(4)
    A = rng.normal(size=(6, 6))
    M = A @ A.T + 6 * np.eye(6)
    K = np.diag(SEED_K) + 50 * (lambda B: B @ B.T)(rng.normal(size=(6, 6)))
    D = 0.05 * K + 2 * np.eye(6)
    model = LtiAdmittanceModel(M, D, K, T)
    w0 = rng.normal(size=6) * 50
    ref = continuous_reference(M, D, K, lambda k: w0 * np.cos(0.1 * k), 120)
    ours = np.array([model.step(w0 * np.cos(0.1 * k)) for k in range(120)])
    assert np.max(np.abs(ours - ref[:, :6])) < 1e-9


@pytest.mark.parametrize('fn', [3.0, 6.0])
def test_natural_frequency_and_damping_identified_back(fn):
    model = seed_model(fn)
    n = 1600
    w = np.zeros((n, 6))
    w[0] = [200.0, 150.0, 100.0, 8.0, 6.0, 4.0]
    r = ideal_response(model, np.arange(n) * T, w)
    for axis in range(6):
        f_id, z_id = identify_modal(r.reached_at, r.offsets[:, axis])
        assert f_id == pytest.approx(fn, rel=0.01), axis
        assert z_id == pytest.approx(0.2, rel=0.01), axis


def test_mass_form_equals_frequency_form():
    M, D, K = matrices_from_frequency(3.0, 0.2, SEED_K)
    M2, D2, K2 = matrices_from_mass(np.diag(M), np.diag(D), np.diag(K))
    assert np.allclose(M, M2) and np.allclose(D, D2) and np.allclose(K, K2)
    # seed: mass from the natural frequency: 5000 / (2 pi 3)^2 = 14.07 kg
    assert M[0, 0] == pytest.approx(5000.0 / (2 * np.pi * 3.0) ** 2)


def test_static_equilibrium_scale_and_offset():
    eq = np.array([0.01, 0.0, -0.02, 0.0, 0.05, 0.0])
    scale = np.array([2.0, 1.0, 0.5, 1.0, 1.0, 3.0])
    model = seed_model(6.0, force_scale=scale, equilibrium=eq)
    w = np.array([50.0, -20.0, 10.0, 1.0, 0.0, -2.0])
    for _ in range(4000):
        model.step(w)
    assert np.allclose(model.q, eq + scale * w / np.array(SEED_K), atol=1e-10)
    assert np.allclose(model.qd, 0.0, atol=1e-9)


def test_disabled_axes_are_held_even_with_coupling():
    rng = np.random.default_rng(1)
    A = rng.normal(size=(6, 6))
    M = A @ A.T + 6 * np.eye(6)
    K = np.diag(SEED_K) + np.ones((6, 6)) * 30
    D = 0.1 * K
    enabled = np.array([True, False, True, False, True, True])
    model = LtiAdmittanceModel(M, D, K, T, enabled=enabled)
    w = np.array([10.0, 100.0, 5.0, 7.0, 1.0, 2.0])
    e = np.flatnonzero(enabled)
    # independent check: the ODE of the enabled DOFs alone (the locked ones at zero)
    Me, De, Ke = M[np.ix_(e, e)], D[np.ix_(e, e)], K[np.ix_(e, e)]
    Mi = np.linalg.inv(Me)
    sol = solve_ivp(lambda t, s: np.concatenate([s[4:], Mi @ (w[e] - De @ s[4:] - Ke @ s[:4])]),
                    (0, 50 * T), np.zeros(8), rtol=1e-13, atol=1e-16, method='DOP853')
    for _ in range(50):
        q = model.step(w)
    assert np.all(q[~enabled] == 0.0) and np.all(model.qd[~enabled] == 0.0)
    assert np.max(np.abs(q[e] - sol.y[:4, -1])) < 1e-10


def test_bumpless_parameter_change_keeps_state():
    model = seed_model(3.0)
    w = np.array([80.0, 0, 0, 0, 0, 4.0])
    poses = []
    for k in range(300):
        if k == 150:
            before = (model.q.copy(), model.qd.copy())
            model.set_matrices(*matrices_from_frequency(6.0, 0.5, [9000.0] * 3 + [400.0] * 3))
            assert np.array_equal(model.q, before[0]) and np.array_equal(model.qd, before[1])
        model.step(w)
        poses.append(model.pose())
    steps = np.abs(np.diff(np.array(poses)[:, 0]))
    # no jump at the change: the step across it is of the size of the neighbouring steps
    assert steps[149] < 1.5 * max(steps[147], steps[151]) + 1e-12


def test_refused_change_leaves_model_unchanged():
    model = seed_model()
    Ad = model.Ad.copy()
    with pytest.raises(ValueError, match='positive definite'):
        model.set_matrices(-np.eye(6), np.eye(6), np.eye(6))
    with pytest.raises(ValueError, match='36 values'):
        model.set_matrices(np.eye(5), np.eye(6), np.eye(6))
    with pytest.raises(ValueError, match='finite'):
        model.set_matrices(np.eye(6), np.full((6, 6), np.nan), np.eye(6))
    assert np.array_equal(model.Ad, Ad)


@pytest.mark.parametrize('bad', [dict(period=0.0), dict(period=np.nan), dict(enabled=[False] * 6),
                                 dict(home=[0, 0, 0, 0, 0, 0, 2]), dict(home=[0, 0, 1]),
                                 dict(wrench_frame='sensor'), dict(force_scale=[1.0] * 5)])
def test_bad_construction_is_refused(bad):
    M, D, K = matrices_from_frequency(3.0, 0.2, SEED_K)
    kw = dict(period=T)
    kw.update(bad)
    with pytest.raises(ValueError):
        LtiAdmittanceModel(M, D, K, **kw)


def test_bad_per_axis_values_refused():
    with pytest.raises(ValueError, match='natural_frequency'):
        matrices_from_frequency([3.0] * 5, 0.2, SEED_K)
    with pytest.raises(ValueError, match='> 0'):
        matrices_from_frequency(3.0, 0.2, [0.0] * 6)
    with pytest.raises(ValueError, match='>= 0'):
        matrices_from_frequency(3.0, -0.1, SEED_K)


def test_large_angle_orientation_twist_and_accel():
    home = np.concatenate([[0.1, -0.2, 0.5], Rotation.from_euler('xyz', [0.3, -0.2, 1.0]).as_quat()])
    model = LtiAdmittanceModel(*matrices_from_frequency(1.0, 0.05, SEED_K), T, home=home)
    # torques large enough for ~2.5 rad offsets: far from any small-angle regime
    model.set_state(np.zeros(6), np.array([0, 0, 0, 2.0, -3.0, 4.0]))
    w = np.array([0, 0, 0, 300.0, -200.0, 350.0])
    poses, twists, accels = [], [], []
    for _ in range(400):
        model.step(w)
        p, tw, ac = model.outputs()
        poses.append(p), twists.append(tw), accels.append(ac)
        # orientation = exp(theta) * home, independently from scipy
        expected = (Rotation.from_rotvec(model.q[3:6]) * Rotation.from_quat(home[3:])).as_quat()
        assert min(np.linalg.norm(p[3:] - expected), np.linalg.norm(p[3:] + expected)) < 1e-12
    poses, twists, accels = map(np.array, (poses, twists, accels))
    offsets = np.array([pose_offset.pose_to_offset(home, p) for p in poses])
    assert np.max(np.linalg.norm(offsets[:, 3:], axis=1)) > 2.0  # really a large angle
    R = Rotation.from_quat(poses[:, 3:])
    # angular velocity (control-frame axes) from central differences of the orientation
    omega_fd = (R[2:] * R[:-2].inv()).as_rotvec() / (2 * T)
    scale = np.max(np.abs(twists[:, 3:]))
    assert np.max(np.abs(omega_fd - twists[1:-1, 3:])) < 1e-4 * scale
    alpha_fd = (twists[2:, 3:] - twists[:-2, 3:]) / (2 * T)
    assert np.max(np.abs(alpha_fd - accels[1:-1, 3:])) < 2e-3 * np.max(np.abs(accels[:, 3:]))
    assert np.allclose(offsets[-1], model.q, atol=1e-12)  # pose_to_offset inverts offset_to_pose


def test_static_large_rotation_matches_scipy():
    model = LtiAdmittanceModel(*matrices_from_frequency(3.0, 0.7, SEED_K), T)
    torque = np.array([0.0, 0.0, 400.0])  # 2 rad about z at 200 N m/rad
    for _ in range(3000):
        model.step(np.concatenate([[0, 0, 0], torque]))
    assert np.allclose(model.pose()[3:], Rotation.from_rotvec([0, 0, 2.0]).as_quat(), atol=1e-10)


def test_body_frame_wrench_is_rotated_by_the_orientation():
    home = np.concatenate([[0, 0, 0], Rotation.from_euler('z', 90, degrees=True).as_quat()])
    model = seed_model(6.0, home=home, wrench_frame='body', enabled=[True] * 3 + [False] * 3)
    for _ in range(3000):
        model.step([100.0, 0, 0, 0, 0, 0])  # +x in the body = +y in the control frame
    assert np.allclose(model.q, [0, 100.0 / 5000.0, 0, 0, 0, 0], atol=1e-10)


def test_ideal_response_nonuniform_times_are_exact():
    M, D, K = matrices_from_frequency(3.0, 0.2, SEED_K)
    model = LtiAdmittanceModel(M, D, K, T)
    rng = np.random.default_rng(2)
    dts = T * (1 + 0.3 * rng.uniform(-1, 1, 100))
    times = np.concatenate([[0], np.cumsum(dts[:-1])])
    w = rng.normal(size=(100, 6)) * 40
    r = ideal_response(model, times, w)
    Mi = np.linalg.inv(M)
    x = np.zeros(12)
    for k in range(100):
        sol = solve_ivp(lambda t, s: np.concatenate([s[6:], Mi @ (w[k] - D @ s[6:] - K @ s[:6])]),
                        (0.0, dts[k] if k < 99 else T), x, method='DOP853', rtol=1e-13, atol=1e-16)
        x = sol.y[:, -1]
    assert np.max(np.abs(r.offsets[-1] - x[:6])) < 1e-9
    assert np.array_equal(model.x, np.zeros(12))  # the caller's model is untouched
    with pytest.raises(ValueError, match='finite'):
        ideal_response(model, times, np.where(np.eye(100, 6) > 0, np.nan, w))
    with pytest.raises(ValueError, match='increasing'):
        ideal_response(model, times[::-1], w)
    with pytest.raises(ValueError, match='N, 6'):
        ideal_response(model, times, w[:, :5])


def test_ideal_response_equals_stepping_the_model():
    model = seed_model(6.0)
    rng = np.random.default_rng(3)
    w = rng.normal(size=(200, 6)) * 30
    r = ideal_response(model, np.arange(200) * T, w)
    live = seed_model(6.0)
    for k in range(200):
        live.step(w[k])
        p, tw, ac = live.outputs()
        assert np.max(np.abs(p - r.poses[k])) < 1e-15
        assert np.max(np.abs(tw - r.twists[k])) < 1e-12
        assert np.max(np.abs(ac - r.accels[k])) < 1e-9


def test_compliance_frf_is_the_closed_form():
    model = seed_model(3.0, enabled=[True, True, False, True, True, True])
    f = np.array([0.0, 1.0, 3.0, 7.0, 11.0])
    H = model.compliance_frf(f)
    M, D, K = matrices_from_frequency(3.0, 0.2, SEED_K)
    w = 2 * np.pi * f
    for axis in (0, 3):
        expected = 1.0 / (K[axis, axis] - M[axis, axis] * w ** 2 + 1j * D[axis, axis] * w)
        assert np.allclose(H[:, axis, axis], expected, rtol=1e-12)
    assert np.all(H[:, 2, :] == 0) and np.all(H[:, :, 2] == 0)
    # seed fig 12 normalisation: stiffness times compliance = 1 at DC, 1/(2 zeta) at resonance
    assert abs(K[0, 0] * H[0, 0, 0]) == pytest.approx(1.0)
    assert abs(K[0, 0] * H[2, 0, 0]) == pytest.approx(1.0 / (2 * 0.2))


def test_bad_wrench_never_reaches_the_state():
    model = seed_model()
    model.step([10.0, 0, 0, 0, 0, 0])
    x = model.x.copy()
    for bad in ([np.nan, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, np.inf], [1.0] * 5, [[1.0] * 6]):
        with pytest.raises(ValueError, match='6 finite'):
            model.step(bad)
    assert np.array_equal(model.x, x)


@settings(max_examples=30, deadline=None)
@given(fn=st.tuples(st.floats(0.2, 20.0), st.floats(0.2, 20.0)),
       zeta=st.tuples(st.floats(0.0, 2.0), st.floats(0.0, 2.0)),
       k=st.tuples(st.floats(10.0, 1e5), st.floats(10.0, 1e5)),
       change_at=st.integers(1, 80), seed=st.integers(0, 10_000))
def test_property_online_change_never_steps_the_pose(fn, zeta, k, change_at, seed):
    """Whatever the old and new model, after an online change the output is the continuous
    trajectory of the new model starting exactly where the old one was (pose and twist): the
    reference is continuous across the change (checked against solve_ivp)."""
    rng = np.random.default_rng(seed)
    w = rng.normal(size=(100, 6)) * 50
    model = LtiAdmittanceModel(*matrices_from_frequency(fn[0], zeta[0], [k[0]] * 6), T)
    for i in range(change_at):
        model.step(w[i])
    q, qd = model.q.copy(), model.qd.copy()
    M, D, K = matrices_from_frequency(fn[1], zeta[1], [k[1]] * 6)
    model.set_matrices(M, D, K)
    assert np.array_equal(model.q, q) and np.array_equal(model.qd, qd)
    model.step(w[change_at])
    Mi = np.linalg.inv(M)
    sol = solve_ivp(lambda t, s: np.concatenate([s[6:], Mi @ (w[change_at] - D @ s[6:] - K @ s[:6])]),
                    (0.0, T), np.concatenate([q, qd]), method='DOP853', rtol=1e-12, atol=1e-15)
    scale = max(np.max(np.abs(q)), np.max(np.abs(qd)) * T, 1e-6)
    assert np.max(np.abs(model.q - sol.y[:6, -1])) < 1e-8 * scale


def test_tcp_offset_moment_transfer_and_rigid_body_outputs():
    from scipy.optimize import fsolve
    # model reference point (e.g. floater CoG) 0.3 m below and 0.1 m behind the TCP
    off = np.concatenate([[-0.1, 0.0, 0.3], Rotation.from_euler('z', 30, degrees=True).as_quat()])
    home = np.array([0.0, 0.0, 0.2, 0.0, 0.0, 0.0, 1.0])
    model = LtiAdmittanceModel(*matrices_from_frequency(2.0, 0.8, SEED_K), T, home=home, tcp_offset=off)
    f = np.array([60.0, -40.0, 30.0])
    for _ in range(6000):
        model.step(np.concatenate([f, [0.0, 0.0, 0.0]]))
    K = np.array(SEED_K)

    # independent static equilibrium: K theta = (R(theta) p_off) x f, K x = f (scipy fsolve)
    def residual(th):
        r = Rotation.from_rotvec(th).apply(off[:3])
        return K[3:] * th - np.cross(r, f)
    theta = fsolve(residual, np.zeros(3), xtol=1e-14)
    assert np.allclose(model.q[:3], f / K[:3], atol=1e-10)
    assert np.allclose(model.q[3:], theta, atol=1e-10)
    # the published pose is the TCP: body pose composed with the offset (scipy)
    Rb = Rotation.from_rotvec(theta)
    tcp = model.pose()
    assert np.allclose(tcp[:3], home[:3] + f / K[:3] + Rb.apply(off[:3]), atol=1e-10)
    q_exp = (Rb * Rotation.from_quat(off[3:])).as_quat()
    assert min(np.linalg.norm(tcp[3:] - q_exp), np.linalg.norm(tcp[3:] + q_exp)) < 1e-10


def test_tcp_offset_twist_matches_finite_differences():
    off = np.array([0.2, -0.1, 0.4, 0.0, 0.0, 0.0, 1.0])
    model = LtiAdmittanceModel(*matrices_from_frequency(3.0, 0.1, SEED_K), T, tcp_offset=off)
    model.set_state(np.zeros(6), np.array([0.1, 0.0, -0.1, 1.5, -1.0, 2.0]))
    t = np.arange(300) * T
    # smooth loads: central differences are then accurate to O(T^2)
    w = np.sin(2 * np.pi * np.outer(t, [0.7, 1.1, 0.5, 0.9, 1.3, 0.6])) * [20, 20, 20, 5, 5, 5]
    r = ideal_response(model, np.arange(300) * T, w, from_rest=False)
    v_fd = (r.poses[2:, :3] - r.poses[:-2, :3]) / (2 * T)
    assert np.max(np.abs(v_fd - r.twists[1:-1, :3])) < 2e-3 * np.max(np.abs(r.twists[:, :3]))
    a_fd = (r.twists[2:, :3] - r.twists[:-2, :3]) / (2 * T)
    assert np.max(np.abs(a_fd - r.accels[1:-1, :3])) < 2e-2 * np.max(np.abs(r.accels[:, :3]))
    # the live model gives the same outputs as the batch tool
    for k in range(300):
        model.step(w[k])
    assert np.allclose(model.outputs()[0], r.poses[-1], atol=1e-14)
    assert np.allclose(model.outputs()[2], r.accels[-1], atol=1e-9)
