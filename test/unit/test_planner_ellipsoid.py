"""Modified ellipsoid (seed 001 eq. 3-7): angles, radius, inside test, surface frame, degenerate directions."""
import numpy as np
import pytest

from hil_core.planner.ellipsoid import ModifiedEllipsoid, direction, spherical_angles

ELL = ModifiedEllipsoid((0.09, 0.07, 0.06, 0.05, 0.04, 0.035), 3.0, (0.0, 0.0, 0.15))


def test_spherical_angles_round_trip_and_degenerate_cases():
    rng = np.random.default_rng(0)
    p = rng.normal(size=(2000, 3))
    r, phi, theta = spherical_angles(p)
    assert np.all((phi >= -np.pi / 2) & (phi <= np.pi / 2))
    assert np.all((theta >= -np.pi / 2) & (theta < 1.5 * np.pi))
    np.testing.assert_allclose(direction(phi, theta) * r[:, None], p, atol=1e-12)
    # seed eq. 5-7 literally where they are defined (P_x != 0)
    sel = np.abs(p[:, 0]) > 1e-3
    np.testing.assert_allclose(np.tan(phi[sel]), p[sel, 1] / p[sel, 0], rtol=1e-9, atol=1e-9)
    pxl = np.sign(p[sel, 0]) * np.hypot(p[sel, 0], p[sel, 1])
    np.testing.assert_allclose(np.tan(theta[sel]), p[sel, 2] / pxl, rtol=1e-8, atol=1e-8)
    # degenerate: axes and the centre give finite angles that still reproduce the point
    axes = np.array([[1, 0, 0], [-1, 0, 0], [0, 1, 0], [0, -1, 0], [0, 0, 1], [0, 0, -1], [0, 0, 0.0]])
    r, phi, theta = spherical_angles(axes)
    assert np.all(np.isfinite(phi)) and np.all(np.isfinite(theta))
    np.testing.assert_allclose(direction(phi, theta) * r[:, None], axes, atol=1e-15)


def test_radius_along_half_axes_and_inside_test_against_brute_force():
    axes = np.array([[1, 0, 0], [-1, 0, 0], [0, 1, 0], [0, -1, 0], [0, 0, 1], [0, 0, -1.0]])
    np.testing.assert_allclose(ELL.radius(axes), ELL.semi_axes, rtol=1e-14)
    rng = np.random.default_rng(1)
    p = rng.uniform(-0.12, 0.12, size=(5000, 3))
    u = p / np.linalg.norm(p, axis=1, keepdims=True)
    inside = np.linalg.norm(p, axis=1) <= ELL.radius(u)
    assert np.array_equal(ELL.inside(p), inside)
    np.testing.assert_allclose([ELL.level_point(q) for q in p[:200]], ELL.level(p[:200]), rtol=1e-13)
    # the seed's form r_e = f(a, phi, theta) agrees with the direction form
    _, phi, theta = spherical_angles(p)
    np.testing.assert_allclose(ELL.radius_at(phi, theta), ELL.radius(u), rtol=1e-12)
    # ordinary ellipsoid: closed form
    e2 = ModifiedEllipsoid((0.1, 0.1, 0.07, 0.07, 0.05, 0.05), 2.0)
    closed = 1.0 / np.sqrt((u[:, 0] / 0.1) ** 2 + (u[:, 1] / 0.07) ** 2 + (u[:, 2] / 0.05) ** 2)
    np.testing.assert_allclose(e2.radius(u), closed, rtol=1e-13)


def test_normal_is_the_cross_product_of_the_seed_tangents_and_points_outward():
    rng = np.random.default_rng(2)
    u = rng.normal(size=(500, 3))
    u /= np.linalg.norm(u, axis=1, keepdims=True)
    s = u * ELL.radius(u)[:, None]
    t_th, t_ph, n = ELL.tangent_frame(s)
    # orthonormal, right-handed
    for a in (t_th, t_ph, n):
        np.testing.assert_allclose(np.linalg.norm(a, axis=1), 1.0, atol=1e-9)
    np.testing.assert_allclose(np.sum(t_th * n, axis=1), 0.0, atol=1e-9)
    np.testing.assert_allclose(np.sum(t_ph * n, axis=1), 0.0, atol=1e-9)
    np.testing.assert_allclose(np.cross(t_th, t_ph), n, atol=1e-9)
    # normal = numeric gradient of the level function (independent computation)
    h = 1e-7
    grad = np.stack([(ELL.level(s + h * e) - ELL.level(s - h * e)) / (2 * h) for e in np.eye(3)], axis=1)
    np.testing.assert_allclose(n, grad / np.linalg.norm(grad, axis=1, keepdims=True), atol=1e-6)
    assert np.all(np.sum(n * u, axis=1) > 0)                      # outward
    # the seed's t_theta x t_phi (numeric partials of eq. 4) is parallel to n
    _, phi, theta = spherical_angles(s)
    d = 1e-6
    dth = (ELL._surface(phi, theta + d) - ELL._surface(phi, theta - d)) / (2 * d)
    dph = (ELL._surface(phi + d, theta) - ELL._surface(phi - d, theta)) / (2 * d)
    c = np.cross(dth, dph)
    ok = np.linalg.norm(c, axis=1) > 1e-6
    c = c[ok] / np.linalg.norm(c[ok], axis=1, keepdims=True)
    np.testing.assert_allclose(np.abs(np.sum(c * n[ok], axis=1)), 1.0, atol=1e-5)


@pytest.mark.parametrize('p', [[0.09, 0, 0], [0, 0, 0.04], [0, 0, -0.035], [0, -0.05, 0], [0, 0, 0.0]])
def test_degenerate_points_have_a_finite_frame(p):
    t_th, t_ph, n = ELL.tangent_frame(np.array(p, dtype=float))
    for a in (t_th, t_ph, n):
        assert np.all(np.isfinite(a)) and abs(np.linalg.norm(a) - 1) < 1e-9
    if np.any(p):
        np.testing.assert_allclose(n, np.sign(p) * (np.abs(p) > 0), atol=1e-12)   # axis normal = axis


def test_bad_coefficients_are_refused():
    for axes, n in (((0.1,) * 5, 2.0), ((0.1, 0.1, -0.1, 0.1, 0.1, 0.1), 2.0), ((0.1,) * 6, 1.5),
                    ((0.1, 0.1, np.nan, 0.1, 0.1, 0.1), 2.0)):
        with pytest.raises(ValueError):
            ModifiedEllipsoid(axes, n)


def test_scalar_paths_match_the_vectorised_ones():
    rng = np.random.default_rng(9)
    p = np.vstack([rng.normal(scale=0.05, size=(300, 3)), np.eye(3) * 0.04, -np.eye(3) * 0.03])
    np.testing.assert_allclose([ELL.normal_point(q) for q in p], ELL.normal(p), atol=1e-14)
    np.testing.assert_allclose([ELL.level_point(q) for q in p], ELL.level(p), rtol=1e-14)
    assert np.array_equal(ELL.normal_point(np.zeros(3)), [0.0, 0.0, 1.0])
