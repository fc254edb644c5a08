"""Compiled hybrid5 cycle (hybrid5.tracking_kernel) against the Python oracle (compiled=False).

Bounds: the compiled code does the oracle's float64 operations in the same order, except
that libm's sin/cos/pow may differ from numpy's vectorised ones or from sqrt by one ulp. So
every value agrees to 1e-12 of the scale of the quantities it is computed from: lengths and
positions ~1 m, forces ~1e5 N (leg errors e = l_d - l are differences of ~1 m lengths: their
bound is 1e-12 m, not 1e-12 of the ~1e-5 m error itself).
"""
import dataclasses
import math
from pathlib import Path

import numpy as np
import pytest

from hil_core.hybrid5 import tracking_kernel as ck
from hil_core.hybrid5 import kinematics as kin
from hil_core.hybrid5.gcode import parse, parse_file
from hil_core.hybrid5.motion import _Cartesian
from hil_core.hybrid5.params import load_params
from hil_core.hybrid5.tracking import HybridController, simulate
from hil_core.hybrid5.trajectory import PathTrajectory

ROOT = Path(__file__).resolve().parents[2]
P = load_params()
RTOL = 1e-12


def make_path(segments, params=P):
    t = params.trajectory
    return PathTrajectory(segments, params.Ts, t.a_max, t.j_max, math.radians(t.angular_feed) / 60,
                          params.work_origin)


@pytest.fixture(scope='module')
def agh():
    return make_path(parse_file(ROOT / 'config' / 'gcode' / 'agh.nc', P.trajectory.rapid_feed))


def cycles_of_every_segment(path, per_segment=12, seed=0):
    """Segment starts, ends, the cycles around them, random cycles inside, and out-of-range k."""
    rng = np.random.default_rng(seed)
    ks = [-5, 0, path.n_cycles - 1, path.n_cycles, path.n_cycles + 100]
    for a, b in zip(path.k0[:-1], path.k0[1:]):
        ks += [a, a + 1, b - 2, b - 1, *rng.integers(a, b, size=per_segment)]
    return [int(k) for k in ks]


def test_path_sampler_matches_sample_cycle(agh):
    table = ck.PathTable(agh)
    assert set(table.kind.tolist()) == {0, 1}                  # lines and arcs both covered
    out = np.empty(15)
    for k in cycles_of_every_segment(agh):
        ck.sample_kernel(k, table.Ts, table.n_cycles, table.k0, table.prof, table.kind, table.axes, table.geo, out)
        (p, v, a), (g, gd, gdd) = agh.sample_cycle(k)
        for got, want, scale in ((out[0:3], p, 1.0), (out[3:6], v, 0.1), (out[6:9], a, 1.0),
                                 (out[9:11], g, 1.0), (out[11:13], gd, 1.0), (out[13:15], gdd, 1.0)):
            assert np.max(np.abs(got - want)) <= RTOL * scale, k


def test_reference_matches_desired_and_motion(agh):
    fast, ref = HybridController(P, agh), HybridController(P, agh, compiled=False)
    assert fast.compiled and not ref.compiled
    cart = _Cartesian(agh, 100, P.R)
    for k in cycles_of_every_segment(agh, per_segment=4, seed=1):
        a, b = fast.desired(k), ref.desired(k)
        (p, v, acc), (g, gd, gdd) = agh.sample_cycle(k - 100)
        r = kin.ik_derivatives_scalar(*p.tolist(), *v.tolist(), *acc.tolist(), P.R)
        c = cart.ref(k)
        for x, y in zip([*a[0], *a[1], a[2]], [*b[0], *b[1], b[2]]):
            assert np.max(np.abs(np.asarray(x, float) - np.asarray(y, float))) <= RTOL
        assert np.max(np.abs(np.r_[c[0][0], c[0][1], c[0][2]] - np.r_[r])) <= RTOL
        assert np.max(np.abs(np.r_[c[1][0], c[1][1], c[1][2]] - np.r_[g, gd, gdd])) <= RTOL


