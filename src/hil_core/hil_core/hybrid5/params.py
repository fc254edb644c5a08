"""Parameters of the hybrid robot (config/hybrid5.yaml), validated once at load."""
from __future__ import annotations

import math
from dataclasses import dataclass, fields
from pathlib import Path

import yaml

from hil_core.data_paths import config_file

G0 = 9.81      # m/s^2, gravity of the model, the plant and their compiled kernels


@dataclass(frozen=True)
class Plant:
    m_p: float
    m_s: float
    J_r: float
    q_g: float
    fc_leg: float
    b_leg: float
    v_stribeck: float
    J44: float
    J55: float
    m4r4: float
    fc_table: tuple
    b_table: tuple
    encoder_leg: float
    encoder_table: float


@dataclass(frozen=True)
class Model:
    m_p: float
    m_s: float
    J_r: float
    m_g: float
    J44: float
    J55: float
    m4r4: float


@dataclass(frozen=True)
class Gains:
    """Per-axis-group gains of eq. 28/36 and the nonlinear integrator of eq. 29-35."""
    Kp: float
    Kv: float
    Ki: float
    s_max: float
    xi: float
    Tc: float
    e_c: float
    v_zero: float


@dataclass(frozen=True)
class Trajectory:
    rapid_feed: float      # m/min
    a_max: float
    j_max: float
    angular_feed: float    # deg/min


@dataclass(frozen=True)
class Hybrid5Params:
    R: float
    h: float
    work_origin: tuple
    plant: Plant
    model: Model
    Ts: float
    legs: Gains
    table: Gains
    trajectory: Trajectory


def _build(cls, d: dict, where: str):
    names = [f.name for f in fields(cls)]
    missing = [n for n in names if n not in d]
    extra = [k for k in d if k not in names]
    if missing or extra:
        raise ValueError(f'{where}: missing {missing} unknown {extra}')
    vals = {}
    for n in names:
        v = d[n]
        v = tuple(float(x) for x in v) if isinstance(v, (list, tuple)) else float(v)
        flat = v if isinstance(v, tuple) else (v,)
        if not all(math.isfinite(x) and x >= 0 for x in flat):
            raise ValueError(f'{where}.{n} must be finite and >= 0, got {d[n]!r}')
        vals[n] = v
    return cls(**vals)


def from_dict(d: dict) -> Hybrid5Params:
    """Build and validate; every problem (missing section or key, wrong type, NaN, negative)
    is a ValueError naming it."""
    try:
        return _from_dict(d)
    except KeyError as exc:
        raise ValueError(f'hybrid5 parameters: missing {exc}') from exc
    except (TypeError, AttributeError) as exc:
        raise ValueError(f'hybrid5 parameters: malformed ({exc})') from exc


def _from_dict(d: dict) -> Hybrid5Params:
    g, c = d['geometry'], d['control']
    R, h = float(g['R']), float(g['h'])
    origin = tuple(float(x) for x in g['work_origin'])
    if not (R > 0 and h >= 0 and len(origin) == 3 and all(map(math.isfinite, origin))):
        raise ValueError('geometry: R > 0, h >= 0 and a finite 3-vector work_origin required')
    Ts = float(c['Ts'])
    if not Ts > 0:
        raise ValueError('control.Ts must be > 0')
    p = Hybrid5Params(R=R, h=h, work_origin=origin, plant=_build(Plant, d['plant'], 'plant'),
                      model=_build(Model, d['model'], 'model'), Ts=Ts,
                      legs=_build(Gains, c['legs'], 'control.legs'),
                      table=_build(Gains, c['table'], 'control.table'),
                      trajectory=_build(Trajectory, d['trajectory'], 'trajectory'))
    for name in ('m_p', 'm_s', 'J_r', 'J44', 'J55'):
        if getattr(p.plant, name) <= 0 or getattr(p.model, name, 1.0) <= 0:
            raise ValueError(f'{name} must be > 0')
    tr = p.trajectory
    if min(tr.rapid_feed, tr.a_max, tr.j_max, tr.angular_feed) <= 0:
        raise ValueError('trajectory limits must be > 0')
    return p


def load_params(path: str | Path | None = None) -> Hybrid5Params:
    """Load config/hybrid5.yaml (default: the data tree's copy, checkout or share/hil_core)."""
    if path is None:
        path = config_file('hybrid5.yaml')
    with open(path) as f:
        return from_dict(yaml.safe_load(f))
