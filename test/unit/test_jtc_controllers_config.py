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
    'joint_state_broadcaster/JointStateBroadcaster': {
        'joints', 'extra_joints', 'interfaces', 'map_interface_to_joint_state', 'use_local_topics',
        'use_urdf_to_filter', 'frame_id', 'publish_dynamic_joint_states'},
}
TYPES = {'joint_state_broadcaster/JointStateBroadcaster', 'joint_trajectory_controller/JointTrajectoryController',
         'forward_command_controller/ForwardCommandController'}


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


@pytest.mark.parametrize('fname, iface', [('hexafloat_scaled.urdf', 'position'), ('hexafloat_full.urdf', 'position'),
                                          ('iiwa14.urdf', 'velocity'), ('satellite_iiwa14.urdf', 'velocity'),
                                          ('hybrid5.urdf', 'effort')])
def test_block_joints_exist_and_command_limits_are_the_urdf_limits(fname, iface):
    _, block, joints = _block(fname)
    assert block.find('hardware/plugin').text == 'mock_components/GenericSystem'
    for j in block.findall('joint'):
        urdf_joint = joints[j.get('name')]
        assert urdf_joint.get('type') in ('prismatic', 'revolute', 'continuous')
        cmds = j.findall('command_interface')
        assert [c.get('name') for c in cmds] == [iface]
        lim = {p.get('name'): float(p.text) for p in cmds[0].findall('param')}
        ul = urdf_joint.find('limit')
        expected = {'position': (float(ul.get('lower', 'nan')), float(ul.get('upper', 'nan'))),
                    'velocity': (-float(ul.get('velocity')), float(ul.get('velocity'))),
                    'effort': (-float(ul.get('effort')), float(ul.get('effort')))}[iface]
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
    assert p['velocity_controller']['joints'] == _block_joint_names('satellite_iiwa14.urdf')
    assert p['effort_controller']['joints'] == _block_joint_names('hybrid5.urdf')
    assert p['velocity_controller']['interface_name'] == 'velocity'
    assert p['effort_controller']['interface_name'] == 'effort'
    _, block, _ = _block('hexafloat_scaled.urdf')
    for j in block.findall('joint'):
        assert {c.get('name') for c in j.findall('command_interface')} >= set(p['hexapod_controller']['command_interfaces'])
        assert {s.get('name') for s in j.findall('state_interface')} >= set(p['hexapod_controller']['state_interfaces'])


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
