"""The iiwa on lbr_fri_ros2_stack: the ``<ros2_control>`` block its hardware class requires, as
data, and a restatement of what that class checks when the controller manager loads it
(docs/lab.md "The iiwa on lbr_fri_ros2_stack").

Target: lbr_fri_ros2_stack ``rolling`` at 218d723 (2024-10-23, humble-v2.1.2 + 28 commits: the
release whose joints carry the robot-name prefix, ``lbr_A1`` .. ``lbr_A7``). What was matched:

* ``lbr_ros2_control/plugin_description_files/system_interface.xml``: the class type
  ``lbr_ros2_control::SystemInterface`` (the ``<plugin>`` text pluginlib looks up);
* ``lbr_description/ros2_control/lbr_system_interface.xacro`` (mode ``hardware``): the hardware
  params, per joint the command interfaces ``position`` and ``effort`` (min/max), the state
  interfaces and the joint params ``min_position`` .. ``max_torque``, the sensors
  ``auxiliary_sensor`` and ``estimated_ft_sensor``, the GPIO ``wrench``; mode ``mock``: the
  same joints and command interfaces with position, velocity and effort states only;
* ``lbr_description/ros2_control/lbr_system_config.yaml``: the default values;
* ``lbr_ros2_control/src/system_interface.cpp`` ``on_init``/``parse_parameters_`` and the
  ``verify_*`` checks, restated by :func:`check_block` (``port_id`` in 30200-30209, exactly two
  command interfaces per joint, 7 joints, 7 state interfaces per joint with FRI client SDK 1,
  2 sensors, 1 GPIO of 6 interfaces; a missing parameter fails ``on_init``).

The suite's own names (joints ``iiwa_joint_N``, topics at the root) stay in the committed URDFs;
:func:`hardware_urdf` renames the joints to lbr's (``<robot_name>_A<N>``) for the hardware
plan, and the bring-up plan puts the lab processes in lbr's namespace (``/<robot_name>``). The
links keep the suite's names: frames are not part of the class's contract (its optional
force-torque estimator is off and, were it on, is given the suite's chain).
"""
from __future__ import annotations

import ipaddress
import math
import re
import xml.etree.ElementTree as ET

RELEASE = 'lbr_fri_ros2_stack rolling 218d723 (2024-10-23)'
PLUGIN = 'lbr_ros2_control::SystemInterface'
MOCK_PLUGIN = 'mock_components/GenericSystem'
ROBOT_NAME = 'lbr'                     # lbr_bringup's default robot_name: namespace and joint prefix
N_JNTS = 7
COMMAND_INTERFACES = ('position', 'effort')
MOCK_STATE_INTERFACES = ('position', 'velocity', 'effort')
# hardware mode, the xacro's order; commanded_joint_position exists with FRI client SDK 1 only
FRI_STATE_INTERFACES = ('commanded_joint_position', 'commanded_torque', 'external_torque', 'ipo_joint_position')
AUXILIARY_SENSOR = ('auxiliary_sensor', ('sample_time', 'session_state', 'connection_quality', 'safety_state',
                                         'operation_mode', 'drive_state', 'client_command_mode', 'overlay_type',
                                         'control_mode', 'time_stamp_sec', 'time_stamp_nano_sec',
                                         'tracking_performance'))
FT_SENSOR = 'estimated_ft_sensor'
FT_INTERFACES = ('force.x', 'force.y', 'force.z', 'torque.x', 'torque.y', 'torque.z')
GPIO = 'wrench'
PORT_RANGE = (30200, 30209)            # parse_parameters_ refuses any other port_id
JOINT_PARAMS = ('min_position', 'max_position', 'max_velocity', 'max_torque')   # CommandGuard, .at()

# lbr_system_config.yaml's hardware: values, flattened to the xacro's param names (all strings,
# as <param> text). remote_host and port_id come from the launch arguments.
HARDWARE_DEFAULTS = {
    'fri_client_sdk_major_version': '1',
    'fri_client_sdk_minor_version': '15',
    'client_command_mode': 'position',
    'port_id': '30200',
    'remote_host': 'INADDR_ANY',
    'rt_prio': '80',
    'pid_p': '0.1',
    'pid_i': '0.0',
    'pid_d': '0.0',
    'pid_i_max': '0.0',
    'pid_i_min': '0.0',
    'pid_antiwindup': 'false',
    'command_guard_variant': 'default',
    'external_torque_cutoff_frequency': '10',
    'measured_torque_cutoff_frequency': '10',
    'open_loop': 'true',
}
# estimated_ft_sensor: params read with .at() whether enabled or not. Off here (the space plant
# uses no wrench; its thread would cost CPU next to the 1 kHz loop); the chain names the suite's
# links so that switching it on needs no other change.
FT_DEFAULTS = {
    'enabled': 'false',
    'update_rate': '100',
    'rt_prio': '30',
    'chain_root': 'iiwa_link_0',
    'chain_tip': 'iiwa_link_ee',
    'damping': '0.2',
    'force_x_th': '2.0',
    'force_y_th': '2.0',
    'force_z_th': '2.0',
    'torque_x_th': '0.5',
    'torque_y_th': '0.5',
    'torque_z_th': '0.5',
}
CHOICES = {'client_command_mode': ('position', 'torque', 'wrench'),
           'command_guard_variant': ('default', 'safe_stop')}
