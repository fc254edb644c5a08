"""``timebase`` lifecycle node: safe reference poses -> servo-rate joint setpoints (docs/timebase.md).

Medium and low level of the seed 000 motion planner (sections 4.2-4.3), all in
``hil_core.timebase``: ring buffer with W/R indices and time-base control, merged
triangular-velocity moves, segmentation, inverse kinematics of each segment point, cubic
B-spline to the servo period.

* in: ``/planner/safe_reference`` (PoseStamped, stream QoS). The first valid reference after
  activation is the start pose (the planner's synchronisation ramp starts at the robot). NaN,
  zero quaternions, duplicated or out-of-order stamps are refused and counted (throttled WARN).
* out: ``/hexapod_controller/joint_trajectory`` (JointTrajectory): one message per move with
  the servo points at time_from_start = Ts, 2 Ts, ... T (positions + velocities), header.stamp
  = the frame time. Lockstep: the reference stamped t_k produces the command of frame k; if
  the simulated clock passes a frame without a reference, that frame is produced anyway (the
  buffer drains, then holds) so the mock never waits for a reference that will not come.
  Real time: the frames of the wall-time grid that are due are produced as each reference comes
  in (as soon as the pose they need is there); when references stop, a timer every move time
  goes on producing them (the buffer drains, then holds).
  The reader clock of the time base is the real frame time (never a count of timer callbacks:
  a late or missed callback must show up as distance, else the control slows down while the
  reader falls behind) and runs ``lead_frames`` ahead of the wall clock, so the servo points of a
  frame are out one frame before the drives need them. Each message then carries the previous
  frame's points and the new ones (8 points, header.stamp = the wall frame time): a message up
  to one frame late still covers the present, and a JTC that replaces its trajectory on receipt
  starts from a state on the same cubic, so it reproduces the servo points exactly.
* ``/diagnostics``: W-R distance (integer and fractional), time-base factor, underruns,
  holds, overruns, refused/filled references, delay reference stamp -> setpoint (last, min,
  max). WARN while holding without references, ERROR (latched hold) on an IK failure.
"""
from __future__ import annotations

import math
import time

import numpy as np
from geometry_msgs.msg import PoseStamped
from rclpy.clock import Clock, ClockType
from rosgraph_msgs.msg import Clock as ClockMsg
from trajectory_msgs.msg import JointTrajectory

from hil_core.drives.plants.plain_trajectory import PlainTrajectory
from hil_core.timebase import TimeBaseEngine, hexaslide_ik
from hil_core.timebase import warm_up as timebase_warm_up
from hil_core.timebase.realtime_frames import due_frame
from hil_nodes import qos, topics
from hil_nodes.msgs import convert
from hil_nodes.framework.base import ERROR, OK, WARN, HilLifecycleNode
from hil_nodes.runtime.chain_port import pose_from_message, trajectory_port
from hil_nodes.runtime.frame_loop import LOOP
from hil_nodes.runtime.intra_process import BUS
from hil_nodes.runtime.runner import main_for
from hil_nodes.timebase import params

_INF = math.inf


