"""Mock drives of the 5-axis hybrid robot (seed 003): three linear PMSM legs and the
tilt-rotary table, simulated by ``hil_core.hybrid5.dynamics.Plant`` (rigid body, friction,
encoder quantisation), effort-controlled as ros2_control's forward_command_controller.

Interface: std_msgs/Float64MultiArray of 5 efforts on ``/effort_controller/commands``
(leg forces N x3, table torques N m x2, ``joint_names`` order). ``/joint_states``: leg lengths
(m, absolute, eq. 3) and table angles (rad), quantised like the encoders (0.25 um, 18 bit);
velocity = true joint rates; effort = the effort applied in the last frame.

Lockstep (docs/CONTRACTS.md, frame = one control period, 100 us at 10 kHz): frame k publishes
``/clock`` = t_k then ``/joint_states`` (stamp t_k) and waits for the command of frame k.
Float64MultiArray has no stamp, so commands pair with frames by arrival (as mock_iiwa): the
first command after joint_states(t_k) is frame k's. Without one after ``lockstep_timeout``
wall s it brakes, counts a late command and advances. Before the first command it does not
advance (re-publishes t_0 at 10 Hz wall). Real time: a steady timer advances frames; a
command older than ``command_timeout`` sim s makes it brake.

Bad commands (not 5 values, NaN/inf, beyond force_max/torque_max) are rejected with an ERROR
diagnostic and the drives brake: each joint's target decelerates to rest at
``brake_deceleration`` and is held by the drive's own PD loop plus the load's static
gravity (as a holding brake would), so nothing jumps or falls.
"""
from __future__ import annotations

import time

import numpy as np
from rclpy.clock import Clock, ClockType
from rosgraph_msgs.msg import Clock as ClockMsg
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from hil_core.hybrid5 import JOINT_NAMES, dynamics as dyn, kinematics as kin
from hil_core.hybrid5.params import load_params
from hil_nodes import qos, topics
from hil_nodes.base import ERROR, HilLifecycleNode, Param
from hil_nodes.convert import ns_to_stamp
from hil_nodes.runner import main_for
from hil_sim.lockstep_status import lockstep_status

JOINTS = list(JOINT_NAMES)
REPUBLISH_PERIOD = 0.1
BRAKE_MASS = (60.0, 60.0, 60.0)     # kg per leg: order of the reduced masses (eq. 23) for the hold gains


