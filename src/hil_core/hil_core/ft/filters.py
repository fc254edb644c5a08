"""Streaming low-pass (Butterworth) and mains notch for 6-channel wrench signals (seed 000, sec. 5).

The lab chain filters the F/T signals with a digital 2nd-order Butterworth low-pass at 40 Hz:
a low enough cut-off for the drives' 50 Hz (and multiples) noise, a high enough one for a
phase lag that is linear, i.e. a constant delay of about 6 ms, over the 0-7 Hz band of
interest. The design is scipy.signal's (``butter(..., output='sos')``, ``iirnotch``), in closed
form in ``hil_core.ft.filter_design`` (scipy.signal is its test oracle); the state is kept
between calls in the transposed direct form II of ``scipy.signal.sosfilt`` so that streaming
sample by sample or block by block gives the same numbers as one offline pass.
"""
from __future__ import annotations

import numpy as np

from hil_core.ft.filter_design import butter_lowpass_sos, notch_sos, sos_steady_state


def scipy_signal():
    """scipy.signal, imported on first use (the oracle's block pass, a chirp of the load
    profiles): its import takes about 2 s (calibration ~1 s), which neither the `hil` command
    nor an F/T node's start should pay for what they never use."""
    from scipy import signal
    return signal


def design_sos(order: int, cutoff_hz: float, sample_rate: float, notch_hz: float = 0.0,
               notch_q: float = 30.0) -> np.ndarray:
    """Second-order sections: Butterworth low-pass, then (if notch_hz > 0) a notch."""
    nyquist = 0.5 * sample_rate
    if not 0.0 < cutoff_hz < nyquist:
        raise ValueError(f'filter cutoff {cutoff_hz} Hz must be in (0, {nyquist}) for {sample_rate} Hz sampling')
    if not 1 <= int(order) <= 10:
        raise ValueError(f'filter order {order} must be 1..10')
    sos = butter_lowpass_sos(int(order), cutoff_hz, sample_rate)
    if notch_hz > 0.0:
        if not 0.0 < notch_hz < nyquist:
            raise ValueError(f'notch {notch_hz} Hz must be in (0, {nyquist})')
        if not notch_q > 0.0:
            raise ValueError(f'notch quality {notch_q} must be positive')
        sos = np.vstack([sos, notch_sos(notch_hz, notch_q, sample_rate)])
    return sos


def group_delay_s(sos: np.ndarray, freqs_hz, sample_rate: float) -> np.ndarray:
    """Analytic group delay (s) of a cascade of biquads at ``freqs_hz``.

    For a polynomial c(z^-1) = sum_k c_k z^-k the group delay is Re(sum_k k c_k z^-k / c(z^-1))
    samples; a section contributes numerator minus denominator, the cascade the sum.
    """
    w = 2.0 * np.pi * np.atleast_1d(np.asarray(freqs_hz, dtype=float)) / sample_rate
    z = np.exp(-1j * np.outer(w, np.arange(3)))          # (F, 3): z^-0, z^-1, z^-2
    k = np.arange(3)
    tau = np.zeros(w.shape)
    for sec in np.asarray(sos, dtype=float):
        for coeffs, sign in ((sec[:3], 1.0), (sec[3:], -1.0)):
            tau += sign * np.real((z * (k * coeffs)).sum(axis=1) / (z * coeffs).sum(axis=1))
    return tau / sample_rate


class StreamFilter:
    """Stateful SOS filter over ``channels`` parallel signals (axis 0 = time)."""

    def __init__(self, sos: np.ndarray, channels: int = 6):
        self.sos = np.ascontiguousarray(sos, dtype=float)
        self.channels = int(channels)
        self._zi_unit = sos_steady_state(self.sos)      # (S, 2) steady state for a unit input
        self.zi = np.zeros((self.sos.shape[0], 2, self.channels))
        self.initialised = False

    def reset(self, x0=None) -> None:
        """Zero state, or (x0 given) the steady state of a constant input x0: no start transient."""
        if x0 is None:
            self.zi[:] = 0.0
        else:
            self.zi[:] = self._zi_unit[:, :, None] * np.asarray(x0, dtype=float)[None, None, :]
        self.initialised = True

    def step(self, x) -> np.ndarray:
        """Filter one sample (6,) in place of the state; same arithmetic as sosfilt."""
        cur = np.array(x, dtype=float)
        zi = self.zi
        for s, (b0, b1, b2, _a0, a1, a2) in enumerate(self.sos):
            out = b0 * cur + zi[s, 0]
            zi[s, 0] = b1 * cur - a1 * out + zi[s, 1]
            zi[s, 1] = b2 * cur - a2 * out
            cur = out
        return cur

    def block(self, x) -> np.ndarray:
        """Filter a block (N, channels), continuing the state."""
        y, self.zi = scipy_signal().sosfilt(self.sos, np.asarray(x, dtype=float), axis=0, zi=self.zi)
        return y
