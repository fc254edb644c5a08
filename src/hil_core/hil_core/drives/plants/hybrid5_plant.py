"""The 5-axis hybrid robot's drives (seed 003; ``hil_core.hybrid5.dynamics.Plant``) as a mock plant.

Effort-commanded joints: three linear PMSM legs (force, N) and the tilt-rotary table (torque,
N m), ``substeps`` plant steps per frame. States: leg lengths (m, absolute, eq. 3) and table
angles (rad) quantised like the encoders, true joint rates, and the effort applied in the last
step.

A NaN effort ("no command yet", or the emulated controller stopped) engages the drives' holding
brake, as the former mock_hybrid5 did on faults: from the joint state at that moment a target
decelerates to rest at ``brake_deceleration`` per joint and the drives' own PD loop
(``brake_bandwidth``) follows it on top of the load's static gravity effort, so nothing falls.
The initial platform position is the forward kinematics of the URDF's initial leg lengths.
"""
from __future__ import annotations

import math
from typing import Mapping

import numpy as np

from hil_core.hybrid5 import dynamics as dyn, kinematics as kin
from hil_core.hybrid5.law_frame import DriveArrays
from hil_core.hybrid5.params import load_params
from hil_core.drives.plants.protocol import Gain, PlantSetup, check_step, require_joints

N = 5
BRAKE_MASS = (60.0, 60.0, 60.0)     # kg per leg: order of the reduced masses (eq. 23) for the hold gains
GAINS = (
    Gain('params_file', str, '', "hybrid5 plant: robot parameters yaml ('' = config/hybrid5.yaml of the data tree)"),
    Gain('substeps', int, 1, 'hybrid5 plant: integration steps per frame', (1, 100)),
    Gain('brake_bandwidth', float, 20.0, "hybrid5 plant: bandwidth of the drives' hold loop while braking (Hz)",
         (0.1, 200.0)),
)


# s between two evaluations of the holding brake's gravity term (``Hybrid5Plant._brake_effort``):
# the drives' frame
STATIC_HOLD_S = 0.0025


