"""config/controllers.yaml and the URDFs' <ros2_control> blocks agree with each other, with the
upstream parameter names, and the generated URDFs are up to date (what a stock ros2_control on a lab machine reads).

Parameter names: the keys of the kilted parameter files read for this (ros2_controllers
joint_trajectory_controller/src/joint_trajectory_controller_parameters.yaml,
forward_command_controller/src/forward_command_controller_parameters.yaml,
joint_state_broadcaster/src/joint_state_broadcaster_parameters.yaml; ros2_control
controller_manager/src/controller_manager_parameters.yaml), restricted to the ones we may use.
"""
import importlib.util
import math
import pathlib
import xml.etree.ElementTree as ET

import pytest
import yaml

ROOT = pathlib.Path(__file__).resolve().parents[2]
URDF = ROOT / 'urdf'
CONTROLLERS = yaml.safe_load((ROOT / 'config' / 'controllers.yaml').read_text())

UPSTREAM = {
    'controller_manager': {'update_rate', 'enforce_command_limits', 'handle_exceptions'},
    'joint_trajectory_controller/JointTrajectoryController': {
        'joints', 'command_joints', 'command_interfaces', 'state_interfaces', 'allow_partial_joints_goal',
        'interpolate_from_desired_state', 'allow_integration_in_goal_trajectories',
        'set_last_command_interface_value_as_state_on_activation', 'action_monitor_rate',
        'interpolation_method', 'allow_nonzero_velocity_at_trajectory_end', 'cmd_timeout', 'gains',
        'constraints', 'speed_scaling'},
    'constraints': {'stopped_velocity_tolerance', 'goal_time', 'decelerate_on_cancel'},
    'constraints.<joint>': {'trajectory', 'goal', 'max_deceleration_on_cancel'},
    'forward_command_controller/ForwardCommandController': {'joints', 'interface_name'},
    # (its interface_name is set to position by the controller itself)
    'position_controllers/JointGroupPositionController': {'joints'},
    'joint_state_broadcaster/JointStateBroadcaster': {
        'joints', 'extra_joints', 'interfaces', 'map_interface_to_joint_state', 'use_local_topics',
        'use_urdf_to_filter', 'frame_id', 'publish_dynamic_joint_states'},
}
TYPES = {'joint_state_broadcaster/JointStateBroadcaster', 'joint_trajectory_controller/JointTrajectoryController',
         'forward_command_controller/ForwardCommandController', 'position_controllers/JointGroupPositionController'}


def _load(name):
    spec = importlib.util.spec_from_file_location(name, URDF / f'{name}.py')
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _generated(plugin=None, params=None):
    kw = {} if plugin is None else dict(plugin=plugin, params=params)
    hexa, iiwa, hyb = _load('make_hexafloat_urdf'), _load('make_iiwa14_urdf'), _load('make_hybrid5_urdf')
    out = {fname: hexa.urdf(name, **kw) for name, fname in hexa.FILES}
    out.update(iiwa.urdf_texts(**kw))
    out['hybrid5.urdf'] = hyb.urdf(**kw)
    return out


def _block(fname):
    robot = ET.fromstring((URDF / fname).read_text())
    blocks = robot.findall('ros2_control')
    assert len(blocks) == 1
    joints = {j.get('name'): j for j in robot.findall('joint')}
    return robot, blocks[0], joints


def test_generated_urdfs_are_up_to_date():
    for fname, text in _generated().items():
        assert (URDF / fname).read_text() == text, f'run python urdf/make_*_urdf.py ({fname} differs)'


def test_the_plugin_is_a_generator_parameter():
    for fname, text in _generated('lbr_ros2_control/SystemInterface', {'port_id': '30200'}).items():
        hw = ET.fromstring(text).find('ros2_control/hardware')
        assert hw.find('plugin').text == 'lbr_ros2_control/SystemInterface'
        assert {p.get('name'): p.text for p in hw.findall('param')} == {'port_id': '30200'}, fname


# the iiwa's: lbr_fri_ros2_stack's position and effort (lbr_system_interface.xacro)
@pytest.mark.parametrize('fname, ifaces', [('hexafloat_scaled.urdf', ['position']), ('hexafloat_full.urdf', ['position']),
                                           ('iiwa14.urdf', ['position', 'effort']),
                                           ('satellite_iiwa14.urdf', ['position', 'effort']),
                                           ('hybrid5.urdf', ['effort'])])
