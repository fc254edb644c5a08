"""Trajectory planner (seed 000 section 4.1, seed 001 section 3.4): the per-cycle safety layer
between the model's reference and the reference buffer.

One ``step`` per high-level period. Chain in RUNNING: reference -> synchronization coefficient
-> acceleration limiter (ASC or ruckig) -> workspace check (soft limit: compliant recovery; hard
limit: FAULT + controlled stop) -> acceleration guard. The planner follows the mode flow of
``hil_core.supervision.modes``: it reacts to the supervisor's *requested* modes (edges of IDLE, HOMING,
RETURNING_HOME; FAULT as a level) and proceeds by itself HOMING -> SYNCHRONIZING -> RUNNING and
SAFETY_RECOVERY -> RETURNING_HOME -> IDLE, reporting each step as an event.

Inside the limits the output is the reference array itself (bit-identical, no added delay); a
quiet RUNNING frame is one compiled call (``quiet_frame``, loaded at construction; the plain path
is its oracle: ``compiled=False``).
Hardening against faults and hostile input (docs/planner.md "Hardening"): inputs validated before any arithmetic
(``inputs``); one per-DOF envelope for every phase (``envelope``); HOMING only from rest; bounded
plans (``plans``); a limiter error, a FAULT, a dropout: the controlled stop (``stop``). The final
guard re-checks every output and counts interventions: zero in a correct planner (tested).
"""
from __future__ import annotations

import numpy as np

from hil_core.supervision.modes import Event, HilMode
from hil_core.planner.asc import AccelerationSaturationControl, RuckigLimiter
from hil_core.planner.config import PlannerConfig
from hil_core.planner.dof import base_twist, dof_to_pose_1, pose_to_dof_1
from hil_core.planner.envelope import Envelope, rate_limits, within_limits
from hil_core.planner.inputs import ReferenceInput, check_future, check_pose, check_stamp
from hil_core.planner import quiet_frame
from hil_core.planner.plans import plan_home
from hil_core.planner.results import ERROR, INFO, WARN, PlannerEvent, StepResult
from hil_core.planner.recovery import CompliantRecovery
from hil_core.planner.stop import controlled_stop
from hil_core.planner.sync_ramp import SyncRamp

# phases in which the measured pose is checked against the hard limits: homing from wherever the
# robot stands goes inward, IDLE and FAULT already stop
_CHECKED = frozenset({HilMode.SYNCHRONIZING, HilMode.RUNNING, HilMode.SAFETY_RECOVERY, HilMode.RETURNING_HOME})