class Hybrid5Plant:
    GAINS = GAINS
    command_interface = 'effort'

    def __init__(self, setup: PlantSetup):
        require_joints(setup, 'hybrid5', 'effort', N)             # 3 legs, tilt, rotary
        g = setup.gains
        self.prm = load_params(g['params_file'] or None)
        self.substeps = int(g['substeps'])
        self.frame_period = float(setup.frame_period)
        self.step_size = self.frame_period / self.substeps
        self.setpoint_period = self.step_size
        w = 2 * np.pi * g['brake_bandwidth']
        mass = np.array([*BRAKE_MASS, self.prm.plant.J44, self.prm.plant.J55])
        self._kp, self._kd = mass * w * w, mass * 2 * 0.9 * w
        self.deceleration = np.asarray(setup.brake_deceleration, dtype=float)
        self._base = np.c_[kin.base_points(self.prm.R), np.zeros(3)]      # (3 legs, x y z)
        self.reset(setup.initial)

    def reset(self, initial: Mapping[str, np.ndarray]) -> None:
        q0 = np.asarray(initial['position'], dtype=float)
        p0 = kin.forward(q0[:3], self.prm.R)          # ValueError: legs that cannot meet
        # one Plant step per command row (the former mock built the Plant with ``substeps`` and
        # also looped over them: substeps**2 steps per frame whenever substeps > 1)
        self.plant = dyn.Plant(self.prm, p0, q0[3:], self.step_size, 1)
        self.applied = np.zeros(N)
        self.braking = False

    # --- joints ----------------------------------------------------------------------------------
    def positions(self) -> np.ndarray:
        """The encoders' positions alone (what a controller in the drives' loop reads)."""
        return np.array(self.plant.encoder_positions())

    def joints(self):
        """(positions as measured by the encoders, true joint velocities), 5 each."""
        l, th = self.plant.measure()
        d = self.plant.p - self._base              # leg vectors d_i = p - b_i (eq. 3)
        ld = (d @ self.plant.v) / np.sqrt(np.einsum('ij,ij->i', d, d))   # ldot = J v, rows d_i / l_i (eq. 8)
        return np.concatenate((l, th)), np.concatenate((ld, self.plant.omega))

    def _static_effort(self) -> np.ndarray:
        """Efforts that hold the load still against gravity (what a holding brake provides)."""
        pl = self.prm.plant
        g_x = dyn.gravity_task(self.plant.p, self.prm.R, pl.m_p, pl.m_s, pl.q_g)
        F = np.linalg.solve(kin.jacobian(self.plant.p, self.prm.R).T, g_x)
        return np.r_[F, pl.m4r4 * dyn.G0 * np.sin(self.plant.theta[0]), 0.0]

    def _brake_effort(self, h: float) -> np.ndarray:
        dec = self.deceleration * h
        self._brake_v = self._brake_v - np.clip(self._brake_v, -dec, dec)
        self._brake_q = self._brake_q + self._brake_v * h
        q, v = self.joints()
        # The gravity term is renewed once per STATIC_HOLD_S, not at every 0.1 ms step: it cost
        # about 30 of a braking step's 50 us, and a braking frame of 25 steps then took more than
        # a frame at twice the pace, so a one-process graph under SCHED_FIFO never got past the
        # drives' stop (2026-11-28). Within 2.5 ms the braking load moves by at most
        # a_max * t^2 / 2 (about 20 um): the hold loop's PD takes up the difference.
        self._static_age -= h
        if self._static_age <= 0.0:
            self._static = self._static_effort()
            self._static_age = STATIC_HOLD_S
        return self._static + self._kp * (self._brake_q - q) + self._kd * (self._brake_v - v)

    # --- protocol --------------------------------------------------------------------------------
    def step(self, h: float, commands: Mapping[str, np.ndarray]) -> None:
        rows = commands[self.command_interface]
        if h == self.step_size and isinstance(rows, np.ndarray) and rows.shape == (1, N):
            values = rows[0].tolist()
            if all(map(math.isfinite, values)):       # the drives' loop: one valid row per step
                self.braking = False
                self.plant.step(rows[0, :3], rows[0, 3:])
                self.applied = rows[0]
                return
        for row in check_step(self, h, commands):
            if np.any(np.isnan(row)):
                if not self.braking:           # the brake engages from the state of this instant
                    self.braking = True
                    self._brake_q, self._brake_v = self.joints()
                    self._static_age = 0.0          # the gravity term of this instant first
                row = self._brake_effort(h)
            else:
                self.braking = False
            self.plant.step(row[:3], row[3:])
            self.applied = row

    def drive_arrays(self, h: float, controller) -> DriveArrays | None:
        """The plant and ``controller`` (its ``limit_arrays``) as hybrid5's compiled law frame
        steps them (``hil_core.hybrid5.law_frame``; the state advances in place), or None where
        ``step`` would not take its one-row path: another step size, the Python plant, a
        controller without limit arrays or inactive."""
        limits = getattr(controller, 'limit_arrays', lambda: None)()
        pl = self.plant
        if limits is None or h != self.step_size or pl._constants is None or pl.substeps != 1:
            return None
        return DriveArrays(pl._constants, pl.p, pl.v, pl.theta, pl.omega, pl.dt, pl.pl.encoder_leg,
                           pl.pl.encoder_table, *limits)

    def took(self, command: np.ndarray) -> None:
        """The law frame stepped the plant, ``command`` (finite, the drives' order) last: what
        ``step``'s one-row path keeps."""
        self.braking = False
        self.applied = command

    def states(self) -> dict[str, np.ndarray]:
        q, v = self.joints()
        return {'position': q, 'velocity': v, 'effort': self.applied.copy()}
