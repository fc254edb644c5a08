"""`hil plan`: the bring-up plan as YAML, and every example command of the README and docs/lab.md
planned without error (`ros2 launch hil_nodes hil.launch.py ...` through the launch file's
arguments, `hil run ...` through `hil run`'s own parser and plan).
"""
import pathlib
import shlex

import pytest
import yaml
from hil_plan import hil_plan, hil_plan_process

from hil_nodes.cli import main as cli, plan_cmd, run_cmd
from hil_nodes import topics

ROOT = pathlib.Path(__file__).resolve().parents[2]
DOCS = [ROOT / 'README.md', ROOT / 'docs' / 'lab.md']


def _examples(prefix: str) -> list[str]:
    """The example command lines starting with ``prefix`` in the docs (comments cut)."""
    out = []
    for doc in DOCS:
        for line in doc.read_text().splitlines():
            line = line.strip().removeprefix('.venv/bin/')
            if line.startswith(prefix):
                out.append(line.split('  #')[0].split(' # ')[0].strip())
    return out


def test_the_hardware_plan_of_hexafloat():
    code, out, err = hil_plan_process('hexafloat', '--mode', 'hardware', 'netft_address:=192.168.1.1', 'rt:=true')
    assert code == 0, err
    doc = yaml.safe_load(out)
    assert doc['mode'] == 'hardware' and doc['lockstep'] is False and doc['layout'] == 'one_process'
    procs = {p['name']: p for p in doc['processes']}
    rsp = procs['robot_state_publisher']
    assert rsp['kind'] == 'lab' and '<ros2_control name="hexaslide_scaled_sliders"' in rsp['parameters']['robot_description']
    assert procs['controller_manager']['remappings'] == {'~/robot_description': '/robot_description'}
    assert procs['spawner_hexapod_controller']['start_after'] == 'controller_manager'
    ft = procs['ft_sensor']['parameters']
    assert ft['source'] == 'netft' and ft['sensor_ip'] == '192.168.1.1'
    assert procs['kinematics']['parameters']['publish_description'] is False      # one description owner
    assert 'HIL_RT_PRIORITY' in procs['ft_sensor']['environment']
    assert set(doc['container']) == {p['name'] for p in doc['processes'] if p['kind'] == 'hil'}


def test_the_hardware_plan_of_the_iiwa_on_lbr_fri_ros2_stack():
    """The documented iiwa hardware command plans: lbr's class and block with the robot's address
    and port, the lab in lbr's namespace, the space plant remapped onto it with lbr's joint names."""
    code, out, err = hil_plan('space_iiwa', '--mode', 'hardware', 'robot_address:=172.31.1.147', 'robot_port:=30201')
    assert code == 0, err
    doc = yaml.safe_load(out)
    procs = {p['name']: p for p in doc['processes']}
    urdf = procs['robot_state_publisher']['parameters']['robot_description']
    assert '<plugin>lbr_ros2_control::SystemInterface</plugin>' in urdf
    assert '<param name="remote_host">172.31.1.147</param>' in urdf and '<param name="port_id">30201</param>' in urdf
    assert all(procs[n]['namespace'] == '/lbr' for n in ('robot_state_publisher', 'controller_manager',
                                                          'spawner_joint_trajectory_controller'))
    assert procs['controller_manager']['parameters']['update_rate'] == 1000
    jtc = doc['lab_parameters']['/lbr/joint_trajectory_controller']['ros__parameters']
    assert jtc['joints'] == [f'lbr_A{i}' for i in range(1, 8)]
    assert jtc['command_interfaces'] == ['position'] and not jtc['allow_nonzero_velocity_at_trajectory_end']
    plant = procs['space_plant']
    # relative: onto lbr's namespace below the graph's (the root here)
    assert plant['remappings'] == {topics.JOINT_STATES: f'lbr/{topics.JOINT_STATES}',
                                   topics.IIWA_JOINT_TRAJECTORY: f'lbr/{topics.IIWA_JOINT_TRAJECTORY}'}
    assert plant['parameters']['joint_names'] == [f'lbr_A{i}' for i in range(1, 8)]
    code, _, err = hil_plan('space_iiwa', '--mode', 'hardware', 'robot_port:=30210')
    assert code == 2 and 'port_id 30210' in err
    code, _, err = hil_plan('hybrid5', '--mode', 'hardware', 'robot_port:=30200')
    assert code == 2 and 'robot_port' in err


