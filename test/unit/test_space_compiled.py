"""Compiled space plant (space.model_kernel, space.plant_kernel) against pinocchio and against the
pinocchio + numpy frame (SpacePlantNumpy, the oracle).

* Kinematics and momentum map vs pinocchio (crba, computeFrameJacobian, exp6, SE3ToXYZQUAT)
  on random configurations: 1e-12 relative (they agree to ~1e-15: the same products in
  another association order).
* One frame from identical random states (PI/PID, Euler or rotation-vector error, measured or
  filtered rates, limits active or not, near-singular poses): every output to 1e-12 of its
  scale, except where the pseudo-inverse amplifies rounding: the smallest eigenvalue w0 of
  J_d J_d^T has an absolute error of order eps ||J_d J_d^T|| in any eigen-solver (so
  sigma_min = sqrt(w0) gets 1e-13 ||J_d J_d^T|| / sigma_min), and the raw command a relative
  one of eps times the condition number of the damped matrix (bounded as 1e-13 * kappa).
  Set-points are drawn within 2 rad of the EE orientation (a realistic HIL error) and the
  orientation error's own conditioning is included: Euler angles lose 1/cos(pitch) near
  gimbal lock. The rotation-vector branches near 0 and near pi are tested on their own.
* A closed run with the mock arm's joint model: the two plants stay together.
"""
import pathlib

import numpy as np
import pinocchio as pin
import pytest
import yaml

from hil_core.iiwa.arm_sim import ArmSim
from hil_core.drives.plants.description import parse_ros2_control
from hil_core.space import model_kernel as ck
from hil_core.space import plant_kernel as cf
from hil_core.space.control import ControlGains, rotation_error
from hil_core.space.model import FreeFloatingModel, euler_zyx_to_matrix
from hil_core.space.plant import SpacePlant, SpacePlantNumpy

ROOT = pathlib.Path(__file__).resolve().parents[2]
RTOL = 1e-12
FIELDS = ('command', 'raw_command', 'sat_pose', 'sat_twist', 'ee_pose', 'error', 'qd')


@pytest.fixture(scope='module')
def model():
    return FreeFloatingModel()


@pytest.fixture(scope='module')
def chain(model):
    return ck.ChainModel(model)


def random_se3(rng) -> pin.SE3:
    """A random pose from numpy's seeded generator (pin.SE3.Random draws from a global C++
    generator that other test modules' random states depend on: never touch it here)."""
    q = rng.normal(size=4)
    q /= np.linalg.norm(q)
    return pin.SE3(pin.Quaternion(q[3], q[0], q[1], q[2]).toRotationMatrix(), rng.normal(size=3))


def rel(a, b):
    a, b = np.asarray(a, float), np.asarray(b, float)
    return np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1e-300)


def test_kinematics_and_momentum_map_match_pinocchio(model, chain):
    rng = np.random.default_rng(0)
    lo, hi = model.model.lowerPositionLimit[7:], model.model.upperPositionLimit[7:]
    Rl, pl, J = np.empty((8, 3, 3)), np.empty((8, 3)), np.empty((6, 13))
    H2, H3 = np.empty((6, 6)), np.empty((6, 7))
    for _ in range(300):
        q = rng.uniform(lo, hi)
        ck.momentum_matrices(q, chain.jp, chain.jtype, chain.axis, chain.inert, H2, H3, Rl, pl)
        H2o, H3o = model.momentum_matrices(q)
        assert rel(H2, H2o) < RTOL and rel(H3, H3o) < RTOL
        assert rel(ck.momentum_map(q, chain.jp, chain.jtype, chain.axis, chain.inert), model.momentum_map(q)) < RTOL
        sat = random_se3(rng)
        qf = np.concatenate([pin.SE3ToXYZQUAT(sat), q])
        Jo = pin.computeFrameJacobian(model.model, model.data, qf, model.ee_id, pin.LOCAL_WORLD_ALIGNED)
        ee = pin.updateFramePlacement(model.model, model.data, model.ee_id)
        R, p = np.empty((3, 3)), np.empty(3)
        ck.ee_and_jacobian(q, sat.rotation.copy(), sat.translation.copy(), chain.jp, chain.jtype, chain.axis,
                           chain.ee, Rl, pl, J, R, p)
        assert rel(J, Jo) < RTOL and rel(R, ee.rotation) < RTOL and rel(p, ee.translation) < RTOL


