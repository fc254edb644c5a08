"""Mock iiwa joint simulation: velocity tracking through gravity and friction, holding still
at zero command without drift or chattering, bounded ripple, torque limits."""
import numpy as np
import pinocchio as pin
import pytest

from hil_core.iiwa.arm_sim import ArmSim, ArmSimParams

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


def test_flexible_joints_are_stable_at_1ms_and_track():
    sim = ArmSim(ArmSimParams(flexible=True))
    sim.reset(Q0)
    cmd = np.array([0.2, -0.1, 0.15, 0.1, -0.2, 0.3, 0.3])
    for _ in range(1500):
        sim.step(cmd, 1e-3)
        assert np.all(np.isfinite(sim.q)) and np.abs(sim.v).max() < 2.0
    np.testing.assert_allclose(sim.v, cmd, atol=5e-3)
    # at rest the sensor reads the spring torque = gravity load
    sim2 = ArmSim(ArmSimParams(flexible=True))
    sim2.reset(Q0)
    for _ in range(500):
        sim2.step(np.zeros(7), 1e-3)
    g = pin.computeGeneralizedGravity(sim2.model, sim2.data, sim2.q)
    np.testing.assert_allclose(sim2.tau_measured, g, atol=0.5)


def test_very_stiff_joints_behave_like_the_rigid_model():
    rigid = ArmSim(ArmSimParams(friction=False))
    stiff = ArmSim(ArmSimParams(friction=False, flexible=True, stiffness=(1e8,) * 7, joint_damping=(1e3,) * 7))
    rigid.reset(Q0)
    stiff.reset(Q0)
    cmd = np.array([0.2, -0.1, 0.15, 0.1, -0.2, 0.3, 0.3])
    for _ in range(500):
        rigid.step(cmd, 1e-3)
        stiff.step(cmd, 1e-3)
    np.testing.assert_allclose(stiff.q, rigid.q, atol=2e-4)


def test_flexibility_shows_the_two_mass_resonance():
    """Free oscillation from an initial spring twist (no torque, no gravity): the motor-link
    twist oscillates at sqrt(k (1/J + 1/m_link)), the closed form of the two-mass system; the
    other joints are held by their own, faster spring-rotor pairs, so m_link = M_22."""
    p = ArmSimParams(friction=False, flexible=True, velocity_bandwidth_hz=0.5, integral_ratio=0.0,
                     stiffness=(2e3,) * 7, joint_damping=(0.0,) * 7, gravity=(0.0, 0.0, 0.0))
    sim = ArmSim(p)
    sim.reset(np.zeros(7))
    sim.kp[:] = 0.0
    sim.theta[1] += 1e-3           # joint 2 of the stretched arm: a slow, lightly damped mode
    twist = []
    for _ in range(2500):
        sim._flexible_step(np.zeros(7), 1e-4)
        twist.append(sim.theta[1] - sim.q[1])
    twist = np.array(twist)
    crossings = np.flatnonzero(np.diff(np.sign(twist)) != 0)
    period = 2 * np.mean(np.diff(crossings)) * 1e-4
    m_link = pin.crba(sim.model, sim.data, np.zeros(7))[1, 1]
    w = np.sqrt(2e3 * (1 / p.armature[1] + 1 / m_link))
    assert period == pytest.approx(2 * np.pi / w, rel=0.05)
