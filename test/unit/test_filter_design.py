"""hil_core.ft.filter_design against scipy.signal, its oracle: the Butterworth low-pass of every
order the F/T node accepts (1-10) has scipy's response and filters a signal as scipy's design
does; even orders and the notch have scipy's very coefficients (odd orders pair the extra zero
at the origin differently: the same filter); the steady state is sosfilt_zi's."""
import numpy as np
import pytest
from scipy import signal

from hil_core.ft.filter_design import butter_lowpass_sos, notch_sos, sos_steady_state
from hil_core.ft.filters import design_sos

CASES = [(order, cutoff, fs) for order in range(1, 11)
         for cutoff, fs in ((40.0, 1600.0), (5.0, 1000.0), (120.0, 400.0), (700.0, 1600.0), (2.0, 1600.0))]


@pytest.mark.parametrize('order, cutoff, fs', CASES)
def test_the_butterworth_low_pass_is_scipys(order, cutoff, fs):
    ours = butter_lowpass_sos(order, cutoff, fs)
    ref = signal.butter(order, cutoff, fs=fs, output='sos')
    assert ours.shape == ref.shape
    if order % 2 == 0:
        np.testing.assert_allclose(ours, ref, rtol=1e-9, atol=1e-300)
    freqs = np.linspace(0.0, 0.5 * fs, 200, endpoint=False)
    _, h_ours = signal.sosfreqz(ours, freqs, fs=fs)
    _, h_ref = signal.sosfreqz(ref, freqs, fs=fs)
    np.testing.assert_allclose(np.abs(h_ours), np.abs(h_ref), rtol=1e-8, atol=1e-12)
    np.testing.assert_allclose(h_ours, h_ref, rtol=1e-7, atol=1e-10)
    assert abs(h_ours[0]) == pytest.approx(1.0, abs=1e-9)                      # unity gain at DC
    x = np.random.default_rng(order).normal(size=(2000, 2))
    y_ours, y_ref = signal.sosfilt(ours, x, axis=0), signal.sosfilt(ref, x, axis=0)
    np.testing.assert_allclose(y_ours, y_ref, rtol=0, atol=1e-9 * np.abs(y_ref).max())


@pytest.mark.parametrize('f0, q, fs', [(50.0, 30.0, 1600.0), (60.0, 10.0, 1000.0), (100.0, 2.0, 400.0)])
def test_the_notch_is_scipys(f0, q, fs):
    ref = signal.tf2sos(*signal.iirnotch(f0, q, fs=fs))
    np.testing.assert_allclose(notch_sos(f0, q, fs), ref, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize('order, notch', [(1, 0.0), (2, 0.0), (2, 50.0), (5, 50.0), (10, 60.0)])
def test_the_steady_state_is_sosfilt_zi(order, notch):
    sos = design_sos(order, 40.0, 1600.0, notch)
    np.testing.assert_allclose(sos_steady_state(sos), signal.sosfilt_zi(sos), rtol=1e-9, atol=1e-12)
    # and it holds a unit input still: no start transient
    y, _ = signal.sosfilt(sos, np.ones(50), zi=sos_steady_state(sos))
    np.testing.assert_allclose(y, 1.0, atol=1e-9)


def test_a_bad_notch_quality_is_refused():
    with pytest.raises(ValueError, match='notch quality'):
        design_sos(2, 40.0, 1600.0, 50.0, 0.0)
    with pytest.raises(ValueError, match='notch quality'):
        design_sos(2, 40.0, 1600.0, 50.0, float('nan'))
