"""``hybrid_controller`` lifecycle node: trajectory tracking of the 5-axis hybrid robot (seed 003).

Every control cycle (one ``/joint_states`` frame, 100 us): the mode-aware reference
(``hil_core.hybrid5.motion``: hold / homing move / the G-code path / brake / return home) ->
inverse kinematics with derivatives -> CTM with the nonlinear integrator for the legs and
the table (``hil_core.hybrid5.tracking``) -> efforts on ``/effort_controller/commands``
(Float64MultiArray: 3 leg forces N, 2 table torques N m, saturated at force_max/torque_max).

Mode-aware like ``reference_source`` (docs/CONTRACTS.md): in lockstep a cycle is computed
only when both ``/joint_states`` and ``/hil/frame`` stamped t_k are in (``FrameSync``); in real
time on every joint state with the latest mode -- unless mock drives in the same process took
the law (``hil_nodes.runtime.servo_link``, ``servo_link: true``): then they call it at every plant step
with the joints they measured (10 kHz inside their 400 Hz frame, as a controller in ros2_control's
update loop), and the desired joints are published once a frame (the efforts never cross a
topic: the drives publish the applied ones in /joint_states). Events (homed, synchronized, home_reached,
fault) go to ``/hil/events`` stamped with the frame time. The desired joints go to
``/hybrid_controller/reference`` (JointState: position, velocity, effort = acceleration).

Bad input: unusable joint states (names, sizes, NaN/inf), stale or repeated stamps -> no
command (the drives brake on the missing command) and a throttled diagnostic; legs that do
not assemble, a non-finite effort, or a tracking error beyond ``max_tracking_error`` -> a
``fault`` event (the supervisor goes to FAULT and the reference brakes to rest).

Operator commands (the HMI's motion command, or ``ros2 param set``), answered by the
SetParameters result and a ``hybrid_controller: motion command`` status: a new program
(dynamic ``gcode_file``, in IDLE only: the next run homes to its start) and a jog (dynamic
``jog``, a G-code line relative to the held pose, in IDLE at rest), both checked by the program
parser of hil_core.hybrid5.gcode.
"""
from __future__ import annotations

import math
import time
from collections import deque
from types import SimpleNamespace

import numpy as np
from diagnostic_msgs.msg import DiagnosticArray
from rcl_interfaces.msg import SetParametersResult
from rclpy.clock import Clock, ClockType
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, Header

from hil_core.hybrid5 import law_frame
from hil_core.hybrid5.gcode import parse_file, parse_jog
from hil_core.hybrid5.motion import Hybrid5Motion
from hil_core.hybrid5.tracking import HybridController
from hil_core.hybrid5.trajectory import PathTrajectory
from hil_core.supervision.modes import HilMode
from hil_nodes import qos, topics
from hil_nodes.msgs import convert
from hil_nodes.runtime import servo_link
from hil_nodes.runtime.chain_port import vector_port
from hil_nodes.framework.base import ERROR, OK, WARN, HilLifecycleNode
from hil_nodes.framework.mode_aware import JointFramePairing
from hil_nodes.hybrid_controller import params
from hil_nodes.runtime.runner import main_for


