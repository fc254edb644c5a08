"""Mock KUKA iiwa 14 with velocity interface: joints simulated by ``hil_core.iiwa_arm_sim``
(ABA in gravity, KUKA-like PI velocity loops, LuGre friction at 1 ms, optional torsional
flexibility and torque ripple).

Interface as ros2_control's forward_command_controller: std_msgs/Float64MultiArray of 7 joint
velocities (rad/s, ``iiwa_joint_1..7`` order) on ``/velocity_controller/commands``; it
publishes ``/joint_states`` with position, velocity and the measured joint torque (effort).

Lockstep (docs/CONTRACTS.md "Clock and lockstep", frame = 1 ms, the FRI rate): frame k
publishes ``/clock`` = t_k then ``/joint_states`` (stamp t_k) and waits for *the command of
frame k*. Float64MultiArray has no stamp, so commands pair with frames by arrival: the first
command received after joint_states(t_k) is frame k's, and the next one waits for t_{k+1}.
Without one after ``lockstep_timeout`` wall seconds it brakes (target ramps to zero), counts a
late command and advances. Before the first command it re-publishes t_0 at 10 Hz wall.
Real time (``lockstep: false``): a steady timer advances a frame every frame_period /
time_scale; a command older than ``command_timeout`` sim seconds makes the joints brake.

Bad commands (not 7 values, NaN/inf, beyond the URDF velocity limits) are rejected with an
ERROR diagnostic; the joints brake to zero velocity at ``brake_deceleration`` (no jump).
"""
from __future__ import annotations

import time

import numpy as np
from rclpy.clock import Clock, ClockType
from rosgraph_msgs.msg import Clock as ClockMsg
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from hil_core.iiwa import JOINT_NAMES
from hil_core.iiwa_arm_sim import ArmSim, ArmSimParams
from hil_nodes import qos, topics
from hil_nodes.base import ERROR, HilLifecycleNode, Param
from hil_nodes.convert import ns_to_stamp
from hil_nodes.runner import main_for
from hil_sim.lockstep_status import lockstep_status

REPUBLISH_PERIOD = 0.1
SEED_Q0 = [-0.458149, 1.151219, 0.012566, 1.179319, -1.102175, -0.04468, 2.457249]   # seed 002 (rad)


