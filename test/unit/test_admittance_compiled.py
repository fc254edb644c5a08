"""Compiled admittance step/outputs (admittance.lti_model_kernel) against the numpy oracle (compiled=False).

Both run the same seeded wrench histories from the same state; the compiled kernel replaces
BLAS products by loops, so the two agree to rounding, not bit for bit. The bound is relative
to each quantity's scale over the run: 1e-12 (a few hundred steps of a stable recursion add
~1e-14 relative; 1e-12 leaves margin and still catches any wrong term, which is O(1)).
"""
import copy
import pathlib

import numpy as np
import pytest

from hil_core.admittance import CumminsFloater, LtiAdmittanceModel, ideal_response, matrices_from_frequency
from hil_core.admittance import lti_model_kernel as ck

ROOT = pathlib.Path(__file__).resolve().parents[2]
T = 0.0025
RTOL = 1e-12


def seed_model(**kw):
    return LtiAdmittanceModel(*matrices_from_frequency(3.0, 0.2, [5000.0] * 3 + [200.0] * 3), T, **kw)


def coupled_model(**kw):
    """Full symmetric M, D, K (off-diagonal coupling), a TCP offset, body-frame wrench."""
    rng = np.random.default_rng(7)
    M0, D0, K0 = matrices_from_frequency([3.0, 3.5, 4.0, 5.0, 6.0, 4.5], 0.3, [5000.0] * 3 + [200.0] * 3)
    C = rng.normal(scale=0.1, size=(6, 6))
    M = M0 + 0.05 * (C @ C.T) * np.sqrt(np.outer(np.diag(M0), np.diag(M0)))
    K = K0 + 0.05 * (C + C.T) * np.sqrt(np.outer(np.diag(K0), np.diag(K0)))
    return LtiAdmittanceModel(M, D0, K, T, **kw)


def floater(compiled=True, **kw):
    m = CumminsFloater.from_yaml(str(ROOT / 'config' / 'floater_example.yaml'), T, **kw)
    m.compiled = compiled       # the floater's constructor does not take the flag: set it after
    return m


HOME = (0.1, -0.2, 0.5, *(np.array([0.1, -0.3, 0.2, 0.9]) / np.linalg.norm([0.1, -0.3, 0.2, 0.9])))
TCP = (0.02, -0.05, 0.12, *(np.array([0.0, 0.2, 0.1, 1.0]) / np.linalg.norm([0.0, 0.2, 0.1, 1.0])))
CASES = {
    'seed_3hz': lambda c: seed_model(compiled=c),
    'seed_home_preload_scaled': lambda c: seed_model(home=HOME, equilibrium=(0.01, 0, -0.02, 0.05, 0, 0.1),
                                                     force_scale=(1, 0.5, 2, 1, 1, 0.25), compiled=c),
    'disabled_axes': lambda c: seed_model(enabled=(True, False, True, False, True, True), compiled=c),
    'coupled_body_tcp': lambda c: coupled_model(home=HOME, tcp_offset=TCP, wrench_frame='body', compiled=c),
    'coupled_control_tcp': lambda c: coupled_model(tcp_offset=TCP, compiled=c),
    'floater': lambda c: floater(compiled=c),
    'floater_body_tcp_subset': lambda c: floater(wrench_frame='body', tcp_offset=TCP, home=HOME,
                                                 enabled=(True, True, True, True, False, True), compiled=c),
}


