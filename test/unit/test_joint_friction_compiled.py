"""hil_core.drives.joint_friction.JointFriction (numba kernel, hil_core.drives.joint_friction_kernel)
against its plain-numpy oracle JointFrictionNumpy, and the steady sliding friction against the
LuGre formula.

Tolerance. The kernel repeats the oracle's arithmetic operation by operation, but not bit for
bit: numpy's vectorised exp (AVX-512 builds) and the C library's exp used by the kernel differ
in the last bit for a few % of arguments. The Newton iteration stops at the rounding floor of
its residual, so those last-bit differences reappear as differences of a few units of the
rounding of the largest term the step adds up (tau, m v / h, (sigma0 + sigma1 / h) z,
sigma1 z_k / h): the step's own accuracy, which neither implementation can beat.
* Mock-like parameters (h 0.5-2 ms, the terms below ~1e3 N m): plain 1e-12 relative + 1e-12
  absolute on v_next, f_next and z (``TOL``).
* Any valid parameters (stiff bristles and damping at 0.1 ms steps, where a term reaches
  ~1e6 N m): 1e-12 of that term scale (torque; divided by m / h + sigma2 for a velocity)
  on top of the plain tolerance.
"""
import hashlib
import pathlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hil_core.drives import joint_friction_kernel
from hil_core.drives.joint_friction import FrictionParams, JointFriction, JointFrictionNumpy, warm_up
from hil_core.maths import jit

TOL = 1e-12
N = 7
MOCK = dict(fc=(2.0, 2.0, 1.5, 1.5, 1.0, 0.5, 0.5), fs=tuple(1.3 * f for f in (2.0, 2.0, 1.5, 1.5, 1.0, 0.5, 0.5)),
            vs=0.02, sigma0=1e4, sigma1=30.0, sigma2=(3.0, 3.0, 2.0, 2.0, 1.0, 0.5, 0.5))


def term_scale(p, z0, v_k, tau, m, h):
    """Largest magnitude the step adds up, per joint (torque units), and the velocity scale."""
    m = np.broadcast_to(np.asarray(m, float), z0.shape)
    g = p.fc + (p.fs - p.fc) * np.exp(-(v_k / p.vs) ** 2)
    zmax = np.maximum(g / p.sigma0, np.abs(z0))
    c = m / h
    torque = np.abs(tau) + c * np.abs(v_k) + (p.sigma0 + p.sigma1 / h) * zmax + p.sigma1 * np.abs(z0) / h
    return torque, torque / (c + p.sigma2)


def assert_same(fast, slow, got, want, scales=None, what=''):
    """v_next, f_next (got / want) and z of the two classes within TOL (+ TOL * scale)."""
    ts, vs = scales if scales is not None else (0.0, 0.0)
    for name, a, b, extra in (('v_next', got[0], want[0], vs), ('f_next', got[1], want[1], ts),
                              ('z', fast.z, slow.z, 0.0)):
        tol = TOL + TOL * np.abs(b) + TOL * extra
        bad = ~(np.abs(a - b) <= tol)
        assert not np.any(bad), (f'{name} {what}: compiled {a[bad]} numpy {b[bad]} '
                                 f'(difference {np.abs(a - b)[bad]}, tolerance {tol[bad] if np.ndim(tol) else tol})')


def pair(params):
    return JointFriction(params), JointFrictionNumpy(params)


def run_both(fast, slow, v_k, tau, m, h, scaled, what=''):
    """One step of both from the same input; the oracle's velocity is returned for the next."""
    scales = term_scale(slow.p, slow.z, np.asarray(v_k, float), np.asarray(tau, float), m, h) if scaled else None
    got = fast.step(v_k, tau, m, h)
    want = slow.step(v_k, tau, m, h)
    assert_same(fast, slow, got, want, scales, what)
    return want[0]


# -- hypothesis: random valid parameters, velocities through zero, breakaway, large torques --

def velocity(vs):
    """Initial velocities: at rest (also -0), creeping, around the Stribeck velocity, fast."""
    return st.one_of(st.sampled_from([0.0, -0.0, 1e-12, -1e-9]),
                     st.floats(-3.0, 3.0).map(lambda u: u * vs),
                     st.floats(-20.0, 20.0))


TORQUE_KINDS = ('rest', 'below', 'breakaway', 'large', 'reverse', 'random')