def compare_outputs(a, b):
    scale = {'F': 1e5, 'tau': 1e5, 'e_leg': 1.0, 'e_table': 1.0}
    for name, s in scale.items():
        x, y = np.asarray(getattr(a, name), float), np.asarray(getattr(b, name), float)
        assert np.max(np.abs(x - y)) <= RTOL * max(s, np.max(np.abs(y))), name
    for name in ('l_d', 'v_d', 'a_d', 'th_d', 'w_d', 'e_d', 'p_d'):
        x, y = np.asarray(getattr(a, name), float), np.asarray(getattr(b, name), float)
        assert np.max(np.abs(x - y)) <= RTOL, name


VARIANTS = {
    'seed': P,
    'no_encoder_quantisation': dataclasses.replace(P, plant=dataclasses.replace(P.plant, encoder_leg=0.0,
                                                                                encoder_table=0.0)),
}


@pytest.mark.parametrize('variant', sorted(VARIANTS))
@pytest.mark.parametrize('plain', [False, True])
@pytest.mark.parametrize('with_reference', [False, True])
def test_cycles_match_on_measured_joints_near_the_path(agh, variant, plain, with_reference):
    """A sequence of cycles (state carried: integrators, encoder counts, reversal timers) with
    measured joints within +-50 um / +-100 urad of the reference, in the path's order."""
    prm = VARIANTS[variant]
    fast = HybridController(prm, agh, plain_integrator=plain)
    ref = HybridController(prm, agh, plain_integrator=plain, compiled=False)
    rng = np.random.default_rng(4)
    ks = np.sort(rng.choice(agh.n_cycles, size=1500, replace=False))
    ks[:300] = np.arange(300) + agh.k0[3]             # consecutive cycles through a segment start
    for k in ks:
        (l_d, _, _), (th_d, _, _), _ = ref.desired(int(k))
        l = np.asarray(l_d) + rng.uniform(-50e-6, 50e-6, 3)
        th = np.asarray(th_d) + rng.uniform(-1e-4, 1e-4, 2)
        desired = ref.desired(int(k)) if with_reference else None
        compare_outputs(fast.cycle(int(k), l, th, desired), ref.cycle(int(k), l, th, desired))
    assert fast.boosts == ref.boosts and (plain or fast.boosts > 0)
    fast.reset()
    ref.reset()
    compare_outputs(fast.cycle(5, [1.0, 1.0, 1.0], [0.0, 0.0]), ref.cycle(5, [1.0, 1.0, 1.0], [0.0, 0.0]))


def test_legs_without_assembly_give_nan_in_both():
    fast, ref = HybridController(P, None), HybridController(P, None, compiled=False)
    hold = ((1.0, 1.0, 1.0), (0.0, 0.0, 0.0), (0.0, 0.0, 0.0)), ([0.0, 0.0], [0.0, 0.0], [0.0, 0.0]), np.zeros(3)
    a, b = fast.cycle(0, [0.1, 0.1, 5.0], [0.0, 0.0], hold), ref.cycle(0, [0.1, 0.1, 5.0], [0.0, 0.0], hold)
    assert np.all(np.isnan(a.F)) and np.all(np.isnan(b.F))
    assert np.array_equal(a.tau, b.tau)


def test_closed_loop_excerpt_matches():
    """The closed loop of test_hybrid5_control's A apex on the plant: one-ulp differences
    stay one-ulp sized through the stable loop (bound 1e-12 m on positions, 1e-9 relative
    on forces, which pass through the integrator's gain)."""
    tr = make_path(parse('G21 G90\nG0 X-62 Y12 Z0\nG1 X-60 Y20 F2000\nG1 X-58 Y12\n', P.trajectory.rapid_feed))
    a = simulate(P, tr, n_cycles=3000, settle_cycles=500)
    b = simulate(P, tr, n_cycles=3000, settle_cycles=500, compiled=False)
    assert np.max(np.abs(a.p - b.p)) <= 1e-12
    assert np.max(np.abs(a.e_leg - b.e_leg)) <= 1e-12
    assert np.max(np.abs(a.F - b.F)) <= 1e-9 * np.max(np.abs(b.F))
    assert np.max(np.abs(b.e_leg)) > 1e-8                     # the loop did work
