"""Offline workspace tool (seed 001 3.1) on the scaled robot, on a coarse grid: every discrete
surface point re-checked with IK, constraints and the kinetostatic bound; the fitted modified
ellipsoid is inside the discrete surface everywhere (conservative); the hard limit inside the
second surface; the committed workspace files load and admit the planner's default limits."""
import argparse
import pathlib

import numpy as np
import pytest

from hil_core.hexaslide import inverse_kinematics, kinetostatic_index, load_geometry
from hil_core.planner.config import PlannerConfig, Workspace
from hil_core.planner.workspace import WorkspaceSettings, compute_workspace, fit_modified_ellipsoid

ROOT = pathlib.Path(__file__).resolve().parents[2]
SETTINGS = WorkspaceSettings(phi_step_deg=30.0, theta_step_deg=30.0, orientations_per_axis=2,
                             coarse_steps=20, fine_steps=6)


@pytest.fixture(scope='module')
def result():
    return compute_workspace('hexaslide_scaled', SETTINGS)


def _all_ok(geom, points, quats, bound):
    """Every orientation feasible at each point: independent re-check with the kinematics API."""
    poses = np.concatenate([np.repeat(points, len(quats), axis=0), np.tile(quats, (len(points), 1))], axis=1)
    ik = inverse_kinematics(geom, poses)
    idx = np.full(len(poses), np.inf)
    idx[ik.ok] = kinetostatic_index(geom, poses[ik.ok])
    return (ik.ok & (idx <= bound)).reshape(len(points), len(quats)).all(axis=1), ik


def test_every_discrete_surface_point_is_feasible_and_the_next_radius_is_not(result):
    geom = load_geometry('hexaslide_scaled')
    quats = result.orientations
    assert len(quats) == 8
    for radii, bound in ((result.r_soft, result.bounds[0]), (result.r_hard, result.bounds[1])):
        assert np.all(radii > 0)
        ok, ik = _all_ok(geom, result.centre + radii[:, None] * result.directions, quats, bound)
        assert ok.all(), f'{(~ok).sum()} surface points fail IK/constraints'
        assert np.all(ik.discriminant >= 0)
        assert np.all((ik.q >= geom.stroke_min) & (ik.q <= geom.stroke_max))
        assert np.all(ik.universal_angle <= geom.universal_limit)
        assert np.all(ik.spherical_angle <= geom.spherical_limit)
        # the whole segment from the centre is feasible (conservative, star-shaped)
        for frac in (0.25, 0.5, 0.75):
            assert _all_ok(geom, result.centre + frac * radii[:, None] * result.directions, quats, bound)[0].all()
        # and one fine step further out something fails: the search resolved the boundary
        r_max = 3.0 * geom.workspace_half_range[:3].max()
        step = r_max / SETTINGS.coarse_steps / (SETTINGS.fine_steps + 1)
        beyond = np.minimum(radii + step * (1 + 1e-9), r_max)
        out_ok = _all_ok(geom, result.centre + beyond[:, None] * result.directions, quats, bound)[0]
        assert not out_ok[radii + step < r_max].any()


def test_fitted_ellipsoid_is_conservative_and_hard_limit_inside_second_surface(result):
    ell = result.ellipsoid
    r_e = ell.radius(result.directions)
    assert np.all(r_e <= result.r_soft * SETTINGS.fit_margin * (1 + 1e-9))
    assert np.all(result.expansion * r_e <= result.r_hard)
    assert result.expansion >= SETTINGS.min_expansion * SETTINGS.expansion_margin * (1 - 1e-9)
    # the fit is tight: some constraint is active (not a needlessly small ellipsoid); the fit target
    # is the soft surface, pulled in where the hard one leaves less than min_expansion of room
    r_fit = np.minimum(result.r_soft, result.r_hard / SETTINGS.min_expansion)
    assert np.max(r_e / (r_fit * SETTINGS.fit_margin)) > 0.999
    # soft ellipsoid surface points themselves pass IK and constraints at every orientation
    geom = load_geometry('hexaslide_scaled')
    assert _all_ok(geom, result.centre + r_e[:, None] * result.directions, result.orientations,
                   result.bounds[0])[0].all()


def test_fit_recovers_a_known_ellipsoid():
    rng = np.random.default_rng(5)
    u = rng.normal(size=(400, 3))
    u /= np.linalg.norm(u, axis=1, keepdims=True)
    axes = np.array([0.1, 0.08, 0.06, 0.06, 0.04, 0.05])
    a = np.where(u >= 0, axes[0::2], axes[1::2])
    radii = 1 / np.sqrt(np.sum((u / a) ** 2, axis=1))
    ell = fit_modified_ellipsoid(u, radii, (0, 0, 0), margin=1.0, exponents=(2.0,))
    np.testing.assert_allclose(ell.semi_axes, axes, rtol=2e-3)


def test_cli_writes_a_loadable_file_and_refuses_bad_arguments(tmp_path):
    from hil_nodes.cli import workspace_cmd
    out = tmp_path / 'ws.yaml'
    args = argparse.Namespace(robot='hexaslide_scaled', out=str(out), figure=None, step_deg=45.0, orientations=1,
                              r_max=None, kinetostatic_soft=2.5, kinetostatic_hard=3.5, min_expansion=1.25)
    assert workspace_cmd.run(args) == 0
    ws = Workspace.load(str(out))
    assert ws.robot == 'hexaslide_scaled' and ws.hard_expansion > 1.2
    assert (tmp_path / 'ws.png').stat().st_size > 10000
    args.kinetostatic_hard = 2.0
    assert workspace_cmd.run(args) == 2


@pytest.mark.parametrize('robot', ['hexaslide_scaled', 'hexaslide_full'])
def test_committed_workspace_files_are_valid(robot):
    ws = Workspace.load(str(ROOT / 'config' / f'workspace_{robot}.yaml'))
    geom = load_geometry(robot)
    np.testing.assert_allclose(ws.soft.centre, geom.home_position)
    assert ws.hard_expansion > 1.2
    PlannerConfig(ws).validate()       # the default limits can always brake inside the gap
    with pytest.raises(ValueError, match='gap'):
        PlannerConfig(ws, v_max=(2.0, 2.0, 2.0, 1.0, 1.0, 1.0)).validate()