SUITE_JOINT = re.compile(r'iiwa_joint_([1-7])')


def joint_names(robot_name: str = ROBOT_NAME) -> tuple[str, ...]:
    """lbr's joint names in this release: ``<robot_name>_A1`` .. ``<robot_name>_A7``."""
    return tuple(f'{robot_name}_A{i}' for i in range(1, N_JNTS + 1))


def joint_map(robot_name: str = ROBOT_NAME) -> dict[str, str]:
    """The suite's joint name -> lbr's."""
    return {f'iiwa_joint_{i}': f'{robot_name}_A{i}' for i in range(1, N_JNTS + 1)}


def _f(v: float) -> str:
    return f'{float(v):.10g}'


def _ci(name: str, lo: float, hi: float, indent: str) -> list[str]:
    return [f'{indent}<command_interface name="{name}">', f'{indent}  <param name="min">{_f(lo)}</param>',
            f'{indent}  <param name="max">{_f(hi)}</param>', f'{indent}</command_interface>']


def joint_xml(name: str, limits: dict, mode: str, sdk_major: int = 1, initial: float | None = None) -> list[str]:
    """One ``<joint>`` of the block as lbr's ``joint_interface`` macro writes it (``limits``:
    lower, upper, velocity, effort of the URDF joint; ``initial``: the mock's initial position)."""
    i = '    '
    out = [f'{i}<joint name="{name}">']
    out += _ci('position', limits['lower'], limits['upper'], i + '  ')
    out += _ci('effort', -limits['effort'], limits['effort'], i + '  ')
    if initial is None:
        out.append(f'{i}  <state_interface name="position"/>')
    else:
        out += [f'{i}  <state_interface name="position">',
                f'{i}    <param name="initial_value">{_f(initial)}</param>', f'{i}  </state_interface>']
    out += [f'{i}  <state_interface name="velocity"/>', f'{i}  <state_interface name="effort"/>']
    if mode == 'hardware':
        out += [f'{i}  <param name="min_position">{_f(limits["lower"])}</param>',
                f'{i}  <param name="max_position">{_f(limits["upper"])}</param>',
                f'{i}  <param name="max_velocity">{_f(limits["velocity"])}</param>',
                f'{i}  <param name="max_torque">{_f(limits["effort"])}</param>']
        fri = FRI_STATE_INTERFACES if sdk_major == 1 else FRI_STATE_INTERFACES[1:]
        out += [f'{i}  <state_interface name="{s}"/>' for s in fri]
    out.append(f'{i}</joint>')
    return out


def hardware_params(remote_host: str = 'INADDR_ANY', port_id: int | str = 30200,
                    overrides: dict | None = None) -> dict[str, str]:
    """The hardware <param>s: lbr_system_config.yaml's values, ``overrides`` (a system file's),
    then the robot's address and port (launch arguments). ValueError names a refused value."""
    params = dict(HARDWARE_DEFAULTS)
    for k, v in (overrides or {}).items():
        if k not in params:
            raise ValueError(f'{k!r} is not a parameter of {PLUGIN} (known: {", ".join(params)})')
        params[k] = str(v).lower() if isinstance(v, bool) else str(v)
    params['remote_host'] = str(remote_host or 'INADDR_ANY')
    params['port_id'] = str(port_id)
    problems = check_hardware_params(params)
    if problems:
        raise ValueError('; '.join(problems))
    return params