class HybridControllerNode(HilLifecycleNode, name='hybrid_controller', task='control', params=params.PARAMS):
    """Statuses "hybrid_controller: control": the hybrid5 control law and its tracking errors."""

    def __init__(self, node_name: str | None = None, **kwargs):
        super().__init__(node_name, **kwargs)
        self._subs = []
        self._timer = None
        self._law = _DriveSideLaw(self)
        self.linked = False
        self._new_path = None
        self.add_on_set_parameters_callback(self._check_program)

    def _check_program(self, parameters) -> SetParametersResult:
        """A new ``gcode_file`` (the operator's program) or a ``jog``, checked before the base's
        callback accepts it (rclpy calls the newest callback first): a program is parsed and built
        as at configure, and taken while active only when the motion is in IDLE
        (``Hybrid5Motion.set_path``); a jog starts here (``_jog``); other parameters pass."""
        jog = [prm for prm in parameters if prm.name == 'jog']
        if jog and self.configured and str(jog[-1].value or '').strip():
            return self._jog(str(jog[-1].value))
        given = [prm for prm in parameters if prm.name == 'gcode_file']
        if not given or not self.configured:
            return SetParametersResult(successful=True)             # configure-time values
        idle = self.motion.phase is HilMode.IDLE
        if self.active and not idle:
            why = (f'a new program is taken in IDLE only (the robot holds; the next run homes to its start); now '
                   f'in {self.motion.phase.value}')
            self.status(WARN, f'program refused: {why}', task='motion command')
            return SetParametersResult(successful=False, reason=why)
        try:
            path = self._build_path(self.p, str(given[-1].value))
            self.motion.check_program(path)          # the legs' travel, as at configure
        except (OSError, ValueError) as exc:
            self.status(WARN, f'program refused: {exc}', task='motion command')
            return SetParametersResult(successful=False, reason=str(exc))
        # inactive away from IDLE (deactivated mid-run): taken by the next configure, as before
        self._new_path = path if idle else None
        return SetParametersResult(successful=True)

    def _jog(self, text: str) -> SetParametersResult:
        """An operator's jog (``jog``): parsed by the program parser, then a move of the held pose
        from the next cycle (``Hybrid5Motion.jog``: IDLE, at rest, above the base plane)."""
        try:
            if not self.active:
                raise ValueError('a jog is taken while the node runs (hybrid_controller is not active)')
            if self.t0_ns is None or self.last_ns is None:
                raise ValueError('no control cycle yet: the pose to jog from is not known')
            dp, dg, feed = parse_jog(text, self.prm.trajectory.rapid_feed)
            k = int(round((self.last_ns - self.t0_ns) / self.ts_ns)) + 1    # the next cycle
            p, g = self.motion.jog(k, dp, dg, feed)
        except ValueError as exc:
            self.status(WARN, f'jog refused: {exc}', task='motion command')
            return SetParametersResult(successful=False, reason=str(exc))
        self.status(OK, f'jog to x y z = {p[0]:.4f} {p[1]:.4f} {p[2]:.4f} m, tilt {math.degrees(g[0]):.2f} deg, '
                    f'rotary {math.degrees(g[1]):.2f} deg', task='motion command')
        return SetParametersResult(successful=True)

    def apply_parameters(self, changed: set[str]) -> None:
        self._input.lockstep = self.p.lockstep     # (other changes are accepted while inactive only)
        if 'gcode_file' in changed and self._new_path is not None:
            # single-threaded executor: no cycle runs between the check and this swap
            path, self._new_path = self._new_path, None
            self.motion.set_path(path)
            self.ctl.set_path(path)
            self.path = path
            self.status(OK, f'program {params.gcode_path(self.p)} taken: {path.duration:.2f} s of path, from the '
                        'next run', task='motion command')

    def _build_path(self, p, gcode_file: str) -> PathTrajectory:
        """The program ``gcode_file`` names, parsed and turned into the S-curve path (ValueError
        naming the parameter and the line)."""
        t = self.prm.trajectory
        try:
            segs = parse_file(params.gcode_path(SimpleNamespace(gcode_file=gcode_file)), t.rapid_feed)
        except (OSError, ValueError) as exc:
            raise ValueError(f"parameter 'gcode_file': {exc}") from exc
        return PathTrajectory(segs, self.prm.Ts, t.a_max, t.j_max, math.radians(t.angular_feed) / 60,
                              self.prm.work_origin)

    # --- lifecycle ---------------------------------------------------------------------------
    def configure_node(self) -> None:
        p = self.p
        self.prm = params.robot_params(p)
        self.path = self._build_path(p, p.gcode_file)
        self.motion = Hybrid5Motion(self.prm, self.path, p.home, p.homing_feed, p.fault_deceleration, p.sync_time,
                                    params.stroke(p))
        self.ctl = HybridController(self.prm, self.path, np.float32 if p.float32 else np.float64)
        self.ts_ns = int(round(self.prm.Ts * 1e9))
        self._input = JointFramePairing(p.lockstep, self._compute)
        self.mode = None
        self.t0_ns = None
        self.last_ns = None
        self.faulted = False
        self.counters = dict.fromkeys(('cycles', 'bad_joint_states', 'bad_stamps', 'saturated', 'faults',
                                       'skipped_cycles'), 0)
        self.max_err = {'legs_m': 0.0, 'table_rad': 0.0}
        self.cost_us = deque(maxlen=20000)
        self.compiled_cycles = 0          # of counters['cycles']: run by the drives' compiled quiet steps
        self._limit_list = [p.force_max] * 3 + [p.torque_max] * 2
        self._limits = np.array(self._limit_list)
        self._eff_pub = self.create_lifecycle_publisher(Float64MultiArray, topics.HYBRID_EFFORT_COMMANDS,
                                                        qos.command(depth=50, lockstep=self.p.lockstep))
        # a chain port: in one process the recorder's bytes are written from the efforts (zeroed
        # padding: rclpy's serializer left the 4 bytes before the values as they were, so two
        # runs' bags differed there), and no message is built for the bag
        self._eff_port = vector_port(self._eff_pub)
        self._ref_pub = self.create_lifecycle_publisher(JointState, topics.HYBRID_REFERENCE, self.stream_qos())
        self._event_pub = self.create_lifecycle_publisher(DiagnosticArray, topics.HIL_EVENTS,
                                                          qos.command(depth=50, lockstep=self.p.lockstep))
        stream = self.stream_qos()
        self._subs = [self.create_subscription(JointState, topics.JOINT_STATES, self._on_joints,
                                                qos.joint_states(self.p.lockstep)),
                      self.create_subscription(Header, topics.HIL_FRAME, self._on_frame, stream)]

    def activate_node(self) -> None:
        self._timer = self.create_timer(self.p.status_period, self._publish_status,
                                        clock=Clock(clock_type=ClockType.STEADY_TIME))
        if self.p.servo_link and not self.p.lockstep:
            servo_link.offer(topics.HYBRID_EFFORT_COMMANDS, self._law, owner=self)

    def deactivate_node(self) -> None:
        servo_link.withdraw(topics.HYBRID_EFFORT_COMMANDS, self._law)
        self.linked = False
        self.release(self._timer)
        self._timer = None
        self._publish_status()

    def cleanup_node(self) -> None:
        self.release(*self._subs, self._eff_pub, self._ref_pub, self._event_pub)
        self._subs = []

    def error_node(self) -> None:
        self.deactivate_node()

    # --- inputs ------------------------------------------------------------------------------
    def _on_joints(self, msg: JointState) -> None:
        if self.active and not self.linked:     # linked: the drives call the law at every step
            self._input.joints(msg, self.mode)

    def _on_frame(self, msg: Header) -> None:
        if self.active:
            self.mode = msg.frame_id
            self._input.frame(msg)

    # --- one control cycle ---------------------------------------------------------------------
    def _compute(self, t_ns: int, mode: str, msg: JointState) -> None:
        """A cycle from a /joint_states message: the effort and the desired joints go out."""
        try:
            q = convert.joint_positions(msg, self.p.joint_names)
        except ValueError as exc:
            # bad input is counted, and told with the counters at most once per status_period for
            # every kind together (as the node's parameters document)
            self.counters['bad_joint_states'] += 1
            self.report_problem('bad input', WARN, f'unusable /joint_states ({exc}): no command, the drives brake',
                                interval=self.p.status_period, figures=self.counters.copy)
            return
        out = self.control_cycle(t_ns, mode, q)
        if out is not None:
            self._eff_port.send(out[0])
            self.publish_reference(out[1], msg.header.stamp)

    def publish_reference(self, ref, stamp) -> None:
        """The desired joints of a cycle on the reference topic, stamped ``stamp`` (a Time)."""
        (l_d, v_d, a_d), (th_d, w_d, e_d), _ = ref
        ref_msg = JointState(name=list(self.p.joint_names), position=[*map(float, l_d), *map(float, th_d)],
                             velocity=[*map(float, v_d), *map(float, w_d)],
                             effort=[*map(float, a_d), *map(float, e_d)])
        ref_msg.header.stamp = stamp
        self._ref_pub.publish(ref_msg)

    def control_cycle(self, t_ns: int, mode: str, q: np.ndarray):
        """One control cycle at t_ns with measured joints q: (effort, reference), or None (no
        command). Counters, tracking errors, events and faults as the seed's loop."""
        if self.last_ns is not None and t_ns <= self.last_ns:
            if t_ns < self.last_ns or self.t0_ns is None:
                self.counters['bad_stamps'] += 1
                self.report_problem('bad input', WARN, f'out-of-order joint state stamp {t_ns} ns ignored',
                                    interval=self.p.status_period, figures=self.counters.copy)
            return None
        if self.t0_ns is None:
            self.t0_ns = t_ns
        self.last_ns = t_ns
        k = int(round((t_ns - self.t0_ns) / self.ts_ns))
        start = time.perf_counter()
        if self.faulted and mode != HilMode.FAULT:
            self.faulted = mode != HilMode.IDLE      # a reset (IDLE) re-arms the fault check
        try:
            ref, events = self.motion.cycle(k, mode, q[:3], q[3:])
            out = self.ctl.cycle(k, q[:3], q[3:], ref)
        except ValueError as exc:                           # legs that do not assemble
            self._fault(t_ns, f'cannot compute the cycle: {exc}')
            return None
        # on Python floats: numpy's calls on 5 numbers were half of the cycle's 23 us, which
        # runs 25 times in every 2.5 ms frame of the drives in real time (servo_link)
        F, tau = out.F, out.tau
        u = np.array((F[0], F[1], F[2], tau[0], tau[1]), dtype=float)
        values = u.tolist()
        if not all(map(math.isfinite, values)):
            self._fault(t_ns, 'non-finite effort computed: no command sent')
            return None
        if any(abs(x) > m for x, m in zip(values, self._limit_list)):
            self.counters['saturated'] += 1
            u = np.clip(u, -self._limits, self._limits)     # the seed's sat(x, y) on the outputs
        self.cost_us.append((time.perf_counter() - start) * 1e6)
        self.counters['cycles'] += 1
        e_leg = max(map(abs, np.asarray(out.e_leg, dtype=float).tolist()))
        e_tab = max(map(abs, np.asarray(out.e_table, dtype=float).tolist()))
        if mode == HilMode.RUNNING:
            self.max_err['legs_m'] = max(self.max_err['legs_m'], e_leg)
            self.max_err['table_rad'] = max(self.max_err['table_rad'], e_tab)
        for name, why in events:
            self._event(t_ns, name, why)
        if max(e_leg, e_tab) > self.p.max_tracking_error:
            self._fault(t_ns, f'tracking error {max(e_leg, e_tab):.3g} beyond max_tracking_error')
        return u, ref

    def _fault(self, t_ns: int, why: str) -> None:
        if not self.faulted:
            self.faulted = True
            self.counters['faults'] += 1
            self._event(t_ns, 'fault', why)
            self.status(ERROR, why, **self.counters)

    def _event(self, t_ns: int, name: str, why: str) -> None:
        self._event_pub.publish(convert.status_array(convert.ns_to_stamp(t_ns), ERROR if name == 'fault' else OK,
                                                     name, why, self.get_name(), {'phase': self.motion.phase.value}))
        self.get_logger().info(f'event {name} at {t_ns * 1e-9:.4f} s: {why}')

    def _publish_status(self) -> None:
        cost = np.asarray(self.cost_us) if self.cost_us else np.zeros(1)
        level = ERROR if self.faulted else OK
        self.status(level, 'fault raised' if self.faulted else ('running' if self.active else 'inactive'),
                    phase=self.motion.phase.value, **self.counters, compiled_cycles=self.compiled_cycles,
                    max_leg_error_um=self.max_err['legs_m'] * 1e6,
                    max_table_error_urad=self.max_err['table_rad'] * 1e6,
                    cycle_cost_p50_us=float(np.percentile(cost, 50)),
                    cycle_cost_p99_us=float(np.percentile(cost, 99)))


    # --- the law in the drives' loop (servo_link) -----------------------------------------------
    def set_linked(self, linked: bool) -> None:
        """The drives took the law (True) or let it go: while linked, joint-state messages
        compute nothing (the drives call ``drive_cycle`` at every plant step)."""
        self.linked = linked
        if linked:
            self.get_logger().info('the drives run the control law in their loop (servo_link)')

    def drive_cycle(self, t_ns: int, position: np.ndarray):
        """A cycle as the drives call it: ``control_cycle`` with the latest mode (None before
        the first /hil/frame: no command)."""
        if not self.active or self.mode is None:
            return None
        last = self.last_ns
        if last is not None and self.t0_ns is not None and t_ns - last > self.ts_ns:
            # the drives skipped frames (a stall of the process): their world stood still, so the
            # law's time stands still too and the reference goes on from where it was. Counted on
            # wall time, the reference jumped ahead by the stall: after 1.5 s, 0.9 rad on the
            # table, saturated torque and 325 rad/s^2 where the brake allows 5.
            skipped = (t_ns - last) // self.ts_ns - 1
            self.t0_ns += skipped * self.ts_ns
            self.counters['skipped_cycles'] += skipped
        return self.control_cycle(t_ns, self.mode, position)

    def quiet_steps(self, t_ns: int, step_ns: int, steps: int, drive) -> law_frame.Done | None:
        """Up to ``steps`` cycles from ``t_ns`` in one compiled call (``hil_core.hybrid5.law_frame``)
        while they are quiet, with the drives' ``drive`` arrays; None where the next cycle is not
        (``drive_cycle`` then runs it): not active, no mode, a fault raised, a gap in the cycles, a
        request or a brake for the motion, float32. What ``control_cycle`` counts and keeps is
        counted and kept here; a frame's cost counts once, divided by its cycles."""
        if not self.active or self.mode is None or self.faulted or step_ns != self.ts_ns:
            return None
        if self.last_ns is None or self.t0_ns is None or t_ns != self.last_ns + self.ts_ns:
            return None
        source = self.motion.quiet_source(self.mode)
        k = int(round((t_ns - self.t0_ns) / self.ts_ns))
        law = None if source is None else self.ctl.law_arrays(k, source, self._limits, self.p.max_tracking_error)
        if law is None:
            return None
        start = time.perf_counter()
        done = law_frame.quiet_steps(steps, law, drive)
        n = done.steps
        if n:
            self.last_ns = t_ns + (n - 1) * step_ns
            self.counters['cycles'] += n
            self.compiled_cycles += n
            self.cost_us.append((time.perf_counter() - start) * 1e6 / n)
            if self.mode == HilMode.RUNNING:
                self.max_err['legs_m'] = max(self.max_err['legs_m'], float(done.errors[0]))
                self.max_err['table_rad'] = max(self.max_err['table_rad'], float(done.errors[1]))
            self.motion.advanced(done.reference)
        return done


