"""Ramp shapes shared by the synchronization coefficient (seed 000 4.1.1), homing and the
return-home blend (seed 001 3.4). Every shape goes 0 -> 1 with zero slope at both ends (C1),
so a pose blended with it starts and ends with the velocity of what it blends."""
from __future__ import annotations

import numpy as np

SHAPES = ('cubic', 'quintic', 'cosine')

# max |s'| and max |s''| of each shape on [0, 1] (closed form), used to size ramp durations
PEAK_RATE = {'cubic': 1.5, 'quintic': 1.875, 'cosine': 0.5 * np.pi}
PEAK_CURVATURE = {'cubic': 6.0, 'quintic': 10.0 / np.sqrt(3.0), 'cosine': 0.5 * np.pi ** 2}


def ramp(tau, shape: str = 'quintic'):
    """s(tau) for tau in [0, 1] (clipped outside): cubic smoothstep (C1), quintic (C2), cosine (C1)."""
    t = np.clip(np.asarray(tau, dtype=float), 0.0, 1.0)
    if shape == 'cubic':
        return t * t * (3.0 - 2.0 * t)
    if shape == 'quintic':
        return t * t * t * (10.0 + t * (-15.0 + 6.0 * t))
    if shape == 'cosine':
        return 0.5 - 0.5 * np.cos(np.pi * t)
    raise ValueError(f'unknown ramp shape {shape!r}; expected one of {SHAPES}')


def ramp_rate(tau, shape: str = 'quintic'):
    """ds/dtau (zero at both ends for every shape)."""
    t = np.clip(np.asarray(tau, dtype=float), 0.0, 1.0)
    if shape == 'cubic':
        return 6.0 * t * (1.0 - t)
    if shape == 'quintic':
        return 30.0 * t * t * (1.0 - t) ** 2
    if shape == 'cosine':
        return 0.5 * np.pi * np.sin(np.pi * t)
    raise ValueError(f'unknown ramp shape {shape!r}; expected one of {SHAPES}')


def ramp_curvature(tau, shape: str = 'quintic'):
    """d2s/dtau2 (zero at both ends for quintic only)."""
    t = np.clip(np.asarray(tau, dtype=float), 0.0, 1.0)
    if shape == 'cubic':
        return 6.0 - 12.0 * t
    if shape == 'quintic':
        return t * (60.0 + t * (-180.0 + 120.0 * t))
    if shape == 'cosine':
        return 0.5 * np.pi ** 2 * np.cos(np.pi * t)
    raise ValueError(f'unknown ramp shape {shape!r}; expected one of {SHAPES}')


def check_shape(shape: str) -> str:
    if shape not in SHAPES:
        raise ValueError(f'unknown ramp shape {shape!r}; expected one of {SHAPES}')
    return shape
