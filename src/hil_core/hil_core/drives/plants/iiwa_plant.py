"""The KUKA iiwa 14 joints (``hil_core.iiwa.arm_sim.ArmSim``) as a mock plant.

Velocity-commanded joints (the FRI rate: one step per frame, 1 ms): each step takes one joint
velocity target per joint. A NaN target ("no command yet", or the emulated controller stopped)
makes the drive brake: its target ramps from the last one to zero at ``brake_deceleration``
and then holds (the former mock_iiwa's braking, now what the drive does without a command).
States: position, velocity and the measured joint torque (effort).

The gain defaults restate ``ArmSimParams``'s (test/unit/test_plants.py checks they agree), so
declaring them does not import pinocchio; the simulation is imported when a plant is built.
The arm model is the URDF of the setup (the robot description the node was given).
"""
from __future__ import annotations

from typing import Mapping

import numpy as np

from hil_core.drives.plants.protocol import Gain, PlantSetup, check_step, require_joints

N = 7
GAINS = (
    Gain('velocity_bandwidth_hz', float, 20.0, 'iiwa plant: joint velocity PI crossover (Hz)', (0.5, 200.0)),
    Gain('armature', 'float[]', [0.4, 0.4, 0.25, 0.25, 0.1, 0.05, 0.05], 'iiwa plant: reflected rotor inertia '
         '(kg m^2)', (1e-4, 100.0), N),
    Gain('friction', bool, True, 'iiwa plant: simulate joint friction (LuGre, closed form)'),
    Gain('coulomb_friction', 'float[]', [2.0, 2.0, 1.5, 1.5, 1.0, 0.5, 0.5], 'iiwa plant: F_c per joint (N m)',
         (1e-4, 100.0), N),
    Gain('static_ratio', float, 1.3, 'iiwa plant: F_s / F_c', (1.0, 5.0)),
    Gain('stribeck_velocity', float, 0.02, 'iiwa plant: v_s (rad/s)', (1e-5, 10.0)),
    Gain('bristle_stiffness', float, 1e4, 'iiwa plant: sigma0 (N m/rad)', (1.0, 1e8)),
    Gain('bristle_damping', float, 30.0, 'iiwa plant: sigma1 (N m s/rad)', (0.0, 1e5)),
    Gain('viscous_friction', 'float[]', [3.0, 3.0, 2.0, 2.0, 1.0, 0.5, 0.5], 'iiwa plant: sigma2 (N m s/rad)',
         (0.0, 1e3), N),
    Gain('flexible', bool, False, 'iiwa plant: torsional joint flexibility (two-mass joints, implicit step)'),
    Gain('stiffness', 'float[]', [1.5e4, 1.5e4, 1.0e4, 1.0e4, 5.0e3, 5.0e3, 5.0e3], 'iiwa plant: joint '
         'torsional stiffness (N m/rad)', (1.0, 1e9), N),
    Gain('joint_damping', 'float[]', [20.0, 20.0, 15.0, 15.0, 5.0, 3.0, 3.0], 'iiwa plant: joint torsional '
         'damping (N m s/rad)', (0.0, 1e6), N),
    Gain('ripple_amplitude', 'float[]', [0.0] * N, 'iiwa plant: motor torque ripple (N m, 0 = off)',
         (0.0, 50.0), N),
    Gain('ripple_periods', 'float[]', [800.0] * N, 'iiwa plant: ripple periods per joint revolution',
         (0.0, 1e5), N),
)


class IiwaPlant:
    GAINS = GAINS
    command_interface = 'velocity'

    def __init__(self, setup: PlantSetup):
        from hil_core.iiwa.arm_sim import ArmSim, ArmSimParams   # pinocchio only for this plant
        require_joints(setup, 'iiwa', 'velocity', N)
        g = setup.gains
        params = ArmSimParams(armature=tuple(g['armature']), velocity_bandwidth_hz=g['velocity_bandwidth_hz'],
                              fc=tuple(g['coulomb_friction']), fs_ratio=g['static_ratio'],
                              vs=g['stribeck_velocity'], sigma0=g['bristle_stiffness'],
                              sigma1=g['bristle_damping'], viscous=tuple(g['viscous_friction']),
                              ripple_amplitude=tuple(g['ripple_amplitude']),
                              ripple_periods=tuple(g['ripple_periods']), friction=g['friction'],
                              flexible=g['flexible'], stiffness=tuple(g['stiffness']),
                              joint_damping=tuple(g['joint_damping']))
        self.sim = ArmSim(params, setup.robot_description or None)
        self.step_size = self.setpoint_period = float(setup.frame_period)
        self.deceleration = np.asarray(setup.brake_deceleration, dtype=float)
        self.reset(setup.initial)

    def reset(self, initial: Mapping[str, np.ndarray]) -> None:
        self.sim.reset(initial['position'])
        self.target = np.zeros(N)

    def step(self, h: float, commands: Mapping[str, np.ndarray]) -> None:
        for row in check_step(self, h, commands):
            unset = np.isnan(row)
            # braking: the target moves toward zero by at most deceleration * h per step
            ramp = self.target - np.clip(self.target, -self.deceleration * h, self.deceleration * h)
            self.target = np.where(unset, ramp, row)
            self.sim.step(self.target, h)

    def states(self) -> dict[str, np.ndarray]:
        s = self.sim
        return {'position': s.q.copy(), 'velocity': s.v.copy(), 'effort': s.tau_measured.copy()}
