"""The legs' travel (hil_core.hybrid5.leg_travel): a program, the homing move to its start and an
operator's jog that would take a leg outside the URDF's <limit lower upper> (urdf/hybrid5.urdf,
0.6-1.6 m) are refused before anything moves, naming the leg and the length.

The lengths are checked against an independent computation: a leg is the distance from its base
point (radius R at 90, 330 and 210 deg in the base plane, seed 003 eq. 4-6) to the platform point,
so straight up from home all three are sqrt(R^2 + z^2) and the upper limit is crossed at
z = sqrt(1.6^2 - R^2)."""
import math
from pathlib import Path

import numpy as np
import pytest

from hil_core.data_paths import urdf_file
from hil_core.hybrid5 import JOINT_NAMES, kinematics as kin
from hil_core.hybrid5.gcode import parse, parse_file
from hil_core.hybrid5.leg_travel import Stroke, check_move, check_path
from hil_core.hybrid5.motion import Hybrid5Motion
from hil_core.hybrid5.params import load_params
from hil_core.hybrid5.trajectory import PathTrajectory

P = load_params()
T = P.trajectory
AGH = Path(__file__).resolve().parents[2] / 'config' / 'gcode' / 'agh.nc'
HOME = np.array([0.0, 0.0, 0.85, 0.0, 0.0])
DEC = [1.0, 1.0, 1.0, 5.0, 5.0]
STROKE = Stroke.from_urdf(urdf_file('hybrid5.urdf').read_text(), JOINT_NAMES[:3])
Z_TOP = math.sqrt(1.6 ** 2 - P.R ** 2)          # straight above the centre: every leg at 1.6 m


def _legs(p):
    """Independent: distances from the base points to p."""
    base = [np.array([P.R * math.cos(math.radians(a)), P.R * math.sin(math.radians(a)), 0.0]) for a in (90, 330, 210)]
    return np.array([np.linalg.norm(np.asarray(p) - b) for b in base])


def _path(text: str) -> PathTrajectory:
    return PathTrajectory(parse(text, T.rapid_feed), P.Ts, T.a_max, T.j_max, math.radians(T.angular_feed) / 60,
                          P.work_origin)


def _held_motion(path):
    m = Hybrid5Motion(P, path, HOME, 2.0, DEC, 0.01, STROKE)
    m.cycle(0, 'IDLE', kin.inverse(HOME[:3], P.R), HOME[3:])
    return m


def test_the_stroke_is_the_urdfs_and_the_kinematics_agree_with_the_distances():
    assert STROKE.names == tuple(JOINT_NAMES[:3])
    assert list(STROKE.lower) == [0.6] * 3 and list(STROKE.upper) == [1.6] * 3
    for p in ([0.0, 0.0, 0.85], [0.05, -0.07, 0.9], [0.0, 0.0, Z_TOP]):
        np.testing.assert_allclose(kin.inverse(np.array(p), P.R), _legs(p), atol=1e-12)


def test_the_agh_program_and_its_homing_move_are_inside_the_travel():
    path = PathTrajectory(parse_file(AGH, T.rapid_feed), P.Ts, T.a_max, T.j_max, math.radians(T.angular_feed) / 60,
                          P.work_origin)
    check_path(path, P.R, STROKE)
    Hybrid5Motion(P, path, HOME, 2.0, DEC, 0.01, STROKE)          # configure's check: no ValueError


def test_a_program_that_climbs_past_the_top_is_refused_with_the_leg_and_where():
    # program zero is work_origin (z 0.85): Z+700 mm is z = 1.55 m, above Z_TOP (1.483 m)
    up = (1.55 - P.work_origin[2]) * 1e3
    path = _path(f'G21 G90\nG0 X0 Y0 Z0\nG1 Z{up:.0f} F2000\n')
    assert _legs([0.0, 0.0, 1.55]).min() > 1.6
    with pytest.raises(ValueError, match=r'the program takes hybrid5_leg_1 to 1\.60\d+ m at [0-9.]+ s of its '
                                         r'path .*outside its travel 0\.6-1\.6 m'):
        check_path(path, P.R, STROKE)
    # and the motion refuses it as a new program, keeping the one it has
    m = _held_motion(_path('G21 G90\nG0 X0 Y0 Z0\nG1 X10 F2000\n'))
    before = m.path
    with pytest.raises(ValueError, match='outside its travel'):
        m.set_path(path)
    assert m.path is before


def test_a_jog_past_the_top_is_refused_and_one_below_it_is_taken():
    m = _held_motion(_path('G21 G90\nG0 X0 Y0 Z0\nG1 X10 F2000\n'))
    below = Z_TOP - 0.85 - 1e-3                       # 1 mm under the top: every leg 1.6 m minus ~1 mm
    too_far = Z_TOP - 0.85 + 1e-3
    with pytest.raises(ValueError, match=r'the jog takes hybrid5_leg_1 to 1\.600\d+ m at x y z'):
        m.jog(1, [0.0, 0.0, too_far], [0.0, 0.0], 0.01)
    p1, _ = m.jog(1, [0.0, 0.0, below], [0.0, 0.0], 0.01)
    assert _legs(p1).max() < 1.6


def test_a_straight_move_is_judged_along_it_not_only_at_its_ends():
    # both ends inside the travel, the middle passes 1 mm above leg 1's base point: that leg is
    # far shorter than its lower limit there
    b = np.array([0.0, P.R, 0.0])                     # leg 1's base point (90 deg)
    p0, p1 = b + [-0.7, 0.0, 0.001], b + [0.7, 0.0, 0.001]
    for end in (p0, p1):
        assert np.all((_legs(end) >= 0.6) & (_legs(end) <= 1.6)), _legs(end)
    assert _legs(b + [0.0, 0.0, 0.001])[0] < 0.6
    with pytest.raises(ValueError, match=r'the jog takes hybrid5_leg_1 to 0\.\d+ m'):
        check_move(p0, p1, P.R, STROKE)
    far = b + [0.0, 0.0, 0.9]                         # the same move 0.9 m higher: inside
    check_move(far + [-0.3, 0, 0], far + [0.3, 0, 0], P.R, STROKE)
