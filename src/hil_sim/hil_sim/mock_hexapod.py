"""Mock hexapod drives: six slider servo axes that own the simulated clock (docs/mock_hexapod.md).

Lockstep (docs/CONTRACTS.md "Clock and lockstep", seed 004): at frame k the mock publishes
``/clock`` = t_k and ``/joint_states`` (stamp t_k), then waits for *the command of frame k*
(a JointTrajectory with ``header.stamp == t_k``). With it, it integrates the servo over the
frame's substeps and publishes frame k+1. Without it after ``lockstep_timeout`` wall seconds
it holds the last setpoint (zero velocity feedforward, like a drive whose stream stopped),
counts a late command and advances. Before the first command ever it does not advance at
all and re-publishes t_0 at 10 Hz wall. Waiting is *state* checked on arrival of a command
and on a short steady timer, never a blocking call, so the executor keeps serving services.

Real time (``lockstep: false``): wall clock, no ``/clock``. Frames lie on the wall-time grid
(t_k = k T of the node clock); a steady timer integrates every frame that wall time says is due
and never waits. A command replaces the active trajectory as a ros2_control JTC does
(``header.stamp == 0`` = start now), at the frame in which it was received: a command that
arrives while the integration of earlier frames is still pending (late timer) waits for them,
so the drives follow exactly what a JTC with a fine update rate would (the timebase's
overlapping 8-point messages then reproduce its servo points exactly).

Bad commands (wrong joint count, unknown/duplicate names, NaN/inf, non-monotonic times,
positions or velocities beyond limits) are rejected with an ERROR diagnostic naming the
reason; the drives hold their last valid setpoint (no jump).
"""
from __future__ import annotations

import time

import numpy as np
from rclpy.clock import Clock, ClockType
from rosgraph_msgs.msg import Clock as ClockMsg
from sensor_msgs.msg import JointState
from trajectory_msgs.msg import JointTrajectory

from hil_core.servo import ServoAxes, ServoConfig, order_joint_trajectory, sample_knots, validate_joint_trajectory
from hil_core.timing import HIGH_LEVEL_PERIOD, SERVO_PERIOD
from hil_nodes import qos, topics
from hil_nodes.base import ERROR, WARN, HilLifecycleNode, Param
from hil_nodes.convert import duration_to_sec, ns_to_stamp, stamp_to_ns
from hil_nodes.runner import main_for
from hil_sim.hardware_watchdog import PARAMS as WATCHDOG_PARAMS, HardwareWatchdog
from hil_sim.lockstep_status import lockstep_status

JOINTS = [f'slider_{i}' for i in range(1, 7)]
REPUBLISH_PERIOD = 0.1      # wall s between re-publications of t_0 before the first command
MAX_PENDING = 64            # future-stamped commands kept in lockstep
MAX_CATCHUP = 4             # real time: most frames advanced in one late timer callback


def _unique(names) -> str | None:
    if not names:
        return 'needs at least one joint name'
    return None if len(set(names)) == len(names) else 'joint names must be unique'


