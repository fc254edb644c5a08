"""Hexaslide real-time forward kinematics: damped Newton (analytic Jacobian) and JFMD (seed 000)."""
import math

import numpy as np
import pytest

from hil_core import hexaslide as hx
from hil_core.maths.rotations import quat_multiply, quat_conjugate, quat_to_rotvec

GEOM = hx.load_geometry('hexaslide_scaled')
METHODS = ('newton', 'jfmd')


def pose_errors(estimated, true):
    """Translation error [m] and rotation angle error [rad] (independent of quaternion sign)."""
    dp = np.abs(np.asarray(estimated)[..., :3] - true[..., :3]).max(axis=-1)
    dq = quat_multiply(quat_conjugate(true[..., 3:]), np.asarray(estimated)[..., 3:])
    return dp, np.linalg.norm(quat_to_rotvec(dq), axis=-1)


@pytest.mark.parametrize('name, count', [('hexaslide_scaled', 10000), ('hexaslide_full', 2000)])
def test_round_trip_random_poses_cold_from_home(name, count):
    """IK -> FK on 10,000 random poses of the nominal box, every solve cold-started from home."""
    g = hx.load_geometry(name)
    poses = hx.random_poses(g, count, rng=11 if name == 'hexaslide_scaled' else 12)
    q = hx.inverse_kinematics(g, poses).q
    fk = hx.ForwardKinematics(g)
    out = np.empty_like(poses)
    for k, qk in enumerate(q):
        fk.reset()
        res = fk.solve(qk)
        assert res.converged, (k, res.reason)
        out[k] = res.pose
    dp, dr = pose_errors(out, poses)
    assert dp.max() < 1e-9 and dr.max() < 1e-9


@pytest.mark.parametrize('method', METHODS)
@pytest.mark.parametrize('name', hx.ROBOTS)
def test_cold_start_from_home_converges_on_a_workspace_grid(method, name):
    """3^6 grid (corners, edge midpoints, faces, centre) of a box 10 % larger than nominal."""
    g = hx.load_geometry(name)
    poses = hx.box_corners(g, scale=1.1, levels=(-1.0, 0.0, 1.0))
    q = hx.inverse_kinematics(g, poses).q
    fk = hx.ForwardKinematics(g, method=method)
    for k, qk in enumerate(q):
        res = fk.solve(qk, guess=hx.home_pose(g))
        assert res.converged, (k, res.reason)
        dp, dr = pose_errors(res.pose, poses[k])
        assert dp < 1e-9 and dr < 1e-9
        assert res.residual < 1e-9


@pytest.mark.parametrize('method, predict', [('newton', False), ('jfmd', False), ('newton', True)])
@pytest.mark.parametrize('name', hx.ROBOTS)
@pytest.mark.parametrize('periods', [(2.0, 2.6, 3.1, 2.3, 1.9, 3.7), (1.0, 1.3, 1.1, 1.2, 0.9, 1.5)])
def test_warm_start_along_a_1khz_trajectory_needs_at_most_two_iterations(method, predict, name, periods):
    g = hx.load_geometry(name)
    traj = hx.sinusoid_trajectory(g, duration=1.0, rate=1000.0, periods=periods)
    q = hx.inverse_kinematics(g, traj).q
    fk = hx.ForwardKinematics(g, method=method, predict=predict)
    fk.reset(traj[0])
    iterations = []
    for k, qk in enumerate(q):
        res = fk.solve(qk)
        assert res.converged
        iterations.append(res.iterations)
        dp, dr = pose_errors(res.pose, traj[k])
        assert dp < 1e-9 and dr < 1e-9
    assert max(iterations) <= 2


def test_newton_and_jfmd_agree_and_refresh_mode_works():
    poses = hx.random_poses(GEOM, 50, rng=13)
    q = hx.inverse_kinematics(GEOM, poses).q
    solvers = [hx.ForwardKinematics(GEOM, method=m, chord=c) for m in METHODS for c in (True, False)]
    solvers.append(hx.ForwardKinematics(GEOM, predict=True))   # extrapolating between far poses
    for qk in q:
        results = [s.solve(qk) for s in solvers]
        assert all(r.converged for r in results)
        for r in results[1:]:
            dp, dr = pose_errors(r.pose, results[0].pose)
            assert dp < 1e-10 and dr < 1e-10


def test_unreachable_joints_are_reported_not_returned():
    """Sliders 0.5 m outward: the platform cannot close the chain; FK says so and keeps its state."""
    fk = hx.ForwardKinematics(GEOM, max_iter=30)
    good = fk.solve(np.full(6, 0.01))
    assert good.converged
    before = fk.last_pose
    bad = fk.solve(np.full(6, 0.5))
    assert not bad.converged and bad.reason
    assert bad.residual > 1e-3
    np.testing.assert_array_equal(bad.pose, before)            # last good estimate, not garbage
    np.testing.assert_array_equal(fk.last_pose, before)        # warm start untouched
    again = fk.solve(np.full(6, 0.01))
    assert again.converged and again.iterations == 0


