"""The one small protocol every mock plant follows (STYLE.md section 1), and how a plant is set up.

A plant is the physics behind the hardware interface of the mock (``hil_sim.mock_hardware.node``):

* it is built from a :class:`PlantSetup` (the ``<ros2_control>`` block, the plant's gains, the
  frame period and the braking deceleration) and reset to the initial state values;
* ``step(h, commands)`` integrates ``m`` steps of ``h`` seconds, with one command vector per
  step for each command interface it reads (arrays of shape (m, joints));
* ``states()`` reports the state interfaces per joint (``position``, ``velocity``, ``effort``).

Commands follow ros2_control's mock semantics: a NaN command means "no command yet" and the
plant does what its drive does without one (it holds still, or brakes to rest at the
setup's ``brake_deceleration``); the emulated controllers never send any other non-finite value.

``step_size`` is the plant's integration step ``h``; ``setpoint_period`` the period at which its
drive takes setpoints (a frame period must be a whole multiple of it). Gains are described by
:class:`Gain` so the node can declare them as ROS parameters without importing the plant's
simulation (pinocchio for the iiwa costs 50 MB).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Protocol

import numpy as np

from hil_core.drives.plants.description import HardwareInfo


@dataclass(frozen=True)
class Gain:
    """One plant parameter: name, type (bool/int/float/str or 'float[]'), default, description,
    inclusive range (every element), fixed length (arrays)."""
    name: str
    type: Any
    default: Any
    description: str
    range: tuple | None = None
    length: int | None = None


@dataclass(frozen=True)
class PlantSetup:
    hardware: HardwareInfo
    gains: Mapping[str, Any]
    frame_period: float
    brake_deceleration: np.ndarray              # per joint (m/s^2 or rad/s^2)
    initial: Mapping[str, np.ndarray] = field(default_factory=dict)   # state interface -> values
    robot_description: str = ''                 # the URDF file (plants that load a model from it)

    @property
    def n(self) -> int:
        return len(self.hardware.joints)


class Plant(Protocol):
    command_interface: str
    step_size: float
    setpoint_period: float

    def reset(self, initial: Mapping[str, np.ndarray]) -> None: ...

    def step(self, h: float, commands: Mapping[str, np.ndarray]) -> None: ...

    def states(self) -> dict[str, np.ndarray]: ...


def per_joint(values, n: int, name: str) -> np.ndarray:
    """One value for every joint, or one per joint."""
    v = np.asarray(values, dtype=float).ravel()
    if v.size == 1:
        return np.full(n, v[0])
    if v.size != n:
        raise ValueError(f"'{name}' needs one value or one per joint ({n}), got {v.size}")
    return v


def require_joints(setup: PlantSetup, plant: str, interface: str, n: int | None = None) -> None:
    """Refuse a <ros2_control> block whose joints this plant cannot drive."""
    given = setup.hardware.command_interface()
    if given != interface or (n is not None and setup.n != n):
        count = f'{n} ' if n is not None else ''
        raise ValueError(f'the {plant} plant takes {count}{interface}-commanded joints, the URDF gives '
                         f'{setup.n} {given!r} joints')


def check_step(plant, h: float, commands: Mapping[str, np.ndarray]) -> np.ndarray:
    """The rows of the plant's command interface, checked against its step size."""
    if abs(h - plant.step_size) > 1e-12 * max(1.0, plant.step_size):
        raise ValueError(f'step {h} s differs from the plant step {plant.step_size} s')
    rows = np.atleast_2d(np.asarray(commands[plant.command_interface], dtype=float))
    if np.any(np.isinf(rows)):
        raise ValueError('infinite command: refused (state unchanged)')
    return rows
