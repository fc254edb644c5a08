"""Cummins floater vs an independent solve_ivp integration of the Cummins equation."""
import pathlib

import numpy as np
import pytest
import yaml
from scipy.integrate import solve_ivp

from hil_core.admittance import CumminsFloater

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / 'config' / 'floater_example.yaml'
T = 0.0025


def spec(quadratic=True):
    s = yaml.safe_load(EXAMPLE.read_text())['floater']
    if not quadratic:
        s = dict(s, quadratic_damping=[0.0] * 6)
    return s


def cummins_rhs(s, wrench_of_t):
    """The Cummins equation written out from the YAML, independent of the model class."""
    M = np.diag(s['mass']) + np.diag(s['added_mass'])
    C = np.diag(s['hydrostatic_stiffness']) + np.diag(s['mooring_stiffness'])
    Bl, Bq = np.diag(s['linear_damping']), np.diag(s['quadratic_damping'])
    Ar, Br, Cr = (np.array(s['radiation'][k], dtype=float) for k in 'ABC')
    Mi = np.linalg.inv(M)

    def rhs(t, y):
        x, v, z = y[:6], y[6:12], y[12:]
        mu = Cr @ z
        a = Mi @ (wrench_of_t(t) - mu - Bl @ v - Bq @ (np.abs(v) * v) - C @ x)
        return np.concatenate([v, a, Ar @ z + Br @ v])
    return rhs


def wrench_history(k):
    # an impulse then a sustained oscillating load in every DOF
    base = np.array([300.0, -200.0, 400.0, 20.0, -15.0, 10.0])
    return base * (8.0 if k < 4 else 0.3 * np.sin(0.05 * k))


def reference(s, n, period):
    y = np.zeros(12 + 4)
    out = []
    for k in range(n):
        w = wrench_history(k)
        sol = solve_ivp(cummins_rhs(s, lambda t: w), (0, period), y, method='DOP853', rtol=1e-12, atol=1e-15)
        y = sol.y[:, -1]
        out.append(y[:6].copy())
    return np.array(out)


def run(model, n):
    return np.array([model.step(wrench_history(k)) for k in range(n)])


def test_linear_cummins_is_exact():
    s = spec(quadratic=False)
    n = 400
    ours = run(CumminsFloater.from_dict({'floater': s}, T), n)
    ref = reference(s, n, T)
    assert np.max(np.abs(ref)) > 1e-2
    assert np.max(np.abs(ours - ref)) < 1e-9


def test_quadratic_damping_second_order_accurate():
    s = spec(quadratic=True)
    n = 400
    ref = reference(s, n, T)
    err = np.max(np.abs(run(CumminsFloater.from_dict({'floater': s}, T), n) - ref))
    # same physical time with half the period (wrench history per 2 steps)
    half = CumminsFloater.from_dict({'floater': s}, T / 2)
    fine = np.array([[half.step(wrench_history(k)), half.step(wrench_history(k))][1] for k in range(n)])
    err_half = np.max(np.abs(fine - ref))
    assert err < 5e-4 * np.max(np.abs(ref))  # 1.4e-4 measured at 400 Hz
    assert err_half < err / 3.0  # second order: ~4x smaller


def test_yaml_file_loads_and_settles_at_static_equilibrium():
    model = CumminsFloater.from_yaml(str(EXAMPLE), T)
    assert model.nr == 4
    w = np.array([50.0, 0, 100.0, 0, 3.0, 0])
    for _ in range(40000):
        model.step(w)
    K = np.diag([500.0, 500.0, 2000.0, 150.0, 150.0, 20.0])
    assert np.allclose(model.q, np.linalg.solve(K, w), atol=1e-8)


@pytest.mark.parametrize('change, match', [
    (lambda s: s.pop('mass'), "missing field 'mass'"),
    (lambda s: s.update(added_mass=[1.0] * 5), 'added_mass'),
    (lambda s: s.update(wave_drift=[0.0] * 6), 'unknown field'),
    (lambda s: s['radiation'].update(A=[[0.1, 0, 0, 0], [0, -1, 0, 0], [0, 0, -1, 0], [0, 0, 0, -1]]), 'stable'),
    (lambda s: s['radiation'].update(B=[[0.0] * 6] * 3), 'shapes'),
    (lambda s: s['radiation'].pop('C'), 'missing matrix'),
    (lambda s: s.update(hydrostatic_stiffness=[float('nan')] * 6), 'finite'),
])
def test_bad_floater_files_are_refused(change, match):
    s = yaml.safe_load(EXAMPLE.read_text())
    change(s['floater'])
    with pytest.raises(ValueError, match=match):
        CumminsFloater.from_dict(s, T)


def test_yaml_not_a_mapping(tmp_path):
    path = tmp_path / 'f.yaml'
    path.write_text('- 1\n- 2\n')
    with pytest.raises(ValueError, match='mapping'):
        CumminsFloater.from_yaml(str(path), T)