def test_block_joints_exist_and_command_limits_are_the_urdf_limits(fname, ifaces):
    _, block, joints = _block(fname)
    assert block.find('hardware/plugin').text == 'mock_components/GenericSystem'
    for j in block.findall('joint'):
        urdf_joint = joints[j.get('name')]
        assert urdf_joint.get('type') in ('prismatic', 'revolute', 'continuous')
        cmds = j.findall('command_interface')
        assert [c.get('name') for c in cmds] == ifaces
        ul = urdf_joint.find('limit')
        for cmd in cmds:
            lim = {p.get('name'): float(p.text) for p in cmd.findall('param')}
            expected = {'position': (float(ul.get('lower', 'nan')), float(ul.get('upper', 'nan'))),
                        'velocity': (-float(ul.get('velocity')), float(ul.get('velocity'))),
                        'effort': (-float(ul.get('effort')), float(ul.get('effort')))}[cmd.get('name')]
            assert (lim['min'], lim['max']) == pytest.approx(expected, rel=1e-9)
        states = [s.get('name') for s in j.findall('state_interface')]
        assert states[0] == 'position' and 'velocity' in states
        init = j.find('state_interface/param[@name="initial_value"]')
        assert init is not None and math.isfinite(float(init.text))


def _block_joint_names(fname):
    return [j.get('name') for j in _block(fname)[1].findall('joint')]


def test_controllers_match_the_urdf_blocks():
    p = {k: v['ros__parameters'] for k, v in CONTROLLERS.items()}
    assert p['hexapod_controller']['joints'] == _block_joint_names('hexafloat_scaled.urdf')
    assert p['hexapod_controller']['joints'] == _block_joint_names('hexafloat_full.urdf')
    assert p['joint_trajectory_controller']['joints'] == _block_joint_names('satellite_iiwa14.urdf')
    assert p['joint_trajectory_controller']['joints'] == _block_joint_names('iiwa14.urdf')
    assert p['effort_controller']['joints'] == _block_joint_names('hybrid5.urdf')
    assert p['effort_controller']['interface_name'] == 'effort'
    for name, fname in (('hexapod_controller', 'hexafloat_scaled.urdf'), ('joint_trajectory_controller', 'iiwa14.urdf')):
        _, block, _ = _block(fname)
        for j in block.findall('joint'):
            assert {c.get('name') for c in j.findall('command_interface')} >= set(p[name]['command_interfaces'])
            assert {s.get('name') for s in j.findall('state_interface')} >= set(p[name]['state_interfaces'])


# the controller of each system and the URDFs it runs on (config/systems/*.yaml)
CLAIMS = {'hexapod_controller': ('hexafloat_scaled.urdf', 'hexafloat_full.urdf'),
          'joint_trajectory_controller': ('satellite_iiwa14.urdf', 'iiwa14.urdf'),
          'effort_controller': ('hybrid5.urdf',)}
MOTION = ('position', 'velocity', 'acceleration')


IMPLIED = {'position_controllers/JointGroupPositionController': 'position'}


def _claimed(params, name=None) -> list[str]:
    """The command interfaces a controller claims on each of its joints."""
    ctype = CONTROLLERS['controller_manager']['ros__parameters'].get(name, {}).get('type') if name else None
    if ctype in IMPLIED:
        return [IMPLIED[ctype]]
    return list(params['command_interfaces']) if 'command_interfaces' in params else [params['interface_name']]


def _generic_system_switch_error(block, claimed) -> str | None:
    """mock_components/GenericSystem's prepare_command_mode_switch (ros2_control kilted cbe7d2c,
    hardware_interface/src/mock_components/generic_system.cpp): with ``calculate_dynamics``, every
    joint started must get exactly one of position, velocity, acceleration; else the controller
    manager refuses to activate the controller."""
    params = {p.get('name'): p.text for p in block.find('hardware').findall('param')}
    if block.find('hardware/plugin').text.strip() != 'mock_components/GenericSystem' or \
            params.get('calculate_dynamics', 'false').lower() != 'true':
        return None
    motion = [c for c in claimed if c in MOTION]
    if len(motion) != 1:
        return f'GenericSystem with calculate_dynamics refuses {claimed}: one of {MOTION} per joint'
    return None


@pytest.mark.parametrize('plugin', [None, 'lab_drives/SystemInterface'], ids=['committed', 'lab_plugin'])
def test_every_controller_can_be_activated_on_its_urdf_block(plugin):
    """Each system's controller claims only command interfaces its URDF block offers on every
    joint, and the committed mock plugin accepts the switch (hybrid5's effort controller once
    failed: GenericSystem with calculate_dynamics needs position, velocity or acceleration)."""
    texts = _generated(plugin, {}) if plugin else {f: (URDF / f).read_text() for c in CLAIMS.values() for f in c}
    for name, files in CLAIMS.items():
        claimed = _claimed(CONTROLLERS[name]['ros__parameters'], name)
        for fname in files:
            block = ET.fromstring(texts[fname]).find('ros2_control')
            for joint in block.findall('joint'):
                offered = {c.get('name') for c in joint.findall('command_interface')}
                assert set(claimed) <= offered, f'{name} on {fname}: {joint.get("name")} offers {offered}'
            assert _generic_system_switch_error(block, claimed) is None, f'{name} on {fname}'


