"""Trajectory-planner configuration and the workspace file (``config/workspace_<robot>.yaml``)."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import yaml

from hil_core.planner.ellipsoid import ModifiedEllipsoid
from hil_core.planner.ramps import check_shape
from hil_core.timing import HIGH_LEVEL_PERIOD

LIMITERS = ('asc', 'ruckig')


@dataclass(frozen=True)
class Workspace:
    """Soft limit (modified ellipsoid) + hard-limit expansion + home pose, as fitted offline."""
    robot: str
    soft: ModifiedEllipsoid
    hard_expansion: float
    home_pose: tuple
    # roll/pitch/yaw half ranges (rad) of the total-orientation workspace: the limits only hold for
    # orientations inside them, so the planner clamps reference orientations to them
    orientation_range: tuple | None = None

    @classmethod
    def from_dict(cls, d: dict) -> 'Workspace':
        try:
            soft = ModifiedEllipsoid(tuple(d['soft']['semi_axes']), float(d['soft']['exponent']),
                                     tuple(d['centre']))
            rng = d.get('orientation_range_rpy')
            ws = cls(str(d.get('robot', '')), soft, float(d['hard_expansion']), tuple(d['home_pose']),
                     None if rng is None else tuple(float(v) for v in rng))
        except (KeyError, TypeError) as exc:
            raise ValueError(f'workspace description incomplete: missing or bad {exc}') from exc
        if not (np.isfinite(ws.hard_expansion) and ws.hard_expansion > 1.0):
            raise ValueError(f'hard_expansion must be > 1, got {ws.hard_expansion}')
        if ws.orientation_range is not None and (len(ws.orientation_range) != 3 or not all(
                np.isfinite(v) and v > 0 for v in ws.orientation_range)):
            raise ValueError(f'orientation_range_rpy must be 3 positive angles, got {ws.orientation_range}')
        home = np.asarray(ws.home_pose, dtype=float)
        if home.shape != (7,) or not np.all(np.isfinite(home)):
            raise ValueError(f'home_pose must be 7 finite numbers, got {ws.home_pose}')
        return ws

    @classmethod
    def load(cls, path: str) -> 'Workspace':
        with open(path) as f:
            return cls.from_dict(yaml.safe_load(f))


@dataclass(frozen=True)
class PlannerConfig:
    workspace: Workspace
    dt: float = HIGH_LEVEL_PERIOD
    a_max: tuple = (6.0, 6.0, 6.0, 20.0, 20.0, 20.0)        # m/s^2 x3, rad/s^2 x3
    v_max: tuple = (0.15, 0.1, 0.1, 1.0, 1.0, 1.0)          # m/s x3, rad/s x3
    j_max: tuple = (500.0, 500.0, 500.0, 2000.0, 2000.0, 2000.0)
    limiter: str = 'asc'
    asc_bandwidth_hz: float = 1.5
    sync_duration: float = 1.0
    ramp_shape: str = 'quintic'
    homing_min_duration: float = 1.0
    return_min_duration: float = 0.5
    k_n: float = 400.0
    c_n: float = 40.0
    c_t: float = 10.0
    brake_margin: float = 1.5
    max_recovery_duration: float = 30.0
    recovery_inset: float = 0.03
    reference_timeout_frames: int = 40
    extra: dict = field(default_factory=dict)

    def validate(self) -> 'PlannerConfig':
        if self.limiter not in LIMITERS:
            raise ValueError(f'acceleration_limiter must be one of {LIMITERS}, got {self.limiter!r}')
        check_shape(self.ramp_shape)
        for name in ('a_max', 'v_max', 'j_max'):
            v = np.asarray(getattr(self, name), dtype=float)
            if v.shape != (6,) or not np.all(np.isfinite(v)) or np.any(v <= 0):
                raise ValueError(f'{name} must be 6 positive finite values, got {getattr(self, name)}')
        problem = self.braking_problem()
        if problem:
            raise ValueError(problem)
        return self

    def braking_problem(self) -> str | None:
        """The hard limit is only guaranteed if, at the velocity limit, the TCP can stop inside the
        gap between the soft and the hard surface (at least (k - 1) * min half-axis, by convexity)."""
        ws = self.workspace
        gap = (ws.hard_expansion - 1.0) * ws.soft.min_radius
        speed = float(np.linalg.norm(np.asarray(self.v_max[:3])))
        a_min = float(np.min(self.a_max[:3]))
        need = speed * speed / (2.0 * a_min) + 3.0 * speed * self.dt
        if need * self.brake_margin > gap:
            return (f'v_max {list(self.v_max[:3])} m/s and a_max {list(self.a_max[:3])} m/s^2 need '
                    f'{need * self.brake_margin * 1e3:.1f} mm to stop (x brake_margin) but the soft-hard gap is '
                    f'only {gap * 1e3:.1f} mm: lower v_max, raise a_max or widen hard_expansion')
        return None
