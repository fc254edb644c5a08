"""Transparency analysis of a run: a robot that reproduces the ideal motion with a pure delay
must come out as unity gain and exactly that delay (independent construction of 'achieved')."""
import numpy as np
import pytest

from hil_core.admittance.lti_model import LtiAdmittanceModel, matrices_from_frequency
from hil_core.transparency.run_analysis import analyse_run

HOME = np.array([0.0, 0.0, 0.1543, 0.0, 0.0, 0.0, 1.0])


def _model(freq=6.0):
    M, D, K = matrices_from_frequency([freq] * 6, [0.2] * 6, [5000.0] * 3 + [200.0] * 3)
    return LtiAdmittanceModel(M, D, K, 0.0025, home=HOME)


def _impulses(t, onsets, amplitude=40.0, width=0.02):
    f = np.zeros((t.size, 6))
    for t0 in onsets:
        inside = (t >= t0) & (t < t0 + width)
        f[inside, 0] = amplitude * np.sin(np.pi * (t[inside] - t0) / width)
    return f


@pytest.mark.parametrize('delay', [0.016, 0.0105])
def test_pure_delay_is_found_with_unity_gain(delay):
    model = _model()
    tf = np.arange(0, 24.0, 0.000625)                    # raw force at the servo rate
    wrench = _impulses(tf, [1.0, 6.0, 11.0, 16.0])
    from hil_core.admittance.ideal_response import ideal_response
    ideal = ideal_response(model, tf, wrench)
    tp = np.arange(0.1, 23.9, 0.0025)                    # achieved poses at 400 Hz
    achieved = np.tile(HOME, (tp.size, 1))
    achieved[:, 0] = np.interp(tp - delay, ideal.times, ideal.poses[:, 0])   # model output at its stamps, delayed
    run = analyse_run(model, tf, wrench, tp, achieved, axis=0)
    n = run.numbers()
    assert run.impulsive and n['segments'] == 4
    assert abs(n['delay_ms_11hz'] - delay * 1e3) < 0.1
    assert abs(n['delay_ms_7hz'] - delay * 1e3) < 0.1
    assert n['gain_dev_db_11hz'] < 0.1
    assert n['phase_rmse_deg_11hz'] < 0.5
    assert n['shifted_rmse'] < 0.1 * n['unshifted_rmse']


def test_too_short_record_and_bad_shapes_are_refused():
    model = _model()
    t = np.arange(0, 1.0, 0.0025)
    with pytest.raises(ValueError, match='shorter than one segment'):
        analyse_run(model, t, np.zeros((t.size, 6)), t, np.tile(HOME, (t.size, 1)))
    with pytest.raises(ValueError, match='wrenches'):
        analyse_run(model, t, np.zeros((t.size, 5)), t, np.tile(HOME, (t.size, 1)))
