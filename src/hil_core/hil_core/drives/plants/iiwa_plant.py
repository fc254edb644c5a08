"""The KUKA iiwa 14 joints (``hil_core.iiwa.arm_sim.ArmSim``) as a mock plant.

Position-commanded joints, as FRI's joint position mode and lbr_fri_ros2_stack's
``lbr_ros2_control::SystemInterface`` take them (position and effort command interfaces; the
controllers claim position): one step per frame (the FRI rate, 1 ms), one joint position target
per joint: the value the controller wrote to the position interface for that cycle, which a
joint_trajectory_controller takes one update period ahead on its trajectory (``command_lead``:
the emulated JTC gives the trajectory at the step's end). The drives follow the commanded positions as a position loop around the joint
velocity loop of ``ArmSim``: velocity target = the reference's velocity (its difference over
the step) + ``position_gain`` x (reference - measured position).

A NaN target ("no command yet", or the emulated controller stopped) never makes a jump: the
reference starts from the measured position (as lbr's ``init_command`` does with a NaN target)
and, when commands stop while it moves, brakes: its velocity ramps from the last one to zero at
``brake_deceleration`` and its position follows that ramp, then holds -- a braking trajectory
of positions, the controlled stop of the drives' watchdog. States: position, velocity and the
measured joint torque (effort).

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
    Gain('position_gain', float, 10.0, 'iiwa plant: position loop gain of the drives around their velocity loop '
         '(1/s; assumption, half the velocity crossover in rad/s divided by 2 pi)', (0.0, 1000.0)),
)


class IiwaPlant:
    GAINS = GAINS
    command_interface = 'position'
    command_lead = True        # a JTC's rows: the trajectory at each step's end (its command_next_)

    def __init__(self, setup: PlantSetup):
        from hil_core.iiwa.arm_sim import ArmSim, ArmSimParams   # pinocchio only for this plant
        require_joints(setup, 'iiwa', 'position', N)
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
        self.position_gain = float(g['position_gain'])
        self.reset(setup.initial)

    def reset(self, initial: Mapping[str, np.ndarray]) -> None:
        self.sim.reset(initial['position'])
        self.reference = self.sim.q.copy()          # the drives hold where they are
        self.reference_velocity = np.zeros(N)

    def step(self, h: float, commands: Mapping[str, np.ndarray]) -> None:
        for row in check_step(self, h, commands):
            unset = np.isnan(row)
            ref, ref_v = self.reference, self.reference_velocity
            # braking: the reference's velocity moves toward zero by at most deceleration * h
            ramp = ref_v - np.clip(ref_v, -self.deceleration * h, self.deceleration * h)
            v_ff = np.where(unset, ramp, (row - ref) / h)
            target = v_ff + self.position_gain * (ref - self.sim.q)
            self.sim.step(target, h)
            self.reference = np.where(unset, ref + ramp * h, row)
            self.reference_velocity = v_ff

    def states(self) -> dict[str, np.ndarray]:
        s = self.sim
        return {'position': s.q.copy(), 'velocity': s.v.copy(), 'effort': s.tau_measured.copy()}
