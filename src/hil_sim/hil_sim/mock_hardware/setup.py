"""What the generic mock hardware node is built from (docs/mock_hardware.md): the robot its
parameters (``hil_sim.mock_hardware.params``) select: the ``<ros2_control>`` block of the robot
description, the emulated controller of the controllers YAML, the plant with its initial state.

The robot comes from data only: ``robot_description`` (a URDF file of the data tree, or the
URDF text itself) and ``controller`` (a name in ``controllers_file``). The plant is the node's
``plant`` parameter, else the block's hardware ``<param name="mock_plant">``, else
GenericSystem's mirror. ``initial_positions`` (optional) overrides the URDF's initial positions.
"""
from __future__ import annotations

import pathlib
from dataclasses import dataclass
from types import SimpleNamespace

import numpy as np
import yaml

from hil_core.data_paths import config_file, data_root
from hil_core.drives.plants import DEFAULT_PLANT, PLANT_PARAM, PLANTS, make_plant, plant_gains
from hil_core.drives.plants.controllers import ControllerSpec, ForwardCommand, TrajectoryFollower, controller_spec
from hil_core.drives.plants.description import HardwareInfo, parse_ros2_control
from hil_core.drives.plants.protocol import PlantSetup
from hil_nodes.framework.base import ParameterError


@dataclass
class Robot:
    """The hardware, its emulated controller and the plant behind it."""
    hardware: HardwareInfo
    spec: ControllerSpec
    plant_name: str
    urdf_path: str


def _urdf(value: str) -> tuple[str, str]:
    """(URDF text, file path or '') of the robot_description parameter."""
    if value.lstrip().startswith('<'):
        return value, ''
    path = pathlib.Path(value)
    path = path if path.is_absolute() else data_root() / path
    return path.read_text(), str(path)


def load_robot(p: SimpleNamespace) -> Robot:
    if not p.robot_description:
        raise ParameterError("parameter 'robot_description' is required: a URDF with a <ros2_control> block")
    if not p.controller:
        raise ParameterError("parameter 'controller' is required: the name of the emulated controller in "
                             'controllers_file')
    try:
        text, path = _urdf(p.robot_description)
        hardware = parse_ros2_control(text, p.ros2_control)
        controllers = yaml.safe_load(pathlib.Path(p.controllers_file or config_file('controllers.yaml')).read_text())
        spec = controller_spec(controllers or {}, p.controller)
        if len({iface for j in hardware.joints for iface in j.command}) > 1:
            # several command interfaces (the iiwa's position and effort): the one the emulated
            # controller claims, as the controller manager gives it
            hardware = hardware.claimed(spec.interface)
    except (OSError, ValueError, yaml.YAMLError) as exc:
        raise ParameterError(f'robot: {exc}') from None
    plant = p.plant or hardware.params.get(PLANT_PARAM) or DEFAULT_PLANT
    if plant not in PLANTS:
        raise ParameterError(f"<ros2_control> param {PLANT_PARAM!r} names an unknown plant {plant!r}")
    return Robot(hardware, spec, plant, path)


def initial_state(p: SimpleNamespace, hardware: HardwareInfo) -> dict:
    state = {iface: hardware.initial(iface) for j in hardware.joints for iface in j.state}
    state.setdefault('position', hardware.initial('position'))
    if p.initial_positions:
        if len(p.initial_positions) != len(hardware.joints):
            raise ParameterError(f"parameter 'initial_positions' needs one value per joint "
                                 f'({len(hardware.joints)}), got {len(p.initial_positions)}')
        state['position'] = np.asarray(p.initial_positions, dtype=float)
    return state


def build(p: SimpleNamespace, robot: Robot, brake_deceleration):
    """(plant, controller, steps per frame): ParameterError naming the plant when it cannot run."""
    initial = initial_state(p, robot.hardware)
    gains = {g.name: getattr(p, g.name) for g in plant_gains(robot.plant_name)}
    setup = PlantSetup(robot.hardware, gains, p.frame_period, np.asarray(brake_deceleration, dtype=float),
                       initial, robot.urdf_path)
    try:
        plant = make_plant(robot.plant_name, setup)
    except ValueError as exc:
        raise ParameterError(f'{robot.plant_name} plant: {exc}') from None
    try:
        # (a plant that takes the position command itself gets what a JTC writes: ``lead``)
        controller = (TrajectoryFollower(robot.spec, robot.hardware, initial['position'],
                                         lead=getattr(plant, 'command_lead', False)) if robot.spec.trajectory
                      else ForwardCommand(robot.spec, robot.hardware))
    except ValueError as exc:
        raise ParameterError(str(exc)) from None
    if plant.command_interface != robot.spec.interface:
        raise ParameterError(f'the {robot.plant_name} plant takes {plant.command_interface!r} commands, controller '
                             f'{robot.spec.name!r} writes {robot.spec.interface!r}')
    setpoints = p.frame_period / plant.setpoint_period
    if round(setpoints) < 1 or abs(setpoints - round(setpoints)) > 1e-6:
        raise ParameterError(f"parameter 'frame_period' ({p.frame_period}) must be a whole multiple of the "
                             f"{robot.plant_name} plant's setpoint period ({plant.setpoint_period})")
    return plant, controller, int(round(p.frame_period / plant.step_size))
