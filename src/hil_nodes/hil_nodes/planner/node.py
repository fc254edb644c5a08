"""`planner` lifecycle node: the trajectory planner of seed 000 4.1 / seed 001 3 between the
admittance model and the time-base buffer (docs/planner.md). Thin: parameters, messages, the
lockstep gate; the algorithm is ``hil_core.planner.trajectory_planner``.

Per frame t_k (``/hil/frame``, frame_id = supervisor mode) it steps the planner once and publishes
the safe reference (PoseStamped + TwistStamped stamped t_k). Lockstep: when the planner's phase
consumes the model's reference (SYNCHRONIZING, RUNNING) frame k is computed only once the
reference stamped t_k is in as well (``FrameSync``); in the other phases nobody needs to produce
one, so the frame alone releases it. Either way the output is a function of message content.
A reference that does not come within ``reference_wait`` wall seconds (dead admittance) is
treated as a dropout and reported; a check that finds this process paused (``OwnPause``)
restarts those waits instead, since the references may be in its queue, unread.

Real time (wall clock): the planner is driven by the model's references, one step per
reference, stamped with it (so the chain F/T sample -> reference -> safe reference keeps one
stamp and a constant delay; a separate frame timer would beat against the F/T clock and skip or
repeat references). The mode comes from the latched ``/hil/mode``. When no reference has come
for ``realtime_fallback_frames`` frames (FAULT, a dead or stalled admittance) a wall timer steps
the planner without one, so it can still brake and hold.
"""
from __future__ import annotations

import time

import numpy as np
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
from geometry_msgs.msg import PoseStamped, TwistStamped
from rclpy.clock import Clock, ClockType
from std_msgs.msg import Header, String
from visualization_msgs.msg import MarkerArray

from hil_core.supervision.lockstep import FrameSync, OwnPause
from hil_core.supervision.modes import MOVING_MODES, HilMode
from hil_core.planner.results import ERROR as EV_ERROR, WARN as EV_WARN
from hil_core.planner.trajectory_planner import TrajectoryPlanner
from hil_nodes import qos, topics
from hil_nodes.msgs import convert
from hil_nodes.framework.base import ERROR, OK, WARN, HilLifecycleNode, ParameterError
from hil_nodes.runtime.chain_port import pose_from_message, pose_port
from hil_nodes.runtime.intra_process import BUS
from hil_nodes.planner import params
from hil_nodes.planner.markers import workspace_markers
from hil_nodes.runtime.runner import main_for

WAIT_CHECK_PERIOD = 0.05       # lockstep: steady s between checks of the references waited for
_LEVEL = {0: DiagnosticStatus.OK, EV_WARN: DiagnosticStatus.WARN, EV_ERROR: DiagnosticStatus.ERROR}