def test_exp6_and_quaternion_are_pinocchios():
    rng = np.random.default_rng(1)
    out = np.empty(4)
    for scale in (1e-9, 1e-5, 1e-4, 2e-4, 1e-2, 1.0, 3.0):        # both sides of the Taylor switch
        for _ in range(20):
            nu = rng.normal(size=6) * scale
            E = pin.exp6(pin.Motion(nu))
            R, p = ck.exp6(nu)
            assert np.max(np.abs(R - E.rotation)) <= 1e-15
            assert np.max(np.abs(p - E.translation)) <= 1e-15 * max(1, scale)
    for _ in range(200):
        M = random_se3(rng)
        ck.quat_of(M.rotation, out, 0)
        assert np.max(np.abs(out - pin.SE3ToXYZQUAT(M)[3:])) <= 1e-15
    # all four branches of the matrix -> quaternion conversion
    for axis in np.eye(3):
        M = pin.SE3(pin.exp3(axis * 3.1), np.zeros(3))
        ck.quat_of(M.rotation, out, 0)
        assert np.max(np.abs(out - pin.SE3ToXYZQUAT(M)[3:])) <= 1e-15


def make_pair(model, gains):
    vmax = np.asarray(model.model.velocityLimit[6:]) * 0.5
    fast = SpacePlant(model, gains, vmax, np.full(7, 5.0), 50.0, 0.05)
    ref = SpacePlantNumpy(model, gains, vmax, np.full(7, 5.0), 50.0, 0.05)
    assert fast.compiled
    return fast, ref


GAINS = {
    'seed_P': ControlGains(),
    'PI_euler': ControlGains(ki_v=(0.5,) * 3, ki_w=(0.5,) * 3),
    'PID_rotvec': ControlGains(ki_v=(0.3,) * 3, ki_w=(0.2,) * 3, kd=0.1, orientation_error='rotvec',
                               sigma_threshold=0.1, lambda_max=0.08),
}


@pytest.mark.parametrize('name', sorted(GAINS))
def test_one_frame_from_identical_random_states(model, name):
    fast, ref = make_pair(model, GAINS[name])
    rng = np.random.default_rng(len(name))
    lo, hi = model.model.lowerPositionLimit[7:], model.model.upperPositionLimit[7:]
    vmax = fast.limiter.v_max
    damped = limited = 0
    for t in range(250):
        q = rng.uniform(lo, hi) * (0.99 if t % 4 else 0.5)
        dq = rng.normal(size=7) * 1e-3
        sat = random_se3(rng)
        G = ref.m.momentum_map(q - dq)
        R_ee = model.ee_pose(model.config(pin.SE3ToXYZQUAT(sat), q)).rotation
        v = rng.normal(size=3)
        R_des = pin.exp3(v / np.linalg.norm(v) * rng.uniform(0, 2.0)) @ R_ee
        pitch = [np.arcsin(np.clip(-R[2, 0], -1, 1)) for R in (R_ee, R_des)]
        k_rot = 1.0 if name.endswith('rotvec') else 1.0 / max(min(abs(np.cos(y)) for y in pitch), 1e-3)
        state = dict(integral=rng.uniform(-0.5, 0.5, 6), d_filtered=rng.normal(size=6),
                     prev_error=None if t % 7 == 0 else rng.normal(size=6) * 0.1)
        last, qdf, r_des = rng.uniform(-1, 1, 7) * vmax, rng.normal(size=7), rng.normal(size=3)
        for p in (fast, ref):
            p.q_prev, p.G_prev, p.sat, p.qd_filt = q - dq, G.copy(), sat, qdf.copy()
            for k, v in state.items():
                setattr(p.ctrl, k, None if v is None else v.copy())
            p.limiter.last, p.limited = last.copy(), bool(t % 3 == 0)
            p.set_setpoint(r_des, R_des)
        qd = None if t % 2 else rng.normal(size=7)
        control = t % 11 != 0
        a, b = fast.step(q, 1e-3, qd, control), ref.step(q, 1e-3, qd, control)
        for f in FIELDS:
            if f not in ('raw_command', 'command'):
                assert rel(getattr(a, f), getattr(b, f)) < RTOL * (k_rot if f == 'error' else 1.0), f
        assert a.limited == b.limited and a.damping == pytest.approx(b.damping, rel=1e-9, abs=1e-12)
        if not control:
            assert np.array_equal(a.raw_command, b.raw_command) and np.isnan(a.sigma_min)
            assert rel(a.command, b.command) < RTOL
            continue
        Jd = model.dynamic_jacobian(model.config(pin.SE3ToXYZQUAT(ref.sat), q), G=ref.G_prev)
        w = np.linalg.eigvalsh(Jd @ Jd.T)
        lam2 = b.damping ** 2
        kappa = (w[-1] + lam2) / (max(w[0], 0.0) + lam2) * k_rot
        assert abs(a.sigma_min - b.sigma_min) <= 1e-13 * w[-1] / max(b.sigma_min, 1e-6)
        assert rel(a.raw_command, b.raw_command) <= 1e-13 * kappa
        assert rel(a.command, b.command) <= 1e-13 * kappa
        damped += b.damping > 0
        limited += b.limited
        # the state the kernel wrote back is the oracle's
        assert rel(fast.ctrl.integral, ref.ctrl.integral) < RTOL * k_rot
        assert rel(fast.limiter.last, ref.limiter.last) <= 1e-13 * kappa
        assert rel(fast.sat.translation, ref.sat.translation) < RTOL or np.max(np.abs(ref.sat.translation)) < 1e-12
        assert rel(fast.G_prev, ref.G_prev) < RTOL
    assert damped > 0 and limited > 0           # both branches were exercised


