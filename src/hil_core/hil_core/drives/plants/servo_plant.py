"""The hexapod's slider drives (``hil_core.drives.servo.ServoAxes``) as a mock plant.

Position-commanded drives with a PMAC-like position loop: each step of ``h`` (the loop's
internal step, ``servo_period / internal_steps``) takes a position setpoint with its velocity
(feedforward) and acceleration (feedforward); the emulated JTC samples its trajectory at these
steps (``hil_core.drives.plants.controllers``), which is what ``ServoAxes.follow`` did inside the
former mock_hexapod. Limits: position from the ``<ros2_control>`` command interface min/max,
velocity from the URDF ``<limit velocity>``; the acceleration limit is a drive gain.

A NaN position setpoint ("no command yet") holds the axis at its measured position.
States: position, velocity and, as ``effort``, the applied acceleration demand (m/s^2; the
former mock published it there and consumers keep reading it).
"""
from __future__ import annotations

from typing import Mapping

import numpy as np

from hil_core.drives.plants.protocol import Gain, PlantSetup, check_step, per_joint, require_joints
from hil_core.drives.servo import ServoAxes, ServoConfig
from hil_core.supervision.timing import SERVO_PERIOD

GAINS = (
    Gain('bandwidth', float, 50.0, 'servo plant: natural frequency of the closed position loop (Hz)', (0.1, 1000.0)),
    Gain('damping', float, 0.7, 'servo plant: damping ratio of the closed position loop', (0.05, 5.0)),
    Gain('velocity_feedforward', float, 1.0, 'servo plant: velocity feedforward gain (1 = full)', (0.0, 1.5)),
    Gain('acceleration_feedforward', float, 1.0, 'servo plant: acceleration feedforward gain (1 = full)',
         (0.0, 1.5)),
    Gain('acceleration_max', 'float[]', [20.0], 'servo plant: drive acceleration limit, one value or one per '
         'joint (m/s^2)', (1e-3, 1e4)),
    Gain('servo_period', float, SERVO_PERIOD, 'servo plant: setpoint period of the drives (s)', (1e-5, 0.1)),
    Gain('internal_steps', int, 5, 'servo plant: position-loop updates per servo period', (1, 100)),
)


class ServoPlant:
    GAINS = GAINS
    command_interface = 'position'

    def __init__(self, setup: PlantSetup):
        require_joints(setup, 'servo', 'position')
        hw, g = setup.hardware, setup.gains
        lo, hi = hw.command_limits()
        self.config = ServoConfig(bandwidth=g['bandwidth'], damping=g['damping'],
                                  velocity_feedforward=g['velocity_feedforward'],
                                  acceleration_feedforward=g['acceleration_feedforward'],
                                  position_min=tuple(lo), position_max=tuple(hi),
                                  velocity_max=tuple(hw.velocity_limits()),
                                  acceleration_max=tuple(per_joint(g['acceleration_max'], setup.n, 'acceleration_max')),
                                  servo_period=g['servo_period'], internal_steps=g['internal_steps'])
        problem = self.config.problem()
        if problem:
            raise ValueError(problem)
        self.setpoint_period = float(g['servo_period'])
        self.step_size = self.setpoint_period / int(g['internal_steps'])
        self.reset(setup.initial)

    def reset(self, initial: Mapping[str, np.ndarray]) -> None:
        self.axes = ServoAxes(self.config, initial['position'])     # ValueError beyond the limits

    def step(self, h: float, commands: Mapping[str, np.ndarray]) -> None:
        """``commands['position']``, ``['velocity']``, ``['acceleration']``: (m, n) setpoints at
        the start of each step (velocity and acceleration feedforward; absent = zero)."""
        p = check_step(self, h, commands)
        m, n = p.shape
        v = np.asarray(commands.get('velocity', np.zeros((m, n))), dtype=float)
        a = np.asarray(commands.get('acceleration', np.zeros((m, n))), dtype=float)
        unset = np.isnan(p)
        if np.any(unset):                       # no command yet: hold where the axis is
            p = np.where(unset, self.axes.position, p)
            v, a = np.where(unset, 0.0, v), np.where(unset, 0.0, a)
        # ServoAxes.run reads the setpoint at the start of each step (the closing row only feeds a
        # default acceleration, which is given here)
        self.axes.run(np.vstack([p, p[-1:]]), np.vstack([v, v[-1:]]), a)

    def follow(self, h: float, m: int, t0: float, knots) -> bool:
        """``step(h, commands)`` for the commands ``TrajectoryFollower.commands(t0, m, h)`` samples
        from its ``knots``, in one compiled call (``ServoAxes.follow_compiled``: the same samples,
        feedforward and loop updates, bit for bit, test_plants.py); True when done. False, nothing
        changed, where ``step`` must decide (another step size, knots the kernel does not take, a
        setpoint that is not finite: "no command yet" holds, an infinite one is refused)."""
        knot_t, knot_p, knot_v = knots
        if m < 1 or abs(h - self.step_size) > 1e-12 * max(1.0, self.step_size):
            return False
        return self.axes.follow_compiled(float(t0), int(m), knot_t, knot_p, knot_v)

    def states(self) -> dict[str, np.ndarray]:
        ax = self.axes
        return {'position': ax.position.copy(), 'velocity': ax.velocity.copy(), 'effort': ax.acceleration.copy()}
