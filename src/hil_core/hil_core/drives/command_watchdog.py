"""Hardware-side watchdog: the drives stop on their own when commands stop or the supervisor dies.

Like LBR's CommandGuard and MoveIt Servo's halt (docs/supervisor.md "Hardware-side watchdog"):
the hardware side (the mock, and in the lab the command path to the drives) needs nothing
upstream to make a safe stop. ``CommandWatchdog`` decides *when*: no valid command for
``command_timeout`` (counted from the first valid command on), or no supervisor heartbeat for
``supervisor_timeout`` (counted from the first heartbeat on; 0 disables it). Once it has
decided, it stays braking until ``rearm`` (a new activation): a robot never moves again on its
own after a lost link, and a stream that comes back far from the braked pose is not followed.

``braking_profile`` says *how*: from the current setpoint position and velocity to rest, every
joint decelerating at a constant rate no higher than its configured deceleration. With
``synchronized`` (default) all joints stop at the same instant T = max |v_i| / d_i, each at
|v_i| / T: the setpoint then moves along a straight line in joint space, so a parallel robot's
platform does not swerve while braking. Velocity is continuous (it starts at the setpoint's
velocity), acceleration is bounded by the deceleration, and the stop is reached in finite time.

Pure logic: the caller passes the clock readings (any one clock, used consistently).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from hil_core.config_check import valid_config


@dataclass(frozen=True)
class WatchdogConfig:
    command_timeout: float             # s without a valid command before braking
    supervisor_timeout: float          # s without a supervisor heartbeat; 0 = not watched
    deceleration: tuple[float, ...]    # per joint (m/s^2 or rad/s^2), no higher than the planner's limit

    def problem(self) -> str | None:
        if not (math.isfinite(self.command_timeout) and self.command_timeout > 0):
            return f'command_timeout must be positive and finite, got {self.command_timeout}'
        if not (math.isfinite(self.supervisor_timeout) and self.supervisor_timeout >= 0):
            return f'supervisor_timeout must be >= 0 and finite, got {self.supervisor_timeout}'
        d = np.asarray(self.deceleration, float)
        if d.ndim != 1 or d.size == 0 or not np.all(np.isfinite(d)) or np.any(d <= 0):
            return f'deceleration must be positive and finite per joint, got {list(self.deceleration)}'
        return None


# what tripped the watchdog (``CommandWatchdog.cause``): the command timeout, the supervisor's
# heartbeat timeout, or a reason the caller found (``trip``); '' while not braking
COMMAND_TIMEOUT, SUPERVISOR_TIMEOUT, CALLER = 'command_timeout', 'supervisor_timeout', 'caller'


class CommandWatchdog:
    """When to brake (see the module docstring)."""

    def __init__(self, config: WatchdogConfig):
        self.cfg = valid_config(config)
        self.last_command: float | None = None
        self.last_supervisor: float | None = None
        self.reason = ''
        self.cause = ''
        self.trips = 0

    @property
    def braking(self) -> bool:
        return bool(self.reason)

    def command(self, now: float) -> None:
        """A valid command arrived (ignored while braking: only ``rearm`` ends a stop)."""
        self.last_command = float(now)

    def supervisor_beat(self, now: float) -> None:
        self.last_supervisor = float(now)

    def check(self, now: float, commands: bool = True) -> str | None:
        """The reason to brake if the watchdog trips *now* (reported once), else None.
        ``commands=False``: judge the supervisor only (a lockstep drive judges a missing
        command by its frame, and calls ``trip``)."""
        if self.braking or not math.isfinite(now):
            return None
        cfg = self.cfg
        if commands and self.last_command is not None and now - self.last_command > cfg.command_timeout:
            self.reason = (f'no valid command for {now - self.last_command:.3f} s '
                           f'(command_timeout {cfg.command_timeout:g} s)')
            self.cause = COMMAND_TIMEOUT
        elif (cfg.supervisor_timeout > 0 and self.last_supervisor is not None
              and now - self.last_supervisor > cfg.supervisor_timeout):
            self.reason = (f'supervisor heartbeat lost for {now - self.last_supervisor:.3f} s '
                           f'(supervisor_timeout {cfg.supervisor_timeout:g} s)')
            self.cause = SUPERVISOR_TIMEOUT
        else:
            return None
        self.trips += 1
        return self.reason

    def supervisor_silence(self, now: float, longer_than: float) -> float | None:
        """How long the supervisor's heartbeat has been silent at ``now``, if the supervisor is
        watched, has beaten once and has been silent longer than ``longer_than``; else None.
        A stop for missing commands names it too: the command stream and the supervisor gone
        quiet together point at one cause (a frozen peer or host), which the command alone hides."""
        if self.cfg.supervisor_timeout <= 0 or self.last_supervisor is None:
            return None
        silence = float(now) - self.last_supervisor
        return silence if silence > longer_than else None

    def trip(self, reason: str) -> str | None:
        """Brake for a reason the caller found (None if braking already)."""
        if self.braking:
            return None
        self.reason = reason
        self.cause = CALLER
        self.trips += 1
        return reason

    def rearm(self) -> None:
        """Start over (a new activation): nothing is watched until the next command/heartbeat."""
        self.reason = self.cause = ''
        self.last_command = self.last_supervisor = None


def _decelerations(v0: np.ndarray, deceleration, synchronized: bool) -> tuple[np.ndarray, np.ndarray]:
    """Per-joint signed deceleration (opposing v0) and per-joint stop time."""
    d = np.broadcast_to(np.asarray(deceleration, float), v0.shape)
    if np.any(~np.isfinite(d)) or np.any(d <= 0):
        raise ValueError('deceleration must be positive and finite')
    if not np.all(np.isfinite(v0)):
        raise ValueError('velocity must be finite')
    times = np.abs(v0) / d
    t_stop = float(times.max(initial=0.0))
    if synchronized and t_stop > 0.0:
        a = v0 / t_stop                       # |a_i| = |v_i| / T <= d_i
        times = np.where(v0 != 0.0, t_stop, 0.0)
    else:
        a = np.sign(v0) * d
    return a, times


def stop_time(v0, deceleration, synchronized: bool = True) -> float:
    """Time (s) until every joint is at rest."""
    return float(_decelerations(np.atleast_1d(np.asarray(v0, float)), deceleration, synchronized)[1].max(initial=0.0))


def braking_profile(p0, v0, deceleration, t, synchronized: bool = True):
    """Setpoint (position, velocity, acceleration), each of shape (len(t), joints), at times
    ``t`` (s, >= 0) after braking starts from position ``p0`` and velocity ``v0``."""
    p0 = np.atleast_1d(np.asarray(p0, float))
    v0 = np.atleast_1d(np.asarray(v0, float))
    if p0.shape != v0.shape or not np.all(np.isfinite(p0)):
        raise ValueError('position and velocity need one finite value per joint')
    a, t_i = _decelerations(v0, deceleration, synchronized)   # each joint's deceleration and stop time
    t = np.asarray(t, float)[:, None]
    if np.any(t < 0) or not np.all(np.isfinite(t)):
        raise ValueError('times must be finite and >= 0')
    tc = np.minimum(t, t_i)
    # v0 - a t reaches exactly 0 at t_i: written as a fraction of the time left, so that no
    # rounding leaves a residual velocity (or reverses it) at the stop
    remaining = np.where(t_i > 0, (t_i - tc) / np.where(t_i > 0, t_i, 1.0), 0.0)
    vel = v0 * remaining
    pos = p0 + 0.5 * (v0 + vel) * tc
    acc = np.where(t < t_i, -a, 0.0)
    return pos, vel, np.broadcast_to(acc, pos.shape).copy()


def braking_knots(p0, v0, deceleration, dt: float, synchronized: bool = True):
    """Knots of the braking setpoint: times 0, dt, 2 dt, ... and the stop instant itself, with
    positions and velocities. A cubic Hermite through them reproduces the profile exactly (it
    is quadratic between knots), so a drive interpolating its setpoints brakes as designed."""
    if not (math.isfinite(dt) and dt > 0):
        raise ValueError(f'dt must be positive, got {dt}')
    v = np.atleast_1d(np.asarray(v0, float))
    _, t_i = _decelerations(v, deceleration, synchronized)
    t_stop = float(t_i.max(initial=0.0))
    stops = np.unique(t_i[t_i > 0])                                   # every joint's stop instant a knot
    grid = np.arange(0.0, t_stop, dt)
    if stops.size:                     # a grid point a rounding error away from a stop is that stop
        grid = grid[np.min(np.abs(grid[:, None] - stops[None, :]), axis=1) > 1e-9 * dt]
    times = np.union1d(grid, stops)
    if times.size == 0 or times[0] > 0:
        times = np.r_[0.0, times]
    pos, vel, _ = braking_profile(p0, v0, deceleration, times, synchronized)
    return times, pos, vel