class TimebaseNode(HilLifecycleNode, name='timebase', task='buffer', params=params.PARAMS):
    """Statuses "timebase: buffer": the reference buffer: W-R distance, time-base factor,
    holding."""

    def __init__(self, node_name: str | None = None, **kwargs):
        super().__init__(node_name, **kwargs)
        self.engine = None
        self._io = []
        self._own_timers = []
        self.counters = dict.fromkeys(('frames', 'references', 'invalid', 'stale', 'filled', 'skipped_frames',
                                       'servo_cycles', 'saturated_cycles', 'factor_off_cycles',
                                       'distance_off_frames'), 0)

    # --- lifecycle ---------------------------------------------------------------------------
    def configure_node(self) -> None:
        p = self.p
        self.cfg = params.timebase_config(p)          # ValueError -> configure refused
        # the engine's compiled kernels are loaded (or compiled) here, never at activation: a
        # node blocked in a transition sends no heartbeat, and the supervisor would call it dead
        timebase_warm_up()
        try:
            self.ik = hexaslide_ik(p.robot)
        except (OSError, KeyError) as exc:
            raise ValueError(f"parameter 'robot': {exc}") from exc
        self.frame_ns = int(round(p.move_time * 1e9))
        self.times = np.arange(1, self.cfg.servo_per_move + 1) * p.servo_period
        # real time: lead_frames ahead, and the previous frame's points repeated in every message
        self.lead_ns = 0 if p.lockstep else p.lead_frames * self.frame_ns
        # a frame's message is first needed lead_frames after its time: it waits for its own
        # reference up to that long (hil_core.timebase.realtime_frames)
        self.wait_ns = int(p.frame_wait * self.lead_ns)
        self.expected_distance = params.designed_distance(p)
        n_out = self.cfg.servo_per_move * (1 + (p.lead_frames if not p.lockstep else 0))
        self.out_times = np.arange(1, n_out + 1) * p.servo_period
        messages = convert.TrajectoryMessages(p.joint_names, p.servo_period)
        # a message's point times (ns, as its time_from_start): every point of the repeated and the
        # new frame, the last ones of which start the first message
        self._point_ns = np.array([convert.duration_ns(t) for t in self.out_times], dtype=np.int64)
        self._names = tuple(p.joint_names)
        self._cycle = self.cycle_monitor('frame', p.move_time)
        self.pub = self.create_lifecycle_publisher(JointTrajectory, topics.HEXAPOD_JOINT_TRAJECTORY,
                                                   qos.command(depth=50, lockstep=p.lockstep))
        self._port = trajectory_port(self.pub, messages)
        self._io = [self.create_subscription(PoseStamped, topics.PLANNER_SAFE_REFERENCE, self._on_reference,
                                             self.stream_qos(), chain_input=self._on_reference_payload)]
        if p.lockstep:
            self._io.append(self.create_subscription(ClockMsg, topics.CLOCK, self._on_clock, qos.stream(True)))

    def activate_node(self) -> None:
        self.engine = TimeBaseEngine(self.cfg, self.ik)     # started by the first reference
        self.epoch_ns = None
        self.last_frame_ns = None
        self.last_ref_ns = None
        self._waited_queued = False      # a _produce_waited call is queued for this turn's end
        self._was_holding = False
        self._draining = False
        self._fault_reported = False
        self._delays = []
        self._prev_out = None
        self._own_timers = [self.create_timer(self.p.status_period, self._report,
                                              clock=Clock(clock_type=ClockType.STEADY_TIME))]
        if not self.p.lockstep:
            # a slow watch while references come (they drive the frames); the frame-rate timer
            # exists only while they do not (drain, then hold), as an idle 400 Hz timer costs
            # ~0.06 CPU-s per s here
            self._own_timers.append(self.create_group_timer(4 * self.p.move_time, self._watch_references))
            self._fallback_timer = None
            self._last_ref_wall = -math.inf

    def deactivate_node(self) -> None:
        # nothing further is commanded: the drives hold the last setpoint, which is at rest
        # when the supervisor stopped the references first (the normal mode flow)
        self.release(*self._own_timers, getattr(self, '_fallback_timer', None))
        self._own_timers = []
        self._fallback_timer = None
        self._report()
        self.engine = None

    def cleanup_node(self) -> None:
        self.release(*self._io, self.pub)
        self._io = []

    def error_node(self) -> None:
        self.deactivate_node()

    # --- inputs ------------------------------------------------------------------------------
    def _on_reference(self, msg: PoseStamped) -> None:
        self._on_reference_payload(pose_from_message(msg))

    def _on_reference_payload(self, payload) -> None:
        """The safe reference (stamp ns, 7 values): from the planner's chain port in one process,
        else read from the message (hil_nodes.runtime.chain_port)."""
        if not self.active or self.engine is None:
            return
        stamp_ns, pose = payload
        # a refused reference is counted, and told with the metrics at most once per the node's
        # warn_interval for its kind
        # (the array methods and math.sqrt of the dot product: np.all and np.linalg.norm, the same
        # test, cost 5-8 us a frame through their wrappers)
        pose = np.asarray(pose)
        rotation = pose[3:]
        if not np.isfinite(pose).all() or math.sqrt(rotation.dot(rotation)) < 1e-9:
            self.counters['invalid'] += 1
            self.report_problem('invalid', WARN, f'refused a non-finite reference (stamp {stamp_ns * 1e-9:.6f} s)',
                                interval=self.p.warn_interval, log=True, figures=self._metrics)
            return
        if not self.engine.started:
            try:
                self.epoch_ns = stamp_ns
                self.engine.start(pose, 0.0)
            except ValueError as exc:
                self.counters['invalid'] += 1
                self.report_problem('invalid', ERROR, f'cannot start at the first reference: {exc}',
                                    interval=self.p.warn_interval, log=True, figures=self._metrics)
                return
            self.status(OK, 'started at the first reference', **self._metrics())
        else:
            result = self.engine.write(pose, (stamp_ns - self.epoch_ns) * 1e-9)
            if result == 'stale':
                self.counters['stale'] += 1
                self.report_problem('stale', WARN, f'refused a duplicate or out-of-order reference '
                                                   f'(stamp {stamp_ns * 1e-9:.6f} s)',
                                    interval=self.p.warn_interval, log=True, figures=self._metrics)
                return
            if result == 'invalid':
                self.counters['invalid'] += 1
                self.report_problem('invalid', WARN, 'refused an invalid reference', interval=self.p.warn_interval,
                                    log=True, figures=self._metrics)
                return
            if result.startswith('filled'):
                self.counters['filled'] += int(result.split(':')[1])
        self.counters['references'] += 1
        self.last_ref_ns = stamp_ns
        if self.p.lockstep:
            if self.last_frame_ns is None or stamp_ns >= self.last_frame_ns:
                self._draining = False       # the writer is back: reactive again
            self._produce(stamp_ns)
        else:
            # real time: the frames due on the wall grid are produced as soon as the reference is
            # in (a separate timer's phase against the F/T clock would eat into the look-ahead)
            self._last_ref_wall = time.monotonic()
            self._on_tick(stamp_ns)

    def _on_clock(self, msg: ClockMsg) -> None:
        """Lockstep: a frame passed without a reference -> command this one from the buffer."""
        if not self.active or self.engine is None or not self.engine.started or self.last_frame_ns is None:
            return
        t_ns = convert.stamp_to_ns(msg.clock)
        skipped = t_ns >= self.last_frame_ns + 2 * self.frame_ns - self.frame_ns // 2
        if skipped or (self._draining and t_ns > self.last_frame_ns):
            # the hardware advanced without our command (it held): from now on every frame is
            # produced at its clock tick until a reference arrives again, so a dead writer
            # costs one lockstep timeout, not one per frame
            self._draining = True
            self._produce(t_ns)

    def _references_flow(self) -> bool:
        return time.monotonic() - self._last_ref_wall < 2 * self.p.move_time

    def _watch_references(self) -> None:
        # not while the process's own queue holds deliveries: the references may be upstream in
        # it after a stall (the planner's _watch_references says why)
        if self._fallback_timer is None and not BUS.pending() and not self._references_flow():
            self._fallback_timer = self.create_timer(self.p.move_time, self._fallback_tick)
            self._on_tick()

    def _fallback_tick(self) -> None:
        if self._references_flow() and self._fallback_timer is not None:
            self.release(self._fallback_timer)
            self._fallback_timer = None
        self._on_tick()

    def _on_tick(self, reference_ns: int | None = None) -> None:
        """Real time: produce the frames of the wall-time grid that are due: at a reference
        stamped ``reference_ns``, its own frame at once, and the frames that waited ``frame_wait``
        for a reference that did not come once this turn's deliveries are done
        (``_produce_waited``); at a tick without references, every frame whose time has passed.

        The waited frames wait for the turn's end because after a stall of the process the
        references of every frame it missed come in one turn, one after the other: produced at
        the first of them, the later frames were made without their own references (W-R one
        pose short, the time-base control bending the interpolation for a delay the lead
        absorbs). Without a spin loop (a test's executor) they are produced at once."""
        if not (self.active and self.engine is not None and self.engine.started):
            return
        now_ns = self.now_ns()
        up_to = due_frame(now_ns, self.frame_ns, self.wait_ns, reference_ns)
        if reference_ns is not None and self.last_frame_ns is not None:
            own = min(reference_ns, now_ns) // self.frame_ns * self.frame_ns
            if up_to > own:
                if not self._waited_queued:
                    self._waited_queued = True
                    LOOP.after_frame(self, self._produce_waited)
                up_to = max(own, self.last_frame_ns)
        self._produce_until(up_to)

    def _produce_waited(self) -> None:
        """After the turn's deliveries: the frames still due by the rule at the last reference."""
        self._waited_queued = False
        if self.active and self.engine is not None and self.engine.started and self.last_ref_ns is not None:
            self._produce_until(due_frame(self.now_ns(), self.frame_ns, self.wait_ns, self.last_ref_ns))

    def _produce_until(self, up_to: int) -> None:
        """Every frame up to ``up_to`` not produced yet, in order (catching up late ones; beyond
        ``max_catchup`` frames the oldest are skipped and counted)."""
        if self.last_frame_ns is None:
            self._produce(up_to)
            return
        due = (up_to - self.last_frame_ns) // self.frame_ns
        if due > self.p.max_catchup:
            self.counters['skipped_frames'] += due - self.p.max_catchup
            self._cycle.skipped(due - self.p.max_catchup)
            self.last_frame_ns += (due - self.p.max_catchup) * self.frame_ns
            self._prev_out = None     # the last points sent belong to a frame long past
        while self.last_frame_ns < up_to:
            self._produce(self.last_frame_ns + self.frame_ns)

    # --- output ------------------------------------------------------------------------------
    def _produce(self, frame_ns: int) -> None:
        if self.last_frame_ns is not None and frame_ns <= self.last_frame_ns:
            return
        with self._cycle():
            self._produce_frame(frame_ns)

    def _produce_frame(self, frame_ns: int) -> None:
        rel = (frame_ns + self.lead_ns - self.epoch_ns) * 1e-9     # the reader clock
        out = self.engine.step_frame(rel)
        self.last_frame_ns = frame_ns
        self.counters['frames'] += 1
        self._count_cycles(out)
        times = self._point_ns
        if self.lead_ns:
            prev = self._prev_out
            self._prev_out = (out.positions, out.velocities)
            if prev is None:      # the first message (or one after skipped frames): the new points only
                positions, velocities = out.positions, out.velocities
                times = times[len(times) - len(positions):]
            else:
                # (concatenate: vstack's own work without its per-call wrappers, 2-4 us a frame)
                positions, velocities = np.concatenate((prev[0], out.positions)), np.concatenate((prev[1], out.velocities))
        else:
            positions, velocities = out.positions, out.velocities
            times = times[:len(positions)]
        # C-ordered rows (the engine's may be views): the drives' compiled check was loaded for those
        self._port.send(PlainTrajectory(self._names, frame_ns, times, np.ascontiguousarray(positions),
                                        np.ascontiguousarray(velocities)))
        self.count_published(topics.HEXAPOD_JOINT_TRAJECTORY)
        # the points' delays (reader clock - their reference's stamp), for the status only: kept as
        # they come and computed there (three numpy calls and a list a frame were 2.7 us alone)
        self._delays.append((rel, out.ref_stamps))
        self._last_out = out
        if out.fault and not self._fault_reported:
            self._fault_reported = True
            self.get_logger().error(out.fault)
            self.status(ERROR, out.fault, **self._metrics())
        if self.engine.holding != self._was_holding:
            self._was_holding = self.engine.holding
            if self.engine.holding:
                self.status(WARN, 'no references: buffer drained, holding at rest', **self._metrics())
            else:
                self.status(OK, 'references back: following', **self._metrics())

    def _count_cycles(self, out) -> None:
        """Counters the supervisor watches: time-base saturation and distortion, W-R off default."""
        c, eng = self.counters, self.engine
        step, max_steps = self.cfg.step, self.cfg.max_steps
        # 4 factors a frame: Python floats (round() rounds half to even, as np.rint; a NaN or
        # inf is compared as numpy would: NaN counts nowhere, inf as saturated). One plain loop:
        # a list and two generator sums were 1.8 us alone, this 0.8
        factors = out.factors.tolist()
        saturated = off = 0
        for f in factors:
            x = (f - 1.0) / step
            n = abs(round(x)) if -_INF < x < _INF else abs(x)
            if n >= max_steps:
                saturated += 1
            if n > 2:
                off += 1
        c['servo_cycles'] += len(factors)
        c['saturated_cycles'] += saturated
        c['factor_off_cycles'] += off
        if not eng.holding and out.distances[-1] != self.expected_distance:
            c['distance_off_frames'] += 1

    def _metrics(self) -> dict:
        eng = self.engine
        values = dict(self.counters)
        if eng is None or not eng.started:
            return values
        out = getattr(self, '_last_out', None)
        values.update(distance=eng.buffer.distance, expected_distance=self.expected_distance, factor=eng.control.factor,
                      underruns=eng.underruns, holds=eng.holds, overruns=eng.buffer.overruns,
                      holding=eng.holding, ik_fault=eng.fault or '')
        if out is not None:
            values['fractional_distance'] = float(out.fractional_distances[-1])
        if self._delays:
            d = np.concatenate([rel + self.times - stamps for rel, stamps in self._delays])
            values.update(delay_ms=d[-1] * 1e3, delay_min_ms=d.min() * 1e3, delay_max_ms=d.max() * 1e3)
        return values

    def _report(self) -> None:
        if self.engine is None:
            return
        values = self._metrics()
        self._delays = self._delays[-1:]
        if self.engine.fault:
            self.status(ERROR, self.engine.fault, **values)
        elif not self.engine.started:
            self.status(OK, 'waiting for the first reference', **values)
        elif self.engine.holding:
            self.status(WARN, 'no references: holding at rest', **values)
        else:
            self.status(OK, 'following', **values)


main = main_for(TimebaseNode)

if __name__ == '__main__':
    main()
