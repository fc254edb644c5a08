"""The ``<ros2_control>`` block of a URDF as plain data: the mock hardware's only source of
joints, interfaces, limits and initial values (STYLE.md section 1: "a robot is data").

Read as ros2_control ``kilted`` reads it (hardware_interface's component parser, the tags
written by urdf/ros2_control_xml.py): ``<hardware><plugin>`` with ``<param>``s, one ``<joint>``
per joint with ``<command_interface>`` (``min``/``max`` params) and ``<state_interface>``
(``initial_value`` param; none = 0, as mock_components/GenericSystem sets it in on_configure).
The URDF ``<joint>`` of the same name gives ``<limit velocity=...>`` (what LBR's CommandGuard
reads), used by the guard for position-commanded joints.
"""
from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from dataclasses import dataclass, replace

import numpy as np


@dataclass(frozen=True)
class JointInfo:
    name: str
    command: dict          # command interface -> (min, max); (-inf, inf) without min/max params
    state: dict            # state interface -> initial value (0.0 when not given)
    velocity_limit: float = math.inf    # URDF <limit velocity=...> of the joint


@dataclass(frozen=True)
class HardwareInfo:
    name: str
    plugin: str
    params: dict           # hardware <param>s (strings)
    joints: tuple

    @property
    def joint_names(self) -> tuple:
        return tuple(j.name for j in self.joints)

    def claimed(self, interface: str) -> 'HardwareInfo':
        """The block as one controller claiming ``interface`` on every joint sees it (the mock
        emulates one controller): each joint keeps that command interface only, e.g. position of
        the iiwa's position and effort (lbr_fri_ros2_stack's). ValueError if a joint lacks it."""
        missing = [j.name for j in self.joints if interface not in j.command]
        if missing:
            raise ValueError(f'<ros2_control name="{self.name}">: joints {missing} have no {interface!r} command '
                             'interface')
        joints = tuple(replace(j, command={interface: j.command[interface]}) for j in self.joints)
        return replace(self, joints=joints)

    def command_interface(self) -> str:
        """The one command interface every joint has (the mock emulates one controller)."""
        kinds = {tuple(j.command) for j in self.joints}
        if len(kinds) != 1 or len(next(iter(kinds))) != 1:
            raise ValueError(f'<ros2_control name="{self.name}">: every joint needs the same single command '
                             f'interface, got {sorted(kinds)}')
        return next(iter(kinds))[0]

    def initial(self, interface: str) -> np.ndarray:
        """Initial value of a state interface per joint (0 where the joint has none)."""
        return np.array([float(j.state.get(interface) or 0.0) for j in self.joints])

    def command_limits(self) -> tuple[np.ndarray, np.ndarray]:
        iface = self.command_interface()
        return (np.array([j.command[iface][0] for j in self.joints]),
                np.array([j.command[iface][1] for j in self.joints]))

    def velocity_limits(self) -> np.ndarray:
        return np.array([j.velocity_limit for j in self.joints])


def _params(element) -> dict:
    return {p.get('name'): (p.text or '').strip() for p in element.findall('param')}


def _float(text: str, what: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f'{what}: {text!r} is not a number') from None
    if math.isnan(value):
        raise ValueError(f'{what} is NaN')
    return value


def parse_ros2_control(urdf_text: str, name: str = '') -> HardwareInfo:
    """The ``<ros2_control>`` block named ``name`` ('' = the only one) of a URDF document."""
    root = ET.fromstring(urdf_text)
    blocks = root.findall('ros2_control')
    if name:
        blocks = [b for b in blocks if b.get('name') == name]
    if len(blocks) != 1:
        found = [b.get('name') for b in root.findall('ros2_control')]
        raise ValueError(f'need exactly one <ros2_control> block{f" named {name!r}" if name else ""}, '
                         f'found {found}')
    block = blocks[0]
    hardware = block.find('hardware')
    if hardware is None or hardware.find('plugin') is None:
        raise ValueError(f'<ros2_control name="{block.get("name")}"> has no <hardware><plugin>')
    velocity = {}
    for joint in root.findall('joint'):
        limit = joint.find('limit')
        if limit is not None and limit.get('velocity') is not None:
            velocity[joint.get('name')] = _float(limit.get('velocity'), f'joint {joint.get("name")} velocity limit')
    joints = []
    for joint in block.findall('joint'):
        jname = joint.get('name')
        command = {}
        for iface in joint.findall('command_interface'):
            prm = _params(iface)
            lo = _float(prm['min'], f'{jname} min') if 'min' in prm else -math.inf
            hi = _float(prm['max'], f'{jname} max') if 'max' in prm else math.inf
            if not lo < hi:
                raise ValueError(f'joint {jname}: command interface {iface.get("name")} has min {lo} >= max {hi}')
            command[iface.get('name')] = (lo, hi)
        state = {}
        for iface in joint.findall('state_interface'):
            prm = _params(iface)
            state[iface.get('name')] = _float(prm['initial_value'], f'{jname} initial_value') \
                if 'initial_value' in prm else 0.0
        joints.append(JointInfo(jname, command, state, velocity.get(jname, math.inf)))
    if not joints:
        raise ValueError(f'<ros2_control name="{block.get("name")}"> has no joints')
    names = [j.name for j in joints]
    if len(set(names)) != len(names):
        raise ValueError(f'<ros2_control name="{block.get("name")}"> names a joint twice: {names}')
    return HardwareInfo(block.get('name') or '', hardware.find('plugin').text.strip(), _params(hardware),
                        tuple(joints))