class _DriveSideLaw:
    """The node's law as the drives call it (hil_nodes.runtime.servo_link.ServoLaw), through the
    node's drive-side methods (``set_linked``, ``drive_cycle``, ``publish_reference``)."""

    def __init__(self, node: HybridControllerNode):
        self.node = node
        self._last = None                    # (t_ns, reference) of the frame's last cycle

    def attach(self) -> None:
        self.node.set_linked(True)

    def detach(self) -> None:
        self.node.set_linked(False)

    def cycle(self, t_ns: int, position: np.ndarray) -> np.ndarray | None:
        out = self.node.drive_cycle(t_ns, position)
        if out is None:
            return None
        self._last = (t_ns, out[1])
        return out[0]

    def quiet_steps(self, t_ns: int, step_ns: int, steps: int, drive):
        """The node's ``quiet_steps`` (the drives' compiled quiet steps, mock_hardware.link)."""
        done = self.node.quiet_steps(t_ns, step_ns, steps, drive)
        if done is not None and done.steps:
            self._last = (t_ns + (done.steps - 1) * step_ns, self.node.motion.last)
        return done

    def frame_done(self, t_ns: int) -> None:
        if self._last is None or not self.node.active:
            return
        t_cycle, ref = self._last
        self._last = None
        # the efforts never cross a topic here (the drives publish the applied ones in
        # /joint_states); the desired joints of the frame's last cycle do, for the bag and rviz
        self.node.publish_reference(ref, convert.ns_to_stamp(t_cycle))


main = main_for(HybridControllerNode)

if __name__ == '__main__':
    main()
