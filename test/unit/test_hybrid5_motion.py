"""Mode-aware reference of the hybrid robot (hil_core.hybrid5.motion), without ROS or plant."""
import math
from pathlib import Path

import numpy as np
import pytest

from hil_core.hybrid5 import kinematics as kin
from hil_core.hybrid5.gcode import parse_file
from hil_core.hybrid5.motion import Hybrid5Motion
from hil_core.hybrid5.params import load_params
from hil_core.hybrid5.trajectory import PathTrajectory

P = load_params()
AGH = Path(__file__).resolve().parents[2] / 'config' / 'gcode' / 'agh.nc'
HOME = [0.0, 0.0, 0.85, 0.0, 0.0]
DEC = [1.0, 1.0, 1.0, 5.0, 5.0]


@pytest.fixture(scope='module')
def path():
    t = P.trajectory
    return PathTrajectory(parse_file(AGH, t.rapid_feed), P.Ts, t.a_max, t.j_max,
                          math.radians(t.angular_feed) / 60, P.work_origin)


def run(m, modes, start_pose):
    l0, th0 = kin.inverse(np.asarray(start_pose[:3]), P.R), np.asarray(start_pose[3:])
    refs, events = [], []
    for k, mode in enumerate(modes):
        ref, ev = m.cycle(k, mode, l0, th0)
        refs.append(ref)
        events += [(k, e) for e, _ in ev]
    return refs, events


def test_homing_sync_running_return_home(path):
    m = Hybrid5Motion(P, path, HOME, 2.0, DEC, 0.01)
    start = [0.0, 0.0, 0.84, 0.0, 0.0]                   # 10 mm below the path start
    modes = ['IDLE'] * 10 + ['HOMING'] * 4000 + ['RUNNING'] * 1000 + ['RETURNING_HOME'] * 12000
    refs, events = run(m, modes, start)
    names = [e for _, e in events]
    assert names == ['homed', 'synchronized', 'home_reached']
    k_homed, k_sync = events[0][0], events[1][0]
    assert k_sync - k_homed == 100                       # sync_time 10 ms at 100 us
    np.testing.assert_allclose(refs[5][0][0], kin.inverse(np.array(start[:3]), P.R), atol=1e-15)  # IDLE holds
    (p0, _, _), _ = path.sample_cycle(0)
    np.testing.assert_allclose(refs[k_homed][2], p0, atol=1e-12)
    for k in (k_sync + 1, k_sync + 1300):                 # RUNNING follows the path from its cycle 0
        (p, _, _), _ = path.sample_cycle(k - k_sync)
        np.testing.assert_allclose(refs[k][2], p, atol=1e-15)
    np.testing.assert_allclose(refs[-1][2], HOME[:3], atol=1e-12)
    v = np.array([r[0][1] for r in refs])
    assert np.abs(np.diff(v, axis=0)).max() < 1e-3        # velocity continuous at every switch


def test_fault_brakes_to_rest_without_a_jump(path):
    m = Hybrid5Motion(P, path, HOME, 2.0, DEC, 0.01)
    modes = ['IDLE'] * 5 + ['HOMING'] * 2000 + ['RUNNING'] * 2000 + ['FAULT'] * 2000
    refs, events = run(m, modes, HOME)
    v = np.array([[*r[0][1], *r[1][1]] for r in refs])
    q = np.array([[*r[0][0], *r[1][0]] for r in refs])
    k_fault = 4005
    assert np.abs(v[k_fault - 1]).max() > 1e-3            # it was moving
    assert np.abs(v[-1]).max() == 0.0                     # at rest, held
    assert np.abs(np.diff(v, axis=0)).max() <= max(DEC) * P.Ts * 1.0001 + 1e-6
    assert np.abs(np.diff(q[k_fault:], axis=0)).max() < 1e-5
    assert 'home_reached' not in [e for _, e in events]


def test_home_must_be_above_the_base_plane(path):
    with pytest.raises(ValueError, match='below the base plane'):
        Hybrid5Motion(P, path, [0.0, 0.0, -0.5, 0.0, 0.0], 2.0, DEC, 0.01)
    with pytest.raises(ValueError, match='fault_deceleration'):
        Hybrid5Motion(P, path, HOME, 2.0, [1.0, 0.0, 1.0, 1.0, 1.0], 0.01)
