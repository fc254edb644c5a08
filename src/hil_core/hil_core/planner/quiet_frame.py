"""The planner's quiet RUNNING and SYNCHRONIZING frames in one compiled call (``quiet_frame_kernel``).

Why: in RUNNING nearly every frame is quiet: a valid measured pose inside the hard limit, a valid
reference stamped in its window, no orientation clamp, the ASC passing the reference through,
the soft limit and the guard content. The plain path spends about 25 us on it (40-55 us in the
running graph) in some twenty small Python functions; the kernel decides and computes it in one
call. Any other frame (a bad input, a mode change, a limit, a saturated limiter, ruckig, a
look-ahead buffer) returns None and ``TrajectoryPlanner.step`` takes the plain path from the
untouched state, so every event, fault and recovery stays in one place.

SYNCHRONIZING (seed 000 4.1.1: the second after homing, the robot's pose blended into the
reference) is the same frame on the blended pose: the plain path took 166-177 us alone for it
(calibration about 0.85 s; 124.7 us against 30.3 us compiled in one bench at about 0.9 s) and
0.4-0.6 ms at twice the pace in the running graph, at the start of a run, where the supervisor
judged real time lost in the issue's and this project's runs. Its
first frame (the ramp starts, the limiter is reset) and its last (the phase changes, an event)
stay on the plain path.

The oracle is the planner's plain path itself (``TrajectoryPlanner(cfg, compiled=False)``):
``test_planner_quiet_frame`` runs both on the same inputs and requires the same outputs bit for
bit, the same events and the same state.
"""
from __future__ import annotations

import numpy as np

from hil_core.planner.asc import AccelerationSaturationControl as _ASC
from hil_core.planner import quiet_frame_kernel as K
from hil_core.planner.results import StepResult
from hil_core.supervision.modes import HilMode

_NO_POSE = np.zeros(7)
_INT64 = 2 ** 62        # stamps beyond this (absurd) take the plain path: no int64 overflow in the kernel


def _plain_array(a) -> bool:
    """A writable, contiguous float64 vector: what the frozen kernel's signature takes."""
    return type(a) is np.ndarray and a.dtype == np.float64 and a.flags.c_contiguous and a.flags.writeable


def warm_up() -> float:
    """Compile (or load from the cache) and freeze the kernel; seconds taken (0.0 when done)."""
    return K.KERNELS.warm_up()


class QuietFrame:
    """The packed configuration of one planner and its ``step``."""

    def __init__(self, planner):
        cfg = np.zeros(K.N_CFG)
        soft = planner.soft
        cfg[0:3] = planner.centre
        cfg[3:9] = soft.semi_axes
        cfg[9] = soft.exponent
        cfg[10] = planner.k
        cfg[11:14] = planner._half
        cfg[14] = 0.0 if planner.half is None else 1.0
        cfg[15:21] = planner.a_lim
        cfg[21:27] = planner.v_lim
        cfg[27:33] = planner.lower
        cfg[33:39] = planner.upper
        rules = planner.inputs.rules
        cfg[39] = rules.position_bound
        cfg[40] = rules.quaternion_tolerance
        cfg[41] = planner.dt
        self.cfg = cfg
        self.icfg = np.array([rules.max_age_ns, rules.max_lead_ns], dtype=np.int64)
        warm_up()
        self.frames = 0          # quiet frames served (the rest took the plain path)
        self.refused = 0         # calls the frozen kernel refused for their argument types (plain path)

    def step(self, pl, reference, stamp_ns, mode, measured, future, now_ns):
        """The StepResult of a quiet frame, with the planner's state updated as the plain path
        would (the kernel is loaded here once: never in a frame); None (nothing changed) for any
        other frame."""
        asc = pl.limiter
        phase = pl.phase
        if phase is HilMode.SYNCHRONIZING:
            # blending (seed 000 4.1.1): its first frame (the ramp starts, the limiter is reset)
            # and its last (c reaches 1, the phase changes: an event) take the plain path
            sync = pl.sync
            c = None if sync.start_pose is None else sync.next_coefficient()
            if c is None or not _plain_array(sync.start_pose):
                return None
            start = sync.start_pose
        elif phase is HilMode.RUNNING:
            c, start = 0.0, _NO_POSE
        else:
            return None
        if (pl.x is None or future is not None
                or not isinstance(asc, _ASC) or asc.saturated or asc.scale < 1.0
                or (mode is not None and (mode is HilMode.FAULT or mode != pl.supervisor_mode))
                or type(stamp_ns) is not int or type(now_ns) is not int
                or not (-_INT64 < stamp_ns < _INT64 and -_INT64 < now_ns < _INT64)
                or not _plain_array(reference) or reference.shape != (7,)
                or (measured is not None and not (_plain_array(measured) and measured.shape == (7,)))):
            return None
        inputs = pl.inputs
        last = inputs.last_stamp
        try:
            ok, meas_kind, meas_normed, ref_kind, ref_normed, r, v_pass, v_new, twist, blended = K.quiet_running(
                self.cfg, self.icfg, _NO_POSE if measured is None else measured, measured is not None,
                reference, stamp_ns, now_ns, 0 if last is None else last, last is not None,
                pl.x, pl.v, asc.x, asc.v, start is not _NO_POSE, start, c)
        except TypeError:        # a state array of another layout: the frozen kernel refuses it
            self.refused += 1
            return None
        if not ok:
            return None
        self.frames += 1
        if measured is not None:                                     # _take_measured
            pl._streaks['measured_invalid'] = 0
            pl.measured = measured if meas_kind == 1 else meas_normed
        pose = reference if ref_kind == 1 else ref_normed             # ReferenceInput.take
        inputs.since_accept = inputs.bad_streak = inputs.unusable = 0
        inputs.last_stamp = stamp_ns
        inputs.last_ref = pose
        if mode is not None:                                          # _valid_mode
            pl._streaks['mode_invalid'] = 0
        pl.clamping = False                                           # _limit_and_check
        asc.scale = 1.0                                               # the ASC's pass-through
        asc.integrator[:] = 0.0
        asc.v = v_pass
        asc.x = r.copy()
        asc._r2, asc._r1 = asc._r1, r.copy()
        if start is not _NO_POSE:                                     # SyncRamp.step
            pl.sync.advance()
            pose = blended
        pl.x = r                                                      # _emit
        pl.v = v_new
        pl.pose = pose
        return StepResult(pose, twist, [], phase)