def block_xml(system: str, joints: list[tuple[str, dict]], mode: str, params: dict | None = None,
              initial: list[float] | None = None, ft: dict | None = None) -> str:
    """The ``<ros2_control>`` block of lbr_system_interface.xacro for ``mode`` 'mock' or
    'hardware' (``joints``: (name, limits) in order; ``params``: hardware_params' result)."""
    if mode not in ('mock', 'hardware'):
        raise ValueError(f"mode must be 'mock' or 'hardware', not {mode!r}")
    lines = [f'  <ros2_control name="{system}" type="system">', '    <hardware>']
    if mode == 'mock':
        # calculate_dynamics: the velocity state of a position command (GenericSystem, as the
        # other generated blocks); lbr's mock block gives none and so reports zero velocity
        lines += [f'      <plugin>{MOCK_PLUGIN}</plugin>', '      <param name="calculate_dynamics">true</param>']
    else:
        lines.append(f'      <plugin>{PLUGIN}</plugin>')
        lines += [f'      <param name="{k}">{v}</param>' for k, v in (params or hardware_params()).items()]
    lines.append('    </hardware>')
    if mode == 'hardware':
        sdk = int((params or HARDWARE_DEFAULTS)['fri_client_sdk_major_version'])
        ft = {**FT_DEFAULTS, **(ft or {})}
        lines.append(f'    <sensor name="{AUXILIARY_SENSOR[0]}">')
        lines += [f'      <state_interface name="{s}"/>' for s in AUXILIARY_SENSOR[1]]
        lines += ['    </sensor>', f'    <sensor name="{FT_SENSOR}">']
        lines += [f'      <param name="{k}">{v}</param>' for k, v in ft.items()]
        if ft['enabled'] == 'true':
            lines += [f'      <state_interface name="{s}"/>' for s in FT_INTERFACES]
        lines += ['    </sensor>', f'    <gpio name="{GPIO}">']
        lines += [f'      <command_interface name="{s}"/>' for s in FT_INTERFACES]
        lines.append('    </gpio>')
    else:
        sdk = 1
    for k, (name, limits) in enumerate(joints):
        lines += joint_xml(name, limits, mode, sdk, None if initial is None else initial[k])
    lines.append('  </ros2_control>')
    return '\n'.join(lines) + '\n'


def urdf_joint_limits(robot: ET.Element) -> dict[str, dict]:
    """lower/upper/velocity/effort of every URDF joint with a <limit> (what the xacro reads from
    joint_limits.yaml; here the URDF's own, the KUKA data sheet's)."""
    out = {}
    for j in robot.findall('joint'):
        lim = j.find('limit')
        if lim is not None:
            out[j.get('name')] = {k: float(lim.get(k)) for k in ('lower', 'upper', 'velocity', 'effort')}
    return out


def hardware_urdf(urdf_text: str, robot_name: str = ROBOT_NAME, remote_host: str = 'INADDR_ANY',
                  port_id: int | str = 30200, overrides: dict | None = None) -> str:
    """The suite's iiwa URDF for lbr_fri_ros2_stack's hardware: its joints renamed to lbr's
    (``iiwa_joint_N`` -> ``<robot_name>_AN``, in the kinematic tree too: ros2_control reads the
    limits of the block's joints from it) and its ``<ros2_control>`` block replaced by the one
    :class:`SystemInterface` requires, with the address and port given. ValueError says why not."""
    if not re.fullmatch(r'[A-Za-z][A-Za-z0-9_]*', robot_name or ''):
        raise ValueError(f'robot_name {robot_name!r}: letters, digits and _ (a namespace and a joint prefix)')
    robot = ET.fromstring(urdf_text)
    blocks = robot.findall('ros2_control')
    if len(blocks) != 1:
        raise ValueError(f'need exactly one <ros2_control> block, found {len(blocks)}')
    suite = [j.get('name') for j in blocks[0].findall('joint')]
    names = joint_map(robot_name)
    if sorted(suite) != sorted(names):
        raise ValueError(f'the block names joints {suite}, not the iiwa\'s {list(names)}')
    limits = urdf_joint_limits(robot)
    params = hardware_params(remote_host, port_id, overrides)
    block = block_xml(f'{robot_name}_system_interface', [(names[j], limits[j]) for j in suite], 'hardware', params)
    lines = urdf_text.splitlines(keepends=True)
    start = next(k for k, line in enumerate(lines) if '<ros2_control' in line)
    end = next(k for k, line in enumerate(lines) if '</ros2_control>' in line)
    text = ''.join(lines[:start]) + block + ''.join(lines[end + 1:])
    return SUITE_JOINT.sub(lambda m: names[m.group(0)], text)


# ---- what SystemInterface::on_init checks ----------------------------------------------------