def test_closed_run_with_the_mock_arm_stays_together(model):
    cfg = yaml.safe_load((ROOT / 'config' / 'space_plant.yaml').read_text())['space_plant']['ros__parameters']
    # the mock arm's start: the initial positions of the iiwa URDF's <ros2_control> block
    q0 = parse_ros2_control((ROOT / 'urdf' / 'iiwa14.urdf').read_text()).initial('position')
    gains = ControlGains(tuple(cfg['kv']), tuple(cfg['kw']), tuple(cfg['ki_v']), tuple(cfg['ki_w']), cfg['kd'],
                         20.0, cfg['integral_limit'], cfg['orientation_error'], cfg['sigma_threshold'],
                         cfg['lambda_max'])
    fast, ref = make_pair(model, gains)
    for p in (fast, ref):
        p.set_setpoint(cfg['setpoint_position'], euler_zyx_to_matrix(np.radians(cfg['setpoint_euler_zyx_deg'])))
    arm = ArmSim()
    arm.reset(q0)
    for k in range(1500):
        qd = arm.v if k % 2 else None
        a, b = fast.step(arm.q, 1e-3, qd, control=k < 1400), ref.step(arm.q, 1e-3, qd, control=k < 1400)
        for f in FIELDS:
            assert rel(getattr(a, f), getattr(b, f)) < 1e-11, (k, f)
        arm.step(b.command, 1e-3)
    assert np.linalg.norm(b.sat_pose[:3]) > 1e-4                # the satellite moved
    assert np.array_equal(fast.satellite_euler_zyx(), ref.satellite_euler_zyx()) or \
        rel(fast.satellite_euler_zyx(), ref.satellite_euler_zyx()) < RTOL


def test_reset_paths_and_setpoint_hold(model):
    fast, ref = make_pair(model, GAINS['PI_euler'])
    q0 = np.radians([-26.25, 65.96, 0.72, 67.57, -63.15, -2.56, 140.79])
    pose = np.array([0.1, -0.2, 0.3, 0.0, 0.0, np.sin(0.2), np.cos(0.2)])
    for p in (fast, ref):
        p.reset(q0, pose)
    a, b = fast.step(q0 + 1e-4, 1e-3), ref.step(q0 + 1e-4, 1e-3)
    assert fast.r_des is not None and rel(fast.r_des, ref.r_des) < RTOL and rel(fast.R_des, ref.R_des) < RTOL
    for f in FIELDS:
        assert rel(getattr(a, f), getattr(b, f)) < RTOL, f
    fast.q_prev = ref.q_prev = None              # the node's restart: step resets itself
    a, b = fast.step(q0, 1e-3), ref.step(q0, 1e-3)
    for f in FIELDS:
        assert rel(getattr(a, f), getattr(b, f)) < RTOL, f


def test_rotation_vector_error_in_all_branches():
    """Near pi the formula angle / (2 sin(angle)) * w is ill-conditioned in any implementation:
    acos gives the angle to eps / sin(angle), and sin(angle) of that angle is then relative
    eps / sin(angle)^2; the bound carries that factor (the axis branch, pi - angle < 1e-6,
    only the angle's eps / sin(angle)). Both this kernel and control.rotation_error have it."""
    rng = np.random.default_rng(5)
    e = np.zeros(6)
    # not at pi - 1e-6 itself: there the oracle's branch switch is discontinuous (the axis
    # branch's sign is arbitrary) and rounding decides the branch
    for angle in (0.0, 1e-12, 1e-9, 1e-6, 0.3, 2.0, 3.0, np.pi - 1e-4, np.pi - 2e-6, np.pi - 5e-7, np.pi - 1e-8,
                  np.pi):
        for _ in range(30):
            axis = rng.normal(size=3)
            R_act = random_se3(rng).rotation
            R_des = pin.exp3(axis / np.linalg.norm(axis) * angle) @ R_act
            cf._orientation_error(R_des, R_act, True, e)
            want = rotation_error(R_des, R_act)
            if angle < 1e-6:
                cond = 1.0
            elif np.pi - angle < 1e-6:       # acos at c ~ -1: eps / sin(angle), c within eps of -1
                cond = 1.0 / max(np.sin(angle), 1.5e-8)
            else:
                cond = 1.0 / np.sin(angle) ** 2
            assert np.max(np.abs(e[3:] - want)) <= RTOL * max(1.0, np.max(np.abs(want))) * cond, angle
