"""Transparency of a recorded HIL run (seed 000 section 5.2), as ``hil report`` shows it.

Given the force that acted on the robot (raw, unfiltered: the seed drives its ideal model with
the raw field signal), the model the run used, and the achieved TCP motion (forward kinematics
of the measured joints), compute for one DOF:

* the ideal motion (``ideal_response``: exact discretisation at the force's own sample times),
  and the achieved motion, on a uniform grid at the achieved motion's period (the lockstep
  stamps themselves). The ideal pose of input sample k is placed at that
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

Validity: the figures carry their evidence (``transparency.pairs.compare``:
correlation peak, residual after shifting, coherence from >= 2 segments); the ideal motion is
used only where its force input is complete: a stamp interval longer than 1.5 force periods is a
gap, and a segment that overlaps it (or starts within the model's settling time after it) is
left out. With no complete segment the run is ``NotMeasurable``.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hil_core.transparency.frf import FrequencyResponse, Transparency, find_impulses, frf_h1, segment_starts
from hil_core.admittance.ideal_response import ideal_response
from hil_core.transparency.pairs import PairResult, compare
from hil_core.transparency.series import (Gaps, complete_segments, find_gaps, nominal_period, resample,
                                          uniform_grid, unique_stamps, usable)
from hil_core.transparency.stages import BANDS_HZ, SEED_SEGMENT_SECONDS, displacement, settle_time


class NotMeasurable(ValueError):
    """The record holds no complete segment: nothing can be measured (the message says why)."""


@dataclass(frozen=True)
class RunTransparency:
    axis: int
    fs: float
    times: np.ndarray          # uniform analysis grid (s)
    force: np.ndarray          # raw force/torque on the axis at those times
    ideal: np.ndarray          # ideal displacement about home (m or rad)
    achieved: np.ndarray       # achieved displacement about home
    starts: np.ndarray         # start indices of the segments used (complete ones)
    segment_len: int
    impulsive: bool
    stiffness: float
    force_to_ideal: FrequencyResponse
    force_to_achieved: FrequencyResponse
    result: Transparency       # achieved / ideal with fits per band
    delay_s: float             # from the widest band fit (whatever its validity: plots)
    shift_samples: int
    shifted_rmse: float        # RMSE of achieved(t) - ideal(t - delay)
    unshifted_rmse: float
    pair: PairResult           # the figures with their validity
    force_gaps: Gaps
    pose_gaps: Gaps
    excluded_segments: int     # segments dropped because a gap touched them

    def gain_deviation_db(self, f_max: float) -> float:
        """Largest |gain| deviation from 0 dB of achieved/ideal on (0, f_max] Hz."""
        f = self.result.frf.freqs
        band = (f > 0) & (f <= f_max)
        return float(np.max(np.abs(self.result.frf.gain_db[band]))) if band.any() else float('nan')

    def numbers(self) -> dict:
        """The figures the report prints (and the tests recompute); a figure that is not
        measurable is None (``pair`` says why)."""
        out = {'axis': self.axis, 'fs_hz': self.fs, 'segments': int(self.starts.size),
               'segment_s': self.segment_len / self.fs, 'impulsive': bool(self.impulsive),
               'delay_ms': _ms(self.pair.widest.delay) if self.pair.widest else None,
               'shifted_rmse': self.shifted_rmse, 'unshifted_rmse': self.unshifted_rmse,
               'correlation_peak': self.pair.correlation_peak, 'relative_residual': self.pair.relative_residual,
               'force_gaps': self.force_gaps.count, 'pose_gaps': self.pose_gaps.count,
               'excluded_segments': self.excluded_segments}
        for band, figs in sorted(self.pair.bands.items()):
            key = f'{band:g}hz'
            out[f'delay_ms_{key}'] = _ms(figs.delay)
            out[f'phase_rmse_deg_{key}'] = figs.phase_rmse_deg.value if figs.phase_rmse_deg.valid else None
            out[f'gain_dev_db_{key}'] = figs.gain_dev_db.value if figs.gain_dev_db.valid else None
            out[f'coherence_min_{key}'] = figs.coherence_min.value if figs.coherence_min.valid else None
        return out


def _ms(fig) -> float | None:
    return fig.value * 1e3 if fig.valid else None


def analyse_run(model, force_times, wrenches, pose_times, poses, axis: int = 0,
                segment_seconds: float = SEED_SEGMENT_SECONDS, pre_seconds: float = 0.05,
                impulse_fraction: float = 0.5, bands=BANDS_HZ, force_period: float | None = None,
                pose_period: float | None = None) -> RunTransparency:
    """Transparency of one DOF of a run (see the module docstring). ``force_period`` and
    ``pose_period`` are the designed sample periods (default: median stamp intervals). Raises
    ValueError when the inputs are malformed or shorter than one segment, NotMeasurable when
    gaps leave no complete segment."""
    tf = np.asarray(force_times, float)
    w = np.asarray(wrenches, float)
    tp = np.asarray(pose_times, float)
    p = np.asarray(poses, float)
    if w.ndim != 2 or w.shape[1] != 6 or tf.size != w.shape[0]:
        raise ValueError(f'wrenches must be (N, 6) matching force_times, got {w.shape}')
    if p.ndim != 2 or p.shape[1] != 7 or tp.size != p.shape[0]:
        raise ValueError(f'poses must be (M, 7) matching pose_times, got {p.shape}')
    if tp.size < 3 or tf.size < 3:
        raise ValueError('too few samples')
    tf, w = unique_stamps(tf, w)
    tp, p = unique_stamps(tp, p)
    T = nominal_period(tp, pose_period)
    grid = uniform_grid(tp[0], tp[-1], T)
    fs = 1.0 / T
    seg = int(round(segment_seconds * fs))
    if seg > grid.size:
        raise ValueError(f'record of {grid.size / fs:.2f} s is shorter than one segment of {segment_seconds:.2f} s')
    home = np.asarray(model.home, float)
    force_gaps = find_gaps(tf, nominal_period(tf, force_period))
    pose_gaps = find_gaps(tp, T)
    ideal = ideal_response(model, tf, w)
    ideal_axis = resample(tf, displacement(ideal.poses, home, axis), grid)
    achieved = resample(tp, displacement(p, home, axis), grid)
    force = resample(tf, w[:, axis], grid)
    ok = usable(tf, grid, force_gaps, settle_time(model)) & usable(tp, grid, pose_gaps)
    clean_force = np.where(usable(tf, grid, force_gaps), force, 0.0)
    peak = float(np.max(np.abs(clean_force)))
    onsets = find_impulses(clean_force, impulse_fraction * peak, seg) if peak > 0 else np.array([], int)
    candidates = segment_starts(onsets, grid.size, seg, pre=int(round(pre_seconds * fs)))
    impulsive = candidates.size > 0
    if not impulsive:
        candidates = np.arange(0, grid.size - seg + 1, seg)
    starts = complete_segments(candidates, seg, ok)
    if starts.size == 0:
        parts = [f'{g.count} gap(s) in the {what} up to {g.largest * 1e3:.1f} ms'
                 for what, g in (('force', force_gaps), ('achieved pose', pose_gaps)) if g.count]
        raise NotMeasurable(f'no complete segment of {segment_seconds:.2f} s'
                            + (': ' + ', '.join(parts) if parts else ''))
    pair = compare(ideal_axis, achieved, ok, fs, starts, seg, bands)
    stiffness = float(np.asarray(model.K)[axis, axis]) if hasattr(model, 'K') else 1.0
    f2i = frf_h1(force, ideal_axis * stiffness, fs, starts, seg)
    f2a = frf_h1(force, achieved * stiffness, fs, starts, seg)
    delay = pair.fitted_delay_s if pair.fitted_delay_s is not None else 0.0
    shift = int(round(delay * fs))
    inside = np.zeros(grid.size, bool)
    for s in starts:
        inside[s:s + seg] = True
    a, i = achieved[inside], ideal_axis[inside]
    if 0 < shift < grid.size:
        m = inside[shift:] & inside[:-shift]
        shifted = float(np.sqrt(np.mean((achieved[shift:][m] - ideal_axis[:-shift][m]) ** 2)))
    else:
        shifted = float(np.sqrt(np.mean((a - i) ** 2)))
    unshifted = float(np.sqrt(np.mean((a - i) ** 2)))
    return RunTransparency(axis=axis, fs=fs, times=grid, force=force, ideal=ideal_axis, achieved=achieved,
                           starts=starts, segment_len=seg, impulsive=impulsive, stiffness=stiffness,
                           force_to_ideal=f2i, force_to_achieved=f2a,
                           result=Transparency(frf=pair.frf, fits=pair.fits), delay_s=delay,
                           shift_samples=shift, shifted_rmse=shifted, unshifted_rmse=unshifted, pair=pair,
                           force_gaps=force_gaps, pose_gaps=pose_gaps,
                           excluded_segments=int(candidates.size - starts.size))
