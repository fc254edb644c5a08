"""Transparency of a recorded HIL run (seed 000 section 5.2), as ``hil report`` shows it.

Given the force that acted on the robot (raw, unfiltered: the seed drives its ideal model with
the raw field signal), the model the run used, and the achieved TCP motion (forward kinematics
of the measured joints), compute for one DOF:

* the ideal motion (``ideal_response``: exact discretisation at the force's own sample times),
  sampled at the achieved motion's stamps. The ideal pose of input sample k is placed at that
  sample's stamp t_k, the stamp the ``admittance`` node gives it: then the fitted delay is the
  delay the HIL chain adds after the model (F/T filter + reference buffer + servo), the figure
  seed 000 designs (10 ms buffer + ~6 ms filter);
* force -> ideal and force -> achieved frequency responses, normalised by the stiffness so a
  static load gives 1 (figs 12, 15);
* achieved / ideal: the transparency FRF with linear phase fits on 0-7 Hz and 0-11 Hz: constant
  delay and RMSE (figs 13, 16, 18-19);
* the delay-shifted time comparison (figs 20-21) and its RMSE.

Segments: one per impulse (onset found in the force, a short pre-trigger) when the force is
impulsive, as in the seed; consecutive segments otherwise (random loads). Segment length is a
duration (seed: 7500 samples of 0.625 ms = 4.6875 s, 0.2133 Hz resolution).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hil_core.admittance.frf import (FrequencyResponse, Transparency, find_impulses, frf_h1,
                                     segment_starts, transparency)
from hil_core.admittance.ideal_response import ideal_response
from hil_core.admittance.lti_model import LtiAdmittanceModel

SEED_SEGMENT_SECONDS = 7500 * 0.000625   # 4.6875 s
BANDS_HZ = (7.0, 11.0)


@dataclass(frozen=True)
class RunTransparency:
    axis: int
    fs: float
    times: np.ndarray          # achieved sample times (s)
    force: np.ndarray          # raw force/torque on the axis at those times
    ideal: np.ndarray          # ideal displacement about home (m or rad)
    achieved: np.ndarray       # achieved displacement about home
    starts: np.ndarray         # segment start indices
    segment_len: int
    impulsive: bool
    stiffness: float
    force_to_ideal: FrequencyResponse
    force_to_achieved: FrequencyResponse
    result: Transparency       # achieved / ideal with fits per band
    delay_s: float             # from the widest band fit
    shift_samples: int
    shifted_rmse: float        # RMSE of achieved(t) - ideal(t - delay)
    unshifted_rmse: float

    def gain_deviation_db(self, f_max: float) -> float:
        """Largest |gain| deviation from 0 dB of achieved/ideal on (0, f_max] Hz."""
        f = self.result.frf.freqs
        band = (f > 0) & (f <= f_max)
        return float(np.max(np.abs(self.result.frf.gain_db[band]))) if band.any() else float('nan')

    def numbers(self) -> dict:
        """The figures the report prints (and the tests recompute)."""
        out = {'axis': self.axis, 'fs_hz': self.fs, 'segments': int(self.starts.size),
               'segment_s': self.segment_len / self.fs, 'impulsive': bool(self.impulsive),
               'delay_ms': self.delay_s * 1e3, 'shifted_rmse': self.shifted_rmse,
               'unshifted_rmse': self.unshifted_rmse}
        for band, fit in self.result.fits.items():
            key = f'{band:g}hz'
            out[f'delay_ms_{key}'] = fit.delay_s * 1e3
            out[f'phase_rmse_deg_{key}'] = fit.rmse_deg
            out[f'gain_dev_db_{key}'] = self.gain_deviation_db(band)
            f = self.result.frf.freqs
            sel = (f > 0) & (f <= band)
            out[f'coherence_min_{key}'] = float(np.min(self.result.frf.coherence[sel])) if sel.any() else float('nan')
        return out


def _displacement(poses: np.ndarray, home: np.ndarray, axis: int) -> np.ndarray:
    """Displacement about home on one DOF: translation, or rotation-vector component."""
    if axis < 3:
        return poses[:, axis] - home[axis]
    from hil_core.rotations import quat_conjugate, quat_multiply, quat_to_rotvec
    rel = quat_multiply(quat_conjugate(np.broadcast_to(home[3:7], poses[:, 3:7].shape)), poses[:, 3:7])
    return quat_to_rotvec(rel)[:, axis - 3]


def analyse_run(model: LtiAdmittanceModel, force_times, wrenches, pose_times, poses, axis: int = 0,
                segment_seconds: float = SEED_SEGMENT_SECONDS, pre_seconds: float = 0.05,
                impulse_fraction: float = 0.5, bands=BANDS_HZ) -> RunTransparency:
    """Transparency of one DOF of a run (see the module docstring). Raises ValueError when the
    record is too short for one segment or the inputs are malformed."""
    tf = np.asarray(force_times, float)
    w = np.asarray(wrenches, float)
    tp = np.asarray(pose_times, float)
    p = np.asarray(poses, float)
    if w.ndim != 2 or w.shape[1] != 6 or tf.size != w.shape[0]:
        raise ValueError(f'wrenches must be (N, 6) matching force_times, got {w.shape}')
    if p.ndim != 2 or p.shape[1] != 7 or tp.size != p.shape[0]:
        raise ValueError(f'poses must be (M, 7) matching pose_times, got {p.shape}')
    if tp.size < 3:
        raise ValueError('too few achieved poses')
    fs = 1.0 / float(np.median(np.diff(tp)))
    ideal = ideal_response(model, tf, w)
    home = np.asarray(model.home, float)
    ideal_axis = np.interp(tp, ideal.times, _displacement(ideal.poses, home, axis))
    achieved = _displacement(p, home, axis)
    force = np.interp(tp, tf, w[:, axis])
    seg = int(round(segment_seconds * fs))
    if seg > tp.size:
        raise ValueError(f'record of {tp.size / fs:.2f} s is shorter than one segment of {segment_seconds:.2f} s')
    peak = float(np.max(np.abs(force)))
    onsets = find_impulses(force, impulse_fraction * peak, seg) if peak > 0 else np.array([], int)
    starts = segment_starts(onsets, tp.size, seg, pre=int(round(pre_seconds * fs)))
    impulsive = starts.size > 0
    if not impulsive:
        starts = np.arange(0, tp.size - seg + 1, seg)
    stiffness = float(np.asarray(model.K)[axis, axis]) if hasattr(model, 'K') else 1.0
    f2i = frf_h1(force, ideal_axis * stiffness, fs, starts, seg)
    f2a = frf_h1(force, achieved * stiffness, fs, starts, seg)
    result = transparency(ideal_axis, achieved, fs, starts, seg, bands=tuple(bands))
    delay = result.fits[max(result.fits)].delay_s
    shift = int(round(delay * fs))
    if 0 < shift < tp.size:
        shifted = float(np.sqrt(np.mean((achieved[shift:] - ideal_axis[:-shift]) ** 2)))
    else:
        shifted = float(np.sqrt(np.mean((achieved - ideal_axis) ** 2)))
    unshifted = float(np.sqrt(np.mean((achieved - ideal_axis) ** 2)))
    return RunTransparency(axis=axis, fs=fs, times=tp, force=force, ideal=ideal_axis, achieved=achieved,
                           starts=starts, segment_len=seg, impulsive=impulsive, stiffness=stiffness,
                           force_to_ideal=f2i, force_to_achieved=f2a, result=result, delay_s=delay,
                           shift_samples=shift, shifted_rmse=shifted, unshifted_rmse=unshifted)