class PlannerNode(HilLifecycleNode, name='planner', task='workspace', params=params.PARAMS):
    """Statuses "planner: workspace": the workspace guard and motion phases."""

    def __init__(self, node_name: str | None = None, **kwargs):
        super().__init__(node_name, **kwargs)
        self._io = []
        self.planner = None
        self._markers_pub = None       # plain latched publisher: static content (configure)

    def check_parameters(self, p) -> str | None:
        try:
            params.planner_config(p)
        except ValueError as exc:
            return str(exc)
        return None

    # --- lifecycle ---------------------------------------------------------------------------
    def configure_node(self) -> None:
        try:
            self.cfg = params.planner_config(self.p)
        except ValueError as exc:
            raise ParameterError(str(exc)) from exc
        self.planner = TrajectoryPlanner(self.cfg)
        self._cycle = self.cycle_monitor('step', self.p.period)
        stream = self.stream_qos()
        pub = self.create_lifecycle_publisher
        self._pose_pub = pub(PoseStamped, topics.PLANNER_SAFE_REFERENCE, stream)
        self._pose_port = pose_port(self._pose_pub, lambda: self.p.frame_id)
        self._twist_pub = pub(TwistStamped, topics.PLANNER_SAFE_TWIST, stream)
        # events: reliable; transient-local in lockstep like every lockstep producer (qos.py), so a
        # late-matching supervisor still gets them (such a writer also serves volatile readers)
        events_qos = qos.latched(100) if self.p.lockstep else qos.command(100)
        self._events_pub = pub(DiagnosticArray, topics.PLANNER_EVENTS, events_qos)
        self._hil_events_pub = pub(DiagnosticArray, topics.HIL_EVENTS, events_qos)
        # the workspace envelope is static: built and published (latched) here, before any node
        # streams. At activation, 7000 mesh points took ~14 ms in the one process and left a gap
        # in every stream that had started (the run accounting flagged it).
        if self._markers_pub is None:
            self._markers_pub = self.create_publisher(MarkerArray, topics.PLANNER_MARKERS, qos.latched())
        self._markers_pub.publish(workspace_markers(self.cfg.workspace, self.p.frame_id))
        self._io = [self.create_subscription(PoseStamped, topics.ADMITTANCE_REFERENCE, self._on_reference, stream,
                                             chain_input=self._on_reference_payload),
                    self.create_subscription(PoseStamped, topics.KINEMATICS_TCP_POSE, self._on_measured, stream,
                                             chain_input=self._on_measured_payload)]
        if self.p.lockstep:
            self._io.append(self.create_subscription(Header, topics.HIL_FRAME, self._on_frame, stream))
            # reference_wait is wall time: on the node clock (sim time, which stands still while a
            # frame waits) this timer never fired, and a missing reference became a late command
            self._wait_timer = self.create_timer(WAIT_CHECK_PERIOD, self._check_wait,
                                                 clock=Clock(clock_type=ClockType.STEADY_TIME))
            self._own_pause = OwnPause(5 * WAIT_CHECK_PERIOD)
        else:
            self._io.append(self.create_subscription(String, topics.HIL_MODE, self._on_mode, qos.latched(20)))
            # a slow watch while references flow; the frame-rate timer exists only while they do not
            # (a 400 Hz timer costs ~0.06 CPU-s per s here even when it has nothing to do)
            self._wait_timer = self.create_group_timer(self.p.realtime_fallback_frames * self.p.period / 2.0,
                                                       self._watch_references)
            self._fallback_timer = None
        self.mode = HilMode.IDLE
        self.last_key = None
        self._last_ref_wall = -float('inf')
        self._period_ns = int(round(self.p.period * 1e9))
        self.sync = FrameSync(('frame', 'reference'))
        self.pending = {}             # lockstep frames waiting for their reference: key -> (mode, since)
        self.measured = None
        self.awaiting_pose = None     # a frame that could not start without the robot pose
        self.counters = dict(frames=0, published=0, bad_frames=0, waited_out=0, takeovers=0, faults=0,
                             fallback_steps=0)

    def deactivate_node(self) -> None:
        # Outputs stop with the lifecycle publishers and the time base holds the last pose. The
        # supervisor deactivates in IDLE; deactivating while moving is a stop the planner cannot
        # smooth any more, so it is reported loudly.
        self.pending = {}
        self.awaiting_pose = None
        if self.planner is not None and np.any(self.planner.v):
            self.get_logger().error('deactivated while moving: the time base now holds the last reference')
            self.status(ERROR, 'deactivated while moving (phase ' + self.planner.phase.value + ')', **self.counters)

    def cleanup_node(self) -> None:
        self.release(*self._io, self._wait_timer)
        self._io = []
        self._stop_fallback()
        self.planner = None

    # --- inputs ----------------------------------------------------------------------------
    def _on_measured(self, msg: PoseStamped) -> None:
        self._on_measured_payload(pose_from_message(msg))

    def _on_measured_payload(self, payload) -> None:
        """The robot's pose (stamp ns, 7 values): from the kinematics node's chain port in one
        process, else read from the message (hil_nodes.runtime.chain_port)."""
        self.measured = payload[1]
        if self.awaiting_pose is not None and self.active and self.p.lockstep and self.awaiting_pose[1] in MOVING_MODES:
            # a motion frame could not start for want of the robot pose: compute it now (lockstep:
            # a frame is released only once, so dropping it would stall the run forever)
            frame, self.awaiting_pose = self.awaiting_pose, None
            self._compute(*frame)

    def _on_reference(self, msg: PoseStamped) -> None:
        self._on_reference_payload(pose_from_message(msg))

    def _on_reference_payload(self, payload) -> None:
        """The model's reference (stamp ns, 7 values): from the admittance node's chain port in
        one process, else read from the message (hil_nodes.runtime.chain_port)."""
        if not self.active:
            return
        key, pose = payload
        if not self.p.lockstep:
            now = self.now_ns()
            problem = self.planner.stamp_problem(key, now)
            if not problem and key > now + self._period_ns:
                # on the wall clock a reference is stamped with its F/T sample, never ahead of now:
                # one from the future would become the frame key and hold back every later one
                problem = f'reference stamped {(key - now) * 1e-6:.1f} ms in the future'
            if problem:
                # outside the window of sim time (e.g. far in the future): refused and reported, never
                # a frame key (it would freeze every later reference), and not counted as arriving, so
                # the fallback steps the planner, which holds and reports reference_stale
                events = self.planner.refuse_reference(problem)
                if events:
                    self._publish_events(self.get_clock().now().to_msg(), events)
                return
            self._last_ref_wall = time.monotonic()
            if self.last_key is None or key > self.last_key:
                self._compute(key, self.mode, pose if self.planner.will_use_reference(self.mode) else None)
            return
        for k, frame in self.sync.put('reference', key, pose):
            self._compute(k, frame['frame'], frame['reference'])
        self._forget_released()

    def _on_frame(self, msg: Header) -> None:
        if not self.active:
            return
        key = convert.stamp_to_ns(msg.stamp)
        try:
            mode = HilMode(msg.frame_id)
        except ValueError:
            self.counters['bad_frames'] += 1
            self.status(WARN, f'frame with unknown mode {msg.frame_id!r} ignored', **self.counters)
            return
        if not self.planner.will_use_reference(mode):
            # no reference needed this frame: release it now (and forget any older pending one);
            # a repeat of a frame that produced nothing for want of the robot pose, now in another
            # mode (the supervisor re-publishes t_0 with START), is computed again
            retry = (self.awaiting_pose is not None and key == self.awaiting_pose[0]
                     and mode != self.awaiting_pose[1])
            if self.sync.last_released is None or key > self.sync.last_released or retry:
                self.sync.last_released = key
                self._forget_released()
                self._compute(key, mode, None)
            return
        ready = self.sync.put('frame', key, mode)
        for k, frame in ready:
            self._compute(k, frame['frame'], frame['reference'])
        if not ready and (self.sync.last_released is None or key > self.sync.last_released):
            now = time.monotonic()
            self.pending[key] = (mode, now)
            self._own_pause.alive(now)
        self._forget_released()

    def _on_mode(self, msg: String) -> None:
        try:
            self.mode = HilMode(msg.data)
        except ValueError:
            self.counters['bad_frames'] += 1
            self.status(WARN, f'unknown mode {msg.data!r} ignored', **self.counters)

    def _references_flow(self) -> bool:
        # judged by arrival (wall), not by stamps: references arrive some time after their stamp
        return time.monotonic() - self._last_ref_wall < self.p.realtime_fallback_frames * self.p.period

    def _watch_references(self) -> None:
        """The slow watch (after a turn's deliveries): no reference for the fallback's time starts
        the fallback, unless the process's own queue still holds deliveries: after a stall of the
        process the chain's backlog can outlast a drain's budget, and the watch, run between two
        drains, took the references still upstream in the queue for a dead writer (the fallback
        stepped the frame of now and every queued reference, older, was dropped: 8 frames after a
        22 ms stall). With a dead writer the queue is empty here, after a drain that ended."""
        if self.active and self._fallback_timer is None and not BUS.pending() and not self._references_flow():
            self._fallback_timer = self.create_timer(self.p.period, self._fallback_tick)
            self._fallback_tick()

    def _stop_fallback(self) -> None:
        self.release(getattr(self, '_fallback_timer', None))
        self._fallback_timer = None

    def _fallback_tick(self) -> None:
        """Real time: step without a reference when none has come for a while (brake, hold)."""
        if not self.active or self._references_flow():
            self._stop_fallback()
            return
        now = self.now_ns() // self._period_ns * self._period_ns
        if self.last_key is None or now > self.last_key:
            self.counters['fallback_steps'] += 1
            self._compute(now, self.mode, None)

    def _forget_released(self) -> None:
        last = self.sync.last_released
        if last is not None:
            for k in [k for k in self.pending if k <= last]:
                del self.pending[k]

    def _check_wait(self) -> None:
        """Lockstep: a reference that never comes must not stall the robot (dead admittance)."""
        now = time.monotonic()
        if self._own_pause.paused(now):   # this process stood still: the references may be queued, unread
            self.pending = {k: (mode, max(since, now)) for k, (mode, since) in self.pending.items()}
            return
        for key in sorted(self.pending):
            mode, since = self.pending[key]
            if now - since < self.p.reference_wait:
                break
            del self.pending[key]
            self.sync.last_released = key
            self.counters['waited_out'] += 1
            self.status(WARN, f'no reference for frame {key} within {self.p.reference_wait} s: treated as '
                        'a dropout', **self.counters)
            self._compute(key, mode, None)

    def cycle_figures(self) -> dict:
        """How many frames the compiled quiet RUNNING frame served (hil_core.planner.quiet_frame)."""
        quiet = getattr(self.planner, 'quiet', None)
        return {} if quiet is None else {'compiled_frames': quiet.frames}

    # --- one frame -------------------------------------------------------------------------------
    def _compute(self, key: int, mode: HilMode, reference, ref_stamp=None) -> None:
        with self._cycle(key):
            self._step(key, mode, reference, ref_stamp)

    def _step(self, key: int, mode: HilMode, reference, ref_stamp=None) -> None:
        self.counters['frames'] += 1
        self.last_key = key
        res = self.planner.step(reference, ref_stamp if ref_stamp is not None else (key if reference is not None
                                                                                     else None),
                                mode, measured=self.measured,
                                now_ns=key if self.p.lockstep else self.now_ns())
        self.measured = None
        if res.events:
            self._publish_events(convert.ns_to_stamp(key), res.events)
        if res.pose is None:
            self.awaiting_pose = (key, mode, reference, ref_stamp)
            self.status(WARN, f'waiting for {topics.KINEMATICS_TCP_POSE}: no robot pose to start from',
                        **self.counters)
            return
        self.awaiting_pose = None
        self._pose_port.send((key, res.pose))
        self.count_published(topics.PLANNER_SAFE_REFERENCE)
        if self.p.publish_twist:
            tw = TwistStamped(twist=convert.array_to_twist(res.twist))
            tw.header.stamp, tw.header.frame_id = convert.ns_to_stamp(key), self.p.frame_id
            self._twist_pub.publish(tw)
        self.counters['published'] += 1

    def _publish_events(self, stamp, events) -> None:
        all_msg, hil_msg = DiagnosticArray(), DiagnosticArray()
        all_msg.header.stamp = hil_msg.header.stamp = stamp
        worst = OK
        for e in events:
            st = convert.diagnostic_status(_LEVEL.get(e.level, DiagnosticStatus.WARN), e.name, e.message,
                                           self.get_name(), {**e.values, 'phase': self.planner.phase.value})
            all_msg.status.append(st)
            if e.is_hil_event:
                hil_msg.status.append(st)
            if e.name == 'safety_takeover':
                self.counters['takeovers'] += 1
            if e.name == 'fault':
                self.counters['faults'] += 1
            worst = max(worst, {0: OK, EV_WARN: WARN, EV_ERROR: ERROR}[e.level])
            self.get_logger().info(f'{e.name}: {e.message}') if e.level == 0 else \
                self.get_logger().warning(f'{e.name}: {e.message}')
        self._events_pub.publish(all_msg)
        if hil_msg.status:
            self._hil_events_pub.publish(hil_msg)
        self.status(worst, '; '.join(f'{e.name}: {e.message}' for e in events), phase=self.planner.phase.value,
                    **self.counters)


main = main_for(PlannerNode)

if __name__ == '__main__':
    main()
