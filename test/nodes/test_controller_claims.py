"""What the controller manager would be given, for every system in both modes (the bring-up plan,
hil_nodes.bringup.plan): each command controller's claims are offered by its robot's
<ros2_control> block, and the iiwa's hardware block is what lbr_fri_ros2_stack's
SystemInterface requires. (Moved from test/unit/test_jtc_controllers_config.py, whose helpers
and upstream tables it uses: test/unit is pure hil_core.)"""
import importlib.util
import pathlib
import xml.etree.ElementTree as ET

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location('jtc_controllers_config',
                                               ROOT / 'test' / 'unit' / 'test_jtc_controllers_config.py')
_config = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_config)
CONTROLLERS, IMPLIED = _config.CONTROLLERS, _config.IMPLIED
_claimed, _generic_system_switch_error = _config._claimed, _config._generic_system_switch_error


def _plans():
    from hil_nodes.bringup.plan import bringup_plan
    systems = sorted(p.stem for p in (ROOT / 'config' / 'systems').glob('*.yaml'))
    for system in systems:
        for mode in ('mock', 'hardware'):
            yield system, mode, bringup_plan(system, mode=mode, robot_address='172.31.1.147' if system == 'space_iiwa'
                                             else '')


def _system_claims(plan):
    """(controller name, claimed interfaces, joints, URDF text) of every command controller a plan
    brings up: the mock's emulated one, or the hardware plan's spawned ones with their lab values."""
    from hil_nodes.bringup.plan import final_parameters
    if plan.mode == 'mock':
        from hil_core.data_paths import data_root
        for spec in plan.hil_nodes:
            if (spec.package, spec.executable) != ('hil_sim', 'mock_hardware'):
                continue
            values = final_parameters(spec)
            name = values['controller']
            urdf = (data_root() / values['robot_description']).read_text()
            yield name, _claimed(CONTROLLERS[name]['ros__parameters'], name), \
                CONTROLLERS[name]['ros__parameters']['joints'], urdf
        return
    urdf = next(s for s in plan.lab_processes if s.name == 'robot_state_publisher').parameters['robot_description']
    cm = next(v['ros__parameters'] for k, v in plan.lab_parameters.items() if k.endswith('/controller_manager'))
    for key, body in plan.lab_parameters.items():
        name = key.rsplit('/', 1)[1]
        ctype = cm.get(name, {}).get('type') if name != 'controller_manager' else None
        if ctype in (None, 'joint_state_broadcaster/JointStateBroadcaster'):
            continue
        params = body['ros__parameters']
        claimed = [IMPLIED[ctype]] if ctype in IMPLIED else _claimed(params)
        yield name, claimed, params['joints'], urdf


def test_every_claim_of_every_system_and_mode_is_offered_by_its_block():
    """The interface-claims test: in both modes, every command controller a system brings up
    claims, on each of its joints, a command interface the robot's <ros2_control> block offers
    (the controller manager refuses to activate it otherwise), the committed mock accepts the
    switch, and in hardware mode the iiwa's block is the one lbr_ros2_control::SystemInterface
    loads (hil_core.iiwa.lbr.check_block, its on_init restated)."""
    from hil_core.iiwa import lbr
    seen = set()
    for system, mode, plan in _plans():
        claims = list(_system_claims(plan))
        assert claims, f'{system} {mode}: no command controller'
        for name, claimed, joints, urdf in claims:
            block = ET.fromstring(urdf).find('ros2_control')
            offered = {j.get('name'): {c.get('name') for c in j.findall('command_interface')}
                       for j in block.findall('joint')}
            assert sorted(joints) == sorted(offered), f'{system} {mode} {name}: joints {joints} vs {list(offered)}'
            for joint in joints:
                assert set(claimed) <= offered[joint], f'{system} {mode} {name}: {joint} offers {offered[joint]}'
            assert _generic_system_switch_error(block, claimed) is None, f'{system} {mode} {name}'
            if system == 'space_iiwa' and mode == 'hardware':
                assert lbr.check_block(urdf) == []
            seen.add((system, mode))
    assert len(seen) == 2 * len(list((ROOT / 'config' / 'systems').glob('*.yaml')))


def test_the_iiwa_hardware_block_is_what_lbr_system_interface_requires():
    """The hardware plan's block, checked against lbr_fri_ros2_stack rolling 218d723 as read
    (not through hil_core.iiwa.lbr's own tables): the class as system_interface.xml declares it,
    every parameter parse_parameters_ reads (.at() and operator[]), exactly position and effort
    commands and the 7 state interfaces of FRI client SDK 1 on each of the 7 joints named
    lbr_A1 .. lbr_A7, the CommandGuard's joint params, 2 sensors and the wrench GPIO."""
    from hil_nodes.bringup.plan import bringup_plan
    plan = bringup_plan('space_iiwa', mode='hardware', robot_address='172.31.1.147', robot_port='30201')
    urdf = next(s for s in plan.lab_processes if s.name == 'robot_state_publisher').parameters['robot_description']
    robot = ET.fromstring(urdf)
    block = robot.find('ros2_control')
    assert block.find('hardware/plugin').text == 'lbr_ros2_control::SystemInterface'
    params = {p.get('name'): p.text for p in block.findall('hardware/param')}
    assert set(params) == {'fri_client_sdk_major_version', 'fri_client_sdk_minor_version', 'client_command_mode',
                           'port_id', 'remote_host', 'rt_prio', 'pid_p', 'pid_i', 'pid_d', 'pid_i_max', 'pid_i_min',
                           'pid_antiwindup', 'command_guard_variant', 'external_torque_cutoff_frequency',
                           'measured_torque_cutoff_frequency', 'open_loop'}
    assert params['remote_host'] == '172.31.1.147' and params['port_id'] == '30201'
    assert params['client_command_mode'] == 'position' and params['fri_client_sdk_major_version'] == '1'
    joints = block.findall('joint')
    assert [j.get('name') for j in joints] == [f'lbr_A{i}' for i in range(1, 8)]
    urdf_joints = {j.get('name'): j for j in robot.findall('joint')}
    for j in joints:
        assert [c.get('name') for c in j.findall('command_interface')] == ['position', 'effort']
        assert sorted(s.get('name') for s in j.findall('state_interface')) == sorted(
            ['position', 'velocity', 'effort', 'commanded_joint_position', 'commanded_torque', 'external_torque',
             'ipo_joint_position'])
        jp = {p.get('name'): float(p.text) for p in j.findall('param')}
        lim = urdf_joints[j.get('name')].find('limit')       # the URDF joint of that name exists
        assert jp == pytest.approx({'min_position': float(lim.get('lower')), 'max_position': float(lim.get('upper')),
                                    'max_velocity': float(lim.get('velocity')), 'max_torque': float(lim.get('effort'))})
    assert [s.get('name') for s in block.findall('sensor')] == ['auxiliary_sensor', 'estimated_ft_sensor']
    assert len(block.findall('sensor')[0].findall('state_interface')) == 12
    ft = {p.get('name') for p in block.findall('sensor')[1].findall('param')}
    assert ft == {'enabled', 'update_rate', 'rt_prio', 'chain_root', 'chain_tip', 'damping', 'force_x_th',
                  'force_y_th', 'force_z_th', 'torque_x_th', 'torque_y_th', 'torque_z_th'}
    gpio = block.findall('gpio')
    assert [g.get('name') for g in gpio] == ['wrench'] and len(gpio[0].findall('command_interface')) == 6
