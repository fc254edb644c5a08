"""G-code subset parser and the S-curve path generator of the hybrid robot."""
from pathlib import Path

import numpy as np
import pytest

from hil_core.hybrid5.gcode import GcodeError, parse, parse_file
from hil_core.hybrid5.params import load_params
from hil_core.hybrid5.trajectory import PathTrajectory, s_curve

AGH = Path(__file__).resolve().parents[2] / 'config' / 'gcode' / 'agh.nc'


def path_of(segs, Ts=1e-4, a=1.0, j=50.0):
    return PathTrajectory(segs, Ts, a, j, angular_speed=1.0)


def test_lines_feed_units_and_incremental():
    segs = parse('G21 G90\nG1 X10 Y0 F600 (comment)\nG91 G1 X5 ; more\nG20 G1 Y1\nG0 Z1\nM30\nG1 X99')
    assert [s.kind for s in segs] == ['line'] * 4
    np.testing.assert_allclose(segs[0].end, [0.010, 0, 0])
    np.testing.assert_allclose(segs[1].end, [0.015, 0, 0])
    np.testing.assert_allclose(segs[2].end, [0.015, 0.0254, 0])   # G20: inches, still incremental
    assert segs[0].feed == pytest.approx(0.010)                       # 600 mm/min = 10 mm/s
    assert segs[2].feed == pytest.approx(0.010)                       # F converted when given (mm)
    assert segs[3].rapid and segs[3].feed == pytest.approx(5.0 / 60)  # default rapid 5 m/min
    assert len(segs) == 4                                             # nothing after M30


@pytest.mark.parametrize('plane, words, end, normal, sweep', [
    ('G17', 'G3 X-10 Y0 I-10 J0', (-0.01, 0, 0), 2, np.pi),            # CCW half circle in XY
    ('G17', 'G2 X-10 Y0 I-10 J0', (-0.01, 0, 0), 2, -np.pi),
    ('G18', 'G3 X0 Z10 I-10 K0', None, 1, None),                       # ZX plane, normal Y
    ('G19', 'G2 Y0 Z10 J-10 K0', None, 0, None),                       # YZ plane, normal X
])
def test_arcs_in_each_plane(plane, words, end, normal, sweep):
    start = 'X10 Y0 Z0' if plane != 'G19' else 'X0 Y10 Z0'
    segs = parse(f'G21 {plane}\nG0 {start}\nG1 F1000\n{words}')
    arc = segs[-1]
    assert arc.kind == 'arc' and arc.axes[2] == normal and arc.radius == pytest.approx(0.01)
    if sweep is not None:
        assert arc.sweep == pytest.approx(sweep)
    tr = path_of(segs[-1:])
    (p, v, a), _ = tr.sample_cycles(np.arange(tr.n_cycles))
    np.testing.assert_allclose(p[-1], arc.end, atol=1e-12)           # reaches the end point
    r = np.linalg.norm(np.delete(p - arc.center, normal, axis=1), axis=1)
    np.testing.assert_allclose(r, 0.01, atol=1e-12)                   # stays on the circle
    # direction: G3 turns positively about the plane normal (right-handed a, b, n)
    a_, b_, n_ = arc.axes
    cross = (p[1:, a_] - arc.center[a_]) * (p[:-1, b_] - arc.center[b_]) \
        - (p[1:, b_] - arc.center[b_]) * (p[:-1, a_] - arc.center[a_])
    assert np.sign(cross[cross != 0]).mean() == (1 if 'G2' in words else -1)


def test_full_circle_and_helix():
    segs = parse('G21 G17\nG0 X10\nG3 X10 Y0 Z5 I-10 J0 F1000')
    arc = segs[-1]
    assert arc.sweep == pytest.approx(2 * np.pi)
    tr = path_of([arc])
    (p, _, _), _ = tr.sample_cycles(np.arange(tr.n_cycles))
    np.testing.assert_allclose(p[-1], [0.01, 0, 0.005], atol=1e-12)
    assert p[:, 2].max() == pytest.approx(0.005)