def test_iteration_limit_is_reported():
    pose = hx.box_corners(GEOM)[5]
    q = hx.inverse_kinematics(GEOM, pose).q[0]
    res = hx.ForwardKinematics(GEOM, max_iter=1).solve(q)
    assert not res.converged and 'iterations' in res.reason


@pytest.mark.parametrize('bad', [np.full(6, np.nan), [0, 0, 0, 0, 0, np.inf], np.zeros(5), np.zeros(7),
                                 None, 'abcdef', [[0] * 6]])
def test_invalid_joint_vectors(bad):
    fk = hx.ForwardKinematics(GEOM)
    res = fk.solve(bad)
    assert not res.converged and 'invalid' in res.reason
    np.testing.assert_array_equal(res.pose, hx.home_pose(GEOM))


def test_guess_reset_and_constructor_checks():
    pose = hx.random_poses(GEOM, 1, rng=14)[0]
    q = hx.inverse_kinematics(GEOM, pose).q[0]
    fk = hx.ForwardKinematics(GEOM)
    res = fk.solve(q, guess=pose)
    assert res.converged and res.iterations == 0
    assert not fk.solve(q, guess=[0, 0, 0, 0, 0, 0, 0]).converged           # zero quaternion
    assert not fk.solve(q, guess=[0, 0, math.nan, 0, 0, 0, 1]).converged
    fk.reset()
    np.testing.assert_array_equal(fk.last_pose, hx.home_pose(GEOM))
    with pytest.raises(ValueError):
        fk.reset([0, 0, 0, 0, 0, 0, 0])
    with pytest.raises(ValueError):
        hx.ForwardKinematics(GEOM, method='broyden')
    with pytest.raises(ValueError):
        hx.ForwardKinematics(GEOM, tol=0.0)


def test_another_assembly_mode_is_never_returned():
    """Same sliders, two real closures: the robot's pose and one with the platform turned ~40 deg
    (spherical joints at 72 deg). Started next to the wrong one, FK must still return the robot's."""
    good = hx.poses_from_offsets(GEOM, [-0.05, 0.025, 0.025, -0.09, 0.14, 0.05])[0]
    q = hx.inverse_kinematics(GEOM, good).q[0]
    wrong = np.array([-0.08144367, -0.00947116, 0.15227894, -0.34801201, 0.23613537, 0.04736956, 0.90602641])
    fk = hx.ForwardKinematics(GEOM)
    # the wrong closure really exists: Newton started on it stays there, and it is flagged
    sliders = GEOM.guide_origins + (GEOM.q_home + q)[:, None] * GEOM.guide_directions
    base = [(b[0], b[1], c[0], c[1]) for b, c in zip(GEOM.platform_joints, sliders)]
    ok, state = fk._iterate(tuple(wrong / np.r_[1, 1, 1, [np.linalg.norm(wrong[3:])] * 4]), base, None)[:2]
    assert ok and pose_errors(np.array(state), good)[1] > 0.3
    assert 'spherical' in fk._branch_problem(state, base)
    # ... but solve() detects it and returns the robot's pose
    res = fk.solve(q, guess=wrong)
    assert res.converged
    dp, dr = pose_errors(res.pose, good)
    assert dp < 1e-9 and dr < 1e-9
    # a stream of far-apart poses with the predictor (the case that found this closure)
    fk = hx.ForwardKinematics(GEOM, predict=True)
    poses = np.concatenate([[hx.home_pose(GEOM)], hx.box_corners(GEOM)[::9], hx.random_poses(GEOM, 30, rng=1)])
    for pose, qk in zip(poses, hx.inverse_kinematics(GEOM, poses).q):
        res = fk.solve(qk)
        assert res.converged
        dp, dr = pose_errors(res.pose, pose)
        assert dp < 1e-9 and dr < 1e-9


def test_solution_without_physical_passive_joints_is_reported():
    from hil_core.hexaslide import geometry as gm
    tight = gm.build_geometry('tight', GEOM.home_height, GEOM.half_distance, GEOM.link_length,
                              GEOM.platform_radius, np.degrees(GEOM.platform_angle), GEOM.guide_directions,
                              [-1, 1, -1, 1, -1, 1], (-0.125, 0.1), 1.0, 1.0,
                              {'surge': 0.05, 'sway': 0.025, 'heave': 0.025, 'roll_deg': 5, 'pitch_deg': 8,
                               'yaw_deg': 3})
    pose = hx.poses_from_offsets(tight, [0, 0, 0, 0, 0.15, 0])[0]
    q = hx.inverse_kinematics(tight, pose).q[0]
    fk = hx.ForwardKinematics(tight)
    res = fk.solve(q, guess=pose)
    assert not res.converged and 'assembly mode' in res.reason and 'joint' in res.reason
    np.testing.assert_array_equal(fk.last_pose, hx.home_pose(tight))
