"""The force joystick: an operator's wrench added to the simulated sensor's load (seed 000: the
Hexafloat platform is pushed by hand through a joystick mounted on the F/T sensor; seed 004:
the HMI applies force disturbances).

What reaches the load is never the operator's input as given, but a limited copy of it:

* **magnitude**: the force vector is scaled down to ``force_max`` (N) and the torque vector to
  ``torque_max`` (N m), keeping their directions;
* **rate**: per sample, the applied force moves towards that target by at most
  ``force_rate`` x dt (N), the torque by at most ``torque_rate`` x dt (N m): a straight ramp
  in wrench space, so a step, a flick of the handle or a dropped message never becomes a jump;
* **stale input**: once no accepted input is newer than ``timeout`` (sample time) the target is
  zero, so a joystick that stops talking (a closed browser tab, a dead node) is released at the
  rate limit;
* **bad input**: a non-finite or wrongly sized wrench is refused with the reason and changes
  nothing (the previous target holds until it goes stale).

Everything here is pure: times are the sensor's sample times in ns (sim time in lockstep), the
caller says when an input arrived (the stamp of the newest sample it has seen then).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class JoystickLimits:
    force_max: float = 50.0          # N, magnitude of the force vector
    torque_max: float = 5.0          # N m, magnitude of the torque vector
    force_rate: float = 200.0        # N/s, rate of change of the force vector (its norm)
    torque_rate: float = 20.0        # N m/s
    timeout: float = 0.5             # s of sample time without input: the target goes to zero

    def problem(self) -> str | None:
        values = (self.force_max, self.torque_max, self.force_rate, self.torque_rate, self.timeout)
        if not all(np.isfinite(v) and v >= 0 for v in values):
            return 'joystick limits must be finite and not negative'
        if self.force_rate <= 0 or self.torque_rate <= 0 or self.timeout <= 0:
            return 'joystick rates and timeout must be positive'
        return None


def _norm(v: np.ndarray) -> float:
    """|v| without overflow for finite values near the float maximum (scaled first)."""
    big = float(np.max(np.abs(v)))
    return 0.0 if big == 0.0 else big * float(np.linalg.norm(v / big))


def _clip_norm(v: np.ndarray, limit: float) -> np.ndarray:
    if _norm(v) <= limit:
        return v
    u = v / float(np.max(np.abs(v)))           # the direction, computed without overflow
    return u * (limit / float(np.linalg.norm(u)))


def limit_magnitude(wrench, limits: JoystickLimits) -> np.ndarray:
    """The wrench (6,) with its force and torque vectors scaled down to their limits."""
    w = np.asarray(wrench, dtype=float)
    return np.concatenate([_clip_norm(w[:3], limits.force_max), _clip_norm(w[3:], limits.torque_max)])


def check_wrench(wrench) -> tuple[np.ndarray | None, str | None]:
    """(the wrench as a (6,) float array, None) or (None, why it is refused)."""
    try:
        w = np.asarray(wrench, dtype=float).reshape(-1)
    except (TypeError, ValueError):
        return None, 'joystick wrench is not numeric'
    if w.shape != (6,):
        return None, f'joystick wrench needs 6 values (fx fy fz tx ty tz), got {w.size}'
    if not np.all(np.isfinite(w)):
        return None, 'joystick wrench has a non-finite value (NaN/inf): refused, the previous input holds'
    return w, None


def _step_towards(cur: np.ndarray, target: np.ndarray, max_step: float) -> np.ndarray:
    d = target - cur
    n = _norm(d)
    return target.copy() if n <= max_step else cur + d * (max_step / n)


class JoystickLoad:
    """The applied joystick wrench, sample by sample (see the module docstring)."""

    def __init__(self, limits: JoystickLimits):
        problem = limits.problem()
        if problem:
            raise ValueError(problem)
        self.limits = limits
        self._timeout_ns = int(round(limits.timeout * 1e9))     # stamps are integer ns: compared exactly
        self.applied = np.zeros(6)
        self.target = np.zeros(6)
        self.received_ns: int | None = None       # sample time at which the newest input arrived
        self.last_ns: int | None = None           # the newest sample stepped
        self._fresh = False
        self.accepted = 0
        self.refused = 0

    def command(self, wrench, now_ns: int | None) -> str | None:
        """An operator's input, received when the newest sample seen was ``now_ns`` (None:
        before any sample). Returns None if accepted, else why it was refused."""
        w, why = check_wrench(wrench)
        if why is not None:
            self.refused += 1
            return why
        self.target = limit_magnitude(w, self.limits)
        # before any sample, the input counts as received at the first one
        self.received_ns = now_ns if now_ns is not None else self.last_ns
        self._fresh = self.received_ns is None
        self.accepted += 1
        return None

    def release(self) -> None:
        """Forget the input: the wrench ramps to zero from the next sample."""
        self.target = np.zeros(6)

    def reset(self) -> None:
        """Back to no wrench at once (a new activation: nothing was applied before)."""
        self.applied = np.zeros(6)
        self.target = np.zeros(6)
        self.received_ns = self.last_ns = None
        self._fresh = False

    @property
    def idle(self) -> bool:
        return not (self.applied.any() or self.target.any())

    def _target_at(self, t_ns: int) -> np.ndarray:
        if self._fresh:
            self.received_ns, self._fresh = t_ns, False
        if self.received_ns is None or t_ns - self.received_ns > self._timeout_ns:
            self.target = np.zeros(6)          # stale: released (ramps to zero at the rate limit)
        return self.target

    def sample_active(self, stamps_ns) -> np.ndarray | None:
        """``sample(stamps_ns)``, or None while nobody pushes (idle: it would be all zeros), with
        the newest stamp noted all the same: a push that comes later ramps from that sample, never
        from an older one (a longer step would allow a bigger jump). The F/T node's frame path:
        nothing allocated, no row loop, when the joystick is idle, i.e. almost always."""
        if not (self.applied.any() or self.target.any()):
            if len(stamps_ns):
                t = int(stamps_ns[-1])
                if self.last_ns is None or t > self.last_ns:
                    self.last_ns = t
            return None
        return self.sample(stamps_ns)

    def sample(self, stamps_ns) -> np.ndarray:
        """The applied wrench (N, 6) at the sample stamps (increasing, ns). A stamp not after the
        last one stepped adds nothing to the ramp (it gets the wrench applied now)."""
        stamps = np.asarray(stamps_ns, dtype=np.int64).reshape(-1)
        out = np.zeros((stamps.size, 6))
        if self.idle:
            if stamps.size:
                self.last_ns = int(max(stamps[-1], self.last_ns if self.last_ns is not None else stamps[-1]))
            return out
        lim = self.limits
        for i, t in enumerate(stamps.tolist()):
            if self.last_ns is not None and t > self.last_ns:
                dt = (t - self.last_ns) * 1e-9
                target = self._target_at(t)
                self.applied = np.concatenate([_step_towards(self.applied[:3], target[:3], lim.force_rate * dt),
                                               _step_towards(self.applied[3:], target[3:], lim.torque_rate * dt)])
            if self.last_ns is None or t > self.last_ns:
                self.last_ns = t
            out[i] = self.applied
        return out
