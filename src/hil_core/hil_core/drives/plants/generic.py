"""mock_components/GenericSystem's two behaviours as plants: trivial oracles of the mock node's
scaffolding (the frame cycle, the acceptance rules, the watchdog) with no physics in the way.

* :class:`MirrorPlant` (GenericSystem without ``calculate_dynamics``): each state interface
  takes the value of the command interface of the same name; a NaN command leaves the state.
* :class:`IntegratePlant` (``calculate_dynamics: true``), per step of ``h``, as GenericSystem's
  ``read`` does it (ros2_control kilted, restated, not copied):
  - position command: position := command, velocity and acceleration by finite differences;
  - velocity command: position += velocity state * h (the *previous* velocity: backward
    integration), then velocity := command, acceleration by difference;
  - acceleration command: position += velocity * h, velocity += acceleration state * h, then
    acceleration := command.
  A NaN command skips the update of its joint (velocity and acceleration modes still integrate).

Both step once per command row; the state interfaces are position, velocity, acceleration.
"""
from __future__ import annotations

import abc

from typing import Mapping

import numpy as np

from hil_core.drives.plants.protocol import PlantSetup, check_step

INTERFACES = ('position', 'velocity', 'acceleration')


class _GenericPlant(abc.ABC):
    GAINS = ()

    def __init__(self, setup: PlantSetup):
        self.command_interface = setup.hardware.command_interface()
        if self.command_interface not in INTERFACES:
            raise ValueError(f'{type(self).__name__} takes a position, velocity or acceleration command, '
                             f'not {self.command_interface!r}')
        self.step_size = self.setpoint_period = float(setup.frame_period)   # one step per frame
        self.reset(setup.initial)

    def reset(self, initial: Mapping[str, np.ndarray]) -> None:
        n = len(next(iter(initial.values())))
        self.state = {k: np.asarray(initial.get(k, np.zeros(n)), dtype=float).copy() for k in INTERFACES}

    def states(self) -> dict[str, np.ndarray]:
        return {k: v.copy() for k, v in self.state.items()}

    def step(self, h: float, commands: Mapping[str, np.ndarray]) -> None:
        for row in check_step(self, h, commands):
            self._update(h, row)

    @abc.abstractmethod
    def _update(self, h: float, command: np.ndarray) -> None:
        """Apply one step's command row (NaN entries: no command yet, the state holds)."""


class MirrorPlant(_GenericPlant):
    def _update(self, h: float, command: np.ndarray) -> None:
        state = self.state[self.command_interface]
        self.state[self.command_interface] = np.where(np.isnan(command), state, command)


class IntegratePlant(_GenericPlant):
    def _update(self, h: float, command: np.ndarray) -> None:
        p, v, a = (self.state[k] for k in INTERFACES)
        given = ~np.isnan(command)
        if self.command_interface == 'position':
            p_new = np.where(given, command, p)
            v_new = np.where(given, (p_new - p) / h, v)
            a_new = np.where(given, (v_new - v) / h, a)
        elif self.command_interface == 'velocity':
            p_new = p + v * h
            v_new = np.where(given, command, v)
            a_new = np.where(given, (v_new - v) / h, a)
        else:
            p_new = p + v * h
            v_new = v + a * h
            a_new = np.where(given, command, a)
        self.state = dict(zip(INTERFACES, (p_new, v_new, a_new)))