@pytest.mark.parametrize('program, line, what', [
    ('G21\nG1 X1 F100\nG4 P1', 3, 'unsupported G4'),
    ('G21\nG1 X1 Y2 F100\nG1 X1 Q3', 3, 'unsupported word Q'),
    ('G21\nG1 X1\n', 2, 'feed move before any F'),
    ('G21\nX1\n', 2, 'without a motion mode'),
    ('G21\nG1 F100 X10\nG2 X0 Y5 I-10 J0', 3, 'not on the arc'),
    ('G21\nG1 F100 X10\nG2 X-10 R10', 3, 'R-format'),
    ('G21\nG1 F100 X10\nG18 G2 X-10 I-10 J0', 3, 'centre offsets'),
    ('G21\nG1 X1 F0', 2, 'feed must be > 0'),
    ('G21\nG1 X1 X2 F10', 2, 'twice'),
    ('G21\nG1 X1..2 F10', 2, 'cannot read'),
    ('G21\nG1 X1 F10 (open', 2, 'unbalanced'),
    ('G21\nG1 X1 F10\nM7', 3, 'unsupported M7'),
])
def test_bad_lines_rejected_with_line_number(program, line, what):
    with pytest.raises(GcodeError) as err:
        parse(program)
    assert err.value.line_no == line and what in str(err.value) and f'line {line}' in str(err.value)


def test_s_curve_limits_and_short_moves():
    for L in (1e-4, 2e-3, 0.05):
        pr = s_curve(L, 2.0 / 60, 1.0, 50.0)
        tr = path_of(parse(f'G21 G1 X{L * 1e3} F2000'))
        (p, v, a), _ = tr.sample_cycles(np.arange(tr.n_cycles))
        speed = v[:, 0]
        assert speed.max() <= pr.V + 1e-12 <= 2.0 / 60 + 1e-12
        assert np.abs(a[:, 0]).max() <= 1.0 + 1e-12
        jerk = np.diff(a[:, 0]) / 1e-4
        assert np.abs(jerk).max() <= 50.0 * (1 + 1e-6)
        assert p[-1, 0] == pytest.approx(L, abs=1e-15) and speed[-1] == 0 and speed[0] == 0
        np.testing.assert_allclose(np.concatenate([[0], np.cumsum(speed[1:] + speed[:-1]) * 0.5e-4]), p[:, 0],
                                   atol=1e-9)           # trapezoid integral of v == position


def test_agh_program_uses_three_planes_and_the_table():
    P = load_params()
    segs = parse_file(AGH, P.trajectory.rapid_feed)
    arcs = [s for s in segs if s.kind == 'arc']
    assert {a.axes[2] for a in arcs} == {1, 0}                        # G18 (G) and G19 (H) arcs
    feed = [s for s in segs if not s.rapid]
    assert all(s.feed == pytest.approx(2.0 / 60) for s in feed)      # 2 m/min, as the seed
    assert any(np.any(s.ang1 != s.ang0) for s in segs)                # table moves included
    tr = PathTrajectory(segs, P.Ts, P.trajectory.a_max, P.trajectory.j_max, 1.0, P.work_origin)
    ks = np.arange(0, tr.n_cycles, 7)
    (p, v, a), (g, gd, gdd) = tr.sample_cycles(ks)
    for k in ks[::997]:                                               # per-cycle form == vectorised
        (p1, v1, a1), (g1, _, _) = tr.sample_cycle(k)
        i = np.searchsorted(ks, k)
        np.testing.assert_array_equal(np.concatenate([p1, v1, a1, g1]), np.concatenate([p[i], v[i], a[i], g[i]]))
    # 3.3 um between samples at 2 m/min (seed): the step never exceeds v_max * Ts
    (pf, _, _), _ = tr.sample_cycles(np.arange(tr.n_cycles))
    assert np.linalg.norm(np.diff(pf, axis=0), axis=1).max() <= 5.0 / 60 * P.Ts + 1e-12