def torque(kind, p, v, rng):
    n = p.fc.size
    sign = rng.choice([-1.0, 1.0], n)
    if kind == 'rest':
        return np.zeros(n)
    if kind == 'below':            # stick: below the Coulomb level
        return rng.uniform(-0.99, 0.99, n) * p.fc
    if kind == 'breakaway':        # around the static level: slips or not by a few %
        return sign * p.fs * rng.uniform(0.95, 1.05, n)
    if kind == 'large':            # far beyond breakaway (a collision, a saturated drive)
        return sign * p.fs * 10 ** rng.uniform(1, 3, n)
    if kind == 'reverse':          # against the motion: decelerates through zero velocity
        return -np.sign(v) * p.fs * rng.uniform(1.0, 20.0, n)
    return rng.normal(0, 3, n) * p.fs


@st.composite
def cases(draw, mock_like):
    n = draw(st.integers(1, N)) if not mock_like else N

    def joints(lo, hi, log=False):
        vals = draw(st.lists(st.floats(lo, hi), min_size=n, max_size=n))
        return 10 ** np.array(vals) if log else np.array(vals)
    fc = joints(-1.5, 1.3, log=True)
    if mock_like:     # h 0.5-2 ms, the terms stay below ~1e3 N m
        params = FrictionParams.make(n, fc, fc * joints(1.0, 2.0), joints(-2.5, -1.0, log=True),
                                     joints(3.5, 5.0, log=True), joints(0.0, 60.0), joints(0.0, 5.0))
        h = draw(st.floats(5e-4, 2e-3))
        m = joints(-1.5, 0.5, log=True)
    else:             # any valid parameters
        params = FrictionParams.make(n, fc, fc * joints(1.0, 3.0), joints(-3.5, 0.0, log=True),
                                     joints(1.0, 7.0, log=True), joints(0.0, 300.0), joints(0.0, 20.0))
        h = 10 ** draw(st.floats(-4.5, -1.5))
        m = joints(-3.0, 2.0, log=True)
    vs = float(np.min(params.vs))
    v0 = np.array(draw(st.lists(velocity(vs), min_size=n, max_size=n)))
    kinds = draw(st.lists(st.sampled_from(TORQUE_KINDS), min_size=1, max_size=12))
    seed = draw(st.integers(0, 2 ** 32 - 1))
    return params, h, m, v0, kinds, seed


def consecutive_steps(case, scaled):
    params, h, m, v, kinds, seed = case
    rng = np.random.default_rng(seed)
    fast, slow = pair(params)
    for k, kind in enumerate(kinds):
        for _ in range(3):                  # a torque held a few steps, then the next kind
            v = run_both(fast, slow, v, torque(kind, params, v, rng), m, h, scaled, f'step {k} ({kind})')


@settings(max_examples=150, deadline=None)
@given(cases(mock_like=True))
def test_mock_like_parameters_match_the_numpy_oracle_to_1e_12(case):
    consecutive_steps(case, scaled=False)


@settings(max_examples=300, deadline=None)
@given(cases(mock_like=False))
def test_any_valid_parameters_match_the_numpy_oracle(case):
    consecutive_steps(case, scaled=True)


@pytest.mark.parametrize('seed', range(3))
def test_stick_slip_runs_match_the_numpy_oracle(seed):
    """Seven joints through a spring pulled back and forth (seed-004-like stick-slip: sticking,
    breakaway, sliding, reversals through zero velocity), 3000 consecutive 1 ms steps; each
    class keeps its own state z and velocity, so the differences would accumulate if any."""
    rng = np.random.default_rng(seed)
    params = FrictionParams.make(N, **MOCK)
    fast, slow = pair(params)
    m = rng.uniform(0.05, 2.0, N)
    k_spring, freq = rng.uniform(50, 500, N), rng.uniform(0.2, 2.0, N)
    amp = params.fs * rng.uniform(0.5, 4.0, N) / k_spring     # spring force 0.5-4 x breakaway
    h = 1e-3
    xa = xb = va = vb = np.zeros(N)
    stuck = sliding = reversals = 0
    for k in range(3000):
        t = (k + 1) * h
        ref = amp * np.sin(2 * np.pi * freq * t)
        va, fa = fast.step(va, k_spring * (ref - xa), m, h)
        vb, fb = slow.step(vb, k_spring * (ref - xb), m, h)
        xa, xb = xa + h * va, xb + h * vb
        assert_same(fast, slow, (va, fa), (vb, fb), None, f'step {k}')
        stuck += np.sum(np.abs(vb) < 1e-3)          # stick / pre-sliding
        sliding += np.sum(np.abs(vb) > 1e-2)
        reversals += np.sum(np.sign(vb) * np.sign(vprev) < 0) if k else 0
        vprev = vb
    assert stuck > 1000 and sliding > 5000 and reversals > 50      # the run covers every regime


# -- the model itself, without the oracle --