class MockHybrid5Node(HilLifecycleNode):
    PARAMS = (
        Param('params_file', str, '', "robot parameters yaml ('' = config/hybrid5.yaml of the source tree)"),
        Param('joint_names', 'str[]', JOINTS, 'joint names: 3 legs then tilt, rotary', length=5,
              check=lambda v: None if len(set(v)) == 5 else 'joint names must be unique'),
        Param('initial_position', 'float[]', [0.0, 0.0, 0.85], 'platform x, y, z at configure (m)', length=3,
              range=(-2.0, 2.0)),
        Param('initial_table', 'float[]', [0.0, 0.0], 'table tilt, rotary at configure (rad)', length=2,
              range=(-3.2, 3.2)),
        Param('frame_period', float, 1e-4, 'control period = lockstep frame (s); seed: 100 us',
              range=(1e-5, 0.01)),
        Param('substeps', int, 1, 'plant integration steps per frame', range=(1, 100)),
        Param('force_max', float, 5000.0, 'leg force limit (N): beyond it a command is rejected',
              range=(1.0, 1e6)),
        Param('torque_max', float, 500.0, 'table torque limit (N m)', range=(0.1, 1e5)),
        Param('brake_deceleration', 'float[]', [1.0, 1.0, 1.0, 5.0, 5.0],
              'deceleration of the braking target per joint (m/s^2 legs, rad/s^2 table)', length=5,
              range=(1e-3, 1e4)),
        Param('brake_bandwidth', float, 20.0, 'bandwidth of the drives\' hold loop while braking (Hz)',
              range=(0.1, 200.0)),
        Param('lockstep_timeout', float, 0.5, 'wall s to wait for the command of a frame', range=(1e-3, 60.0),
              dynamic=True),
        Param('time_scale', float, 1.0, 'real time: sim s per wall s (> 0); lockstep: ignored',
              range=(0.0, 100.0), dynamic=True),
        Param('start_time', float, 0.0, 'sim time of the first frame (s)', range=(0.0, 1e6)),
        Param('command_timeout', float, 0.01, 'real time: brake when the last command is older (sim s)',
              range=(1e-4, 10.0), dynamic=True),
        Param('status_period', float, 0.5, 'wall s between diagnostics', range=(0.01, 60.0)),
    )

    def __init__(self, node_name: str = 'mock_hybrid5', **kwargs):
        super().__init__(node_name, **kwargs)
        self._own_timers = []
        self._sub = None
        self.plant = None

    def check_parameters(self, p) -> str | None:
        if not p.lockstep and p.time_scale <= 0.0:
            return "parameter 'time_scale' must be > 0 in real time (lockstep: false)"
        return None

    # --- lifecycle ---------------------------------------------------------------------------
    def configure_node(self) -> None:
        p = self.p
        self.prm = load_params(p.params_file or None)
        if not p.initial_position[2] > 0:
            raise ValueError("parameter 'initial_position': z must be > 0 (above the leg base points, eq. 15)")
        self.plant = dyn.Plant(self.prm, p.initial_position, p.initial_table, p.frame_period, p.substeps)
        w = 2 * np.pi * p.brake_bandwidth
        mass = np.array([*BRAKE_MASS, self.prm.plant.J44, self.prm.plant.J55])
        self._kp, self._kd = mass * w * w, mass * 2 * 0.9 * w
        self.frame_ns = int(round(p.frame_period * 1e9))
        self.start_ns = int(round(p.start_time * 1e9))
        self.k = 0
        self.started = False
        self.awaiting = True
        self.effort = np.zeros(5)
        self.applied = np.zeros(5)
        self.braking = False
        self._start_brake()            # held by the drives until the first valid command
        self.last_cmd_k = 0
        self.frames = self.late_commands = self.rejected_commands = 0
        self._late_since_status = 0
        self._problem = None
        self._clock_pub = self.create_lifecycle_publisher(ClockMsg, topics.CLOCK, qos.stream(True))
        self._js_pub = self.create_lifecycle_publisher(JointState, topics.JOINT_STATES, self.stream_qos())
        self._sub = self.create_subscription(Float64MultiArray, topics.HYBRID_EFFORT_COMMANDS, self._on_command,
                                             qos.command(depth=50 if p.lockstep else 10, lockstep=p.lockstep))
        self._js = JointState(name=list(p.joint_names))
        self._frame_wall = time.monotonic()

    def activate_node(self) -> None:
        steady = Clock(clock_type=ClockType.STEADY_TIME)
        self._publish_frame()
        self._own_timers.append(self.create_timer(self.p.status_period, self._publish_status, clock=steady))
        if self.p.lockstep:
            poll = min(max(self.p.lockstep_timeout / 10.0, 5e-4), 0.01)
            self._own_timers.append(self.create_timer(poll, self._poll, clock=steady))
        else:
            self._own_timers.append(self.create_timer(self.p.frame_period / self.p.time_scale, self._tick,
                                                      clock=steady))

    def deactivate_node(self) -> None:
        for timer in self._own_timers:          # the simulated world freezes
            self.destroy_timer(timer)
        self._own_timers = []
        self._start_brake()

    def cleanup_node(self) -> None:
        if self._sub is not None:
            self.destroy_subscription(self._sub)
            self._sub = None
        for pub in (self._clock_pub, self._js_pub):
            self.destroy_lifecycle_publisher(pub)

    def error_node(self) -> None:
        self.deactivate_node()

    @property
    def t_ns(self) -> int:
        return self.start_ns + self.k * self.frame_ns

    # --- joints ----------------------------------------------------------------------------------
    def joints(self):
        """(positions as measured by the encoders, true joint velocities), 5 each."""
        l, th = self.plant.measure()
        ld = kin.jacobian(self.plant.p, self.prm.R) @ self.plant.v
        return np.r_[l, th], np.r_[ld, self.plant.omega]

    def _static_effort(self) -> np.ndarray:
        """Efforts that hold the load still against gravity (what a holding brake provides)."""
        pl = self.prm.plant
        g_x = dyn.gravity_task(self.plant.p, self.prm.R, pl.m_p, pl.m_s, pl.q_g)
        F = np.linalg.solve(kin.jacobian(self.plant.p, self.prm.R).T, g_x)
        return np.r_[F, pl.m4r4 * dyn.G0 * np.sin(self.plant.theta[0]), 0.0]

    def _start_brake(self) -> None:
        if self.plant is None or self.braking:
            return
        self.braking = True
        q, v = self.joints()
        self._brake_q, self._brake_v = q.copy(), v.copy()

    def _brake_effort(self, h: float) -> np.ndarray:
        dec = np.asarray(self.p.brake_deceleration) * h
        self._brake_v = self._brake_v - np.clip(self._brake_v, -dec, dec)
        self._brake_q = self._brake_q + self._brake_v * h
        q, v = self.joints()
        return self._static_effort() + self._kp * (self._brake_q - q) + self._kd * (self._brake_v - v)

    # --- commands ------------------------------------------------------------------------------
    def _validate(self, data) -> str | None:
        u = np.asarray(data, float)
        if u.shape != (5,):
            return f'needs 5 efforts ({", ".join(self.p.joint_names)}), got {u.size}'
        if not np.all(np.isfinite(u)):
            return 'non-finite effort'
        if np.any(np.abs(u[:3]) > self.p.force_max) or np.any(np.abs(u[3:]) > self.p.torque_max):
            return f'effort beyond the limits (force_max {self.p.force_max} N, torque_max {self.p.torque_max} N m)'
        return None

    def _on_command(self, msg: Float64MultiArray) -> None:
        if not self.active:
            return
        problem = self._validate(msg.data)
        if problem:
            self.rejected_commands += 1
            self._problem = problem
            self._start_brake()
            self.get_logger().error(f'rejected effort command: {problem}; braking')
            self.status(ERROR, f'rejected command: {problem}; braking', **self._counters())
        else:
            self.effort = np.asarray(msg.data, float)
            self.braking = False
            self._problem = None
        self.last_cmd_k = self.k
        if self.p.lockstep and self.awaiting:
            self.started = True
            self._step()

    # --- frames --------------------------------------------------------------------------------
    def _step(self) -> None:
        h = self.p.frame_period / self.p.substeps
        for _ in range(self.p.substeps):
            u = self._brake_effort(h) if self.braking else self.effort
            self.plant.step(u[:3], u[3:])
        self.applied = u
        self.k += 1
        self.frames += 1
        self._publish_frame()

    def _publish_frame(self) -> None:
        stamp = ns_to_stamp(self.t_ns)
        self._clock_pub.publish(ClockMsg(clock=stamp))
        q, v = self.joints()
        js = self._js
        js.header.stamp = stamp
        js.position = q.tolist()
        js.velocity = v.tolist()
        js.effort = self.applied.tolist()
        self._js_pub.publish(js)
        self._frame_wall = time.monotonic()
        self.awaiting = True

    def _poll(self) -> None:
        now = time.monotonic()
        if not self.started:
            if now - self._frame_wall >= REPUBLISH_PERIOD:
                self._publish_frame()
            return
        if now - self._frame_wall > self.p.lockstep_timeout:
            self.late_commands += 1
            self._late_since_status += 1
            self._start_brake()
            self._step()

    def _tick(self) -> None:
        if not self.active:
            return
        if (self.k - self.last_cmd_k) * self.p.frame_period > self.p.command_timeout:
            self._start_brake()
        self._step()

    # --- diagnostics ---------------------------------------------------------------------------
    def _counters(self) -> dict:
        return dict(frames=self.frames, late_commands=self.late_commands,
                    rejected_commands=self.rejected_commands, braking=self.braking, sim_time=self.t_ns * 1e-9)

    def _publish_status(self) -> None:
        if self.plant is None:
            return
        level, msg = lockstep_status(self._problem, self._late_since_status, 'braked', self.p.lockstep,
                                     self.started, self.active)
        self._late_since_status = 0
        self.status(level, msg, **self._counters())


main = main_for(MockHybrid5Node)

if __name__ == '__main__':
    main()