def wrenches(n, seed):
    """Realistic F/T inputs: +-200 N, +-20 N m noise plus pushes (seed 000 loads)."""
    rng = np.random.default_rng(seed)
    w = rng.normal(size=(n, 6)) * [60, 60, 60, 6, 6, 6]
    w[n // 4:n // 4 + 20] += rng.uniform(-200, 200, size=6) * [1, 1, 1, 0.1, 0.1, 0.1]
    return w


def close(a, b, scale):
    return np.max(np.abs(np.asarray(a) - np.asarray(b))) <= RTOL * max(scale, 1e-300)


@pytest.mark.parametrize('case', sorted(CASES))
def test_run_matches_oracle(case):
    fast, ref = CASES[case](True), CASES[case](False)
    assert fast.compiled and not ref.compiled
    w = wrenches(600, seed=len(case))
    xs_f, xs_r, outs_f, outs_r = [], [], [], []
    buf = np.empty(19)
    for k in range(len(w)):
        if k % 3 == 0:
            qf = fast.step(w[k])
            outs_f.append(np.concatenate(fast.outputs()))
        else:                      # the allocation-free call the node can use
            fast.step_outputs(w[k], buf)
            outs_f.append(buf.copy())
        qr = ref.step(w[k])
        outs_r.append(np.concatenate(ref.outputs()))
        if k % 3 == 0:
            assert close(qf, qr, np.max(np.abs(qr)) + 1e-9)
        xs_f.append(fast.x.copy())
        xs_r.append(ref.x.copy())
    xs_f, xs_r = np.array(xs_f), np.array(xs_r)
    outs_f, outs_r = np.array(outs_f), np.array(outs_r)
    for j in range(xs_r.shape[1]):          # per state component, relative to its own scale
        assert close(xs_f[:, j], xs_r[:, j], np.max(np.abs(xs_r[:, j]))), j
    for j in range(19):
        assert close(outs_f[:, j], outs_r[:, j], np.max(np.abs(outs_r[:, j]))), j
    assert np.max(np.abs(xs_r)) > 1e-4      # the run moved the model (not a trivial zero test)
    assert np.array_equal(fast._u_eff.shape, ref._u_eff.shape)


@pytest.mark.parametrize('case', ['coupled_body_tcp', 'floater_body_tcp_subset', 'seed_home_preload_scaled'])
def test_large_angles_and_small_angles(case):
    """One step + outputs from random states: rotation offsets up to 2.5 rad (far from the
    small-angle series) and below 1e-4 rad (the series branches)."""
    rng = np.random.default_rng(3)
    fast, ref = CASES[case](True), CASES[case](False)
    for trial in range(200):
        mag = 2.5 if trial % 2 else 1e-5
        q = np.concatenate([rng.uniform(-0.05, 0.05, 3), rng.uniform(-1, 1, 3) * mag / np.sqrt(3)])
        qd = rng.normal(size=6) * [0.2, 0.2, 0.2, 1, 1, 1]
        q[~ref.enabled] = 0.0
        qd[~ref.enabled] = 0.0
        for m in (fast, ref):
            m.reset()
            m.set_state(q, qd)
        w = rng.normal(size=6) * [100, 100, 100, 10, 10, 10]
        fast.step(w)
        ref.step(w)
        assert close(fast.x, ref.x, np.max(np.abs(ref.x)))
        of, orf = np.concatenate(fast.outputs()), np.concatenate(ref.outputs())
        assert close(of, orf, np.max(np.abs(orf)))


def test_other_period_and_ideal_response_agree():
    """step(w, T) with another period (cached discretisation) and the ideal-response replay."""
    fast, ref = coupled_model(tcp_offset=TCP, compiled=True), coupled_model(tcp_offset=TCP, compiled=False)
    w = wrenches(200, 11)
    for k in range(len(w)):
        Tk = T * (0.5 + (k % 5) * 0.25)
        fast.step(w[k], Tk)
        ref.step(w[k], Tk)
    assert close(fast.x, ref.x, np.max(np.abs(ref.x)))
    t = np.cumsum(np.full(len(w), T)) + T * np.r_[0, np.random.default_rng(1).uniform(0, 0.3, len(w) - 1)]
    a, b = ideal_response(fast, t, w), ideal_response(ref, t, w)
    assert close(a.poses, b.poses, np.max(np.abs(b.poses)))
    assert close(a.accels, b.accels, np.max(np.abs(b.accels)))


def test_bad_wrench_refused_and_state_untouched():
    for compiled in (True, False):
        m = floater(compiled=compiled)
        m.step(np.full(6, 10.0))
        x, u = m.x.copy(), m._u_eff.copy()
        for bad in ([np.nan, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, np.inf], [1.0] * 5):
            with pytest.raises(ValueError, match='6 finite values'):
                m.step(np.array(bad, dtype=float))
        assert np.array_equal(m.x, x) and np.array_equal(m._u_eff, u)


def test_list_input_and_deepcopy():
    fast, ref = seed_model(compiled=True), seed_model(compiled=False)
    fast.step([10.0, 0, 0, 0, 0, 1.0])
    ref.step([10.0, 0, 0, 0, 0, 1.0])
    twin = copy.deepcopy(fast)
    twin.step(np.ones(6))
    assert not np.array_equal(twin.x, fast.x)      # the copy owns its state and buffers
    assert close(fast.x, ref.x, np.max(np.abs(ref.x)))


def test_unknown_extra_force_falls_back_to_numpy():
    class Pushed(LtiAdmittanceModel):
        def extra_force(self):
            return np.full(self.n, 1.0)

    m = Pushed(*matrices_from_frequency(3.0, 0.2, [5000.0] * 3 + [200.0] * 3), T)
    m.step(np.zeros(6))
    assert not m.compiled and m.qd[0] > 0       # the subclass's force acted


def test_warm_up_runs():
    assert ck.warm_up() >= 0.0
