"""System YAML -> node list: what hil_nodes.bringup.plan (behind both `hil run` and
launch/hil.launch.py) reads."""
import pathlib

import pytest
import yaml

from hil_nodes.bringup.system import BringupError, container_ros_args, load_system, node_command, repo_root

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_every_shipped_system_loads_and_names_existing_modules():
    for path in (ROOT / 'config' / 'systems').glob('*.yaml'):
        system = load_system(str(path))
        assert system.nodes, path
        for spec in system.nodes:
            module_file = ROOT / 'src' / spec.package / spec.package / spec.executable / 'node.py'
            assert module_file.exists(), f'{path.name}: {spec.name} -> {module_file} missing'
            assert all(p.exists() for p in spec.params)
        assert sum(s.clock_owner for s in system.nodes if s.sim_only) <= 1


def test_hardware_blocks_name_existing_urdfs_and_controllers_of_the_controllers_file():
    """mode:=hardware needs a URDF for robot_state_publisher and controllers that
    config/controllers.yaml declares to the controller manager (with a type)."""
    declared = yaml.safe_load((ROOT / 'config' / 'controllers.yaml').read_text())['controller_manager']['ros__parameters']
    for path in (ROOT / 'config' / 'systems').glob('*.yaml'):
        hw = load_system(str(path)).hardware
        assert hw is not None, path.name
        assert hw.robot_description.is_file() and hw.controllers_file.is_file()
        assert '<robot' in hw.robot_description.read_text()
        assert hw.controllers[0] == 'joint_state_broadcaster', path.name
        for ctrl in hw.controllers:
            assert 'type' in declared.get(ctrl, {}), f'{path.name}: {ctrl} not declared in controllers.yaml'
    # the data tree in use (this checkout, or share/hil_core under colcon test) holds these files
    assert (repo_root() / 'config' / 'systems' / 'hexafloat.yaml').read_text() == \
        (ROOT / 'config' / 'systems' / 'hexafloat.yaml').read_text()


def test_process_arguments_name_the_node_and_pass_param_files(tmp_path):
    system = load_system('hexafloat')
    spec = system.nodes[0]
    override = tmp_path / 'o.yaml'
    cmd = node_command(spec, override)
    assert cmd[1:3] == ['-m', spec.module]
    assert f'__node:={spec.name}' in cmd
    assert cmd.index(str(override)) > cmd.index(str(spec.params[0]))  # run values win
    args = container_ros_args(list(system.nodes), override)
    assert args[0] == '--ros-args' and args.count('--params-file') == sum(len(s.params) for s in system.nodes) + 1


@pytest.mark.parametrize('content, message', [
    ({'nodes': []}, 'non-empty'),
    ({'nodes': [{'name': 'a', 'package': 'hil_sim'}]}, '"executable" is required'),
    ({'nodes': [{'name': 'a', 'package': 'p', 'executable': 'e', 'colour': 1}]}, 'unknown keys'),
    ({'nodes': [{'name': 'a', 'package': 'p', 'executable': 'e'}] * 2}, 'duplicate'),
    ({'nodes': [{'name': 'a', 'package': 'p', 'executable': 'e', 'params': ['config/nope.yaml']}]}, 'does not exist'),
    ({'nodes': [{'name': 'a', 'package': 'p', 'executable': 'e'}],
      'hardware': {'robot_description': 'urdf/nope.urdf', 'controllers': ['c']}}, 'existing URDF'),
    ({'nodes': [{'name': 'a', 'package': 'p', 'executable': 'e'}],
      'hardware': {'robot_description': 'urdf/iiwa14.urdf', 'controllers': []}}, 'non-empty list'),
    ({'nodes': [{'name': 'a', 'package': 'p', 'executable': 'e'}],
      'hardware': {'robot_description': 'urdf/iiwa14.urdf', 'controllers': ['c'], 'parameters': {'b': {'x': 1}}}},
     'unknown node'),
    ({'nodes': [{'name': 'a', 'package': 'p', 'executable': 'e'}], 'record_topics': ['/a'],
      'record_checkpoint_after': '/b'}, 'not one of record_topics'),
])
def test_bad_system_files_are_refused_with_the_entry_named(tmp_path, content, message):
    path = tmp_path / 'bad.yaml'
    path.write_text(yaml.safe_dump(content))
    with pytest.raises(BringupError, match=message):
        load_system(str(path), root=ROOT)


def test_unknown_system_lists_the_known_ones():
    with pytest.raises(BringupError, match='hexafloat'):
        load_system('no_such_system')


def _tmp_system(tmp_path):
    (tmp_path / 'config' / 'systems').mkdir(parents=True)
    (tmp_path / 'config' / 'scenarios' / 'demo').mkdir(parents=True)
    (tmp_path / 'config' / 'a.yaml').write_text('a: {ros__parameters: {x: 1}}\n')
    system = {'system': 'demo', 'nodes': [
        {'name': 'a', 'package': 'p', 'executable': 'a', 'params': ['config/a.yaml']},
        {'name': 'b', 'package': 'p', 'executable': 'b', 'remappings': {'/in': '/x'}},
        {'name': 'supervisor', 'package': 'hil_nodes', 'executable': 'supervisor', 'managed': False}]}
    (tmp_path / 'config' / 'systems' / 'demo.yaml').write_text(yaml.safe_dump(system))
    return load_system('demo', root=tmp_path)


def test_scenario_adds_nodes_before_the_supervisor_remaps_and_sets_values(tmp_path):
    from hil_nodes.bringup.system import apply_scenario, load_scenario
    system = _tmp_system(tmp_path)
    scenario = {'description': 'd', 'duration': 12.5,
                'parameters': {'a': {'gain': 2.0}, 'relay': {'p': 0.1}},
                'nodes': [{'name': 'relay', 'package': 'hil_sim', 'executable': 'reference_faults'}],
                'remap': {'a': {'/out': '/out_raw'}}}
    (tmp_path / 'config' / 'scenarios' / 'demo' / 'faults.yaml').write_text(yaml.safe_dump(scenario))
    sc = load_scenario(system, 'faults', root=tmp_path)
    applied = apply_scenario(system, sc)
    assert [n.name for n in applied.nodes] == ['a', 'b', 'relay', 'supervisor']
    by_name = {n.name: n for n in applied.nodes}
    assert by_name['a'].remappings == {'/out': '/out_raw'} and by_name['a'].parameters == {'gain': 2.0}
    assert by_name['b'].remappings == {'/in': '/x'}
    assert by_name['relay'].parameters == {'p': 0.1} and sc.duration == 12.5
    assert [n.name for n in system.nodes] == ['a', 'b', 'supervisor']      # the system itself is untouched


@pytest.mark.parametrize('content, message', [
    ({'parameters': {'nobody': {'x': 1}}}, 'unknown node'),
    ({'remap': {'ghost': {'/a': '/b'}}}, 'unknown node'),
    ({'colour': 'red'}, 'unknown keys'),
])
def test_bad_scenarios_are_refused(tmp_path, content, message):
    from hil_nodes.bringup.system import load_scenario
    system = _tmp_system(tmp_path)
    (tmp_path / 'config' / 'scenarios' / 'demo' / 'bad.yaml').write_text(yaml.safe_dump(content))
    with pytest.raises(BringupError, match=message):
        load_scenario(system, 'bad', root=tmp_path)
    with pytest.raises(BringupError, match='unknown scenario'):
        load_scenario(system, 'nope', root=tmp_path)