def test_the_switch_rule_refuses_what_generic_system_refuses():
    """The rule above, on blocks GenericSystem refuses (its test_generic_system.cpp cases): an
    effort-only or a position+velocity start with calculate_dynamics."""
    rc = _load('make_hybrid5_urdf').rc          # (the generators put urdf/ on the import path)
    joints = [rc.JointSpec('j', command={'effort': None, 'position': None}, state={'position': 0.0})]
    block = ET.fromstring(rc.block('s', joints))          # a motion interface: calculate_dynamics set
    assert block.find('hardware/param').get('name') == 'calculate_dynamics'
    assert _generic_system_switch_error(block, ['effort']) is not None
    assert _generic_system_switch_error(block, ['position', 'velocity']) is not None
    assert _generic_system_switch_error(block, ['position']) is None
    effort_only = ET.fromstring(rc.block('s', [rc.JointSpec('j', command={'effort': None})]))
    assert effort_only.find('hardware/param') is None and _generic_system_switch_error(effort_only, ['effort']) is None


def test_every_parameter_name_is_an_upstream_one():
    cm = CONTROLLERS['controller_manager']['ros__parameters']
    types = {k: v['type'] for k, v in cm.items() if isinstance(v, dict)}
    assert set(types.values()) <= TYPES
    assert set(k for k, v in cm.items() if not isinstance(v, dict)) <= UPSTREAM['controller_manager']
    for name, ctype in types.items():
        params = CONTROLLERS[name]['ros__parameters']
        assert set(params) <= UPSTREAM[ctype], name
        for key, value in params.get('constraints', {}).items():
            if isinstance(value, dict):
                assert key in params['joints'] and set(value) <= UPSTREAM['constraints.<joint>']
            else:
                assert key in UPSTREAM['constraints']


def test_stop_behaviour_of_the_trajectory_controller():
    jtc = CONTROLLERS['hexapod_controller']['ros__parameters']
    c = jtc['constraints']
    planner = yaml.safe_load((ROOT / 'config' / 'planner.yaml').read_text())
    a_max = min(next(iter(planner.values()))['ros__parameters']['a_max'][:3])     # translational, m/s^2
    assert jtc['allow_nonzero_velocity_at_trajectory_end'] and jtc['interpolate_from_desired_state']
    assert jtc['cmd_timeout'] > c['goal_time']                  # otherwise the JTC ignores cmd_timeout
    assert c['decelerate_on_cancel'] and 'velocity' in jtc['state_interfaces']
    _, _, joints = _block('hexafloat_scaled.urdf')
    for j in jtc['joints']:
        assert 0.0 < c[j]['max_deceleration_on_cancel'] <= a_max
        assert float(joints[j].find('limit').get('velocity')) > 0.0   # decelerate needs it


def test_stop_behaviour_of_the_iiwa_trajectory_controller():
    """lbr_fri_ros2_stack's joint_trajectory_controller (its name, type and interfaces): every
    message must end at rest (the space plant's braking tail; the default refuses any other), each
    starts from the last command; no cmd_timeout (counted only past a trajectory's end, which is
    then at rest: docs/lab.md)."""
    cm = CONTROLLERS['controller_manager']['ros__parameters']
    assert cm['joint_trajectory_controller']['type'] == 'joint_trajectory_controller/JointTrajectoryController'
    jtc = CONTROLLERS['joint_trajectory_controller']['ros__parameters']
    assert jtc['command_interfaces'] == ['position'] and jtc['state_interfaces'] == ['position', 'velocity']
    assert jtc['allow_nonzero_velocity_at_trajectory_end'] is False and jtc['interpolate_from_desired_state']
    assert 'cmd_timeout' not in jtc and jtc['constraints'] == {'goal_time': 0.0}


@pytest.mark.parametrize('bad', ['port', 'joint_interface', 'param', 'joints'])
def test_the_restated_on_init_refuses_what_system_interface_refuses(bad):
    """hil_core.iiwa.lbr.check_block can fail: a port outside 30200-30209, a velocity command
    interface, a missing parameter, a joint too few -- each refused by SystemInterface::on_init."""
    from hil_core.iiwa import lbr
    good = lbr.hardware_urdf((URDF / 'iiwa14.urdf').read_text(), 'lbr', '172.31.1.147', 30200)
    assert lbr.check_block(good) == []
    robot = ET.fromstring(good)
    block = robot.find('ros2_control')
    if bad == 'port':
        block.find('hardware/param[@name="port_id"]').text = '30210'
    elif bad == 'joint_interface':
        block.find('joint/command_interface[@name="effort"]').set('name', 'velocity')
    elif bad == 'param':
        block.find('hardware').remove(block.find('hardware/param[@name="open_loop"]'))
    else:
        block.remove(block.findall('joint')[-1])
    assert lbr.check_block(ET.tostring(robot, encoding='unicode')) != []
