"""Mode-aware reference of the hybrid robot (the secondary state machine of seed 000 applied
to seed 003's controller): which joint-space reference the CTM tracks at every cycle.

* IDLE: hold the pose the robot was found in (zero velocity).
* HOMING (requested): an S-curve move (``homing_feed``) from the held pose to the start of the
  path -> event ``homed``; SYNCHRONIZING: hold there ``sync_time`` (the integrators take up
  the model mismatch at rest) -> ``synchronized``; RUNNING: the G-code path from its cycle 0,
  then hold at its end.
* RETURNING_HOME (requested): brake to rest in joint space, then an S-curve move to ``home``
  -> ``home_reached`` -> IDLE.
* FAULT (requested), or IDLE requested while moving: every joint decelerates at
  ``fault_deceleration`` to zero velocity and holds (velocity continuous, no jump).

It reacts only to changes of the *requested* modes (docs/CONTRACTS.md) and to the frame
time, so its output is a function of message content only (deterministic in lockstep).
A reference is ``((l, ld, ldd), (th, w, e), p)`` in float64 lists (legs m, table rad).
"""
from __future__ import annotations

import math

import numpy as np

from hil_core.supervision.modes import REQUESTED_MODES, Event, HilMode

from . import law_frame, tracking_kernel as ck
from . import kinematics as kin
from .gcode import Segment
from .leg_travel import Stroke, check_move, check_path
from .params import Hybrid5Params
from .trajectory import PathTrajectory


_NO_HOLD = np.zeros(18)


class _Cartesian:
    """A PathTrajectory started at cycle k0 (held at its end). The reference is sampled by the
    compiled path sampler (``tracking_kernel.reference``: sample_cycle + ik_derivatives_scalar
    in one call, equal to them to rounding, test_hybrid5_compiled.py)."""

    def __init__(self, path: PathTrajectory, k0: int, R: float):
        self.path, self.k0, self.R = path, k0, R
        self.end = k0 + path.n_cycles - 1
        self.table = ck.PathTable(path)

    def ref(self, k: int):
        return ck.reference(self.table, k - self.k0, self.R)


class _Static:
    """A constant reference (a hold); ``end`` = cycle at which it counts as finished."""

    def __init__(self, fixed, end: int):
        self.fixed, self.end = fixed, end
        (l, ld, ldd), (th, w, e), p = fixed
        self.packed = np.array([*l, *ld, *ldd, *th, *w, *e, *p], dtype=float)    # law_frame's layout

    def ref(self, k: int):
        return self.fixed


class _Brake:
    """Each joint decelerates at ``dec`` from (q0, v0) to rest, then holds."""

    def __init__(self, k0: int, Ts: float, q0, v0, dec, R: float):
        self.k0, self.Ts, self.R = k0, Ts, R
        self.q0, self.v0 = np.asarray(q0, float), np.asarray(v0, float)
        self.dec = np.asarray(dec, float)
        self.t_stop = np.abs(self.v0) / self.dec
        self.end = k0 + int(math.ceil(float(np.max(self.t_stop)) / Ts))

    def ref(self, k: int):
        t = np.minimum((k - self.k0) * self.Ts, self.t_stop)
        sg = np.sign(self.v0)
        q = self.q0 + self.v0 * t - 0.5 * sg * self.dec * t * t
        v = self.v0 - sg * self.dec * t
        moving = t < self.t_stop
        a = np.where(moving, -sg * self.dec, 0.0)
        p = kin.forward(q[:3], self.R)
        return (q[:3].tolist(), v[:3].tolist(), a[:3].tolist()), (q[3:].tolist(), v[3:].tolist(), a[3:].tolist()), p


