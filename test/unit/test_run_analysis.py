"""Transparency analysis of a run: a robot that reproduces the ideal motion with a pure delay
must come out as unity gain and exactly that delay (independent construction of 'achieved');
a segment with lost force samples is left out, and force lost everywhere is not measurable."""
import numpy as np
import pytest

from hil_core.admittance.lti_model import LtiAdmittanceModel, matrices_from_frequency
from hil_core.transparency.run_analysis import NotMeasurable, analyse_run

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


def test_run_analysis_excludes_segments_with_force_gaps():
    from hil_core.admittance.ideal_response import ideal_response
    model = _model(3.0)
    t = np.arange(0, 16.0, 0.0025)
    w = _impulses(t, [1.0, 6.0, 11.0], width=0.03)
    ideal = ideal_response(model, t, w)
    poses = np.tile(HOME, (t.size, 1))
    poses[:, 0] = np.interp(t - 0.015, t, ideal.poses[:, 0], left=HOME[0])
    full = analyse_run(model, t, w, t, poses, force_period=0.0025, pose_period=0.0025)
    assert full.numbers()['segments'] == 3 and full.excluded_segments == 0
    hole = (t > 6.5) & (t < 6.52)                        # 7 force samples lost in the 2nd segment
    part = analyse_run(model, t[~hole], w[~hole], t, poses, force_period=0.0025, pose_period=0.0025)
    n = part.numbers()
    assert n['segments'] == 2 and n['excluded_segments'] == 1 and n['force_gaps'] == 1
    assert n['coherence_min_11hz'] is not None
    assert n['delay_ms_11hz'] == pytest.approx(15.0, abs=0.05)
    every = np.ones(t.size, bool)
    every[::3] = False                                  # a third of the force lost everywhere
    with pytest.raises(NotMeasurable, match='gap'):
        analyse_run(model, t[every], w[every], t, poses, force_period=0.0025, pose_period=0.0025)
