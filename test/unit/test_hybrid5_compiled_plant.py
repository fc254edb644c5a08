"""The compiled plant step of the hybrid robot (hil_core.hybrid5.dynamics_kernel) against its oracle,
``dynamics.Plant`` on Python floats (compiled=False): the same accelerations over random states and
efforts, and the same trajectory step by step."""
import numpy as np
from hypothesis import given, settings, strategies as st

from hil_core.hybrid5 import dynamics
from hil_core.hybrid5 import dynamics_kernel
from hil_core.hybrid5.params import load_params

PRM = load_params(None)
C = dynamics_kernel.plant_constants(PRM)


def _f(lo, hi):
    return st.floats(lo, hi, allow_nan=False, allow_infinity=False)


@settings(max_examples=300, deadline=None)
@given(p=st.tuples(_f(-0.25, 0.25), _f(-0.25, 0.25), _f(0.6, 1.0)), v=st.tuples(*[_f(-0.5, 0.5)] * 3),
       theta=st.tuples(_f(-0.6, 0.6), _f(-3.2, 3.2)), omega=st.tuples(_f(-2, 2), _f(-2, 2)),
       F=st.tuples(*[_f(-4000, 4000)] * 3), tau=st.tuples(_f(-400, 400), _f(-400, 400)))
def test_compiled_accelerations_equal_the_python_ones(p, v, theta, omega, F, tau):
    plant = dynamics.Plant(PRM, p, theta, compiled=False)
    plant.v[:], plant.omega[:] = v, omega
    a, eps = plant.accelerations(F, tau)
    out = np.empty(5)
    dynamics_kernel.accelerations(C, plant.p, plant.v, plant.theta, plant.omega, np.array(F), np.array(tau), out)
    np.testing.assert_allclose(out[:3], a, rtol=1e-11, atol=1e-9)
    np.testing.assert_allclose(out[3:], eps, rtol=1e-11, atol=1e-9)


def test_a_compiled_trajectory_equals_the_python_one_step_by_step():
    p0, th0 = (0.02, -0.01, 0.85), (0.1, 0.3)
    fast, slow = dynamics.Plant(PRM, p0, th0, substeps=2), dynamics.Plant(PRM, p0, th0, substeps=2, compiled=False)
    assert fast._constants is not None and slow._constants is None
    hold = np.array([900.0, 900.0, 900.0])
    for k in range(3000):                       # 0.3 s of forces and torques that move both manipulators
        F = hold + 300.0 * np.sin(np.array([1.0, 1.3, 1.7]) * k * 1e-3 * 2 * np.pi)
        tau = np.array([20.0 * np.cos(k * 2e-3), 5.0 * np.sin(k * 3e-3)])
        fast.step(F, tau)
        slow.step(F, tau)
        if k % 100 == 0:
            for name in ('p', 'v', 'theta', 'omega'):
                np.testing.assert_allclose(getattr(fast, name), getattr(slow, name), rtol=1e-9, atol=1e-12,
                                           err_msg=f'{name} at step {k}')
    assert np.linalg.norm(fast.v) > 1e-3 and abs(fast.omega[0]) > 1e-3      # both moved
    np.testing.assert_allclose(fast.measure()[0], slow.measure()[0], atol=1e-12)


def test_encoder_positions_are_the_measurement():
    rng = np.random.default_rng(5)
    for _ in range(200):
        plant = dynamics.Plant(PRM, (rng.uniform(-0.2, 0.2), rng.uniform(-0.2, 0.2), rng.uniform(0.7, 0.95)),
                               rng.uniform(-1, 1, 2))
        l, th = plant.measure()
        assert plant.encoder_positions() == [*l.tolist(), *th.tolist()]
