"""The ``<ros2_control>`` block of the generated URDFs (xacro-free; docs/lab_ros2_control.md).

Tags as documented by ros2_control ``kilted`` (hardware_interface/doc/
hardware_interface_types_userdoc.rst, mock_components_userdoc.rst): ``<hardware><plugin>`` with
``<param>``s, one ``<joint>`` per joint with ``<command_interface>`` (``min``/``max`` params:
the limits the controller manager enforces) and ``<state_interface>`` (``initial_value``).

The plugin is a parameter of every generator (``--plugin``): the committed files use
``mock_components/GenericSystem``; a lab writes its hardware plugin with the same generator
(``python urdf/make_iiwa14_urdf.py --plugin lbr_ros2_control/SystemInterface --out-dir /tmp``)
or calls ``urdf_text(..., plugin=...)`` from its launch file. The joints, interfaces, limits
and initial values are the same in every mode: only the plugin and its params change.
"""
from __future__ import annotations

import argparse
from dataclasses import dataclass, field

MOCK_PLUGIN = 'mock_components/GenericSystem'
MOTION_INTERFACES = ('position', 'velocity', 'acceleration')   # what GenericSystem's dynamics integrate


def f(v: float) -> str:
    return f'{float(v):.10g}'


@dataclass(frozen=True)
class JointSpec:
    name: str
    command: dict = field(default_factory=dict)     # interface -> (min, max) or None
    state: dict = field(default_factory=dict)       # interface -> initial value or None


def block(system: str, joints: list[JointSpec], plugin: str = MOCK_PLUGIN,
          params: dict | None = None) -> str:
    """The ``<ros2_control name=... type="system">`` element, indented for a <robot>."""
    params = dict(params or {})
    if plugin == MOCK_PLUGIN and all(set(j.command) & set(MOTION_INTERFACES) for j in joints):
        # GenericSystem: velocity/acceleration states from position commands and position from
        # velocity commands (JTC's decelerate_on_cancel needs a velocity state). Not for joints
        # commanded by effort alone: with calculate_dynamics its prepare_command_mode_switch
        # refuses a joint started without a position, velocity or acceleration interface
        # (hardware_interface/src/mock_components/generic_system.cpp, kilted cbe7d2c), so an
        # effort controller could not be activated; without it the effort command is mirrored to
        # the effort state and the positions stay (no stock mock moves a joint under effort).
        params.setdefault('calculate_dynamics', 'true')
    lines = [f'  <ros2_control name="{system}" type="system">', '    <hardware>',
             f'      <plugin>{plugin}</plugin>']
    lines += [f'      <param name="{k}">{v}</param>' for k, v in params.items()]
    lines.append('    </hardware>')
    for j in joints:
        lines.append(f'    <joint name="{j.name}">')
        for iface, lim in j.command.items():
            if lim is None:
                lines.append(f'      <command_interface name="{iface}"/>')
            else:
                lines += [f'      <command_interface name="{iface}">',
                          f'        <param name="min">{f(lim[0])}</param>',
                          f'        <param name="max">{f(lim[1])}</param>',
                          '      </command_interface>']
        for iface, init in j.state.items():
            if init is None:
                lines.append(f'      <state_interface name="{iface}"/>')
            else:
                lines += [f'      <state_interface name="{iface}">',
                          f'        <param name="initial_value">{f(init)}</param>',
                          '      </state_interface>']
        lines.append('    </joint>')
    lines.append('  </ros2_control>')
    return '\n'.join(lines) + '\n'


def cli(description: str) -> argparse.Namespace:
    """Common command line of the generators: plugin, its params, output directory."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument('--plugin', default=MOCK_PLUGIN, help='hardware plugin of the <ros2_control> block')
    ap.add_argument('--param', action='append', default=[], metavar='NAME=VALUE',
                    help='hardware <param> (repeatable)')
    ap.add_argument('--out-dir', default=None, help='where to write (default: this directory)')
    args = ap.parse_args()
    args.params = dict(p.split('=', 1) for p in args.param)
    return args
