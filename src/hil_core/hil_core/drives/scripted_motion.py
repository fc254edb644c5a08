"""Scripted joint motion: the command source that stands in for planner + timebase in CI.

Seed 000 section 4.1.1 (synchronization coefficient) and section 5 (secondary state machine):

* HOMING: a quintic (C2, rest to rest) move from the measured joints to home (0);
* SYNCHRONIZING: the synchronization coefficient c(tau) rises 0 -> 1 over ``sync_duration``
  (quintic smoothstep: c' = c'' = 0 at both ends) and blends home into the script,
  ``q = home + c (script - home)``; once c = 1 the ramp is transparent (RUNNING);
* RUNNING: a deterministic script of joint-space sines, phases drawn once from
  ``numpy.random.default_rng(seed)`` so runs with the same seed are identical;
* RETURNING_HOME: a quintic from the current setpoint (position, velocity, acceleration:
  C2 continuous) to home, duration stretched until velocity and acceleration limits hold;
* FAULT (and a stop to IDLE while moving): each axis decelerates at ``fault_deceleration``
  to zero velocity and holds (velocity continuous, no jump);
* via points (an operator's motion command, RUNNING only): a clamped cubic spline from the
  current setpoint (position and velocity: no jump) through the given points, at rest at the
  last one, then holding it; refused with the reason unless every point and the whole path lie
  inside the joints' travel and within the script's velocity and acceleration limits
  (:func:`via_path`).

:class:`ScriptedMotion` is a pure state machine driven once per frame by the requested HIL
mode (``hil_core.supervision.modes``: it reacts to changes of the *requested* modes and proceeds on its
own through HOMING -> SYNCHRONIZING -> RUNNING, reporting events), so its output depends
only on frame times, modes and the measured joints at the start of homing.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hil_core.config_check import valid_config
from hil_core.supervision.modes import REQUESTED_MODES, Event, HilMode

QUINTIC_PEAK_V = 1.875          # max |s'| of the rest-to-rest quintic 10u^3 - 15u^4 + 6u^5
QUINTIC_PEAK_A = 10.0 / np.sqrt(3.0)   # max |s''| (5.7735)


def smoothstep5(u):
    """Quintic smoothstep s(u) on [0, 1] and its first two derivatives (clamped outside)."""
    u = np.clip(np.asarray(u, dtype=float), 0.0, 1.0)
    s = u ** 3 * (10 - 15 * u + 6 * u * u)
    ds = 30 * u * u * (1 - u) ** 2
    dds = 60 * u * (1 - u) * (1 - 2 * u)
    return s, ds, dds


def quintic_coefficients(p0, v0, a0, p1, v1, a1, duration):
    """Coefficients c[0..5] (6, n) of p(tau) = sum c_i tau^i meeting both boundary states."""
    T = float(duration)
    p0, v0, a0, p1, v1, a1 = (np.asarray(x, dtype=float) for x in (p0, v0, a0, p1, v1, a1))
    d = p1 - p0 - v0 * T - 0.5 * a0 * T * T
    dv = v1 - v0 - a0 * T
    da = a1 - a0
    c3 = (10 * d - 4 * dv * T + 0.5 * da * T * T) / T ** 3
    c4 = (-15 * d + 7 * dv * T - da * T * T) / T ** 4
    c5 = (6 * d - 3 * dv * T + 0.5 * da * T * T) / T ** 5
    return np.stack([p0, v0, 0.5 * a0, c3, c4, c5])


def eval_polynomial(coeffs, tau):
    """Position, velocity, acceleration (M, n) of polynomial coefficients (deg+1, n) at tau (M,)."""
    tau = np.asarray(tau, dtype=float)[:, None]
    c = np.asarray(coeffs)
    k = np.arange(c.shape[0])
    powers = tau[..., None] ** k                              # (M, 1, deg+1)
    p = np.einsum('mik,kn->mn', powers, c)
    v = np.einsum('mik,kn->mn', powers[..., :-1], c[1:] * k[1:, None])
    a = np.einsum('mik,kn->mn', powers[..., :-2], c[2:] * (k[2:] * (k[2:] - 1))[:, None])
    return p, v, a


@dataclass(frozen=True)
class SineScript:
    """q_i(tau) = A_i sin(2 pi f_i tau + phi_i), one sine per joint."""
    amplitudes: np.ndarray
    frequencies: np.ndarray
    phases: np.ndarray

    @classmethod
    def from_seed(cls, amplitudes, frequencies, seed: int) -> 'SineScript':
        rng = np.random.default_rng(int(seed))
        a = np.asarray(amplitudes, dtype=float)
        return cls(a, np.asarray(frequencies, dtype=float), rng.uniform(0.0, 2 * np.pi, a.size))

    def evaluate(self, tau):
        w = 2 * np.pi * self.frequencies
        arg = np.asarray(tau, dtype=float)[:, None] * w + self.phases
        s, c = np.sin(arg), np.cos(arg)
        return self.amplitudes * s, self.amplitudes * w * c, -self.amplitudes * w * w * s


@dataclass(frozen=True)
class MotionLimits:
    velocity_max: np.ndarray
    acceleration_max: np.ndarray


class Hold:
    def __init__(self, position):
        self.position = np.asarray(position, dtype=float).copy()
        self.end = -np.inf

    def evaluate(self, t):
        m = np.asarray(t).size
        p = np.tile(self.position, (m, 1))
        return p, np.zeros_like(p), np.zeros_like(p)


class Quintic:
    """A quintic from (p0, v0, a0) at t0 to (p1, 0, 0) at t0 + duration, then hold p1."""

    def __init__(self, t0, p0, v0, a0, p1, duration):
        self.t0, self.duration, self.end = float(t0), float(duration), float(t0) + float(duration)
        self.p1 = np.asarray(p1, dtype=float).copy()
        z = np.zeros_like(self.p1)
        self.coeffs = quintic_coefficients(p0, v0, a0, self.p1, z, z, duration)

    def evaluate(self, t):
        tau = np.clip(np.asarray(t, dtype=float) - self.t0, 0.0, self.duration)
        p, v, a = eval_polynomial(self.coeffs, tau)
        after = np.asarray(t) >= self.end
        p[after], v[after], a[after] = self.p1, 0.0, 0.0
        return p, v, a


def quintic_to(t0, p0, v0, a0, p1, limits: MotionLimits, min_duration: float) -> Quintic:
    """The shortest quintic (on a x1.25 grid from an analytic first guess) within the limits."""
    p0, v0, a0 = (np.asarray(x, dtype=float) for x in (p0, v0, a0))
    dist = np.abs(np.asarray(p1) - p0)
    guess = max(float(min_duration),
                float(np.max(QUINTIC_PEAK_V * dist / limits.velocity_max)),
                float(np.max(np.sqrt(QUINTIC_PEAK_A * dist / limits.acceleration_max))),
                float(np.max(2.0 * np.abs(v0) / limits.acceleration_max)), 1e-3)
    tau = np.linspace(0.0, 1.0, 129)
    duration = guess
    for _ in range(60):
        seg = Quintic(0.0, p0, v0, a0, p1, duration)
        _, v, a = seg.evaluate(tau * duration)
        if np.all(np.abs(v) <= limits.velocity_max) and np.all(np.abs(a) <= limits.acceleration_max * 1.0001):
            break
        duration *= 1.25
    return Quintic(t0, p0, v0, a0, p1, duration)


class SyncRamp:
    """home + c(tau) (script(tau) - home), c = smoothstep5(tau / duration), tau = t - t0."""

    def __init__(self, t0, home, script: SineScript, duration):
        self.t0, self.duration, self.end = float(t0), float(duration), float(t0) + float(duration)
        self.home = np.asarray(home, dtype=float)
        self.script = script

    def evaluate(self, t):
        tau = np.asarray(t, dtype=float) - self.t0
        c, dc, ddc = smoothstep5(tau / self.duration)
        c, dc, ddc = c[:, None], dc[:, None] / self.duration, ddc[:, None] / self.duration ** 2
        s, ds, dds = self.script.evaluate(np.maximum(tau, 0.0))
        rel = s - self.home
        return self.home + c * rel, dc * rel + c * ds, ddc * rel + 2 * dc * ds + c * dds


class Decelerate:
    """Each axis brakes at constant deceleration to zero velocity, then holds."""

    def __init__(self, t0, p0, v0, deceleration):
        self.t0 = float(t0)
        self.p0, self.v0 = np.asarray(p0, dtype=float).copy(), np.asarray(v0, dtype=float).copy()
        self.dec = np.asarray(deceleration, dtype=float) * np.sign(self.v0)
        self.t_stop = np.abs(self.v0) / np.asarray(deceleration, dtype=float)
        self.end = self.t0 + float(np.max(self.t_stop, initial=0.0))

    def evaluate(self, t):
        tau = np.clip((np.asarray(t, dtype=float) - self.t0)[:, None], 0.0, self.t_stop)
        moving = (np.asarray(t, dtype=float)[:, None] - self.t0) < self.t_stop
        p = self.p0 + self.v0 * tau - 0.5 * self.dec * tau * tau
        v = np.where(moving, self.v0 - self.dec * tau, 0.0)
        a = np.where(moving, -self.dec, 0.0)
        return p, v, a


@dataclass(frozen=True)
class ScriptConfig:
    amplitudes: tuple
    frequencies: tuple
    seed: int = 0
    home: tuple = (0.0,) * 6
    velocity_max: tuple = (0.2,) * 6
    acceleration_max: tuple = (2.0,) * 6
    fault_deceleration: tuple = (2.0,) * 6
    sync_duration: float = 2.0
    homing_min_duration: float = 1.0

    def problem(self) -> str | None:
        a, f = np.abs(np.asarray(self.amplitudes, float)), np.asarray(self.frequencies, float)
        vmax, amax = np.asarray(self.velocity_max, float), np.asarray(self.acceleration_max, float)
        sizes = {len(self.amplitudes), len(self.frequencies), len(self.home), vmax.size, amax.size,
                 len(self.fault_deceleration)}
        if len(sizes) != 1:
            return 'amplitudes, frequencies, home and the limits need one value per joint'
        if self.sync_duration <= 0 or self.homing_min_duration <= 0:
            return 'sync_duration and homing_min_duration must be positive'
        if np.any(np.asarray(self.fault_deceleration, float) <= 0) or np.any(vmax <= 0) or np.any(amax <= 0):
            return 'velocity_max, acceleration_max and fault_deceleration must be positive'
        w, ts = 2 * np.pi * f, self.sync_duration
        # Bounds of the blended motion during the ramp (c <= 1, |c'| <= 1.875/Ts, |c''| <= 5.78/Ts^2).
        v_peak = a * (QUINTIC_PEAK_V / ts + w)
        a_peak = a * (QUINTIC_PEAK_A / ts ** 2 + 2 * QUINTIC_PEAK_V * w / ts + w * w)
        if np.any(v_peak > vmax):
            return f'script too fast: peak velocity {v_peak.max():.4g} m/s above velocity_max'
        if np.any(a_peak > amax):
            return f'script too fast: peak acceleration {a_peak.max():.4g} m/s^2 above acceleration_max'
        return None


class ScriptedMotion:
    """Per-frame setpoints and progress events of the scripted source (see module docstring)."""

    def __init__(self, config: ScriptConfig):
        self.config = valid_config(config)
        self.limits = MotionLimits(np.asarray(config.velocity_max, float), np.asarray(config.acceleration_max, float))
        self.home = np.asarray(config.home, dtype=float)
        self.script = SineScript.from_seed(config.amplitudes, config.frequencies, config.seed)
        self.phase = HilMode.IDLE
        self.segment = None
        self._last_request = None
        self.via = None                 # (flat via points, t they were checked for) not started yet
        self.via_refused = None         # why the last via points could not start (changed state)

    def check_via(self, t0: float, flat, lower, upper, names) -> ViaPath:
        """The via-point path starting at frame time ``t0`` (the next frame), or ValueError."""
        if self.phase is not HilMode.RUNNING or self.segment is None:
            raise ValueError(f'via points are taken in RUNNING only (the script is in {self.phase.value})')
        p, v, _ = self._state(t0)
        return via_path(t0, p, v, flat, self.limits, lower, upper, names)

    def request_via(self, flat, lower, upper, names) -> None:
        """Start checked via points at the next frame (checked again there, from that frame's state)."""
        self.via = (list(flat), np.asarray(lower, float), np.asarray(upper, float), list(names))

    def _start_via(self, t: float) -> None:
        flat, lower, upper, names = self.via
        self.via = None
        try:
            self.segment = self.check_via(t, flat, lower, upper, names)
            self.via_refused = None
        except ValueError as exc:
            self.via_refused = str(exc)

    def _state(self, t):
        p, v, a = self.segment.evaluate(np.array([t]))
        return p[0], v[0], a[0]

    def _stop(self, t) -> None:
        p, v, _ = self._state(t)
        self.segment = Decelerate(t, p, v, self.config.fault_deceleration)

    def _on_request(self, t, mode: HilMode, measured) -> None:
        moving = self.phase in (HilMode.HOMING, HilMode.SYNCHRONIZING, HilMode.RUNNING, HilMode.RETURNING_HOME)
        if mode is HilMode.FAULT:
            self._stop(t)
            self.phase = HilMode.FAULT
        elif mode is HilMode.IDLE:
            if moving:
                self._stop(t)
            self.phase = HilMode.IDLE
        elif mode is HilMode.HOMING and self.phase is HilMode.IDLE:
            z = np.zeros_like(self.home)
            self.segment = quintic_to(t, measured, z, z, self.home, self.limits, self.config.homing_min_duration)
            self.phase = HilMode.HOMING
        elif mode is HilMode.RETURNING_HOME and self.phase is not HilMode.FAULT:
            p, v, a = self._state(t)
            self.segment = quintic_to(t, p, v, a, self.home, self.limits, self.config.homing_min_duration)
            self.phase = HilMode.RETURNING_HOME

    def frame(self, t: float, requested: str, measured, times) -> tuple[np.ndarray, np.ndarray, list]:
        """Setpoints (len(times), n) at absolute ``times`` for the frame starting at ``t``.

        ``requested`` is the supervisor's mode; ``measured`` the joints at ``t``. Returns
        positions, velocities and a list of ``(event, message)`` reached at ``t``."""
        measured = np.asarray(measured, dtype=float)
        if self.segment is None:
            self.segment = Hold(measured)
        events = []
        try:
            mode = HilMode(requested)
        except ValueError:
            mode = None
        if mode in REQUESTED_MODES and mode is not self._last_request:
            self._last_request = mode
            self.via = None
            self._on_request(t, mode, measured)
        if self.via is not None and self.phase is HilMode.RUNNING:
            self._start_via(t)
        if self.phase is HilMode.HOMING and t >= self.segment.end:
            events.append((Event.HOMED.value, f'home reached by homing at {t:.4f} s'))
            self.segment = SyncRamp(t, self.home, self.script, self.config.sync_duration)
            self.phase = HilMode.SYNCHRONIZING
        elif self.phase is HilMode.SYNCHRONIZING and t >= self.segment.end:
            events.append((Event.SYNCHRONIZED.value, 'synchronization coefficient reached 1'))
            self.phase = HilMode.RUNNING
        elif self.phase is HilMode.RETURNING_HOME and t >= self.segment.end:
            events.append((Event.HOME_REACHED.value, 'returned home'))
            self.segment = Hold(self.home)
            self.phase = HilMode.IDLE
        p, v, _ = self.segment.evaluate(np.asarray(times, dtype=float))
        return p, v, events


# --- operator's via points (the HMI's motion command for the drive test) --------------------------
VIA_SAMPLES = 64                 # samples per via segment when checking the limits


def parse_via_points(flat, n_joints: int) -> tuple[np.ndarray, np.ndarray]:
    """(times (N,), positions (N, n)) from the flat list ``[t_1, q_1 .. q_n, t_2, ...]``
    (``time_from_start`` in s, as a JointTrajectory point's; positions in m); ValueError naming
    what is malformed."""
    v = np.asarray(list(flat), dtype=float)
    width = n_joints + 1
    if v.size == 0 or v.size % width:
        raise ValueError(f'via points need {width} values per point (time_from_start in s, then {n_joints} '
                         f'positions in m), got {v.size} values')
    if not np.all(np.isfinite(v)):
        raise ValueError('via points must be finite (no NaN/inf)')
    rows = v.reshape(-1, width)
    times, positions = rows[:, 0], rows[:, 1:]
    if times[0] <= 0 or np.any(np.diff(times) <= 0):
        raise ValueError(f'via point times must be positive and strictly increasing, got {times.tolist()}')
    return times, positions


class ViaPath:
    """A C2 cubic spline from the current setpoint (its position and velocity at ``t0``) through
    the via points, at rest at the last one, then holding it (scipy's clamped CubicSpline)."""

    def __init__(self, t0, p0, v0, times, positions):
        from scipy.interpolate import CubicSpline
        self.t0 = float(t0)
        knots = np.concatenate([[0.0], times])
        pts = np.vstack([np.asarray(p0, float)[None], positions])
        self.spline = CubicSpline(knots, pts, bc_type=((1, np.asarray(v0, float)), (1, np.zeros(pts.shape[1]))))
        self.knots = knots
        self.duration = float(knots[-1])
        self.end = self.t0 + self.duration
        self.last = pts[-1].copy()

    def evaluate(self, t):
        tau = np.clip(np.asarray(t, dtype=float) - self.t0, 0.0, self.duration)
        p, v, a = self.spline(tau), self.spline(tau, 1), self.spline(tau, 2)
        after = np.asarray(t, dtype=float) >= self.end
        p[after], v[after], a[after] = self.last, 0.0, 0.0
        return p, v, a

    def samples(self) -> np.ndarray:
        """Times (from t0) at which the limits are checked: every knot and VIA_SAMPLES per segment."""
        return np.unique(np.concatenate([np.linspace(a, b, VIA_SAMPLES + 1)
                                         for a, b in zip(self.knots[:-1], self.knots[1:])]))


def via_path(t0, p0, v0, flat, limits: MotionLimits, lower, upper, names) -> ViaPath:
    """The via-point path from the state (p0, v0) at t0, checked as the script is: inside the
    joints' travel [lower, upper] all along, velocity and acceleration within the script's
    limits; ValueError with the reason otherwise (``names``: the joints, for the message)."""
    n = len(names)
    times, positions = parse_via_points(flat, n)
    lower, upper = np.asarray(lower, float), np.asarray(upper, float)
    for k, q in enumerate(positions):
        bad = np.flatnonzero((q < lower) | (q > upper))
        if bad.size:
            i = int(bad[0])
            raise ValueError(f'via point {k + 1} out of the workspace: {names[i]} = {q[i]:.4g} m is outside its '
                             f'travel [{lower[i]:.4g}, {upper[i]:.4g}] m')
    path = ViaPath(t0, p0, v0, times, positions)
    tau = path.samples()
    p, v, a = path.spline(tau), path.spline(tau, 1), path.spline(tau, 2)
    for what, values, lim, unit in (('velocity', v, limits.velocity_max, 'm/s'),
                                    ('acceleration', a, limits.acceleration_max, 'm/s^2')):
        excess = np.abs(values) / lim
        if np.max(excess) > 1.0 + 1e-9:
            k, i = np.unravel_index(int(np.argmax(excess)), excess.shape)
            seg = int(np.searchsorted(path.knots, tau[k], side='left'))
            raise ValueError(f'via points too fast: {names[i]} reaches {abs(values[k, i]):.4g} {unit} on the way to '
                             f'via point {max(seg, 1)}, above {what}_max {lim[i]:.4g} {unit} (give it more time)')
    outside = (p < lower - 1e-12) | (p > upper + 1e-12)
    if outside.any():
        k, i = np.argwhere(outside)[0]
        raise ValueError(f'via points out of the workspace between points: the path takes {names[i]} to '
                         f'{p[k, i]:.4g} m, outside its travel [{lower[i]:.4g}, {upper[i]:.4g}] m')
    return path
