"""Seed 003 table 3: trajectory generation + inverse kinematics with derivatives in float32
vs float64 over every 10 kHz cycle of the AGH path; the seed's bound is 2 um for positions
and 10 urad for orientations."""
from pathlib import Path

import numpy as np

from hil_core.hybrid5.gcode import parse_file
from hil_core.hybrid5.params import load_params
from hil_core.hybrid5.study import reference_errors
from hil_core.hybrid5.trajectory import PathTrajectory

AGH = Path(__file__).resolve().parents[2] / 'config' / 'gcode' / 'agh.nc'


def test_float32_errors_over_the_agh_path_within_the_seed_bounds():
    P = load_params()
    t = P.trajectory
    tr = PathTrajectory(parse_file(AGH, t.rapid_feed), P.Ts, t.a_max, t.j_max,
                        np.radians(t.angular_feed) / 60, P.work_origin)
    err = reference_errors(P, tr)
    for i in (1, 2, 3):
        assert 0 < err[f'dl{i}'] < 2e-6          # float32 really differs, but within 2 um
        assert err[f'dv{i}'] < 1e-5              # m/s
    for i in (4, 5):
        assert 0 < err[f'dtheta{i}'] < 10e-6     # rad
    assert err['dp'] < 2e-6


def test_parameter_file_problems_are_named():
    import copy

    import pytest
    import yaml

    from hil_core.hybrid5.params import from_dict
    good = yaml.safe_load((AGH.parents[1] / 'hybrid5.yaml').read_text())
    from_dict(good)
    cases = [(('plant', 'm_p'), None, 'm_p'), (('plant', 'm_p'), float('nan'), 'm_p'),
             (('control', 'legs', 'Kp'), -1.0, 'Kp'), (('geometry', 'R'), 0.0, 'R > 0'),
             (('trajectory', 'j_max'), 0.0, 'trajectory'), (('control',), None, 'control')]
    for keys, value, what in cases:
        d = copy.deepcopy(good)
        node = d
        for k in keys[:-1]:
            node = node[k]
        if value is None:
            del node[keys[-1]]
        else:
            node[keys[-1]] = value
        with pytest.raises(ValueError, match=what):
            from_dict(d)