def check_hardware_params(params: dict) -> list[str]:
    """parse_parameters_: every parameter present and of its kind (``std::stoul``/``stod`` of an
    empty or non-numeric text throws), the SDK, mode, port and variant it accepts."""
    problems = [f'hardware param {k!r} missing' for k in HARDWARE_DEFAULTS if k not in params]
    if problems:
        return problems
    for k in ('fri_client_sdk_major_version', 'fri_client_sdk_minor_version', 'port_id', 'rt_prio'):
        if not str(params[k]).isdigit():
            problems.append(f'{k} {params[k]!r} is not an unsigned integer')
    for k in ('pid_p', 'pid_i', 'pid_d', 'pid_i_max', 'pid_i_min', 'external_torque_cutoff_frequency',
              'measured_torque_cutoff_frequency'):
        try:
            if not math.isfinite(float(params[k])):
                raise ValueError
        except ValueError:
            problems.append(f'{k} {params[k]!r} is not a finite number')
    for k, choices in CHOICES.items():
        if params[k] not in choices:
            problems.append(f'{k} {params[k]!r} is not one of {list(choices)}')
    if str(params['port_id']).isdigit() and not PORT_RANGE[0] <= int(params['port_id']) <= PORT_RANGE[1]:
        problems.append(f'port_id {params["port_id"]} outside [{PORT_RANGE[0]}, {PORT_RANGE[1]}]')
    host = params['remote_host']
    if host != 'INADDR_ANY':
        try:
            ipaddress.IPv4Address(host)
        except ValueError:
            problems.append(f"remote_host {host!r} is neither an IPv4 address nor 'INADDR_ANY'")
    return problems


def check_block(urdf_text: str) -> list[str]:
    """Every reason SystemInterface::on_init (this release, FRI client SDK of the block) would
    return ERROR for the URDF's ``<ros2_control>`` block; [] when it would load."""
    robot = ET.fromstring(urdf_text)
    block = robot.find('ros2_control')
    if block is None:
        return ['no <ros2_control> block']
    hw = block.find('hardware')
    plugin = (hw.findtext('plugin') or '').strip() if hw is not None else ''
    if plugin != PLUGIN:
        return [f'plugin {plugin!r} is not {PLUGIN!r}']
    params = {p.get('name'): (p.text or '').strip() for p in hw.findall('param')}
    problems = check_hardware_params(params)
    sdk = int(params.get('fri_client_sdk_major_version', '1') or 1) if not problems else 1
    joints = block.findall('joint')
    urdf_joints = {j.get('name') for j in robot.findall('joint')}
    if len(joints) != N_JNTS:
        problems.append(f'{len(joints)} joints, expected {N_JNTS}')
    states = {'position', 'velocity', 'effort', *FRI_STATE_INTERFACES}
    n_states = 7 if sdk == 1 else 6
    for j in joints:
        name = j.get('name')
        if name not in urdf_joints:
            problems.append(f'joint {name!r} is not a joint of the URDF')
        ci = [c.get('name') for c in j.findall('command_interface')]
        if len(ci) != len(COMMAND_INTERFACES) or set(ci) - set(COMMAND_INTERFACES):
            problems.append(f'joint {name!r}: command interfaces {ci}, expected exactly {list(COMMAND_INTERFACES)}')
        si = [s.get('name') for s in j.findall('state_interface')]
        if len(si) != n_states or set(si) - states:
            problems.append(f'joint {name!r}: {len(si)} state interfaces {si}, expected {n_states} of {sorted(states)}')
        jp = {p.get('name'): p.text for p in j.findall('param')}
        for k in JOINT_PARAMS:
            try:
                float(jp[k])
            except (KeyError, TypeError, ValueError):
                problems.append(f'joint {name!r}: param {k!r} missing or not a number')
    sensors = block.findall('sensor')
    if len(sensors) != 2:
        problems.append(f'{len(sensors)} sensors, expected 2 ({AUXILIARY_SENSOR[0]}, {FT_SENSOR})')
    else:
        aux, ft = sensors
        if aux.get('name') != AUXILIARY_SENSOR[0] or \
                sorted(s.get('name') for s in aux.findall('state_interface')) != sorted(AUXILIARY_SENSOR[1]):
            problems.append(f'first sensor must be {AUXILIARY_SENSOR[0]} with its {len(AUXILIARY_SENSOR[1])} '
                            'state interfaces')
        fp = {p.get('name'): (p.text or '').strip() for p in ft.findall('param')}
        missing = [k for k in FT_DEFAULTS if k not in fp]
        if ft.get('name') != FT_SENSOR or missing:
            problems.append(f'second sensor must be {FT_SENSOR} with params {list(FT_DEFAULTS)} (missing {missing})')
        elif fp['enabled'].lower() == 'true' and \
                sorted(s.get('name') for s in ft.findall('state_interface')) != sorted(FT_INTERFACES):
            problems.append(f'{FT_SENSOR} enabled needs the state interfaces {list(FT_INTERFACES)}')
    gpios = block.findall('gpio')
    if len(gpios) != 1 or gpios[0].get('name') != GPIO or len(gpios[0].findall('command_interface')) != 6:
        problems.append(f'exactly one gpio {GPIO!r} with 6 command interfaces expected')
    return problems
