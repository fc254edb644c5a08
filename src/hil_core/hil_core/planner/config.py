"""Trajectory-planner configuration and the workspace file (``config/workspace_<robot>.yaml``)."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import yaml

from hil_core.planner.ellipsoid import ModifiedEllipsoid
from hil_core.planner.ramps import check_shape
from hil_core.supervision.timing import HIGH_LEVEL_PERIOD

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
    stop_fraction: float = 0.5          # controlled stop at this fraction of the limits where it has room
    max_recovery_duration: float = 30.0
    recovery_inset: float = 0.03
    reference_timeout_frames: int = 40
    # input validation (planner.inputs): positions farther than this from the workspace centre are
    # not a model state but garbage (None: 10 x the largest hard-limit half-axis); quaternions within
    # the tolerance of unit norm are normalised, others refused; reference stamps must lie within
    # [now - max_age, now + max_lead] of the frame's sim time
    position_bound: float | None = None
    quaternion_tolerance: float = 1e-3
    reference_max_age: float = 1.0
    reference_max_lead: float = 0.5
    extra: dict = field(default_factory=dict)

    def validate(self) -> 'PlannerConfig':
        if self.limiter not in LIMITERS:
            raise ValueError(f'acceleration_limiter must be one of {LIMITERS}, got {self.limiter!r}')
        check_shape(self.ramp_shape)
        for name in ('a_max', 'v_max', 'j_max'):
            v = np.asarray(getattr(self, name), dtype=float)
            if v.shape != (6,) or not np.all(np.isfinite(v)) or np.any(v <= 0):
                raise ValueError(f'{name} must be 6 positive finite values, got {getattr(self, name)}')
        if not (isinstance(self.stop_fraction, (int, float)) and 0.0 < self.stop_fraction <= 1.0):
            raise ValueError(f'stop_fraction must be in (0, 1], got {self.stop_fraction!r}')
        for name in ('quaternion_tolerance', 'reference_max_age', 'reference_max_lead'):
            value = getattr(self, name)
            if not (isinstance(value, (int, float)) and np.isfinite(value) and value > 0):
                raise ValueError(f'{name} must be a positive number, got {value!r}')
        if self.quaternion_tolerance >= 0.5:
            raise ValueError(f'quaternion_tolerance must be below 0.5, got {self.quaternion_tolerance}')
        if self.position_bound is not None and not (np.isfinite(self.position_bound) and
                                                    self.position_bound > self.hard_radius):
            raise ValueError(f'position_bound must exceed the largest hard-limit radius {self.hard_radius:.3g} m, '
                             f'got {self.position_bound}')
        problem = self.braking_problem()
        if problem:
            raise ValueError(problem)
        return self

    @property
    def hard_radius(self) -> float:
        ws = self.workspace
        return ws.hard_expansion * max(ws.soft.semi_axes)

    def input_rules(self):
        from hil_core.planner.inputs import InputRules
        bound = self.position_bound if self.position_bound is not None else 10.0 * self.hard_radius
        return InputRules(tuple(float(c) for c in self.workspace.soft.centre), float(bound),
                          float(self.quaternion_tolerance), int(round(self.reference_max_age * 1e9)),
                          int(round(self.reference_max_lead * 1e9)), int(round(self.dt * 1e9)))

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
