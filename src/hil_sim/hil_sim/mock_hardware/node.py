"""Generic mock hardware: the hardware-interface side of ros2_control with a plant model behind it
(docs/mock_hardware.md). One node serves every robot: hexapod drives, iiwa, hybrid5.

The robot is data (``hil_sim.mock_hardware.setup``, from the parameters of ``params.py``):
joints, interfaces, limits and initial values from the URDF's ``<ros2_control>`` block, the
emulated controller (Kilted joint_trajectory_controller or forward_command_controller
acceptance) from the controllers YAML, the plant (``hil_core.drives.plants``) and its gains
from parameters.

One frame cycle for every plant and clock: read (``/clock`` in lockstep or scaled time,
``/joint_states`` stamped t_k) -> take the frame's command -> write (the controller's command
rows for the frame) -> step the plant -> frame k+1. Lockstep waits for frame k's command (a
JointTrajectory stamped t_k, or the next Float64MultiArray: pairing by arrival), counts and
holds a late one, re-publishes t_0 until the first command; real time at time_scale 1 runs on
the wall-time grid of the node clock (no ``/clock``), a command applying in its frame of
arrival; another time_scale runs on sim time paced by the steady clock. Refusals are counted by
layer (stock rules, guard) and dropped. Waiting is state checked on arrival and on a steady
timer, never a blocking call, so the executor keeps serving services.

The node owns plain collaborators, each handed what it needs: ``FramePacing`` (pacing.py: which
frame a command is for, and when a frame is due), ``ServoLink`` (link.py: a control law in the
drives' loop), ``HardwareWatchdog`` (watchdog.py: the controlled stop), ``judge`` (commands.py);
what a command does on arrival is intake.py, what its status says and carries is status.py.
"""
from __future__ import annotations

import time

from rclpy.clock import Clock, ClockType
from rosgraph_msgs.msg import Clock as ClockMsg
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray
from trajectory_msgs.msg import JointTrajectory

from hil_core.drives.plants.controllers import TrajectoryFollower
from hil_core.drives.plants.servo_plant import ServoPlant
from hil_core.supervision.stop_figure import StopPeak
from hil_nodes import qos, topics
from hil_nodes.framework.base import ERROR, HilLifecycleNode, ParameterError
from hil_nodes.msgs.convert import ns_to_stamp
from hil_nodes.runtime.grid_timer import DRIVES_OFFSET_NS, create_grid_timer
from hil_nodes.runtime.runner import main_for
from hil_nodes.runtime.chain_port import joint_state_port
from hil_sim.mock_hardware.intake import CommandIntake
from hil_sim.mock_hardware.watchdog import PARAMS as WATCHDOG_PARAMS, HardwareWatchdog
from hil_sim.mock_hardware.link import ServoLink
from hil_sim.mock_hardware.pacing import FramePacing
from hil_sim.mock_hardware import params, status as drive_status
from hil_sim.mock_hardware.setup import build, load_robot

WATCHDOG_NAMES = {w.name for w in WATCHDOG_PARAMS}