class Hybrid5Motion:
    """Per-cycle reference and progress events (see the module docstring)."""

    def __init__(self, params: Hybrid5Params, path: PathTrajectory, home, homing_feed: float,
                 fault_deceleration, sync_time: float, stroke: Stroke | None = None):
        self.prm, self.path = params, path
        self.stroke = stroke         # the legs' travel a program, the homing move and a jog keep to
        self.Ts, self.R = params.Ts, params.R
        self.home = (np.asarray(home[:3], float), np.asarray(home[3:], float))
        self.homing_feed = float(homing_feed)
        self.dec = np.asarray(fault_deceleration, float)
        if self.dec.shape != (5,) or not np.all(self.dec > 0):
            raise ValueError('fault_deceleration needs 5 positive values (3 legs m/s^2, 2 table rad/s^2)')
        if not (np.all(np.isfinite(self.home[0])) and self.home[0][2] > 0):
            raise ValueError('home is below the base plane (z must be > 0: the branch of eq. 15)')
        self.check_program(path)
        self.sync_cycles = max(1, int(round(sync_time / self.Ts)))
        self.phase = HilMode.IDLE
        self.ref_src = None
        self._then = None            # move to start after a brake (RETURNING_HOME)
        self._last_request = None
        self.last = None

    def set_path(self, path: PathTrajectory) -> None:
        """A new program, taken only in IDLE: the path is read when HOMING starts (the move to its
        first point) and when RUNNING starts, never while holding or braking, so the next run
        homes to the new program's start and follows it. ValueError in any other phase (a path
        swapped under a homing move or a run would jump the reference)."""
        if self.phase is not HilMode.IDLE:
            raise ValueError(f'a new program is taken in IDLE only (the robot holds); now in {self.phase.value}')
        self.check_program(path)
        self.path = path

    def check_program(self, path: PathTrajectory) -> None:
        """ValueError if ``path``, or the homing move from home to its start, takes a leg outside
        its travel (``stroke``; no check without one)."""
        if self.stroke is None:
            return
        check_path(path, self.R, self.stroke)
        (start, _, _), _ = path.sample_cycle(0)
        check_move(self.home[0], start, self.R, self.stroke, "the homing move to the program's start")

    def jog(self, k: int, dp, dg, feed: float):
        """An operator's jog from cycle ``k``: the held pose moved by ``dp`` (m) and the table by
        ``dg`` (rad) in one S-curve straight move at ``feed`` (m/s), held at its end; IDLE only,
        at rest (ValueError saying why otherwise). The phase stays IDLE: the next HOMING starts
        from where the jog ended. Returns the target (p, g)."""
        if self.phase is not HilMode.IDLE:
            raise ValueError(f'a jog is taken in IDLE only (the robot holds); now in {self.phase.value}')
        src = self.ref_src
        if self.last is None or src is None:
            raise ValueError('no control cycle yet: the pose to jog from is not known')
        if type(src) is not _Static and k <= src.end:
            raise ValueError('the robot is still moving (a brake or the previous jog): jog again once it holds')
        p, g = self._pose_of(self.last)
        p1, g1 = p + np.asarray(dp, float), g + np.asarray(dg, float)
        if not p1[2] > 0:
            raise ValueError(f'the jog ends at z = {p1[2]:.4f} m, not above the base plane (eq. 15 needs z > 0)')
        if self.stroke is not None:
            check_move(p, p1, self.R, self.stroke)
            (start, _, _), _ = self.path.sample_cycle(0)     # the next HOMING starts where the jog ends
            check_move(p1, start, self.R, self.stroke, "the homing move after the jog to the program's start")
        self.ref_src = self._move(p, g, p1, g1, k, feed)
        return p1, g1

    # --- reference sources ---------------------------------------------------------------------
    def _hold(self, p, g, end: int = -1):
        return _Static(self._static(p, g), end)

    def _move(self, p0, g0, p1, g1, k0, feed: float | None = None):
        """An S-curve straight move from (p0, g0) to (p1, g1) from cycle k0, at ``feed`` (m/s;
        default ``homing_feed``), held at its end."""
        if np.allclose(p0, p1, atol=1e-12) and np.allclose(g0, g1, atol=1e-12):
            return self._hold(p0, g0, k0)                  # already there: done at once
        t = self.prm.trajectory
        speed = self.homing_feed / 60.0 if feed is None else float(feed)
        seg = Segment('line', np.asarray(p0, float) - self.path.origin, np.asarray(p1, float) - self.path.origin,
                      np.asarray(g0, float), np.asarray(g1, float), speed, True, 0)
        path = PathTrajectory([seg], self.Ts, t.a_max, t.j_max, math.radians(t.angular_feed) / 60, self.path.origin)
        return _Cartesian(path, k0, self.R)

    def _static(self, p, g):
        l = list(kin.ik_scalar(*np.asarray(p, float).tolist(), self.R))
        z = [0.0, 0.0, 0.0]
        return (l, z, z), (list(np.asarray(g, float)), [0.0, 0.0], [0.0, 0.0]), np.asarray(p, float)

    def _brake(self, k):
        (l, ld, _), (th, w, _), _ = self.last
        return _Brake(k, self.Ts, [*l, *th], [*ld, *w], self.dec, self.R)

    def _pose_of(self, ref):
        (l, ld, _), (th, w, _), p = ref
        return np.asarray(p, float), np.asarray(th, float)

    # --- per cycle -------------------------------------------------------------------------------
    def quiet_source(self, requested: str):
        """What the compiled law frame (``law_frame``) needs to run the cycles to come without
        this object: ``(k_stop, src_kind, src_k0, fixed, table)`` -- the cycle of the next change
        of phase, the path from ``src_k0`` (kind 1, its ``PathTable``) or the hold ``fixed``
        (kind 0, 18 values) -- or None when the next cycle is not quiet: the first cycle, a new
        request to act on, a brake. ``cycle`` stays the oracle; ``advanced`` takes the last
        reference the kernel computed."""
        src = self.ref_src
        if src is None or self.last is None:
            return None
        try:
            mode = HilMode(requested)
        except ValueError:
            mode = None
        if mode in REQUESTED_MODES and mode is not self._last_request:
            return None
        ends = self.phase in (HilMode.HOMING, HilMode.SYNCHRONIZING, HilMode.RETURNING_HOME)
        k_stop = src.end if ends else law_frame.NEVER
        if type(src) is _Cartesian:
            return k_stop, 1, src.k0, _NO_HOLD, src.table
        if type(src) is _Static:
            return k_stop, 0, 0, src.packed, None
        return None

    def advanced(self, packed) -> None:
        """The compiled law frame computed the cycles up to one whose reference is ``packed``
        (18 values): it is the reference ``cycle`` would have left in ``last``."""
        if type(self.ref_src) is _Static:
            self.last = self.ref_src.fixed
        else:
            r = packed.tolist()
            self.last = (r[0:3], r[3:6], r[6:9]), (r[9:11], r[11:13], r[13:15]), packed[15:18].copy()

    def _on_request(self, k, mode: HilMode) -> None:
        moving = self.phase in (HilMode.HOMING, HilMode.SYNCHRONIZING, HilMode.RUNNING, HilMode.RETURNING_HOME)
        if mode is HilMode.FAULT:
            self.ref_src, self._then = self._brake(k), None
            self.phase = HilMode.FAULT
        elif mode is HilMode.IDLE:
            if moving:
                self.ref_src, self._then = self._brake(k), None
            self.phase = HilMode.IDLE
        elif mode is HilMode.HOMING and self.phase is HilMode.IDLE:
            p, g = self._pose_of(self.last)
            (p0, _, _), (g0, _, _) = self.path.sample_cycle(0)
            self.ref_src = self._move(p, g, p0, g0, k)
            self.phase = HilMode.HOMING
        elif mode is HilMode.RETURNING_HOME and self.phase is not HilMode.FAULT:
            self.ref_src = self._brake(k)
            self._then = 'home'
            self.phase = HilMode.RETURNING_HOME

    def cycle(self, k: int, requested: str, measured_l, measured_th):
        """Reference for cycle k and the events reached at k.

        ``measured_*`` (finite) are used once: the pose held at the first cycle."""
        events = []
        if self.ref_src is None:
            p = kin.forward(np.asarray(measured_l, float), self.R)
            self.ref_src = self._hold(p, np.asarray(measured_th, float))
        try:
            mode = HilMode(requested)
        except ValueError:
            mode = None
        if self.last is None:
            self.last = self.ref_src.ref(k)
        if mode in REQUESTED_MODES and mode is not self._last_request:
            self._last_request = mode
            self._on_request(k, mode)
        if self.phase is HilMode.HOMING and k >= self.ref_src.end:
            events.append((Event.HOMED.value, f'at the start of the path (cycle {k})'))
            p, g = self._pose_of(self.ref_src.ref(k))
            self.ref_src = self._hold(p, g, k + self.sync_cycles)
            self.phase = HilMode.SYNCHRONIZING
        elif self.phase is HilMode.SYNCHRONIZING and k >= self.ref_src.end:
            events.append((Event.SYNCHRONIZED.value, f'held {self.sync_cycles} cycles at the path start'))
            self.ref_src = _Cartesian(self.path, k, self.R)
            self.phase = HilMode.RUNNING
        elif self.phase is HilMode.RETURNING_HOME and k >= self.ref_src.end:
            if self._then == 'home':
                self._then = None
                p, g = self._pose_of(self.ref_src.ref(k))
                self.ref_src = self._move(p, g, *self.home, k)
            else:
                events.append((Event.HOME_REACHED.value, f'home reached at cycle {k}'))
                self.ref_src = self._hold(*self.home)
                self.phase = HilMode.IDLE
        self.last = self.ref_src.ref(k)
        return self.last, events