def test_a_plan_that_cannot_be_made_says_why():
    code, out, err = hil_plan('hexafloat', 'lockstep:=true', '--mode', 'hardware')
    assert code == 2 and out == '' and 'hil plan:' in err and 'lockstep' in err
    code, _, err = hil_plan('hexafloat', 'bogus')
    assert code == 2 and 'NAME:=VALUE' in err
    code, _, err = hil_plan('no_such_system')
    assert code == 2 and 'no_such_system' in err


@pytest.mark.parametrize('line', _examples('ros2 launch hil_nodes hil.launch.py'))
def test_every_documented_launch_command_plans(line):
    values = dict(token.split(':=', 1) for token in shlex.split(line)[3:] if ':=' in token)
    system, mode = values.pop('system', 'hexafloat'), values.pop('mode', 'mock')
    doc = plan_cmd.plan_document(plan_cmd.launch_values(system, ['--mode', mode, *(f'{k}:={v}' for k, v in values.items())]))
    assert doc['processes']


@pytest.mark.parametrize('line', [x for x in _examples('hil run ') if '<system>' not in x])
def test_every_documented_hil_run_command_plans(line):
    args = cli.build_parser().parse_args(shlex.split(line)[1:])
    _, plan = run_cmd.plan_for(args)
    assert plan.hil_nodes


def test_the_docs_have_examples_of_both():
    assert len(_examples('ros2 launch hil_nodes hil.launch.py')) >= 4 and len(_examples('hil run ')) >= 4


@pytest.mark.parametrize('layout', ['one_process', 'isolated'])
def test_the_hmi_is_a_process_of_its_own_with_its_port_host_and_urdf(layout):
    """hmi:=true: the operator's HMI first, a plain node of its own kind in both layouts (never in
    the container), not managed and not watched by the supervisor, no sim time and no real-time
    request, served where asked with the system's URDF (the mock's robot_description file)."""
    code, out, err = hil_plan('hexafloat', 'hmi:=true', 'hmi_port:=8765', f'layout:={layout}', 'rt:=true')
    assert code == 0, err
    doc = yaml.safe_load(out)
    hmi = doc['processes'][0]
    assert (hmi['name'], hmi['kind'], hmi['executable'], hmi['lifecycle']) == ('hmi', 'hmi', 'hmi', False)
    assert hmi['parameters'] == {'host': '127.0.0.1', 'port': 8765, 'urdf': str(ROOT / 'urdf' / 'hexafloat_scaled.urdf')}
    assert 'environment' not in hmi                                  # no HIL_RT_* request with rt:=true
    assert doc['hmi'] == 'http://127.0.0.1:8765'
    assert 'hmi' not in doc.get('container', [])
    sup = next(p for p in doc['processes'] if p['name'] == 'supervisor')['parameters']
    assert 'hmi' not in sup['managed_nodes'] and 'hmi' not in sup.get('monitored_nodes', [])
    code, out, _ = hil_plan('hexafloat')                           # not asked: not there
    assert code == 0 and 'hmi' not in [p['name'] for p in yaml.safe_load(out)['processes']]


def test_the_hmi_beyond_localhost_needs_a_token_and_hides_it():
    code, out, err = hil_plan('hexafloat', 'hmi:=true', 'hmi_host:=0.0.0.0')
    assert code == 2 and out == '' and 'control_token' in err
    code, out, err = hil_plan('hexafloat', 'hmi:=true', 'hmi_host:=0.0.0.0', 'hmi_token:=s3cret')
    assert code == 0, err
    assert 's3cret' not in out and yaml.safe_load(out)['processes'][0]['parameters']['control_token'] == '<hidden>'
    code, _, err = hil_plan('hexafloat', 'hmi:=true', 'hmi_port:=70000')
    assert code == 2 and "'port' = 70000 is outside its range" in err
    args = cli.build_parser().parse_args(['run', 'hexafloat', '--hmi', '--hmi-port', '0', '--isolated'])
    _, plan = run_cmd.plan_for(args)
    assert plan.hmi.parameters['port'] == 0 and plan.hmi not in plan.hil_nodes
