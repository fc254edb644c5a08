"""Pose sets over the seed-001 table-3 nominal workspace (tests, benches, the workspace tool).

The nominal workspace is the box ``home +- workspace_half_range`` in surge, sway, heave and
roll, pitch, yaw (roll-pitch-yaw of ``hil_core.maths.rotations``: R = Rz(yaw) Ry(pitch) Rx(roll)).
"""
from __future__ import annotations

import itertools

import numpy as np

from hil_core.maths.rotations import rpy_to_quat

from .geometry import HexaslideGeometry


def poses_from_offsets(geom: HexaslideGeometry, offsets) -> np.ndarray:
    """(N, 6) offsets [dx, dy, dz, roll, pitch, yaw] from home -> (N, 7) poses."""
    offsets = np.atleast_2d(np.asarray(offsets, dtype=float))
    return np.concatenate([geom.home_position + offsets[:, :3], rpy_to_quat(offsets[:, 3:])], axis=1)


def box_corners(geom: HexaslideGeometry, scale: float = 1.0, levels=(-1.0, 1.0)) -> np.ndarray:
    """Every combination of ``levels`` x half range in the six coordinates (2^6 corners by default)."""
    grid = np.array(list(itertools.product(levels, repeat=6)), dtype=float)
    return poses_from_offsets(geom, scale * grid * geom.workspace_half_range)


def random_poses(geom: HexaslideGeometry, n: int, rng=None, scale: float = 1.0) -> np.ndarray:
    """``n`` poses uniform in the nominal box (times ``scale``)."""
    rng = np.random.default_rng(rng)
    return poses_from_offsets(geom, scale * rng.uniform(-1.0, 1.0, (n, 6)) * geom.workspace_half_range)


def sinusoid_trajectory(geom: HexaslideGeometry, duration: float, rate: float,
                        periods=(2.0, 2.6, 3.1, 2.3, 1.9, 3.7)) -> np.ndarray:
    """Sea-state-like motion: every coordinate a sine at its full nominal half range.

    Default periods (s) are of the order of the scaled floater's wave response; the peak
    surge speed of the scaled robot is then about 0.16 m/s (0.16 mm per 1 kHz sample).
    """
    t = np.arange(int(round(duration * rate))) / rate
    offsets = np.sin(2 * np.pi * t[:, None] / np.asarray(periods)) * geom.workspace_half_range
    return poses_from_offsets(geom, offsets)
