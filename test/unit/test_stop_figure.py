"""The drives' own figure of their stop (hil_core.supervision.stop_figure): the peak second
difference of positions, against a closed-form brake and numpy's second difference."""
import numpy as np
import pytest

from hil_core.supervision.stop_figure import StopPeak

T_NS = 2_500_000
T = T_NS * 1e-9


def test_constant_deceleration_brake_is_its_deceleration():
    # cruise at v, then brake at a (closed form x = x0 + v t - a t^2 / 2) to rest and hold
    v, a = np.array([0.02, -0.01]), 5.0
    peak = StopPeak(T_NS)
    stop_k = 40
    t_stop = np.abs(v).max() / a
    positions = []
    for k in range(200):
        t = k * T
        tb = min(max(t - stop_k * T, 0.0), t_stop)
        cruise = v * min(t, stop_k * T)
        brake = v * tb - np.sign(v) * a * (np.abs(v) / np.abs(v).max()) * tb ** 2 / 2
        x = cruise + brake
        positions.append(x)
        peak.frame(k * T_NS, x, stopping=k > stop_k)
    d2p = np.abs(np.diff(np.asarray(positions), 2, axis=0)).max() / T ** 2
    assert peak.peak == pytest.approx(d2p, rel=1e-9)
    assert peak.peak <= a + 1e-9 and peak.peak > 0.5 * a


def test_the_step_into_the_brake_counts_and_before_it_nothing():
    peak = StopPeak(T_NS)
    for k, x in enumerate([0.0, 0.0, 0.0, 1e-5]):       # a jump at the first stopping frame
        peak.frame(k * T_NS, np.array([x]), stopping=k == 3)
    assert peak.peak == pytest.approx(1e-5 / T ** 2) and peak.frames == 1
    quiet = StopPeak(T_NS)
    for k, x in enumerate([0.0, 1.0, 0.0, 1.0]):        # not stopping: not judged
        quiet.frame(k * T_NS, np.array([x]), stopping=False)
    assert quiet.peak == 0.0 and quiet.frames == 0


def test_skipped_frames_are_not_differenced_across():
    peak = StopPeak(T_NS)
    for t_ns, x in ((0, 0.0), (T_NS, 0.0), (5 * T_NS, 1e-3), (6 * T_NS, 1e-3)):
        peak.frame(t_ns, np.array([x]), stopping=True)
    assert peak.peak == 0.0
