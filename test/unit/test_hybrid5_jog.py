"""The operator's commands of the hybrid robot in hil_core: a jog (``parse_jog``, the program
parser on one relative G-code line; ``Hybrid5Motion.jog``) and a new program
(``Hybrid5Motion.set_path``). A jog in IDLE moves the held pose by its displacement at its feed
(the S-curve's top speed never above it) and holds; the next HOMING starts from where it ended.
Refused with the reason: outside IDLE, while moving, below the base plane, an arc, no feed."""
import math
from pathlib import Path

import numpy as np
import pytest

from hil_core.hybrid5 import kinematics as kin
from hil_core.hybrid5.gcode import parse, parse_file, parse_jog
from hil_core.hybrid5.motion import Hybrid5Motion
from hil_core.hybrid5.params import load_params
from hil_core.hybrid5.trajectory import PathTrajectory

P = load_params()
AGH = Path(__file__).resolve().parents[2] / 'config' / 'gcode' / 'agh.nc'
HOME = np.array([0.0, 0.0, 0.85, 0.0, 0.0])
DEC = [1.0, 1.0, 1.0, 5.0, 5.0]
T = P.trajectory


def _path(segments):
    return PathTrajectory(segments, P.Ts, T.a_max, T.j_max, math.radians(T.angular_feed) / 60, P.work_origin)


@pytest.fixture(scope='module')
def agh():
    return _path(parse_file(AGH, T.rapid_feed))


def _motion(path):
    m = Hybrid5Motion(P, path, HOME, 2.0, DEC, 0.01)
    l0 = kin.inverse(HOME[:3], P.R)
    m.cycle(0, 'IDLE', l0, HOME[3:])
    return m, l0


@pytest.mark.parametrize('text, dp_mm, dg_deg, feed_m_min', [
    ('X2 Y-1 F600', (2, -1, 0), (0, 0), 0.6),
    ('G0 Z-5', (0, 0, -5), (0, 0), T.rapid_feed),
    ('A5 C-10 F300', (0, 0, 0), (5, -10), 0.3),
    ('G20 X1 F10', (25.4, 0, 0), (0, 0), 0.254),
])
def test_parse_jog(text, dp_mm, dg_deg, feed_m_min):
    dp, dg, feed = parse_jog(text, T.rapid_feed)
    np.testing.assert_allclose(dp, np.array(dp_mm) * 1e-3, atol=1e-15)
    np.testing.assert_allclose(dg, np.radians(dg_deg), atol=1e-15)
    assert feed == pytest.approx(feed_m_min / 60)


@pytest.mark.parametrize('text, why', [
    ('X5', "jog: feed move before any F word: 'X5'"),
    ('G2 X1 Y1 I1 F100', 'one straight move (G0/G1) that moves, got 1 move(s) with an arc'),
    ('X1 F100\nX2', 'one G-code line'),
    ('', 'one G-code line'),
    ('X0 F100', 'got 0 move(s)'),
    ('Q5', "jog: unsupported word Q: 'Q5'"),
])
def test_bad_jogs_are_named(text, why):
    with pytest.raises(ValueError) as exc:
        parse_jog(text, T.rapid_feed)
    assert why in str(exc.value)


def test_a_jog_moves_the_held_pose_and_homing_starts_from_its_end(agh):
    m, l0 = _motion(agh)
    dp, dg, feed = parse_jog('X2 Y-1 A3 F600', T.rapid_feed)
    p1, g1 = m.jog(1, dp, dg, feed)
    np.testing.assert_allclose(p1, HOME[:3] + [0.002, -0.001, 0.0], atol=1e-15)
    refs = [m.cycle(k, 'IDLE', l0, HOME[3:])[0] for k in range(1, 6000)]
    assert m.phase.value == 'IDLE'
    p = np.array([r[2] for r in refs])
    np.testing.assert_allclose(p[-1], p1, atol=1e-12)                   # held at the jog's end
    np.testing.assert_allclose(refs[-1][1][0], g1, atol=1e-12)
    speed = np.linalg.norm(np.diff(p, axis=0), axis=1).max() / P.Ts
    assert speed <= feed * (1 + 1e-6)                                   # never above the jog's feed
    with pytest.raises(ValueError, match='still moving'):
        _jog_while_moving(agh, dp, dg, feed)
    # HOMING now moves from the jog's end to the program's start
    ref, _ = m.cycle(6000, 'HOMING', l0, HOME[3:])
    np.testing.assert_allclose(ref[2], p1, atol=1e-9)


def _jog_while_moving(path, dp, dg, feed):
    m, l0 = _motion(path)
    m.jog(1, dp, dg, feed)
    m.cycle(1, 'IDLE', l0, HOME[3:])
    m.jog(2, dp, dg, feed)


def test_jogs_refused_outside_idle_and_below_the_base(agh):
    m, l0 = _motion(agh)
    with pytest.raises(ValueError, match=r'z = -0\.0500 m, not above the base plane'):
        m.jog(1, [0, 0, -0.9], [0, 0], 0.01)
    m.cycle(1, 'HOMING', l0, HOME[3:])
    assert m.phase.value != 'IDLE'
    with pytest.raises(ValueError, match=f'a jog is taken in IDLE only .* now in {m.phase.value}'):
        m.jog(2, [0.001, 0, 0], [0, 0], 0.01)
    with pytest.raises(ValueError, match=f'a new program is taken in IDLE only .* now in {m.phase.value}'):
        m.set_path(_path(parse('G21 G90\nG1 X1 F100\n', T.rapid_feed)))
    with pytest.raises(ValueError, match='no control cycle yet'):
        Hybrid5Motion(P, agh, HOME, 2.0, DEC, 0.01).jog(0, [0.001, 0, 0], [0, 0], 0.01)
