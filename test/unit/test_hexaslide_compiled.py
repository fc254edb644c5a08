"""Compiled hexaslide kinematics (numba) against their numpy/Python oracles.

Bounds: q, discriminants and reasons come from the same IEEE operations in the same order as
the numpy code (its einsum order reproduced), so they agree to rounding; 1e-12 m is ~1e4 ulps
of a 0.1 m slider value. The passive joint angles differ by at most an ulp where numpy's SIMD
arccos differs from libm's. FK: the compiled solver inverts the Jacobian by Gauss-Jordan
(numpy: LAPACK) and forms ``jinv @ f`` in another order, so each Newton step differs by a few
ulps; it is recomputed from the residual at the next iterate, so converged poses agree to
rounding (1e-12) and the same iteration counts and decisions follow.
"""
import hashlib
import math
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hil_core import hexaslide as hx
from hil_core.hexaslide import inverse_kernel
from hil_core.hexaslide import forward_kernel
from hil_core.maths import jit

TOL = 1e-12
GEOMS = {name: hx.load_geometry(name) for name in hx.ROBOTS}


def assert_ik_equal(geom, poses):
    a, b = hx.inverse_kinematics_numpy(geom, poses), hx.inverse_kinematics(geom, poses)
    np.testing.assert_array_equal(b.reason, a.reason)
    np.testing.assert_array_equal(b.ok, a.ok)
    np.testing.assert_array_equal(np.isnan(b.q), np.isnan(a.q))
    for name in ('q', 'discriminant', 'universal_angle', 'spherical_angle'):
        x, y = getattr(a, name), getattr(b, name)
        assert x.shape == y.shape and y.dtype == np.float64
        np.testing.assert_allclose(y, x, rtol=0, atol=TOL, equal_nan=True, err_msg=name)
    return a


@pytest.mark.parametrize('name', hx.ROBOTS)
def test_ik_equals_numpy_over_and_beyond_the_workspace(name):
    g = GEOMS[name]
    poses = np.concatenate([hx.random_poses(g, 20000, rng=21), hx.box_corners(g, scale=1.2),
                            hx.random_poses(g, 5000, rng=22, scale=3.0)])
    poses[::7, 3:] *= 2.5                               # non-unit quaternions are normalised
    far = hx.random_poses(g, 500, rng=23)
    far[:, :3] += np.random.default_rng(24).uniform(-0.5, 0.5, (500, 3))   # links cannot reach
    poses = np.concatenate([poses, far, [[np.nan, 0, 0.15, 0, 0, 0, 1], [0, 0, 0.15, 0, 0, 0, 0],
                                         [0, np.inf, 0.15, 0, 0, 0, 1]]])
    a = assert_ik_equal(g, poses)
    # every reason code is exercised
    assert set(np.unique(a.reason)) == {hx.OK, hx.NO_REAL_SOLUTION, hx.SLIDER_STROKE,
                                        hx.PASSIVE_JOINT_RANGE, hx.INVALID_INPUT}


_coord = st.floats(-0.3, 0.3, allow_nan=False)
_quat = st.floats(-1.0, 1.0, allow_nan=False)


@settings(max_examples=300, deadline=None)
@given(st.tuples(_coord, _coord, st.floats(0.0, 0.4), _quat, _quat, _quat, _quat))
def test_ik_equals_numpy_for_any_pose(pose):
    assert_ik_equal(GEOMS['hexaslide_scaled'], np.array(pose))


def test_ik_input_forms():
    g = GEOMS['hexaslide_scaled']
    pose = hx.random_poses(g, 3, rng=5)
    ref = hx.inverse_kinematics_numpy(g, pose).q
    assert hx.inverse_kinematics(g, pose[0]).q.shape == (1, 6)
    np.testing.assert_array_equal(hx.inverse_kinematics(g, pose[1].tolist()).q[0],
                                  hx.inverse_kinematics(g, pose[1]).q[0])
    strided = np.asfortranarray(pose)                          # not C-contiguous: copied
    np.testing.assert_allclose(hx.inverse_kinematics(g, strided).q, ref, atol=TOL, rtol=0)
    home = np.array([0, 0, 0, 0, 0, 0, 1])                      # integers: converted
    assert hx.inverse_kinematics(g, home).reason[0] == hx.inverse_kinematics_numpy(g, home).reason[0]
    for bad in (np.zeros(6), np.zeros((2, 8)), np.zeros((1, 1, 7))):
        with pytest.raises(ValueError):
            hx.inverse_kinematics(g, bad)


