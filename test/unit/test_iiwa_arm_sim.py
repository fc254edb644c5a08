"""Mock iiwa joint simulation: velocity tracking through gravity and friction, holding still
at zero command without drift or chattering, bounded ripple, torque limits."""
import numpy as np
import pinocchio as pin
import pytest

from hil_core.iiwa_arm_sim import ArmSim, ArmSimParams

Q0 = np.radians([-26.25, 65.96, 0.72, 67.57, -63.15, -2.56, 140.79])


def test_tracks_a_velocity_command_in_gravity():
    sim = ArmSim()
    sim.reset(Q0)
    cmd = np.array([0.2, -0.1, 0.15, 0.1, -0.2, 0.3, 0.3])
    for _ in range(1000):
        sim.step(cmd, 1e-3)
    np.testing.assert_allclose(sim.v, cmd, atol=2e-3)


def test_holds_still_at_zero_command_without_chattering():
    sim = ArmSim()
    sim.reset(Q0)
    vs = []
    for _ in range(1000):
        sim.step(np.zeros(7), 1e-3)
        vs.append(sim.v.copy())
    vs = np.array(vs)
    assert np.abs(sim.q - Q0).max() < 1e-3            # gravity feedforward + PI hold it
    assert np.abs(vs[500:]).max() < 1e-4
    # the measured torque balances gravity at rest (torque sensors)
    g = pin.computeGeneralizedGravity(sim.model, sim.data, sim.q)
    np.testing.assert_allclose(sim.tau_measured, g, atol=0.5)


def test_without_friction_the_sensor_torque_is_the_inverse_dynamics():
    sim = ArmSim(ArmSimParams(friction=False))
    sim.reset(Q0)
    cmd = np.full(7, 0.1)
    for _ in range(300):
        q, v = sim.q.copy(), sim.v.copy()
        sim.step(cmd, 1e-3)
    a = (sim.v - v) / 1e-3
    tau = pin.rnea(sim.model, sim.data, q, v, a)
    np.testing.assert_allclose(sim.tau_measured, tau, atol=1e-6)


def test_ripple_is_bounded_and_torques_respect_limits():
    sim = ArmSim(ArmSimParams(ripple_amplitude=(0.5,) * 7))
    sim.reset(Q0)
    for _ in range(500):
        sim.step(np.full(7, 5.0), 1e-3)      # far beyond what the torque limits allow
        assert np.all(np.abs(sim.tau_motor) <= sim.tau_max + 1e-9)
    assert np.all(np.isfinite(sim.q)) and np.all(sim.q <= sim.kin.upper) and np.all(sim.q >= sim.kin.lower)


@pytest.mark.parametrize('bad', [dict(armature=(0.0,) * 7), dict(fc=(1.0,) * 6), dict(velocity_bandwidth_hz=0.0)])
def test_bad_parameters_are_refused(bad):
    with pytest.raises(ValueError):
        ArmSim(ArmSimParams(**bad))


def test_bad_initial_positions_are_refused():
    sim = ArmSim()
    with pytest.raises(ValueError):
        sim.reset(np.full(7, 3.1))
    with pytest.raises(ValueError):
        sim.reset(np.full(7, np.nan))