class TrajectoryPlanner:
    def __init__(self, cfg: PlannerConfig, compiled: bool = True):
        self.cfg = cfg.validate()
        ws = cfg.workspace
        self.soft = ws.soft
        self.k = ws.hard_expansion
        self.centre = np.asarray(ws.soft.centre, dtype=float)
        self.home = pose_to_dof_1(np.asarray(ws.home_pose, dtype=float))
        self.dt = cfg.dt
        self.a_max = np.asarray(cfg.a_max, dtype=float)       # as configured: what the robot may see
        self.v_max = np.asarray(cfg.v_max, dtype=float)
        # the total-orientation box (seed 001 table 3); without one the angles are unbounded
        self.half = None if ws.orientation_range is None else np.asarray(ws.orientation_range, dtype=float)
        box = np.full(3, np.inf) if self.half is None else self.half
        self._half = box.tolist()
        self.lower, self.upper = np.r_[-np.inf, -np.inf, -np.inf, -box], np.r_[np.inf, np.inf, np.inf, box]
        self.a_lim, self.v_lim = rate_limits(self.a_max, self.v_max, np.minimum(box, np.pi / 2))
        self.envelope = Envelope(self.dt, self.a_lim, self.v_lim, self.lower, self.upper)
        if cfg.limiter == 'asc':
            self.limiter = AccelerationSaturationControl(self.dt, self.a_lim, self.v_lim, cfg.asc_bandwidth_hz,
                                                         lower=self.lower, upper=self.upper)
        else:
            self.limiter = RuckigLimiter(self.dt, self.a_lim, self.v_lim, cfg.j_max, self.lower, self.upper)
        self.sync = SyncRamp(cfg.sync_duration, self.dt, cfg.ramp_shape)
        self.recovery = CompliantRecovery(self.soft, self.k, self.dt, self.a_lim, cfg.k_n, cfg.c_n, cfg.c_t,
                                          cfg.brake_margin, cfg.max_recovery_duration, cfg.recovery_inset,
                                          v_max=self.v_lim)
        self.inputs = ReferenceInput(cfg.input_rules(), cfg.reference_timeout_frames)
        self.phase = HilMode.IDLE
        self.supervisor_mode: HilMode | None = None
        self.x = None                 # last output, 6-DOF
        self.v = np.zeros(6)          # its discrete velocity
        self.pose = None              # last output pose (7)
        self.measured = None
        self.plan = None              # plans.HomePlan of homing / return home, while one runs
        self.exit_predicted = False
        self.clamping = False
        self.guard_interventions = 0
        self.fault_reason = ''
        self._streaks = {'measured_invalid': 0, 'mode_invalid': 0, 'future_invalid': 0}
        self.quiet = quiet_frame.QuietFrame(self) if compiled and cfg.limiter == 'asc' else None

    # ------------------------------------------------------------------------------------------
    @property
    def uses_reference(self) -> bool:
        """Whether this phase consumes the model's reference (a lockstep node waits for it then only)."""
        return self.phase in (HilMode.SYNCHRONIZING, HilMode.RUNNING)

    def will_use_reference(self, mode) -> bool:
        """``uses_reference`` after the supervisor mode of the next frame is applied (pure preview)."""
        try:
            mode = None if mode is None else HilMode(mode)
        except ValueError:
            mode = None
        if mode is HilMode.FAULT:
            return False
        if mode is not None and mode != self.supervisor_mode and mode in (
                HilMode.RETURNING_HOME, HilMode.IDLE) and self.phase is not HilMode.IDLE:
            return False
        return self.uses_reference

    def stamp_problem(self, stamp_ns, now_ns) -> str | None:
        """Why a reference stamp lies outside the window around sim time ``now_ns`` (None if inside),
        for a node that keys its frames by reference stamps; it reports the refusal with
        ``refuse_reference`` (events, once per streak)."""
        return check_stamp(stamp_ns, None, now_ns, self.inputs.rules, 0)

    def refuse_reference(self, reason: str) -> list:
        pairs = []
        self.inputs.refuse(reason, pairs)
        return [PlannerEvent(name, message, WARN) for name, message in pairs]

    def level(self, x) -> float:
        c = self.centre
        return self.soft.level_point((x[0] - c[0], x[1] - c[1], x[2] - c[2]))

    def step(self, reference=None, stamp_ns: int | None = None, mode=None, measured=None,
             future=None, now_ns: int | None = None) -> StepResult:
        """One frame. ``now_ns``: the frame's sim time (reference stamps must lie in a window around
        it); without it the stamps are bounded against the last accepted one."""
        if self.quiet is not None and (done := self.quiet.step(self, reference, stamp_ns, mode, measured, future,
                                                                now_ns)) is not None:
            return done
        ev: list[PlannerEvent] = []
        self._take_measured(measured, ev)
        pairs = []
        ref = self.inputs.take(reference, stamp_ns, now_ns, self.uses_reference, pairs)
        ev += [PlannerEvent(name, message, WARN) for name, message in pairs]
        if self.x is None:
            if self.measured is None:
                return StepResult(None, None, ev, self.phase)
            self.x = pose_to_dof_1(self.measured)
            self.v = np.zeros(6)
            self.pose = dof_to_pose_1(self.x)
        self._apply_mode(self._valid_mode(mode, ev), ev)
        if future is not None:
            self._look_ahead(future, ev)
        out_x, out_pose = self._advance(ref, ev)
        self._emit(out_x, out_pose, ev)
        return StepResult(self.pose, base_twist(self.x, self.v), ev, self.phase)

    # --- inputs ---------------------------------------------------------------------------------
    def _once(self, name, ok, ev, message):
        """An input problem reported once per streak of bad inputs (not 400 times a second)."""
        if ok:
            self._streaks[name] = 0
            return
        self._streaks[name] += 1
        if self._streaks[name] == 1:
            ev.append(PlannerEvent(name, message, WARN))

    def _take_measured(self, measured, ev):
        if measured is None:
            return
        pose, reason = check_pose(measured, self.inputs.rules)
        self._once('measured_invalid', reason is None, ev, f'measured TCP pose refused: {reason}')
        if pose is None:
            return
        self.measured = pose
        if self.phase not in _CHECKED:
            return
        lvl = self.level(pose)
        if lvl > self.k:
            self._fault(ev, f'measured TCP beyond the hard limit (level {lvl:.3f} > {self.k:.3f})', point=pose[:3])
        elif self.half is not None and np.any(np.abs(pose_to_dof_1(pose)[3:]) > self.k * self.half):
            self._fault(ev, f'measured TCP orientation (roll, pitch, yaw) {np.degrees(pose_to_dof_1(pose)[3:]).round(2)} '
                        f'deg beyond {self.k:.3f} x the total-orientation range (seed 001 table 3)', point=pose[:3])

    def _valid_mode(self, mode, ev):
        if mode is None:
            return None
        try:
            mode = HilMode(mode)
        except ValueError:
            self._once('mode_invalid', False, ev, f'unknown mode {mode!r} ignored')
            return None
        self._once('mode_invalid', True, ev, '')
        return mode

    def _apply_mode(self, mode, ev):
        if mode is None:
            return
        if mode is HilMode.FAULT and self.phase is not HilMode.FAULT:
            self.phase = HilMode.FAULT                 # supervisor's FAULT: controlled stop, no echo
            self.plan = None
        if mode == self.supervisor_mode:
            return
        self.supervisor_mode = mode
        moving = self.phase in (HilMode.HOMING, HilMode.SYNCHRONIZING, HilMode.RUNNING)
        if mode is HilMode.HOMING and self.phase is HilMode.IDLE:
            # planned once at rest (_advance): a request while still braking lets the stop finish
            # first, so the homing ramp never carries the braking motion on outward
            self.phase = HilMode.HOMING
            self.plan = None
        elif mode is HilMode.RETURNING_HOME and moving:
            self._start_return(ev, 'stop requested')
        elif mode is HilMode.IDLE and self.phase is not HilMode.IDLE:
            # reset after FAULT, or an unexpected IDLE while moving: both end in a controlled stop
            self.phase = HilMode.IDLE
            self.plan = None

    def _look_ahead(self, future, ev):
        """Seed 001 3.4: buffered future references are checked too, so an exit is known before
        it is commanded (reported; the takeover itself happens on the first pose outside)."""
        f, reason = check_future(future, self.inputs.rules)
        self._once('future_invalid', reason is None, ev, f'look-ahead buffer refused: {reason}')
        if f is None or self.phase not in (HilMode.SYNCHRONIZING, HilMode.RUNNING) or len(f) == 0:
            return
        outside = self.soft.level(f[:, :3] - self.centre) > 1.0
        if outside.any() and not self.exit_predicted:
            i = int(np.argmax(outside))
            ev.append(PlannerEvent('exit_predicted', f'buffered reference {i + 1} frames ahead leaves the soft '
                                   'limit', WARN, {'frames_ahead': i + 1, 'point': f[i, :3].tolist()}))
        self.exit_predicted = bool(outside.any())

    # --- phases -----------------------------------------------------------------------------------
    def _limits_at(self, x):
        """(a, v) per DOF valid at the angles of x: the box's own when inside it, derated further for
        a robot tilted beyond it (homing from where it stands)."""
        if self.half is None or self._in_box(x):
            return self.a_lim, self.v_lim
        return rate_limits(self.a_max, self.v_max, np.maximum(self.half, np.abs(x[3:])))

    def _in_box(self, x) -> bool:
        h = self._half
        return abs(float(x[3])) <= h[0] and abs(float(x[4])) <= h[1] and abs(float(x[5])) <= h[2]

    def _brake(self):      # one cycle of the controlled stop (planner.stop: gentle where it stays inside)
        a, _ = self._limits_at(self.x)
        return controlled_stop(self.x, self.v, a, self.cfg.stop_fraction, self.dt, self._stop_inside)[0]

    def _stop_inside(self, p) -> bool:
        return self.level(p) < self.k and self._in_box(p)

    def _dropout(self):      # no reference: hold or stop; the limiter rejoins from there, gently
        x, pose = self._hold()
        self.limiter.sync(x, (x - self.x) / self.dt, self.cfg.stop_fraction)
        return x, pose

    def _hold(self):      # hold, bit-identical; or, if still moving, one cycle of the controlled stop
        return (self.x, self.pose) if not np.any(self.v) else (self._brake(), None)

    def _advance(self, ref, ev):
        ph = self.phase
        if ph in (HilMode.IDLE, HilMode.FAULT):
            return self._hold()
        if ph is HilMode.HOMING:
            if self.plan is None:
                if np.any(self.v):
                    return self._brake(), None
                a, v = self._limits_at(self.x)
                self._set_plan(plan_home(self.x, self.x, self.home, self.dt, a, v, self.cfg.ramp_shape,
                                         self.cfg.homing_min_duration), None, '', ev)
            x = self._pop_plan(ev)
            if self.plan is None:
                self.phase = HilMode.SYNCHRONIZING
                self.sync.start_pose = None
                ev.append(PlannerEvent(Event.HOMED.value, 'home pose reached', INFO,
                                       {'pose': self.home.tolist(), **self._plan_values}))
            return x, None
        gap = ref is None or self.inputs.since_accept > 0     # no new valid reference this frame
        if ph is HilMode.SYNCHRONIZING:
            if gap:
                return self._dropout()
            if self.sync.start_pose is None:
                self.sync.start(self.pose)
                self.limiter.reset(self.x, self.v)
            blended = self.sync.step(ref)
            out = self._limit_and_check(blended, ev)
            if self.sync.done and self.phase is HilMode.SYNCHRONIZING:
                self.phase = HilMode.RUNNING
                ev.append(PlannerEvent(Event.SYNCHRONIZED.value, 'synchronization coefficient reached 1'))
            return out
        if ph is HilMode.RUNNING:
            return self._dropout() if gap else self._limit_and_check(ref, ev)
        if ph is HilMode.SAFETY_RECOVERY:
            x, back = self.recovery.step()
            if back:
                ev.append(PlannerEvent(Event.BACK_INSIDE.value, 'back inside the soft limit: returning home', INFO,
                                       {'point': x[:3].tolist(), 'max_level': self.recovery.max_level}))
                self.phase = HilMode.RETURNING_HOME
                self._set_plan(plan_home(self.x, x, self.home, self.dt, self.a_lim, self.v_lim, self.cfg.ramp_shape,
                                         self.cfg.return_min_duration, self.lower, self.upper), None, '', ev)
                ev[-1].values.update(self._plan_values)
            elif self.recovery.timed_out:
                self._fault(ev, 'compliant recovery did not bring the TCP back inside in time', point=x[:3])
            return x, None
        if ph is HilMode.RETURNING_HOME:
            x = self._pop_plan(ev)
            if self.level(x) > 1.0:
                return self._takeover(x, ev, 'return-home blend leaves the soft limit'), None
            if self.plan is None:
                self.phase = HilMode.IDLE
                ev.append(PlannerEvent(Event.HOME_REACHED.value, 'home pose reached, at rest'))
            return x, None
        raise AssertionError(f'unhandled phase {ph}')

    def _limit_and_check(self, ref_pose, ev):
        r = pose_to_dof_1(ref_pose)
        # the workspace limits hold only inside the total-orientation range (seed 001 table 3):
        # the reference angles are clamped there, the limiter's envelope makes the clamp smooth
        rc = np.minimum(np.maximum(r, self.lower), self.upper)
        clamped = bool(np.any(rc != r))
        if clamped and not self.clamping:
            ev.append(PlannerEvent('orientation_clamped', 'reference orientation outside the workspace '
                                   'orientation range: clamped', WARN, {'range_rpy': list(self.half)}))
        self.clamping = clamped
        x, passthrough = self.limiter.step(rc)
        error = getattr(self.limiter, 'error', '')
        if error:
            ev.append(PlannerEvent('limiter_error', error, ERROR, {'limiter': self.cfg.limiter}))
            self._fault(ev, f'acceleration limiter failed ({error})', point=x[:3])
            return x, None
        if self.level(x) > 1.0:
            return self._takeover(x, ev, 'reference leaves the soft limit'), None
        return x, (ref_pose if passthrough and not clamped else None)

    def _takeover(self, x, ev, why):
        v0 = (x - self.x) / self.dt
        ev.append(PlannerEvent(Event.SAFETY_TAKEOVER.value, f'{why}: planner takes over reference generation', WARN,
                               {'exit_point': x[:3].tolist(), 'exit_velocity': v0[:3].tolist(),
                                'from_phase': self.phase.value}))
        self.recovery.start(x, v0)
        self.phase = HilMode.SAFETY_RECOVERY
        self.plan = None
        return x

    def _start_return(self, ev, why):
        self.phase = HilMode.RETURNING_HOME
        a, v = self._limits_at(self.x)
        plan = plan_home(self.x - self.v * self.dt, self.x, self.home, self.dt, a, v, self.cfg.ramp_shape,
                         self.cfg.return_min_duration, self.lower, self.upper)
        self._set_plan(plan, 'returning_home', why, ev)

    def _set_plan(self, plan, event, why, ev):
        self.plan = plan
        self._plan_values = {'plan': plan.kind, 'duration': plan.duration, 'frames': plan.frames}
        if event:
            ev.append(PlannerEvent(event, why, INFO, dict(self._plan_values)))

    def _pop_plan(self, ev):
        switched = self.plan.switched
        x = self.plan.next()          # one frame of the plan (plans.HomePlan: O(1) per frame)
        if self.plan.switched and not switched:
            ev.append(PlannerEvent('plan_switched', 'blend sample outside the envelope: brake, then ramp home'))
        self.plan = None if self.plan.done else self.plan
        return x

    def _fault(self, ev, reason, point=None):
        self.phase = HilMode.FAULT
        self.plan = None
        self.fault_reason = reason
        values = {} if point is None else {'point': np.asarray(point).tolist()}
        ev.append(PlannerEvent(Event.FAULT.value, reason + ': controlled stop', ERROR, values))

    # --- output ----------------------------------------------------------------------------------
    def _emit(self, x, pose, ev):
        """Last line of defence: a correct planner never gets past the first test."""
        dt = self.dt
        x = np.asarray(x, dtype=float)
        if not np.isfinite(x).all():
            self.guard_interventions += 1
            if self.phase is not HilMode.FAULT:
                self._fault(ev, f'planner output not finite in {self.phase.value}')
            x, pose = self._brake(), None
        v = (x - self.x) / dt
        a_at, v_at = self._limits_at(self.x)
        acc = (v - self.v) / dt
        if not within_limits(x, v, acc, a_at, v_at, None if self.half is None else self._half, self.x):
            self.guard_interventions += 1
            inside = a_at is self.a_lim
            guard = self.envelope if inside else Envelope(dt, a_at, v_at)
            acc = guard.clip(self.x, self.v, acc)
            v = self.v + acc * dt
            x = self.x + v * dt
            pose = None
            ev.append(PlannerEvent('acceleration_guard', 'output outside the motion envelope was clipped', ERROR))
            if self.phase in (HilMode.SYNCHRONIZING, HilMode.RUNNING):
                self.limiter.sync(x, v)
        lvl = self.level(x)
        if lvl > self.k and lvl > self.level(self.x) and self.phase is not HilMode.FAULT:
            self._fault(ev, f'commanded pose beyond the hard limit (level {lvl:.3f})', point=x[:3])
        self.x = x.copy()
        self.v = v
        self.pose = pose if pose is not None else dof_to_pose_1(self.x)