@pytest.mark.parametrize('vel', [0.002, -0.01, 0.05, -0.3, 2.0])
def test_steady_sliding_friction_is_the_lugre_level(vel):
    """At a held velocity z settles at its LuGre steady state sign(v) g(v) / sigma0 and the
    friction at f = sign(v) (F_c + (F_s - F_c) exp(-(v / v_s)^2)) + sigma2 v."""
    params = FrictionParams.make(N, **MOCK)
    fr = JointFriction(params)
    v = np.full(N, vel)
    g = params.fc + (params.fs - params.fc) * np.exp(-(vel / params.vs) ** 2)
    expected = np.sign(vel) * g + params.sigma2 * vel
    for _ in range(5000):         # z - z_ss decays by exp(-sigma0 |v| h / g) <= exp(-0.0077) per step
        fr.step(v, expected, 1e12, 1e-3)
    v_next, f = fr.step(v, expected, 1e12, 1e-3)
    np.testing.assert_allclose(f, expected, rtol=1e-9)
    np.testing.assert_allclose(fr.z, np.sign(vel) * g / params.sigma0, rtol=1e-9)
    np.testing.assert_allclose(v_next, v, rtol=1e-12)


# -- the compiled class's own contract --

def test_inputs_the_kernel_does_not_take_go_to_the_numpy_step():
    params = FrictionParams.make(3, fc=1.0, fs=1.5, vs=0.01, sigma0=1e4, sigma1=50.0, sigma2=0.4)
    fast, slow = pair(params)
    # scalars and length-1 arrays are broadcast to the joints (as numpy does), lists converted
    for v_k, tau, m in ((0.01, [0.5, 2.0, -3.0], 0.5), (np.array([0.0]), 1.7, np.array([0.2])),
                        ([0.01, -0.02, 0.0], np.float32(2.0), 1)):
        got, want = fast.step(v_k, tau, m, 1e-3), slow.step(v_k, tau, m, 1e-3)
        assert got[0].shape == got[1].shape == fast.z.shape == (3,)
        assert_same(fast, slow, got, want)
    # torques of two scenarios at once broadcast beyond the joints: the numpy step does it
    tau2 = np.array([[0.5, 2.0, -3.0], [0.0, 0.1, 0.2]])
    got, want = fast.step(0.01, tau2, 0.5, 1e-3), slow.step(0.01, tau2, 0.5, 1e-3)
    assert got[0].shape == (2, 3)
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_array_equal(fast.z, slow.z)


def test_no_step_compiles_and_each_step_gives_new_arrays():
    """The constructor compiled the kernel for its one signature and froze it: read-only,
    strided and broadcast inputs use it without compiling; z and the results are new arrays."""
    fast, slow = pair(FrictionParams.make(N, **MOCK))
    assert joint_friction_kernel.ready() and len(joint_friction_kernel.step.signatures) == 1
    assert warm_up() == 0.0
    buf = np.random.default_rng(4).normal(0, 0.05, (3, 2 * N))
    v_k = buf[0, ::2]                                      # strided view
    tau = np.broadcast_to(np.linspace(-3, 3, N), (N,))      # read-only
    m = np.asfortranarray(buf[1:2, ::2] ** 2 + 0.1)[0]
    z_before = fast.z
    got, want = fast.step(v_k, tau, m, np.float64(1e-3)), slow.step(v_k, tau, m, 1e-3)
    assert_same(fast, slow, got, want)
    assert fast.z is not z_before and not np.shares_memory(got[0], v_k)
    v1, f1 = got
    v2, f2 = fast.step(v1, tau, m, 1e-3)
    assert not np.shares_memory(v1, v2) and not np.shares_memory(f1, f2)
    assert len(joint_friction_kernel.step.signatures) == 1
    fast.reset()
    assert np.all(fast.z == 0.0)


def test_new_parameters_are_packed_for_the_kernel():
    a = FrictionParams.make(N, **MOCK)
    b = FrictionParams.make(N, **{**MOCK, 'fc': 0.3, 'fs': 0.4, 'sigma2': 0.0})
    fast, slow = pair(a)
    fast.p = slow.p = b
    v, tau, m = np.full(N, 0.05), np.full(N, 1.0), np.full(N, 0.5)
    assert_same(fast, slow, fast.step(v, tau, m, 1e-3), slow.step(v, tau, m, 1e-3))
    with pytest.raises(ValueError):
        fast.p = FrictionParams(*(np.full(N, -1.0) for _ in range(6)))


def test_cache_is_stamped_with_the_kernel_sources():
    h = hashlib.sha256()
    for module in (jit, joint_friction_kernel):
        h.update(pathlib.Path(module.__file__).read_bytes())
    stamp = jit.cache_stamp(joint_friction_kernel.step)
    if stamp is None:
        pytest.skip('numba cache not available here')
    assert stamp[1] == h.hexdigest()