class MockHardwareNode(CommandIntake, HilLifecycleNode, name='mock_hardware', task='drives', params=params.PARAMS):
    """Statuses "<node>: drives" (frame counters, refusals, watchdog), hardware_id the
    simulated hardware."""

    def __init__(self, node_name: str | None = None, **kwargs):
        super().__init__(node_name, **kwargs)
        self._own_timers = []
        self._frame_timer = None
        self._sub = None
        self.plant = None
        self._link = ServoLink(self.get_logger())

    def check_parameters(self, p) -> str | None:
        if not p.lockstep and p.time_scale <= 0.0:
            return "parameter 'time_scale' must be > 0 in real time (lockstep: false)"
        return None

    def apply_parameters(self, changed: set[str]) -> None:
        if self.active:        # only dynamic ones get here while active
            if 'time_scale' in changed and not self.p.lockstep:
                self._pacing.restart_scaled()
                self._start_frame_timer()
            return
        if changed - params.REBUILD_EXEMPT:
            try:              # inactive: rebuild from the new values (the simulation restarts)
                if changed & WATCHDOG_NAMES:
                    self.release(self._watchdog)
                    self._watchdog = HardwareWatchdog(self, len(self.robot.hardware.joints))
                self._build_state()
            except ParameterError as exc:
                self.status(ERROR, f'new parameters not applied: {exc}')

    # --- lifecycle ---------------------------------------------------------------------------
    def configure_node(self) -> None:
        p = self.p
        self.robot = load_robot(p)
        self._watchdog = HardwareWatchdog(self, len(self.robot.hardware.joints))
        self._build_state()
        spec = self.robot.spec
        # a simulated clock exists in lockstep and in scaled real time; real time at pace 1 runs on
        # the wall clock (no /clock stream)
        self._clock_pub = (self.create_lifecycle_publisher(ClockMsg, topics.CLOCK, qos.stream(True))
                           if self.sim_clock else None)
        # joint_state_broadcaster's QoS (reliable, volatile); lockstep keeps a deep history
        self._js_pub = self.create_lifecycle_publisher(JointState, topics.JOINT_STATES, qos.joint_state_broadcaster(
            depth=qos.LOCKSTEP_DEPTH if p.lockstep else 10))
        self._js_port = joint_state_port(self._js_pub, self.robot.hardware.joint_names)
        self._joint_names = tuple(self.robot.hardware.joint_names)
        self.command_topic = topics.controller_command_topic(spec.name, spec.trajectory)
        self._sub = self.create_subscription(JointTrajectory if spec.trajectory else Float64MultiArray,
                                             self.command_topic, self._on_command,
                                             qos.command(depth=50 if p.lockstep else 10, lockstep=p.lockstep),
                                             chain_input=self._on_plain_command if spec.trajectory
                                             else self._on_forward_command)
        self._cycle = self.cycle_monitor('frame', p.frame_period)

    def _build_state(self) -> None:
        p = self.p
        self.plant, self.controller, self.m = build(p, self.robot, self._watchdog.deceleration)
        self.h = self.plant.step_size
        # an emulated JTC on a plant that follows its knots in one compiled call (ServoPlant.follow)
        self._follows_knots = isinstance(self.controller, TrajectoryFollower) and isinstance(self.plant, ServoPlant)
        self.frame_ns = int(round(p.frame_period * 1e9))
        self.start_ns = int(round(p.start_time * 1e9))
        self.k, self.started = 0, False
        self.frames = self.late_commands = self.stale_commands = self.overruns = 0
        self.refused = {'controller': 0, 'guard': 0}
        self.last_refusal = ''
        self._last_valid_ns = None                               # lockstep: frame of the last valid command
        self._pacing = FramePacing(self.frame_ns)
        self._late_since_status = 0
        self._ages = drive_status.SetpointAges()
        # the peak second difference of the positions while the drives stop on their own (bound: a_max)
        self._stop = StopPeak(self.frame_ns)
        self._on_own = False

    @property
    def sim_clock(self) -> bool:
        return self.p.lockstep or self.p.time_scale != 1.0

    @property
    def rejected_commands(self) -> int:
        return self.refused['controller'] + self.refused['guard']

    def activate_node(self) -> None:
        self._watchdog.rearm()
        self.controller.activate(self._rel(self.t_ns))   # JTC holds where it is, FCC starts at NaN
        if not self.sim_clock:
            # frames on the wall-time grid, from the current one on
            self.start_ns = self.now_ns() // self.frame_ns * self.frame_ns
            self.k = 0
        self._publish_frame()
        steady = Clock(clock_type=ClockType.STEADY_TIME)
        self._own_timers.append(self.create_timer(self.p.status_period, self._publish_status, clock=steady))
        if self.p.lockstep:
            poll = min(max(self.p.lockstep_timeout / 10.0, 5e-4), 0.01)
            if self.p.time_scale > 0:
                poll = min(poll, max(self.p.frame_period / self.p.time_scale / 2.0, 5e-4))
            self._poll_period = poll
            self._own_timers.append(self.create_timer(poll, self._poll, clock=steady))
        else:
            self._pacing.restart_scaled()
            self._start_frame_timer()

    def _start_frame_timer(self) -> None:
        if self._frame_timer is not None:
            self.destroy_timer(self._frame_timer)
        steady = Clock(clock_type=ClockType.STEADY_TIME)
        if self.p.time_scale == 1.0 and not self.sim_clock:
            # the frame that just ended is integrated and its state published just after the grid
            # instant its stamp names (a random phase published it up to a frame late)
            self._frame_timer = create_grid_timer(self, self.p.frame_period, self._realtime_tick, clock=steady,
                                                  offset_ns=DRIVES_OFFSET_NS)
            return
        self._frame_timer = self.create_loop_timer(self.p.frame_period / self.p.time_scale, self._realtime_tick)

    def deactivate_node(self) -> None:
        # The simulated world freezes: sim time stops, the plant keeps its state.
        self._link.let_go(self._hold)
        self.release(*self._own_timers, self._frame_timer)
        self._own_timers, self._frame_timer = [], None
        self._publish_status()

    def cleanup_node(self) -> None:
        self.release(self._watchdog, self._sub, self._clock_pub, self._js_pub)
        self._sub = None

    def error_node(self) -> None:
        self.deactivate_node()

    # --- time ----------------------------------------------------------------------------------
    @property
    def t_ns(self) -> int:
        return self.start_ns + self.k * self.frame_ns

    def _rel(self, ns: int) -> float:
        return (ns - self.start_ns) * 1e-9

    def _controller_now(self) -> int:
        """The emulated controller's now: sim time (the frame) or the wall clock."""
        return self.t_ns if self.sim_clock else self.now_ns()

    def _hold(self) -> None:
        """The controller holds from the current frame (the drives' own stop for a forward command)."""
        self.controller.hold(self._rel(self.t_ns))

    # --- frames --------------------------------------------------------------------------------
    def _try_advance(self) -> None:
        """Lockstep: integrate the frames whose command is in, as far as the pace allows."""
        while self.active and self._pacing.has_command(self.t_ns):
            if self._pacing.paced_out(self.frames, self.p.time_scale):
                return
            self._take(self._pacing.take_command(self.t_ns), self.t_ns)
            self._step()

    def _poll(self) -> None:
        """Lockstep, on a steady timer: t_0 again before the first command; a frame whose command
        has not come within lockstep_timeout is counted late and held (or braked)."""
        now = time.monotonic()
        self._pacing.polled(now, self.p.lockstep_timeout, self._poll_period)
        if not self.started and not self._pacing.has_command(self.t_ns):
            if self._pacing.republish_due(now):
                self._publish_frame()
            return
        self._watchdog_brake(self._watchdog.check(commands_watched=False))
        if self._watchdog.braking:             # braking on its own: no command is waited for
            self._step()
            return
        self._try_advance()
        if self._pacing.has_command(self.t_ns):      # waiting for pacing only
            return
        if self._pacing.waited(now, self.p.lockstep_timeout):
            self.late_commands += 1
            self._late_since_status += 1
            reason = (f'no command for frame {self._rel(self.t_ns):.4f} s within lockstep_timeout '
                      f'({self.p.lockstep_timeout:g} s)')
            braked = self.p.lockstep_late == 'brake' and self._watchdog_brake(
                self._watchdog.trip(reason, waited=self.p.lockstep_timeout))
            if not braked:
                self._hold()
            self._step()

    def _realtime_tick(self) -> None:
        """Real time, on the frame timer: integrate the frames that are due (FramePacing)."""
        if not self.active:
            return
        self._watchdog_brake(self._watchdog.check(commands_watched=self.started))
        if self.sim_clock:       # at another pace than 1: an overrun backlog is dropped
            overrun, due = self._pacing.scaled_due(self.frames, self.p.frame_period, self.p.time_scale)
            self.overruns += overrun
        else:
            skip, due = self._pacing.grid_due(self.now_ns(), self.t_ns)
            if skip:
                self.overruns += skip
                self._cycle.skipped(skip)
                self._apply_queued()
                self.controller.frames_skipped(self._rel(self.t_ns), self._rel(self.t_ns + skip * self.frame_ns))
                self.k += skip
        for _ in range(due):
            self._apply_queued()
            self._step()
        if not self.sim_clock:
            self._apply_queued()

    def _servo_law(self):
        """The law offered on the command topic, taken for this frame (link.py), or None."""
        enabled = self.p.servo_link and not self.p.lockstep and not self.robot.spec.trajectory
        return self._link.take(self.command_topic, enabled, self.m, self._hold)

    def _step(self) -> None:
        """Write the frame's command, step the plant over the frame and publish the next frame."""
        with self._cycle():
            self._integrate_frame()

    def _integrate_frame(self) -> None:
        now = self._rel(self.t_ns)
        if self.p.lockstep and self._last_valid_ns is not None:
            age = (self.t_ns - self._last_valid_ns) * 1e-9
            if age > self.p.command_timeout:
                self._watchdog_brake(self._watchdog.trip(f'no valid command for {age:.4f} s of sim time '
                                                         f'(command_timeout {self.p.command_timeout:g} s)'))
        end = self.controller.end()
        past_end = self.started and end is not None and end < self._rel(self.t_ns + self.frame_ns) - 1e-9
        # this frame the drives run on their own (holding past the last command, or braking): its
        # motion is their own stop, judged by its peak second difference (hil_core.supervision.stop_figure)
        self._on_own = past_end or self._watchdog.braking
        if not self.p.lockstep and past_end and self.controller.ends_moving():
            # real time: the frame runs past the end of the last command, which ended moving (the
            # next came late or not at all): the drives hold its last point, as a JTC does. After
            # a command that ends at rest (the stream stopped by design: IDLE, a goal reached)
            # holding is what was asked for, not a late command.
            self.late_commands += 1
            self._late_since_status += 1
        if not self.p.disable_commands:
            if self._servo_law() is not None:       # real time: a law of this process at every plant step
                self._link.step_frame(self.t_ns, self.frame_ns, self.m, self.h, self._rel, self.plant,
                                      self.controller, self._watchdog, self._refuse)
            elif not (self._follows_knots and self.plant.follow(self.h, self.m, now, self.controller.knots)):
                self.plant.step(self.h, self.controller.commands(now, self.m, self.h))
        self.k += 1
        self.frames += 1
        self._publish_frame()

    def _publish_frame(self) -> None:
        if self._clock_pub is not None:
            self._clock_pub.publish(ClockMsg(clock=ns_to_stamp(self.t_ns)))
        states = self.plant.states()           # (copies: they belong to the receivers once sent)
        self._stop.frame(self.t_ns, states['position'], self._on_own)
        self._js_port.send((self.t_ns, self._joint_names, states['position'], states['velocity'],
                            states.get('effort')))
        self.count_published(topics.JOINT_STATES)
        self._pacing.published()

    def _watchdog_brake(self, reason: str | None) -> bool:
        """The watchdog tripped: a controlled stop from the current command at brake_deceleration
        (JTC: braking setpoints; FCC: the drives' own stop), commands are not followed until the
        next activation. False when there is nothing to do."""
        if not reason:
            return False
        self._pacing.drop_commands()
        self._watchdog.brake(reason, self.controller, self._rel(self.t_ns), self.plant.setpoint_period,
                             ns_to_stamp(self.t_ns))
        drive_status.tell_braking(self, reason)
        return True

    # --- status (status.py) --------------------------------------------------------------------
    def hardware_id(self) -> str:
        """What the statuses are about: the simulated hardware."""
        return drive_status.hardware_name(getattr(self, 'robot', None))

    def _publish_status(self) -> None:
        if self.plant is None:
            return
        level, msg = drive_status.summary(self)
        self._late_since_status = 0
        self.status(level, msg, **drive_status.counters(self))


main = main_for(MockHardwareNode)

if __name__ == '__main__':
    main()
