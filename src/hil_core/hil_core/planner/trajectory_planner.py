"""Trajectory planner (seed 000 section 4.1, seed 001 section 3.4): the per-cycle safety layer
between the model's reference and the reference buffer.

One ``step`` per high-level period. Chain in RUNNING: reference -> synchronization coefficient
-> acceleration limiter (ASC or ruckig) -> workspace check (soft limit: compliant recovery; hard
limit: FAULT + controlled stop) -> acceleration guard. The planner follows the mode flow of
``hil_core.modes``: it reacts to the supervisor's *requested* modes (edges of IDLE, HOMING,
RETURNING_HOME; FAULT as a level) and proceeds by itself HOMING -> SYNCHRONIZING -> RUNNING and
SAFETY_RECOVERY -> RETURNING_HOME -> IDLE, reporting each step as an event.

Inside the limits the output is the reference array itself (bit-identical, no added delay).
Every output, whatever the phase, has per-DOF second differences within ``a_max``; the final
guard enforces it and counts interventions (zero in a correct planner: the tests assert it).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from hil_core.modes import Event, HilMode
from hil_core.planner.asc import AccelerationSaturationControl, RuckigLimiter
from hil_core.planner.config import PlannerConfig
from hil_core.planner.dof import clamp_orientation, dof_to_pose_1, pose_to_dof_1, valid_pose
from hil_core.planner.recovery import CompliantRecovery, brake_step, plan_blend_home
from hil_core.planner.sync_ramp import SyncRamp

INFO, WARN, ERROR = 0, 1, 2
# phases in which the hard limit is enforced: homing from wherever the robot stands goes inward
_CHECKED = frozenset({HilMode.SYNCHRONIZING, HilMode.RUNNING, HilMode.SAFETY_RECOVERY, HilMode.RETURNING_HOME})


@dataclass
class PlannerEvent:
    name: str            # an hil_core.modes.Event value, or a planner-only notice
    message: str
    level: int = INFO
    values: dict = field(default_factory=dict)

    @property
    def is_hil_event(self) -> bool:
        return self.name in {e.value for e in Event}


@dataclass
class StepResult:
    pose: np.ndarray | None      # safe reference (7), None until the planner knows the robot pose
    twist: np.ndarray | None     # [v, w] (6), w = rotation-vector rate (small angles)
    events: list
    phase: HilMode


class TrajectoryPlanner:
    def __init__(self, cfg: PlannerConfig):
        self.cfg = cfg.validate()
        ws = cfg.workspace
        self.soft = ws.soft
        self.k = ws.hard_expansion
        self.centre = np.asarray(ws.soft.centre, dtype=float)
        self.home = pose_to_dof_1(np.asarray(ws.home_pose, dtype=float))
        self.dt = cfg.dt
        self.a_max = np.asarray(cfg.a_max, dtype=float)
        self.v_max = np.asarray(cfg.v_max, dtype=float)
        if cfg.limiter == 'asc':
            self.limiter = AccelerationSaturationControl(self.dt, self.a_max, self.v_max, cfg.asc_bandwidth_hz)
        else:
            self.limiter = RuckigLimiter(self.dt, self.a_max, self.v_max, cfg.j_max)
        self.sync = SyncRamp(cfg.sync_duration, self.dt, cfg.ramp_shape)
        self.recovery = CompliantRecovery(self.soft, self.k, self.dt, self.a_max, cfg.k_n, cfg.c_n, cfg.c_t,
                                          cfg.brake_margin, cfg.max_recovery_duration, cfg.recovery_inset)
        self.phase = HilMode.IDLE
        self.supervisor_mode: HilMode | None = None
        self.x = None                 # last output, 6-DOF
        self.v = np.zeros(6)          # its discrete velocity
        self.pose = None              # last output pose (7)
        self.measured = None
        self.last_ref = None          # last valid reference pose
        self.last_ref_stamp = None
        self.missing = 0
        self.bad_streak = 0
        self.plan = None              # queued samples (N x 6) of homing / return home
        self.exit_predicted = False
        self.clamping = False
        self.guard_interventions = 0
        self.fault_reason = ''

    # ------------------------------------------------------------------------------------------
    @property
    def uses_reference(self) -> bool:
        """Whether the current phase consumes the model's reference (a lockstep node waits for it
        only then: in the other phases nobody may be producing one)."""
        return self.phase in (HilMode.SYNCHRONIZING, HilMode.RUNNING)

    def will_use_reference(self, mode) -> bool:
        """``uses_reference`` after the supervisor mode of the next frame is applied (pure preview)."""
        if mode is not None and HilMode(mode) is HilMode.FAULT:
            return False
        if mode is not None and HilMode(mode) != self.supervisor_mode and HilMode(mode) in (
                HilMode.RETURNING_HOME, HilMode.IDLE) and self.phase is not HilMode.IDLE:
            return False
        return self.uses_reference

    def level(self, x) -> float:
        c = self.centre
        return self.soft.level_point((x[0] - c[0], x[1] - c[1], x[2] - c[2]))

    def step(self, reference=None, stamp_ns: int | None = None, mode=None, measured=None,
             future=None) -> StepResult:
        ev: list[PlannerEvent] = []
        self._take_measured(measured, ev)
        ref = self._take_reference(reference, stamp_ns, ev)
        if self.x is None:
            if self.measured is None:
                return StepResult(None, None, ev, self.phase)
            self.x = pose_to_dof_1(self.measured)
            self.v = np.zeros(6)
            self.pose = dof_to_pose_1(self.x)
        self._apply_mode(mode, ev)
        if future is not None:
            self._look_ahead(future, ev)
        out_x, out_pose = self._advance(ref, ev)
        self._emit(out_x, out_pose, ev)
        return StepResult(self.pose, self.v.copy(), ev, self.phase)

    # --- inputs ---------------------------------------------------------------------------------
    def _take_measured(self, measured, ev):
        if measured is None:
            return
        if not valid_pose(measured):
            ev.append(PlannerEvent('measured_invalid', 'measured TCP pose is not a finite pose: ignored', WARN))
            return
        self.measured = np.asarray(measured, dtype=float)
        lvl = self.level(self.measured)
        if lvl > self.k and self.phase in _CHECKED:
            self._fault(ev, f'measured TCP beyond the hard limit (level {lvl:.3f} > {self.k:.3f})',
                        point=self.measured[:3])

    def _take_reference(self, reference, stamp_ns, ev):
        if reference is None:
            if not self.uses_reference:
                return self.last_ref
            self.missing += 1
            if self.missing == self.cfg.reference_timeout_frames:
                ev.append(PlannerEvent('reference_stale', f'no reference for {self.missing} frames: holding the '
                                       'last one (limiter decelerates)', WARN))
            return self.last_ref
        reason = None
        if not valid_pose(reference):
            reason = 'reference is not a finite pose (NaN/inf, wrong size or zero quaternion)'
        elif stamp_ns is not None and self.last_ref_stamp is not None and stamp_ns <= self.last_ref_stamp:
            reason = f'reference stamp {stamp_ns} not after the last one {self.last_ref_stamp}'
        if reason:
            self.bad_streak += 1
            if self.bad_streak == 1:
                ev.append(PlannerEvent('reference_invalid', reason + ': holding the last good reference', WARN))
            return self.last_ref
        self.bad_streak = 0
        self.missing = 0
        if stamp_ns is not None:
            self.last_ref_stamp = stamp_ns
        ref = np.asarray(reference, dtype=float)
        rng = self.cfg.workspace.orientation_range
        if rng is not None:
            # the workspace limits hold only for orientations inside the range they were computed
            # for (seed 001 table 3): clamp there; the limiter makes the clamp acceleration-limited
            ref, clamped = clamp_orientation(ref, rng)
            if clamped and not self.clamping and self.uses_reference:
                ev.append(PlannerEvent('orientation_clamped', 'reference orientation outside the workspace '
                                       'orientation range: clamped', WARN, {'range_rpy': list(rng)}))
            self.clamping = clamped and self.uses_reference
        self.last_ref = ref
        return self.last_ref

    def _apply_mode(self, mode, ev):
        if mode is None:
            return
        mode = HilMode(mode)
        if mode is HilMode.FAULT and self.phase is not HilMode.FAULT:
            self.phase = HilMode.FAULT                 # supervisor's FAULT: controlled stop, no echo
            self.plan = None
        if mode == self.supervisor_mode:
            return
        self.supervisor_mode = mode
        moving = self.phase in (HilMode.HOMING, HilMode.SYNCHRONIZING, HilMode.RUNNING)
        if mode is HilMode.HOMING and self.phase is HilMode.IDLE:
            self.phase = HilMode.HOMING
            self.plan = plan_blend_home(self.x - self.v * self.dt, self.x, self.home, self.dt, self.a_max,
                                        self.v_max, self.cfg.ramp_shape, self.cfg.homing_min_duration)
        elif mode is HilMode.RETURNING_HOME and moving:
            self._start_return(ev, 'stop requested')
        elif mode is HilMode.IDLE and self.phase is not HilMode.IDLE:
            # reset after FAULT, or an unexpected IDLE while moving: both end in a controlled stop
            self.phase = HilMode.IDLE
            self.plan = None

    def _look_ahead(self, future, ev):
        """Seed 001 3.4: buffered future references are checked too, so an exit is known before
        it is commanded (reported; the takeover itself happens on the first pose outside)."""
        f = np.asarray(future, dtype=float).reshape(-1, 7)
        f = f[np.all(np.isfinite(f), axis=1)]
        if self.phase not in (HilMode.SYNCHRONIZING, HilMode.RUNNING) or len(f) == 0:
            return
        outside = self.soft.level(f[:, :3] - self.centre) > 1.0
        if outside.any() and not self.exit_predicted:
            i = int(np.argmax(outside))
            ev.append(PlannerEvent('exit_predicted', f'buffered reference {i + 1} frames ahead leaves the soft '
                                   'limit', WARN, {'frames_ahead': i + 1, 'point': f[i, :3].tolist()}))
        self.exit_predicted = bool(outside.any())

    # --- phases -----------------------------------------------------------------------------------
    def _advance(self, ref, ev):
        ph = self.phase
        if ph in (HilMode.IDLE, HilMode.FAULT):
            if not np.any(self.v):
                return self.x, self.pose                      # hold, bit-identical
            x, _ = brake_step(self.x, self.v, self.a_max, self.dt)
            return x, None
        if ph is HilMode.HOMING:
            x = self._pop_plan()
            if self.plan is None:
                self.phase = HilMode.SYNCHRONIZING
                self.sync.start_pose = None
                ev.append(PlannerEvent(Event.HOMED.value, 'home pose reached', INFO, {'pose': self.home.tolist()}))
            return x, None
        if ph is HilMode.SYNCHRONIZING:
            if ref is None:
                return self.x, self.pose
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
            if ref is None:
                return self.x, self.pose
            return self._limit_and_check(ref, ev)
        if ph is HilMode.SAFETY_RECOVERY:
            x, back = self.recovery.step()
            if back:
                ev.append(PlannerEvent(Event.BACK_INSIDE.value, 'back inside the soft limit: returning home', INFO,
                                       {'point': x[:3].tolist(), 'max_level': self.recovery.max_level}))
                self.phase = HilMode.RETURNING_HOME
                self.plan = plan_blend_home(self.x, x, self.home, self.dt, self.a_max, self.v_max,
                                            self.cfg.ramp_shape, self.cfg.return_min_duration)
            elif self.recovery.timed_out:
                self._fault(ev, 'compliant recovery did not bring the TCP back inside in time', point=x[:3])
            return x, None
        if ph is HilMode.RETURNING_HOME:
            x = self._pop_plan()
            if self.level(x) > 1.0:
                return self._takeover(x, ev, 'return-home blend leaves the soft limit'), None
            if self.plan is None:
                self.phase = HilMode.IDLE
                ev.append(PlannerEvent(Event.HOME_REACHED.value, 'home pose reached, at rest'))
                return self.home.copy(), None
            return x, None
        raise AssertionError(f'unhandled phase {ph}')

    def _limit_and_check(self, ref_pose, ev):
        x, passthrough = self.limiter.step(pose_to_dof_1(ref_pose))
        if self.level(x) > 1.0:
            return self._takeover(x, ev, 'reference leaves the soft limit'), None
        return x, (np.asarray(ref_pose) if passthrough else None)

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
        self.plan = plan_blend_home(self.x - self.v * self.dt, self.x, self.home, self.dt, self.a_max, self.v_max,
                                    self.cfg.ramp_shape, self.cfg.return_min_duration)
        ev.append(PlannerEvent('returning_home', why, INFO))

    def _pop_plan(self):
        x = self.plan[0]
        self.plan = self.plan[1:] if len(self.plan) > 1 else None
        return x

    def _fault(self, ev, reason, point=None):
        self.phase = HilMode.FAULT
        self.plan = None
        self.fault_reason = reason
        values = {} if point is None else {'point': np.asarray(point).tolist()}
        ev.append(PlannerEvent(Event.FAULT.value, reason + ': controlled stop', ERROR, values))

    # --- output ----------------------------------------------------------------------------------
    def _emit(self, x, pose, ev):
        dt = self.dt
        v = (x - self.x) / dt
        a = (v - self.v) / dt
        if (np.abs(a) > self.a_max * (1.0 + 1e-9)).any() or not np.isfinite(x).all():
            # last line of defence; a correct planner never gets here
            self.guard_interventions += 1
            a = np.clip(np.nan_to_num(a), -self.a_max, self.a_max)
            v = self.v + a * dt
            x = self.x + v * dt
            pose = None
            ev.append(PlannerEvent('acceleration_guard', 'output acceleration above the limit was clipped', ERROR))
        if self.phase in _CHECKED and self.level(x) > self.k:
            self._fault(ev, f'commanded pose beyond the hard limit (level {self.level(x):.3f})', point=x[:3])
        self.x = np.asarray(x, dtype=float).copy()
        self.v = v
        self.pose = pose if pose is not None else dof_to_pose_1(self.x)
