"""Hardware mode's lab side of a bring-up plan (``bringup.plan``): the processes lbr_fri_ros2_stack's
hardware.launch.py starts (robot_state_publisher, ros2_control_node, one spawner per
controller), the URDF they get (the robot's address, lbr's hardware block checked as its
SystemInterface::on_init would check it) and ros2_control_node's params file, all in the
hardware's namespace below the graph's (docs/lab.md)."""
from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from typing import Any

import yaml

from hil_nodes import topics
from hil_nodes.bringup.system import BringupError, NodeSpec, SystemDescription

CONTROLLER_MANAGER = 'controller_manager'   # ros2_control_node's node name; spawners address it


def with_robot_address(urdf: str, address: str) -> str:
    """The URDF with every <param name="robot_address"> of its <ros2_control> hardware set."""
    pattern = re.compile(r'(<param\s+name\s*=\s*"robot_address"\s*>)[^<]*(</param>)')
    if not pattern.search(urdf):
        raise BringupError('robot_address given but the URDF has no <param name="robot_address"> in its '
                           '<ros2_control> hardware block')
    return pattern.sub(lambda m: m.group(1) + address + m.group(2), urdf)


def _hardware_urdf(desc: SystemDescription, robot_address: str, robot_port: str) -> tuple[str, dict[str, str]]:
    """(URDF text of the lab side, suite joint name -> lab joint name)."""
    hw = desc.hardware
    urdf = hw.robot_description.read_text()
    if not hw.lbr:
        if robot_port:
            raise BringupError(f'robot_port:={robot_port}: {desc.name} is not an iiwa on lbr_fri_ros2_stack '
                               '(its hardware block has no lbr:)')
        return (with_robot_address(urdf, robot_address) if robot_address else urdf), {}
    from hil_core.iiwa import lbr    # (no pinocchio: XML only)
    name = hw.lbr['robot_name']
    try:
        urdf = lbr.hardware_urdf(urdf, name, robot_address or 'INADDR_ANY', robot_port or lbr.HARDWARE_DEFAULTS['port_id'],
                                 hw.lbr['system_config'])
    except ValueError as exc:
        raise BringupError(f'{desc.name} on lbr_fri_ros2_stack: {exc}') from None
    problems = lbr.check_block(urdf)
    if problems:        # what SystemInterface::on_init would refuse: said here, before the lab starts
        raise BringupError(f'{desc.name}: {lbr.PLUGIN} would refuse the block: {"; ".join(problems)}')
    return urdf, lbr.joint_map(name)


def _root_link(urdf: str) -> str:
    """The URDF's root link: the one link no joint has as its child."""
    robot = ET.fromstring(urdf)
    children = {j.find('child').get('link') for j in robot.findall('joint')}
    roots = [link.get('name') for link in robot.findall('link') if link.get('name') not in children]
    if len(roots) != 1:
        raise BringupError(f'the URDF has {len(roots)} root links {roots}, need one')
    return roots[0]


def lab_namespace(desc: SystemDescription, namespace: str = '') -> str:
    """The lab processes' absolute namespace ('' = the root): the hardware's (lbr's for the iiwa)
    below the graph's."""
    hw = desc.hardware.namespace if desc.hardware is not None else ''
    return topics.namespace(f'{namespace}/{hw}')


def lab_parameters(desc: SystemDescription, urdf: str, joint_map: dict[str, str],
                   namespace: str = '') -> dict[str, Any]:
    """The params file of ros2_control_node's process: the controllers file's entries for the
    controller manager and the system's controllers, keyed by their full node names (a
    namespaced node does not take a plain ``controller_manager:`` key: rclcpp matches a key
    against the node's full name), joint lists in the lab's names, and joint_state_broadcaster's
    ``frame_id`` (upstream default ``base_link``, a link of none of the URDFs) the URDF's root
    link."""
    hw = desc.hardware
    config = yaml.safe_load(hw.controllers_file.read_text()) or {}
    prefix = f'{lab_namespace(desc, namespace)}/'
    manager = dict((config.get(CONTROLLER_MANAGER) or {}).get('ros__parameters') or {})
    # the controller manager knows the types of this system's controllers only
    manager = {k: v for k, v in manager.items() if not isinstance(v, dict) or k in hw.controllers}
    out = {f'{prefix}{CONTROLLER_MANAGER}': {'ros__parameters': manager}}
    for ctrl in hw.controllers:
        if not isinstance(manager.get(ctrl), dict):
            raise BringupError(f'{desc.name}: controller {ctrl} has no type in {hw.controllers_file.name}')
        values = dict((config.get(ctrl) or {}).get('ros__parameters') or {})
        if 'joints' in values:
            values['joints'] = [joint_map.get(j, j) for j in values['joints']]
        if manager[ctrl].get('type') == 'joint_state_broadcaster/JointStateBroadcaster':
            values['frame_id'] = _root_link(urdf)
        out[f'{prefix}{ctrl}'] = {'ros__parameters': values}
    return out


def lab_processes(desc: SystemDescription, robot_address: str,
                   robot_port: str = '', namespace: str = '') -> tuple[list[NodeSpec], dict[str, Any]]:
    """Hardware mode, as lbr_fri_ros2_stack's hardware.launch.py: robot_state_publisher with the
    URDF, ros2_control_node with the controllers' parameters (it reads the URDF's <ros2_control>
    block from robot_description), and one spawner per controller once ros2_control_node
    started; all in the hardware's namespace (lbr's for the iiwa), below the graph's. Returns the
    processes and ros2_control_node's params file (``lab_parameters``)."""
    hw = desc.hardware
    if hw is None:
        raise BringupError(f'system {desc.name} has no hardware: block (mode:=hardware needs one)')
    if not hw.controllers_file.is_file():
        raise BringupError(f'{desc.name}: controllers file {hw.controllers_file} does not exist')
    urdf, joint_map = _hardware_urdf(desc, robot_address, robot_port)
    absolute = lab_namespace(desc, namespace)
    ns = absolute if namespace else hw.namespace        # (at the root: 'lbr', as it always was)
    clock = {'/clock': f'{namespace}/clock'} if namespace else {}
    out = [NodeSpec(name='robot_state_publisher', package='robot_state_publisher', executable='robot_state_publisher',
                    parameters={'robot_description': urdf, 'use_sim_time': False}, managed=False, kind='lab',
                    remappings=dict(clock), namespace=ns),
           NodeSpec(name=CONTROLLER_MANAGER, package='controller_manager', executable='ros2_control_node',
                    parameters={'use_sim_time': False},
                    remappings={**clock, '~/robot_description': f'{absolute}/robot_description'}, managed=False,
                    kind='lab',
                    namespace=ns)]
    for ctrl in hw.controllers:
        out.append(NodeSpec(name=f'spawner_{ctrl}', package='controller_manager', executable='spawner',
                            arguments=(ctrl, '--controller-manager', f'{absolute}/{CONTROLLER_MANAGER}'),
                            remappings=dict(clock), managed=False, kind='lab', start_after=CONTROLLER_MANAGER,
                            namespace=ns))
    return out, lab_parameters(desc, urdf, joint_map, namespace)