class MockIiwaNode(HilLifecycleNode):
    PARAMS = (
        Param('urdf', str, '', "iiwa URDF ('' = urdf/iiwa14.urdf of the source tree)"),
        Param('initial_positions', 'float[]', SEED_Q0, 'joint angles at configure (rad)', length=7,
              range=(-3.1, 3.1)),
        Param('frame_period', float, 0.001, 'simulation step and lockstep frame (s), FRI: 1 ms',
              range=(1e-4, 0.01)),
        Param('lockstep_timeout', float, 0.5, 'wall s to wait for the command of a frame', range=(1e-3, 60.0),
              dynamic=True),
        Param('time_scale', float, 1.0, 'real time: sim s per wall s (must be > 0); ignored in lockstep, '
              'where 0 means as fast as possible as for the mock hexapod', range=(0.0, 100.0), dynamic=True),
        Param('start_time', float, 0.0, 'sim time of the first frame (s)', range=(0.0, 1e6)),
        Param('command_timeout', float, 0.1, 'real time: brake when the last command is older (sim s)',
              range=(1e-3, 10.0), dynamic=True),
        Param('brake_deceleration', float, 5.0, 'ramp of the velocity target to zero on faults (rad/s^2)',
              range=(0.1, 100.0)),
        Param('velocity_bandwidth_hz', float, 20.0, 'joint velocity PI crossover (Hz)', range=(0.5, 200.0)),
        Param('armature', 'float[]', list(ArmSimParams.armature), 'reflected rotor inertia (kg m^2)',
              length=7, range=(1e-4, 100.0)),
        Param('friction', bool, True, 'simulate joint friction (LuGre, closed form)'),
        Param('coulomb_friction', 'float[]', list(ArmSimParams.fc), 'F_c per joint (N m)', length=7,
              range=(1e-4, 100.0)),
        Param('static_ratio', float, 1.3, 'F_s / F_c', range=(1.0, 5.0)),
        Param('stribeck_velocity', float, 0.02, 'v_s (rad/s)', range=(1e-5, 10.0)),
        Param('bristle_stiffness', float, 1e4, 'sigma0 (N m/rad)', range=(1.0, 1e8)),
        Param('bristle_damping', float, 30.0, 'sigma1 (N m s/rad)', range=(0.0, 1e5)),
        Param('viscous_friction', 'float[]', list(ArmSimParams.viscous), 'sigma2 (N m s/rad)', length=7,
              range=(0.0, 1e3)),
        Param('flexible', bool, False, 'torsional joint flexibility (two-mass joints, implicit step)'),
        Param('stiffness', 'float[]', list(ArmSimParams.stiffness), 'joint torsional stiffness (N m/rad)',
              length=7, range=(1.0, 1e9)),
        Param('joint_damping', 'float[]', list(ArmSimParams.joint_damping), 'joint torsional damping (N m s/rad)',
              length=7, range=(0.0, 1e6)),
        Param('ripple_amplitude', 'float[]', [0.0] * 7, 'motor torque ripple (N m, 0 = off)', length=7,
              range=(0.0, 50.0)),
        Param('ripple_periods', 'float[]', [800.0] * 7, 'ripple periods per joint revolution', length=7,
              range=(0.0, 1e5)),
        Param('status_period', float, 0.5, 'wall s between diagnostics', range=(0.01, 60.0)),
    )

    def __init__(self, node_name: str = 'mock_iiwa', **kwargs):
        super().__init__(node_name, **kwargs)
        self._own_timers = []
        self._sub = None
        self.sim = None

    def check_parameters(self, p) -> str | None:
        if not p.lockstep and p.time_scale <= 0.0:
            return "parameter 'time_scale' must be > 0 in real time (lockstep: false)"
        return None

    def configure_node(self) -> None:
        p = self.p
        params = ArmSimParams(armature=tuple(p.armature), velocity_bandwidth_hz=p.velocity_bandwidth_hz,
                              fc=tuple(p.coulomb_friction), fs_ratio=p.static_ratio, vs=p.stribeck_velocity,
                              sigma0=p.bristle_stiffness, sigma1=p.bristle_damping,
                              viscous=tuple(p.viscous_friction), ripple_amplitude=tuple(p.ripple_amplitude),
                              ripple_periods=tuple(p.ripple_periods), friction=p.friction,
                              flexible=p.flexible, stiffness=tuple(p.stiffness),
                              joint_damping=tuple(p.joint_damping))
        self.sim = ArmSim(params, p.urdf or None)       # ValueError refuses the configuration
        self.sim.reset(p.initial_positions)
        self.frame_ns = int(round(p.frame_period * 1e9))
        self.start_ns = int(round(p.start_time * 1e9))
        self.k = 0
        self.started = False
        self.awaiting = True
        self.target = np.zeros(7)
        self.braking = False
        self.last_cmd_k = 0
        self.frames = self.late_commands = self.rejected_commands = 0
        self._late_since_status = 0
        self._problem = None
        self._clock_pub = self.create_lifecycle_publisher(ClockMsg, topics.CLOCK, qos.stream(True))
        self._js_pub = self.create_lifecycle_publisher(JointState, topics.JOINT_STATES, self.stream_qos())
        self._sub = self.create_subscription(Float64MultiArray, topics.VELOCITY_COMMANDS, self._on_command,
                                             qos.command(lockstep=self.p.lockstep))
        self._js = JointState(name=list(JOINT_NAMES))
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
        self.target = np.zeros(7)
        self.braking = True

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

    # --- commands ------------------------------------------------------------------------------
    def _validate(self, data) -> str | None:
        v = np.asarray(data, float)
        if v.shape != (7,):
            return f'needs 7 joint velocities ({", ".join(JOINT_NAMES)}), got {v.size}'
        if not np.all(np.isfinite(v)):
            return 'non-finite joint velocity'
        over = np.abs(v) > self.sim.kin.velocity_limit
        if np.any(over):
            return f'beyond the velocity limits at joints {[JOINT_NAMES[i] for i in np.flatnonzero(over)]}'
        return None

    def _on_command(self, msg: Float64MultiArray) -> None:
        if not self.active:
            return
        problem = self._validate(msg.data)
        if problem:
            self.rejected_commands += 1
            self.braking = True
            self._problem = problem
            self.get_logger().error(f'rejected velocity command: {problem}; braking to zero velocity')
            self.status(ERROR, f'rejected command: {problem}; braking', **self._counters())
        else:
            self.target = np.asarray(msg.data, float)
            self.braking = False
            self._problem = None
        self.last_cmd_k = self.k
        if self.p.lockstep and self.awaiting:
            self.started = True
            self._step()

    # --- frames --------------------------------------------------------------------------------
    def _step(self) -> None:
        h = self.p.frame_period
        if self.braking:
            dv = np.clip(-self.target, -self.p.brake_deceleration * h, self.p.brake_deceleration * h)
            self.target = self.target + dv
        self.sim.step(self.target, h)
        self.k += 1
        self.frames += 1
        self._publish_frame()

    def _publish_frame(self) -> None:
        stamp = ns_to_stamp(self.t_ns)
        self._clock_pub.publish(ClockMsg(clock=stamp))
        js = self._js
        js.header.stamp = stamp
        js.position = self.sim.q.tolist()
        js.velocity = self.sim.v.tolist()
        js.effort = self.sim.tau_measured.tolist()
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
            self.braking = True
            self._step()

    def _tick(self) -> None:
        if not self.active:
            return
        if (self.k - self.last_cmd_k) * self.p.frame_period > self.p.command_timeout:
            self.braking = True
        self._step()

    # --- diagnostics ---------------------------------------------------------------------------
    def _counters(self) -> dict:
        return dict(frames=self.frames, late_commands=self.late_commands,
                    rejected_commands=self.rejected_commands, sim_time=self.t_ns * 1e-9)

    def _publish_status(self) -> None:
        if self.sim is None:
            return
        level, msg = lockstep_status(self._problem, self._late_since_status, 'braked', self.p.lockstep,
                                     self.started, self.active)
        self._late_since_status = 0
        self.status(level, msg, **self._counters())


main = main_for(MockIiwaNode)

if __name__ == '__main__':
    main()