def assert_fk_equal(a, b):
    assert b.converged == a.converged and b.iterations == a.iterations and b.reason == a.reason
    np.testing.assert_allclose(b.pose, a.pose, rtol=0, atol=TOL)
    assert math.isclose(b.residual, a.residual, rel_tol=1e-9, abs_tol=TOL), (a.residual, b.residual)


ITERATION_FAILURES = ('singular Jacobian', 'no descent', 'no convergence', "no pose on the robot's assembly mode")


def assert_fk_same_outcome(a, b):
    """Sliders no pose reaches: both fail and keep the same warm start. Where no solution
    exists the damped iteration wanders, and a few ulps of difference in its first step change
    where it gives up, so the iteration count and which failure is reported may differ."""
    if a.converged:
        assert_fk_equal(a, b)
        return
    assert not b.converged and b.reason.startswith(ITERATION_FAILURES)
    np.testing.assert_allclose(b.pose, a.pose, rtol=0, atol=TOL)


def pair(geom, **opts):
    return hx.ForwardKinematicsNumpy(geom, **opts), hx.ForwardKinematics(geom, **opts)


VARIANTS = [dict(method='newton'), dict(method='newton', predict=True), dict(method='newton', chord=False),
            dict(method='jfmd'), dict(method='jfmd', chord=False), dict(method='jfmd', predict=True)]


@pytest.mark.parametrize('opts', VARIANTS, ids=lambda o: '-'.join(f'{k}={v}' for k, v in o.items()))
@pytest.mark.parametrize('name', hx.ROBOTS)
def test_fk_warm_stream_equals_the_oracle(name, opts):
    g = GEOMS[name]
    traj = hx.sinusoid_trajectory(g, duration=1.0, rate=1000.0, periods=(1.0, 1.3, 1.1, 1.2, 0.9, 1.5))
    q = hx.inverse_kinematics_numpy(g, traj).q
    a, b = pair(g, **opts)
    for qk in q:
        assert_fk_equal(a.solve(qk), b.solve(qk))
    np.testing.assert_allclose(b.last_pose, a.last_pose, rtol=0, atol=TOL)


@pytest.mark.parametrize('method', ['newton', 'jfmd'])
@pytest.mark.parametrize('name', hx.ROBOTS)
def test_fk_cold_and_far_jumps_equal_the_oracle(name, method):
    """Cold from home with a guess, and a warm stream of far-apart poses (assembly-mode checks,
    retries from home), over the box and 30 % beyond it (some fail: reasons must agree)."""
    g = GEOMS[name]
    poses = np.concatenate([hx.random_poses(g, 300, rng=31, scale=1.3), hx.box_corners(g, scale=1.1)])
    q = hx.inverse_kinematics_numpy(g, poses).q
    q = q[np.all(np.isfinite(q), axis=1)]
    a, b = pair(g, method=method)
    home = hx.home_pose(g)
    for qk in q:
        assert_fk_equal(a.solve(qk, guess=home), b.solve(qk, guess=home))
    a, b = pair(g, method=method, predict=True)
    for qk in q:
        assert_fk_equal(a.solve(qk), b.solve(qk))
    rng = np.random.default_rng(32)                       # random slider vectors: most fail
    for qk in rng.uniform(-0.15, 0.15, (300, 6)):
        assert_fk_same_outcome(a.solve(qk), b.solve(qk))