class MockHexapodNode(HilLifecycleNode):
    PARAMS = (
        Param('joint_names', 'str[]', JOINTS, 'slider joint names, in /joint_states order', check=_unique),
        Param('position_min', 'float[]', [-0.2] * 6, 'lower slider position limits (m, 0 = home)',
              range=(-10.0, 10.0)),
        Param('position_max', 'float[]', [0.2] * 6, 'upper slider position limits (m, 0 = home)',
              range=(-10.0, 10.0)),
        Param('velocity_max', 'float[]', [1.0] * 6, 'slider velocity limits (m/s)', range=(1e-6, 100.0)),
        Param('acceleration_max', 'float[]', [20.0] * 6, 'slider acceleration limits (m/s^2)',
              range=(1e-3, 1e4)),
        Param('initial_positions', 'float[]', [0.0] * 6, 'slider positions at configure (m)',
              range=(-10.0, 10.0)),
        Param('bandwidth', float, 50.0, 'natural frequency of the closed position loop (Hz)',
              range=(0.1, 1000.0)),
        Param('damping', float, 0.7, 'damping ratio of the closed position loop', range=(0.05, 5.0)),
        Param('velocity_feedforward', float, 1.0, 'velocity feedforward gain (1 = full)', range=(0.0, 1.5)),
        Param('acceleration_feedforward', float, 1.0, 'acceleration feedforward gain (1 = full)',
              range=(0.0, 1.5)),
        Param('frame_period', float, HIGH_LEVEL_PERIOD, 'lockstep frame T (s), a multiple of servo_period',
              range=(1e-4, 1.0)),
        Param('servo_period', float, SERVO_PERIOD, 'servo substep (s), setpoint rate of the drives',
              range=(1e-5, 0.1)),
        Param('internal_steps', int, 5, 'position-loop updates per servo period', range=(1, 100)),
        Param('lockstep_timeout', float, 0.5, 'wall s to wait for the command of a frame before holding',
              range=(1e-3, 60.0), dynamic=True),
        Param('time_scale', float, 1.0, 'sim s per wall s; in lockstep an upper bound (0 = as fast '
              'as possible), in real time the pace (must be > 0)', range=(0.0, 1000.0), dynamic=True),
        Param('start_time', float, 0.0, 'sim time t_0 of the first frame (s)', range=(0.0, 1e6)),
        Param('status_period', float, 0.5, 'wall s between diagnostics with the frame counters',
              range=(0.01, 60.0)),
        *WATCHDOG_PARAMS,
    )

    def __init__(self, node_name: str = 'mock_hexapod', **kwargs):
        super().__init__(node_name, **kwargs)
        self._own_timers = []
        self._pubs = []
        self._sub = None
        self.servo = None

    # --- parameters --------------------------------------------------------------------------
    def _servo_config(self, p) -> ServoConfig:
        return ServoConfig(bandwidth=p.bandwidth, damping=p.damping,
                           velocity_feedforward=p.velocity_feedforward,
                           acceleration_feedforward=p.acceleration_feedforward,
                           position_min=tuple(p.position_min), position_max=tuple(p.position_max),
                           velocity_max=tuple(p.velocity_max), acceleration_max=tuple(p.acceleration_max),
                           servo_period=p.servo_period, internal_steps=p.internal_steps)

    def check_parameters(self, p) -> str | None:
        n = len(p.joint_names)
        for name in ('position_min', 'position_max', 'velocity_max', 'acceleration_max', 'initial_positions'):
            if len(getattr(p, name)) != n:
                return f"parameter '{name}' needs one value per joint ({n}), got {len(getattr(p, name))}"
        substeps = p.frame_period / p.servo_period
        if round(substeps) < 1 or abs(substeps - round(substeps)) > 1e-6:
            return (f"parameter 'frame_period' ({p.frame_period}) must be a whole multiple of "
                    f"'servo_period' ({p.servo_period})")
        problem = self._servo_config(p).problem()
        if problem:
            return f'servo parameters: {problem}'
        lo, hi, x0 = (np.asarray(v, float) for v in (p.position_min, p.position_max, p.initial_positions))
        if np.any(x0 < lo) or np.any(x0 > hi):
            return "parameter 'initial_positions' lies beyond position_min/position_max"
        if not p.lockstep and p.time_scale <= 0.0:
            return "parameter 'time_scale' must be > 0 in real time (lockstep: false)"
        return None

    def apply_parameters(self, changed: set[str]) -> None:
        if self.active:        # only dynamic ones get here while active
            if 'time_scale' in changed and not self.p.lockstep:
                self._start_frame_timer()
            return
        if changed - {'time_scale', 'lockstep_timeout', 'status_period'}:
            self._build_state()   # inactive: rebuild from the new values (the simulation restarts)

    # --- lifecycle ---------------------------------------------------------------------------
    def configure_node(self) -> None:
        p = self.p
        self._build_state()
        stream = self.stream_qos()
        # a simulated clock exists in lockstep and in scaled real time; real time at pace 1 runs on
        # the wall clock (no /clock stream)
        self._clock_pub = (self.create_lifecycle_publisher(ClockMsg, topics.CLOCK, qos.stream(True))
                           if self.sim_clock else None)
        self._js_pub = self.create_lifecycle_publisher(JointState, topics.JOINT_STATES, stream)
        self._sub = self.create_subscription(JointTrajectory, topics.HEXAPOD_JOINT_TRAJECTORY,
                                             self._on_command, qos.command(depth=50 if p.lockstep else 10, lockstep=p.lockstep))
        self._cycle = self.cycle_monitor('frame', p.frame_period)
        self._watchdog = HardwareWatchdog(self, len(p.joint_names))
        self._js = JointState()
        self._js.name = list(p.joint_names)

    def _build_state(self) -> None:
        p = self.p
        self.servo = ServoAxes(self._servo_config(p), p.initial_positions)
        self.n_sub = int(round(p.frame_period / p.servo_period))
        self.frame_ns = int(round(p.frame_period * 1e9))
        self.start_ns = int(round(p.start_time * 1e9))
        self.k = 0
        self.started = False
        self.frames = self.late_commands = self.rejected_commands = self.stale_commands = 0
        self.overruns = 0
        self._pending: dict[int, tuple] = {}
        self._queued: list[tuple[int, int, tuple | None]] = []   # real time: (apply at, stamp, entry)
        x0 = np.asarray(p.initial_positions, float)
        self._knots = (np.array([0.0]), x0[None, :], None)    # active setpoint trajectory (rel. s)
        self._frame_wall = time.monotonic()
        self._run_wall0 = None
        self._late_since_status = 0

    @property
    def sim_clock(self) -> bool:
        return self.p.lockstep or self.p.time_scale != 1.0

    def activate_node(self) -> None:
        self._watchdog.rearm()
        if not self.sim_clock:
            # frames on the wall-time grid, from the current one on
            self.start_ns = self.get_clock().now().nanoseconds // self.frame_ns * self.frame_ns
            self.k = 0
        self._publish_frame()
        steady = Clock(clock_type=ClockType.STEADY_TIME)
        self._own_timers.append(self.create_timer(self.p.status_period, self._publish_status, clock=steady))
        if self.p.lockstep:
            poll = min(max(self.p.lockstep_timeout / 10.0, 5e-4), 0.01)
            if self.p.time_scale > 0:
                poll = min(poll, max(self.p.frame_period / self.p.time_scale / 2.0, 5e-4))
            self._own_timers.append(self.create_timer(poll, self._poll, clock=steady))
        else:
            self._start_frame_timer()

    def _start_frame_timer(self) -> None:
        old = getattr(self, '_frame_timer', None)
        if old is not None:
            self.destroy_timer(old)
        steady = Clock(clock_type=ClockType.STEADY_TIME)
        self._rt_wall0 = None       # wall reference of the real-time pace (reset on a new pace)
        self._frame_timer = self.create_timer(self.p.frame_period / self.p.time_scale,
                                              self._realtime_tick, clock=steady)

    def deactivate_node(self) -> None:
        # The simulated world freezes: sim time stops, the drives keep their state.
        for timer in self._own_timers:
            self.destroy_timer(timer)
        self._own_timers = []
        if getattr(self, '_frame_timer', None) is not None:
            self.destroy_timer(self._frame_timer)
            self._frame_timer = None
        self._publish_status()

    def cleanup_node(self) -> None:
        self._watchdog.destroy()
        if self._sub is not None:
            self.destroy_subscription(self._sub)
            self._sub = None
        for pub in (self._clock_pub, self._js_pub):
            if pub is not None:
                self.destroy_lifecycle_publisher(pub)

    def error_node(self) -> None:
        self.deactivate_node()

    # --- time ----------------------------------------------------------------------------------
    @property
    def t_ns(self) -> int:
        return self.start_ns + self.k * self.frame_ns

    def _rel(self, ns: int) -> float:
        return (ns - self.start_ns) * 1e-9

    # --- commands ------------------------------------------------------------------------------
    def _on_command(self, msg: JointTrajectory) -> None:
        if not self.active or self._watchdog.braking:    # after a watchdog trip: braked until re-activated
            return
        p = self.p
        times = [duration_to_sec(pt.time_from_start) for pt in msg.points]
        positions = [pt.positions for pt in msg.points]
        velocities = [pt.velocities for pt in msg.points]
        ok, reason = validate_joint_trajectory(msg.joint_names, p.joint_names, times, positions, velocities,
                                               p.position_min, p.position_max, p.velocity_max)
        stamp = stamp_to_ns(msg.header.stamp)
        if not ok:
            self.rejected_commands += 1
            self.get_logger().error(f'rejected command (stamp {stamp * 1e-9:.6f} s): {reason}')
            self.status(ERROR, f'rejected command: {reason}', **self._counters())
            entry = None
        else:
            pos, vel = order_joint_trajectory(msg.joint_names, p.joint_names, positions, velocities)
            entry = (np.asarray(times), pos, vel)
            self._watchdog.command_ok()
        if not p.lockstep:
            # applied in the frame of arrival (after the frames still due before it)
            arrival = (self.t_ns if self.sim_clock else
                       self.get_clock().now().nanoseconds // self.frame_ns * self.frame_ns)
            self._queued.append((arrival, stamp, entry))
            self._apply_queued()
            return
        key = self.t_ns if stamp == 0 else stamp     # stamp 0 = "now" (JTC convention)
        if key < self.t_ns or key in self._pending:
            self.stale_commands += 1
            self.status(WARN, f'ignored a stale or duplicate command for {key * 1e-9:.6f} s '
                              f'(frame is at {self.t_ns * 1e-9:.6f} s)', **self._counters())
            return
        if len(self._pending) >= MAX_PENDING:
            self._pending.pop(min(self._pending))
        self._pending[key] = entry
        self._try_advance()

    def _set_trajectory(self, stamp_ns: int, entry) -> None:
        """Make a command the active trajectory, starting from the current setpoint (as a JTC)."""
        times, pos, vel = entry
        now = self._rel(self.t_ns)
        sp_p, sp_v = sample_knots(*self._knots, np.array([now]))
        kt = self._rel(stamp_ns) + times
        keep = kt > now + 1e-12
        kt, pos = kt[keep], pos[keep]
        vel = None if vel is None else vel[keep]
        if kt.size == 0:                       # entirely in the past: hold its last point
            self._knots = (np.array([now]), entry[1][-1:], None)
            return
        knot_v = None if vel is None else np.vstack([sp_v, vel])
        self._knots = (np.r_[now, kt], np.vstack([sp_p, pos]), knot_v)

    def _apply_queued(self) -> None:
        while self._queued and self._queued[0][0] <= self.t_ns:
            _, stamp, entry = self._queued.pop(0)
            self.started = True
            if entry is None:
                self._hold()           # stop following: keep the current setpoint, no jump
            else:
                self._set_trajectory(self.t_ns if stamp == 0 else stamp, entry)

    def _hold(self) -> None:
        now = self._rel(self.t_ns)
        sp_p, _ = sample_knots(*self._knots, np.array([now]))
        self._knots = (np.array([now]), sp_p, None)

    # --- frames --------------------------------------------------------------------------------
    def _step(self) -> None:
        """Integrate one frame along the active trajectory and publish the next frame."""
        t0 = self._cycle.begin()
        try:
            self._integrate_frame()
        finally:
            self._cycle.end(t0)

    def _integrate_frame(self) -> None:
        knot_t, knot_p, knot_v = self._knots
        if (not self.p.lockstep and self.started
                and knot_t[-1] < self._rel(self.t_ns + self.frame_ns) - 1e-9):
            # real time: the frame runs past the end of the last command (it came late or not
            # at all): the drives hold its last point, as a JTC does
            self.late_commands += 1
            self._late_since_status += 1
        if knot_t.size == 1:
            self.servo.hold(self.n_sub, knot_p[0])
        else:
            self.servo.follow(self._rel(self.t_ns), self.n_sub, knot_t, knot_p, knot_v)
        self.k += 1
        self.frames += 1
        self._publish_frame()

    def _publish_frame(self) -> None:
        stamp = ns_to_stamp(self.t_ns)
        if self._clock_pub is not None:
            self._clock_pub.publish(ClockMsg(clock=stamp))
        js = self._js
        js.header.stamp = stamp
        js.position = self.servo.position.tolist()
        js.velocity = self.servo.velocity.tolist()
        js.effort = self.servo.acceleration.tolist()      # acceleration demand (m/s^2), see docs
        self._js_pub.publish(js)
        self.count_published(topics.JOINT_STATES)
        self._frame_wall = time.monotonic()

    def _paced_out(self) -> bool:
        """True when advancing now would put sim time ahead of wall time * time_scale."""
        if self.p.time_scale <= 0.0 or self._run_wall0 is None:
            return False
        sim_next = (self.frames + 1) * self.frame_ns * 1e-9
        return sim_next > (time.monotonic() - self._run_wall0) * self.p.time_scale

    def _try_advance(self) -> None:
        while self.active and self.t_ns in self._pending:
            if self._run_wall0 is None:
                self._run_wall0 = time.monotonic()
            if self._paced_out():
                return
            entry = self._pending.pop(self.t_ns)
            self.started = True
            if entry is None:
                self._hold()
            else:
                self._set_trajectory(self.t_ns, entry)
            self._step()

    def _poll(self) -> None:
        now = time.monotonic()
        if not self.started and self.t_ns not in self._pending:
            if now - self._frame_wall >= REPUBLISH_PERIOD:
                self._publish_frame()
            return
        self._watchdog_brake(self._watchdog.check(commands_watched=False))
        if self._watchdog.braking:             # braking on its own: no command is waited for
            self._step()
            return
        self._try_advance()
        if self.t_ns in self._pending:         # waiting for pacing only
            return
        if now - self._frame_wall > self.p.lockstep_timeout:
            self.late_commands += 1
            self._late_since_status += 1
            if not self._watchdog_brake(self._watchdog.trip(
                    f'no command for frame {self._rel(self.t_ns):.4f} s within lockstep_timeout '
                    f'({self.p.lockstep_timeout:g} s)')):
                self._hold()
            self._step()

    def _realtime_tick(self) -> None:
        """Integrate the frames that wall time says are due (timer callbacks can come late on a
        loaded machine). A backlog above MAX_CATCHUP frames is skipped (the drives hold, the
        frames are counted as overruns) rather than burst out."""
        if not self.active:
            return
        self._watchdog_brake(self._watchdog.check(commands_watched=self.started))
        if self.sim_clock:
            return self._scaled_tick()
        due = (self.get_clock().now().nanoseconds - self.t_ns) // self.frame_ns
        if due > MAX_CATCHUP:
            skip = due - MAX_CATCHUP
            self.overruns += skip
            self._cycle.skipped(skip)
            self._apply_queued()
            self._hold()
            self.k += skip
            due = MAX_CATCHUP
        for _ in range(max(due, 0)):
            self._apply_queued()
            self._step()
        self._apply_queued()

    def _scaled_tick(self) -> None:
        """Real time at a pace other than 1 (time_scale): frames follow the steady clock."""
        now = time.monotonic()
        if self._rt_wall0 is None:
            self._rt_wall0, self._rt_frames0 = now - self.p.frame_period / self.p.time_scale, self.frames
        due = int((now - self._rt_wall0) * self.p.time_scale / self.p.frame_period) - (self.frames - self._rt_frames0)
        if due > MAX_CATCHUP:
            self.overruns += due - MAX_CATCHUP
            self._rt_wall0 += (due - MAX_CATCHUP) * self.p.frame_period / self.p.time_scale
            due = MAX_CATCHUP
        for _ in range(max(due, 0)):
            self._apply_queued()
            self._step()

    def _watchdog_brake(self, reason: str | None) -> bool:
        """Hardware-side watchdog tripped (hil_sim.hardware_watchdog): brake from the current
        setpoint to rest at brake_deceleration instead of holding; commands are ignored until
        the next activation. False when there is nothing to do."""
        if not reason:
            return False
        now = self._rel(self.t_ns)
        sp_p, sp_v = sample_knots(*self._knots, np.array([now]))
        self._knots = self._watchdog.brake_knots(now, sp_p[0], sp_v[0], self.p.servo_period)
        self._pending.clear()
        self._queued.clear()
        self._watchdog.report(ns_to_stamp(self.t_ns), reason)
        self.status(ERROR, f'watchdog: braking to rest: {reason}', **self._counters())
        return True

    # --- diagnostics ---------------------------------------------------------------------------
    def _counters(self) -> dict:
        wd = getattr(self, '_watchdog', None)
        return dict(frames=self.frames, late_commands=self.late_commands,
                    rejected_commands=self.rejected_commands, stale_commands=self.stale_commands,
                    realtime_overruns=self.overruns, sim_time=self._rel(self.t_ns) + self.p.start_time,
                    watchdog_trips=wd.core.trips if wd else 0, watchdog_reason=wd.core.reason if wd else '')

    def _publish_status(self) -> None:
        if self.servo is None:
            return
        level, msg = lockstep_status(None, self._late_since_status, 'held the last setpoint', self.p.lockstep,
                                     self.started, self.active)
        if self._watchdog.braking:
            level, msg = ERROR, f'watchdog: braked to rest: {self._watchdog.core.reason}'

        self._late_since_status = 0
        self.status(level, msg, **self._counters())


main = main_for(MockHexapodNode)

if __name__ == '__main__':
    main()
