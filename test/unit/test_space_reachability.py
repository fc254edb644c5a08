"""hil_core.space.reachability: the node's own loop (satellite integration, Dynamic-Jacobian
law, joint limits) run on an ideal arm says whether an inertial EE target is reachable from
here. Seed 002's experiment (its initial joints, its desired EE) is reached, and the pose
reached is the target by the model's forward kinematics at the final satellite pose and
joints, with the system's centre of mass where it started (zero momentum: pinocchio's
centerOfMass, not the momentum map the loop integrates). A target 3 m away is refused with the
reason, and the closest approach it reports is no closer than the bound a fixed centre of mass
allows: |ee - c0| <= (1 + m_arm / M) (|r_q| + sum of the DH d_i)."""
import numpy as np
import pinocchio as pin
import pytest

from hil_core.iiwa.kinematics import DH_D, JOINT_NAMES
from hil_core.space.control import ControlGains
from hil_core.space.model import FreeFloatingModel, SatelliteParams, euler_zyx_to_matrix
from hil_core.space.plant_numpy import SpacePlantNumpy
from hil_core.space.reachability import reach

Q0 = np.radians([-26.25, 65.96, 0.72, 67.57, -63.15, -2.56, 140.79])      # seed 002 initial joints
SAT0 = np.array([0, 0, 0, 0, 0, 0, 1.0])
EE_DES = np.array([1.448, -0.236, 0.094])    # seed 002 desired EE, shifted by our mount r_q (docs)
EE_DES_EULER_DEG = [-88.38, -37.27, -56.99]


@pytest.fixture(scope='module')
def setup():
    # space_plant's defaults (config/space_plant.yaml): the seed's satellite, its gains with the
    # integral part, half the data-sheet velocities, 5 rad/s^2, a 0.05 rad margin to the limits
    model = FreeFloatingModel(SatelliteParams(), None)
    gains = ControlGains(ki_v=(0.5,) * 3, ki_w=(0.5,) * 3)
    v_max = np.asarray(model.model.velocityLimit[6:]) * 0.5
    plant = SpacePlantNumpy(model, gains, v_max, np.full(7, 5.0), 50.0, 0.05)
    return model, plant


def _com(model, sat_pose, q):
    return pin.centerOfMass(model.model, model.model.createData(), model.config(sat_pose, q)).copy()


def test_the_seeds_target_is_reached_where_the_model_puts_it(setup):
    model, plant = setup
    R_des = euler_zyx_to_matrix(np.radians(EE_DES_EULER_DEG))
    r = reach(plant, Q0, SAT0, EE_DES, R_des)
    assert r.reachable, r.reason
    assert 'reached in' in r.reason
    ee = model.ee_pose(model.config(r.sat_final, r.q_final))
    assert np.linalg.norm(ee.translation - EE_DES) <= 1e-3
    assert np.degrees(np.linalg.norm(pin.log3(R_des.T @ ee.rotation))) <= 0.2
    lower, upper = model.model.lowerPositionLimit[7:], model.model.upperPositionLimit[7:]
    assert np.all(r.q_final > lower) and np.all(r.q_final < upper)
    # zero momentum: the centre of mass stays put while the satellite turns and moves
    # (measured: 0.4 um over 1.8 rad of joint travel, while the satellite turned 19.5 deg)
    assert np.linalg.norm(_com(model, r.sat_final, r.q_final) - _com(model, SAT0, Q0)) <= 1e-5
    turned = np.degrees(np.linalg.norm(pin.log3(pin.XYZQUATToSE3(r.sat_final).rotation)))
    assert turned > 5.0, 'the satellite must turn under the arm: a fixed-base check would miss it'


def test_a_target_beyond_the_systems_reach_is_refused_with_the_reason(setup):
    model, plant = setup
    target = np.array([3.0, 0.0, 0.0])
    r = reach(plant, Q0, SAT0, target, np.eye(3), joint_names=JOINT_NAMES)
    assert not r.reachable
    assert r.reason.startswith('not reached within 20 s of the model: closest |e_p|')
    c0 = _com(model, SAT0, Q0)
    masses = [model.model.inertias[i].mass for i in range(1, model.model.njoints)]
    m_total = sum(masses)
    m_arm = m_total - masses[0]
    bound = (1 + m_arm / m_total) * (np.linalg.norm(SatelliteParams().mount_xyz) + DH_D.sum())
    assert r.position_error >= np.linalg.norm(target - c0) - bound > 0.1
    assert f'{r.position_error * 1e3:.1f} mm' in r.reason


def test_bad_joints_are_refused(setup):
    _, plant = setup
    with pytest.raises(ValueError, match='7 finite values'):
        reach(plant, [0.0] * 6, SAT0, [1, 0, 0], np.eye(3))
    with pytest.raises(ValueError, match='7 finite values'):
        reach(plant, [np.nan] * 7, SAT0, [1, 0, 0], np.eye(3))
