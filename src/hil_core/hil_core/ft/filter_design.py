"""The F/T chain's filter designs in closed form: the digital Butterworth low-pass as
scipy.signal's ``butter(N, fc, fs=fs, output='sos')`` designs it, scipy's ``iirnotch``, and the
steady state of a cascade for a unit input (``sosfilt_zi``).

Kept here rather than taken from scipy.signal because importing scipy.signal takes about 2 s
(calibration ~1 s: it pulls in scipy.stats), and every process with an F/T node paid it at its
start for three formulas. scipy.signal stays their test oracle (test/unit/test_filter_design.py:
the same coefficients for even orders and the notch, the same response and output for every
order 1-10).

The Butterworth design, step by step as scipy does it (its ``buttap``, ``lp2lp_zpk`` and
``bilinear_zpk``, at its normalised sampling rate 2):

* analog prototype poles ``-exp(i pi m / 2N)``, ``m = -N+1, -N+3, ..., N-1``, gain 1;
* scaled to the pre-warped cut-off ``w = 4 tan(pi fc / fs)``: poles ``w p``, gain ``w^N``;
* bilinear transform: poles ``(4 + p) / (4 - p)``, N zeros at -1, gain ``k / prod(4 - p)``.

Sections: each conjugate pair of poles with two zeros at -1 (``[1, 2, 1] / [1, -2 Re p, |p|^2]``),
for an odd order the real pole with one zero at -1 (``[1, 1, 0] / [1, -p, 0]``), ordered as
scipy's ``zpk2sos`` orders them (the pole farthest from the unit circle first, the one closest
last), the gain on the first. (For an odd order scipy pairs the extra zero at the origin with
another pole: the same filter, the sections differ.)
"""
from __future__ import annotations

import math

import numpy as np


def butter_lowpass_sos(order: int, cutoff_hz: float, sample_rate: float) -> np.ndarray:
    """Second-order sections (n, 6) of the digital Butterworth low-pass of ``order`` (1-10)."""
    n = int(order)
    warped = 4.0 * math.tan(math.pi * cutoff_hz / sample_rate)
    m = np.arange(-n + 1, n, 2)
    poles_analog = -np.exp(1j * np.pi * m / (2 * n)) * warped
    poles = (4.0 + poles_analog) / (4.0 - poles_analog)
    gain = warped ** n * float(np.real(1.0 / np.prod(4.0 - poles_analog)))
    sections = []
    for p in poles:
        if abs(p.imag) <= 1e-12 * abs(p):                 # the real pole of an odd order
            sections.append((abs(1.0 - abs(p.real)), [1.0, 1.0, 0.0, 1.0, -p.real, 0.0]))
        elif p.imag > 0.0:                                 # one of each conjugate pair
            sections.append((abs(1.0 - abs(p)), [1.0, 2.0, 1.0, 1.0, -2.0 * p.real, p.real ** 2 + p.imag ** 2]))
    sections.sort(key=lambda s: -s[0])                     # farthest from the unit circle first
    sos = np.array([row for _, row in sections], dtype=float)
    sos[0, :3] *= gain
    return sos


def notch_sos(notch_hz: float, quality: float, sample_rate: float) -> np.ndarray:
    """One section (1, 6): scipy's ``iirnotch`` (-3 dB bandwidth ``notch_hz / quality``)."""
    w0 = 2.0 * math.pi * notch_hz / sample_rate
    beta = math.tan(0.5 * w0 / quality)                    # (sqrt(1 - gb^2) / gb = 1 at gb = 1/sqrt(2))
    gain = 1.0 / (1.0 + beta)
    cos_w0 = math.cos(w0)
    return np.array([[gain, -2.0 * gain * cos_w0, gain, 1.0, -2.0 * gain * cos_w0, 2.0 * gain - 1.0]])


def sos_steady_state(sos: np.ndarray) -> np.ndarray:
    """(n, 2) states of the transposed direct form II that a unit input holds still (scipy's
    ``sosfilt_zi``): per section ``z0 = G - b0``, ``z1 = b2 - a2 G`` with G its DC output, each
    section scaled by the DC gain of the sections before it."""
    sos = np.asarray(sos, dtype=float)
    zi = np.empty((sos.shape[0], 2))
    scale = 1.0
    for s, (b0, b1, b2, a0, a1, a2) in enumerate(sos):
        b0, b1, b2, a1, a2 = b0 / a0, b1 / a0, b2 / a0, a1 / a0, a2 / a0
        dc = (b0 + b1 + b2) / (1.0 + a1 + a2)
        zi[s] = scale * (dc - b0), scale * (b2 - a2 * dc)
        scale *= dc
    return zi