def test_fk_failures_and_inputs_equal_the_oracle():
    g = GEOMS['hexaslide_scaled']
    a, b = pair(g, max_iter=30)
    cases = [np.full(6, 0.01), np.full(6, 0.5), np.full(6, 0.01), np.full(6, np.nan), [0, 0, 0, 0, 0, np.inf],
             np.zeros(5), np.zeros(7), None, 'abcdef', [[0] * 6], list(np.full(6, 0.02)),
             np.full(6, 0.02, dtype=np.float32), np.full((6, 2), 0.01)[:, 0]]
    for q in cases:
        assert_fk_equal(a.solve(q), b.solve(q))
    q = hx.inverse_kinematics_numpy(g, hx.random_poses(g, 1, rng=14)).q[0]
    for guess in ([0, 0, 0, 0, 0, 0, 0], [0, 0, math.nan, 0, 0, 0, 1], [0, 0, 0.15], 'x', None,
                  hx.random_poses(g, 1, rng=14)[0], [1, 2, 3, 4, 5, 6, 7, 8]):
        assert_fk_equal(a.solve(q, guess=guess), b.solve(q, guess=guess))
    assert_fk_equal(a.solve(np.full(6, np.nan), guess='x'), b.solve(np.full(6, np.nan), guess='x'))
    pose = hx.box_corners(g)[5]
    q = hx.inverse_kinematics_numpy(g, pose).q[0]
    a, b = pair(g, max_iter=1)
    assert_fk_equal(a.solve(q), b.solve(q))
    a.reset(pose), b.reset(pose)
    np.testing.assert_array_equal(b.last_pose, a.last_pose)


def test_fk_assembly_mode_problems_equal_the_oracle():
    g = GEOMS['hexaslide_scaled']
    good = hx.poses_from_offsets(g, [-0.05, 0.025, 0.025, -0.09, 0.14, 0.05])[0]
    q = hx.inverse_kinematics_numpy(g, good).q[0]
    wrong = np.array([-0.08144367, -0.00947116, 0.15227894, -0.34801201, 0.23613537, 0.04736956, 0.90602641])
    a, b = pair(g)
    ra, rb = a.solve(q, guess=wrong), b.solve(q, guess=wrong)
    assert rb.converged and rb.iterations > 5             # the retry from home happened
    assert_fk_equal(ra, rb)
    from hil_core.hexaslide import geometry as gm
    tight = gm.build_geometry('tight', g.home_height, g.half_distance, g.link_length, g.platform_radius,
                              np.degrees(g.platform_angle), g.guide_directions, [-1, 1, -1, 1, -1, 1],
                              (-0.125, 0.1), 1.0, 1.0, {'surge': 0.05, 'sway': 0.025, 'heave': 0.025,
                                                        'roll_deg': 5, 'pitch_deg': 8, 'yaw_deg': 3})
    pose = hx.poses_from_offsets(tight, [0, 0, 0, 0, 0.15, 0])[0]
    q = hx.inverse_kinematics_numpy(tight, pose).q[0]
    a, b = pair(tight)
    ra, rb = a.solve(q, guess=pose), b.solve(q, guess=pose)
    assert 'assembly mode' in rb.reason and 'joint' in rb.reason
    assert_fk_equal(ra, rb)


def _sources_hash(*modules):
    h = hashlib.sha256()
    for m in modules:
        h.update(pathlib.Path(m.__file__).read_bytes())
    return h.hexdigest()


def test_cache_is_stamped_with_the_kernel_sources():
    """numba alone would reuse a cached kernel after an edit of a file it inlines."""
    assert not jit.CACHE_FALLBACKS
    assert jit.cache_stamp(forward_kernel.solve)[1] == _sources_hash(jit, forward_kernel)
    assert jit.cache_stamp(inverse_kernel.ik_batch)[1] == _sources_hash(jit, inverse_kernel)


def test_without_a_writable_cache_the_kernels_compile_in_memory(tmp_path):
    """A read-only install: no cache location can be created. Import and results unchanged."""
    blocker = tmp_path / 'not_a_directory'
    blocker.write_text('')
    env = dict(os.environ, NUMBA_CACHE_LOCATOR_CLASSES='UserProvidedCacheLocator',
               NUMBA_CACHE_DIR=str(blocker / 'cache'))
    code = ('import numpy as np\n'
            'from hil_core import hexaslide as hx\n'
            'from hil_core.maths import jit\n'
            'g = hx.load_geometry("hexaslide_scaled")\n'
            'p = hx.random_poses(g, 50, rng=3)\n'
            'a, b = hx.inverse_kinematics(g, p), hx.inverse_kinematics_numpy(g, p)\n'
            'assert np.abs(a.q - b.q).max() <= 1e-12 and (a.reason == b.reason).all()\n'
            'assert jit.cache_stamp(hx.inverse_kernel.ik_batch) is None\n'
            'print(len(jit.CACHE_FALLBACKS))\n')
    out = subprocess.run([sys.executable, '-c', code], env=env, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    assert int(out.stdout.split()[-1]) >= 3              # every kernel fell back, none failed
