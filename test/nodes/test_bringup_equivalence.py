"""`hil run` and `ros2 launch hil_nodes hil.launch.py` start the same thing.

Both translate hil_nodes.bringup.plan.bringup_plan. Here each translation is read back the way its
consumer reads it -- the command lines `hil run` starts (both layouts) with its params file, and
the launch entries with the parameter file launch_ros writes for a dict (keyed by the node's full
name when a namespace is given) -- and the nodes, their order, final parameters (params files
resolved as rclpy does: test/integration/test_bringup_rclpy.py checks that resolution against
rclpy) and remappings are compared, for every system, mock and hardware, lockstep and real time.
"""
import datetime
import pathlib
import sys

import pytest
import yaml

from hil_nodes.bringup.plan import (bringup_plan, effective_parameters, final_parameters, process_commands,
                                    write_lab_parameters, write_overrides)
from hil_nodes.bringup.launch_plan import LAUNCH_ARGUMENTS, launch_entries, plan_kwargs
from hil_nodes.bringup.system import BringupError, load_system

ROOT = pathlib.Path(__file__).resolve().parents[2]
SYSTEMS = sorted(p.stem for p in (ROOT / 'config' / 'systems').glob('*.yaml'))
CLOCKS = [('mock', True), ('mock', False), ('hardware', False)]
STAMP = datetime.datetime(2026, 1, 2, 3, 4, 5)


def _plan(system, mode, lockstep, tmp_path, record=True):
    return bringup_plan(system, mode=mode, lockstep=lockstep, record=tmp_path / 'bags' if record else None,
                        duration=2.0, seed=7, stamp=STAMP)


def _ros_args(cmd):
    """(params files, remappings) of a `--ros-args` command line, in order."""
    files, remaps = [], []
    for flag, value in zip(cmd, cmd[1:]):
        if flag == '--params-file':
            files.append(value)
        elif flag == '-r' and not value.startswith('__node:='):
            remaps.append(value)
    return files, remaps


def hil_run_view(plan, overrides, isolated):
    """[(name, module, parameters, remappings)] as the `hil run` processes receive them."""
    out = []
    if isolated:
        for name, cmd, _ in process_commands(plan, overrides, isolated=True):
            files, remaps = _ros_args(cmd)
            assert cmd[1:3] == ['-m', cmd[2]] and f'__node:={name}' in cmd
            out.append((name, cmd[2], effective_parameters(files, name),
                        [tuple(r.split(':=')) for r in remaps]))
        return out
    [(_, cmd, _)] = process_commands(plan, overrides, isolated=False)
    return _container_view(cmd)


def _container_view(cmd):
    """[(name, module, parameters, remappings)] of the nodes of one container command line."""
    nodes = [cmd[i + 1] for i, a in enumerate(cmd) if a == '--node']
    files, remaps = _ros_args(cmd)
    out = []
    for item in nodes:
        module, name = item.split(':')
        mine = [tuple(r[len(name) + 1:].split(':=')) for r in remaps if r.startswith(f'{name}:')]
        assert len(mine) == len([r for r in remaps if r.split(':')[0] == name])
        out.append((name, module, effective_parameters(files, name), mine))
    return out


def launch_view(entries):
    """The same, as launch_ros hands them to the node processes."""
    out = []
    for e in entries:
        if e['action'] not in ('Node', 'LifecycleNode'):
            continue
        if e['executable'] in ('ros2_control_node', 'robot_state_publisher', 'spawner'):
            continue                      # the lab side (lbr's namespace for the iiwa): checked below
        assert e['namespace'] == ''       # so launch_ros keys the dict by '/<name>', not '/**'
        if e['executable'] == 'container':
            # launch_ros: [executable, *arguments, '--ros-args', *ros_arguments]; a name would
            # rename every node of the process, parameters / remappings would reach all of them
            assert e['name'] is None and e['parameters'] == [] and e['remappings'] == []
            out += _container_view([e['executable'], *e['arguments'], '--ros-args', *e['ros_arguments']])
            continue
        sources = [p if isinstance(p, str) else {'/' + e['name']: {'ros__parameters': p}} for p in e['parameters']]
        # `ros2 run <package> <executable>` runs the console script of <package>/<executable>/node.py
        out.append((e['name'], f"{e['package']}.{e['executable']}.node", effective_parameters(sources, e['name']),
                    [tuple(r) for r in e['remappings']]))
    return out


@pytest.mark.parametrize('system', SYSTEMS)
@pytest.mark.parametrize('mode, lockstep', CLOCKS)
def test_launch_and_hil_run_give_the_same_nodes_parameters_remappings_and_order(system, mode, lockstep, tmp_path):
    plan = _plan(system, mode, lockstep, tmp_path)
    overrides = write_overrides(plan, tmp_path / 'run_params.yaml')
    lab = {p.name for p in plan.lab_processes}
    lab_file = write_lab_parameters(plan, tmp_path / 'lab.yaml') if plan.lab_parameters else None
    for layout in ('isolated', 'one_process'):
        entries = launch_entries(plan, layout=layout, params_file=overrides, lab_params_file=lab_file)
        launch = launch_view(entries)
        launch_hil = [n for n in launch if n[0] not in lab]
        assert launch_hil == hil_run_view(plan, overrides, isolated=True)
        assert launch_hil == hil_run_view(plan, overrides, isolated=False)
        assert [e['name'] for e in entries if e['executable'] != 'container'] == [
            p.name for p in plan.processes if p.kind == 'lab' or layout == 'isolated']
    # one process: the container's arguments, ROS arguments and environment are `hil run`'s
    [container] = [e for e in entries if e['executable'] == 'container']
    [(_, cmd, env)] = process_commands(plan, overrides, isolated=False)
    assert cmd[:3] == [sys.executable, '-m', 'hil_nodes.runtime.container']
    assert cmd[3:] == [*container['arguments'], '--ros-args', *container['ros_arguments']]
    assert container['additional_env'] == env and container['start_after'] == ''
    assert [e['name'] for e in entries if e['executable'] != 'container'] == sorted(lab, key=[
        p.name for p in plan.processes].index)
    # the run's params file holds exactly the plan's values (a value type lost in YAML would show)
    assert yaml.safe_load(overrides.read_text()) == {
        p.name: {'ros__parameters': p.parameters} for p in plan.hil_nodes if p.parameters}


def _launch_value_ok(v):
    """What launch_ros's normalize_parameters turns into a typed parameter (an empty list has no type)."""
    if isinstance(v, (bool, int, float, str)):
        return True
    return isinstance(v, list) and v and len({type(x) for x in v}) == 1 and _launch_value_ok(v[0])


@pytest.mark.parametrize('system', SYSTEMS)
@pytest.mark.parametrize('mode, lockstep', CLOCKS)
def test_the_plan_fixes_the_launch_path_faults(system, mode, lockstep, tmp_path):
    plan = _plan(system, mode, lockstep, tmp_path)
    desc = load_system(system)
    lab_file = write_lab_parameters(plan, tmp_path / 'lab.yaml') if plan.lab_parameters else None
    final = {n[0]: n[2] for n in launch_view(launch_entries(plan, lab_params_file=lab_file))}
    hil = plan.hil_nodes
    # the supervisor brings up every managed node, recorder first, in the system's order
    managed = ['recorder'] + [n.name for n in desc.select(use_mock=mode == 'mock') if n.managed]
    assert final['supervisor']['managed_nodes'] == managed == list(plan.managed)
    assert final['supervisor']['autostart'] is True and final['supervisor']['run_duration'] == 2.0
    # one lockstep value for all (config/supervisor.yaml says false: the plan wins)
    assert {final[n.name]['lockstep'] for n in hil} == {lockstep}
    assert yaml.safe_load((ROOT / 'config' / 'supervisor.yaml').read_text())['supervisor']['ros__parameters'][
        'lockstep'] is False
    sim = {n.name for n in hil if final[n.name]['use_sim_time']}
    if mode == 'mock' and lockstep:   # the mock hardware owns /clock, every other node follows it
        owner = next(n.name for n in desc.nodes if n.clock_owner)
        assert plan.clock_owner == owner and final[owner]['use_sim_time'] is False
        assert sim == {n.name for n in hil} - {owner}
        assert final[owner]['time_scale'] == 0.0
    else:                             # real time and hardware: wall clock everywhere
        assert plan.clock_owner == '' and sim == set()
    assert final['recorder']['bag_path'] == str(tmp_path / 'bags' / f'{desc.name}_20260102_030405_seed7')
    assert all(final[n.name]['seed'] == 7 for n in hil)
    for entry in launch_entries(plan, lab_params_file=lab_file):
        for p in entry.get('parameters', []):
            if isinstance(p, dict):
                assert all(_launch_value_ok(v) for v in p.values()), (entry['name'], p)
            else:
                assert pathlib.Path(p).is_file()
    if mode == 'hardware':
        assert not {n.name for n in desc.nodes if n.sim_only} & {p.name for p in plan.processes}
        lab = {p.name: p for p in plan.lab_processes}
        hw = desc.hardware
        ns = hw.namespace
        absolute = f'/{ns}' if ns else ''
        urdf = lab['robot_state_publisher'].parameters['robot_description']
        if hw.lbr:      # the iiwa: lbr_fri_ros2_stack's block (test/unit/test_jtc_controllers_config.py)
            from hil_core.iiwa import lbr
            assert ns == 'lbr' and lbr.check_block(urdf) == []
            assert urdf == lbr.hardware_urdf(hw.robot_description.read_text(), 'lbr')
        else:
            assert ns == '' and urdf == hw.robot_description.read_text()
        assert all(p.namespace == ns for p in plan.lab_processes)
        cm = lab['controller_manager']
        assert cm.executable == 'ros2_control_node' and cm.params == ()
        # its params file: the controllers file's entries for this system, under full node names
        assert set(plan.lab_parameters) == {f'{absolute}/{c}' for c in ('controller_manager', *hw.controllers)}
        [entry] = [e for e in launch_entries(plan, lab_params_file=lab_file) if e['name'] == 'controller_manager']
        assert entry['namespace'] == ns and str(lab_file) in entry['parameters']
        assert cm.remappings == {'~/robot_description': f'{absolute}/robot_description'}
        spawners = [p for p in plan.lab_processes if p.executable == 'spawner']
        assert [s.arguments[0] for s in spawners] == list(hw.controllers)
        assert all(s.start_after == 'controller_manager' and s.arguments[1:] == ('--controller-manager',
                   f'{absolute}/controller_manager') for s in spawners)
        assert all(p.parameters.get('use_sim_time', False) is False for p in plan.lab_processes)
        # joint_state_broadcaster's frame_id: a link of the URDF (its default base_link is none)
        import xml.etree.ElementTree as ET
        links = {link.get('name') for link in ET.fromstring(urdf).findall('link')}
        jsb = plan.lab_parameters[f'{absolute}/joint_state_broadcaster']['ros__parameters']
        assert jsb['frame_id'] in links
    else:
        assert plan.lab_processes == []


def test_hardware_values_netft_and_robot_address(tmp_path):
    plan = bringup_plan('hexafloat', mode='hardware', netft_address='10.0.0.7')
    ft = next(p for p in plan.processes if p.name == 'ft_sensor')
    assert ft.parameters['source'] == 'netft' and ft.parameters['sensor_ip'] == '10.0.0.7'
    mock = bringup_plan('hexafloat', mode='mock')
    # with the mock hardware the simulated sensor is read in-process (the system's mock_parameters)
    assert next(p for p in mock.processes if p.name == 'ft_sensor').parameters['source'] == 'sim'
    from hil_nodes.bringup.lab_side import with_robot_address
    urdf = '<robot><ros2_control><hardware><param name="robot_address">0.0.0.0</param></hardware></ros2_control></robot>'
    assert '<param name="robot_address">172.31.1.147</param>' in with_robot_address(urdf, '172.31.1.147')
    with pytest.raises(BringupError, match='robot_address'):
        with_robot_address('<robot/>', '1.2.3.4')


def _final(spec, name: str, default):
    """A node's final value of ``name`` (``final_parameters``), else the default."""
    return final_parameters(spec).get(name, default)


def _owners(plan):
    """(processes publishing /robot_description, processes publishing the URDF's joint frames)."""
    desc, frames = [], []
    for spec in plan.processes:
        if spec.executable == 'robot_state_publisher':
            desc.append(spec.name)
            frames.append(spec.name)
        elif spec.executable == 'kinematics':
            if _final(spec, 'publish_description', True):
                desc.append(spec.name)
            if _final(spec, 'tf_joint_frames', True):
                frames.append(spec.name)
        elif spec.executable == 'space_plant' and _final(spec, 'tf_joint_frames', True):
            frames.append(spec.name)
    return desc, frames


@pytest.mark.parametrize('system', SYSTEMS)
def test_one_description_owner(system):
    """Hardware mode: robot_state_publisher alone publishes /robot_description and the URDF's
    joint frames (the controller manager takes whichever description comes first; tf2 would see
    each joint frame from two publishers); the suite only what it cannot (a parallel robot's
    platform from FK, the legs, the F/T sensor, the satellite). Mock mode: the suite's stand-in,
    one publisher of each where the system draws a robot."""
    desc, frames = _owners(bringup_plan(system, mode='hardware'))
    assert desc == ['robot_state_publisher'] and frames == ['robot_state_publisher'], (desc, frames)
    desc, frames = _owners(bringup_plan(system, mode='mock'))
    assert len(desc) <= 1 and len(frames) <= 1 and 'robot_state_publisher' not in desc, (desc, frames)


def test_real_time_at_another_pace_keeps_the_sim_clock():
    """Real time at time_scale != 1: sim time is not wall time, so the mock owns /clock as in lockstep."""
    plan = bringup_plan('hexafloat', lockstep=False, time_scale=0.5)
    by = {p.name: p.parameters for p in plan.hil_nodes}
    assert plan.clock_owner == 'mock_hexapod' and by['mock_hexapod']['time_scale'] == 0.5
    assert by['planner']['use_sim_time'] is True and by['planner']['lockstep'] is False


def test_rt_reaches_every_hil_process_in_both_translations_with_priorities_by_role(tmp_path):
    """--rt / rt:=true: the drives at the run's priority, the chain below them in its order, the
    supervisor last, the recorder with no real-time priority (it has no deadline); one process
    runs at its nodes' highest. The same in `hil run` and in the launch file."""
    plan = bringup_plan('hexafloat', rt=True, rt_priority=70, rt_cpus='1', record=tmp_path)
    common = {'HIL_RT_CPUS': '1', 'HIL_RT_MLOCK': '1'}
    want = {'mock_hexapod': 70, 'ft_sensor': 69, 'admittance': 68, 'planner': 67, 'timebase': 66,
            'kinematics': 65, 'supervisor': 60}
    expected = {name: {**common, 'HIL_RT_PRIORITY': str(prio), 'HIL_RT_POLICY': 'rr'} for name, prio in want.items()}
    expected['recorder'] = common
    assert {e['name']: e['additional_env'] for e in launch_entries(plan)} == expected
    assert {name: env for name, _, env in process_commands(plan, tmp_path / 'o.yaml', True)} == expected
    one = {**common, 'HIL_RT_PRIORITY': '70', 'HIL_RT_POLICY': 'rr'}
    assert [e['additional_env'] for e in launch_entries(plan, layout='one_process', params_file=tmp_path / 'o.yaml')] == [one]
    assert [env for _, _, env in process_commands(plan, tmp_path / 'o.yaml', False)] == [one]
    assert all(p.env == {} for p in bringup_plan('hexafloat', record=tmp_path).hil_nodes)   # no --rt: nothing asked
    with pytest.raises(BringupError, match='rt_cpus'):
        bringup_plan('space_iiwa', rt=True, rt_cpus='x')


def test_rt_rank_is_validated_and_a_priority_never_drops_below_1(tmp_path):
    from hil_nodes.runtime import rt_setup
    assert rt_setup.ranked_env({'HIL_RT_PRIORITY': '3', 'HIL_RT_POLICY': 'rr'}, 10)['HIL_RT_PRIORITY'] == '1'
    assert rt_setup.ranked_env({}, 4) == {}                     # nothing asked, nothing added
    base = (pathlib.Path(__file__).parents[2] / 'config' / 'systems' / 'space_iiwa.yaml').read_text()
    for bad in ('-1', '21', 'true', '2.5', 'high'):
        path = tmp_path / 'sys.yaml'
        path.write_text(base.replace('rt_rank: 1\n', f'rt_rank: {bad}\n'))
        with pytest.raises(BringupError, match='rt_rank'):
            load_system(str(path))
    path.write_text(base.replace('rt_rank: 1\n', 'rt_rank: null\n'))
    assert next(n for n in load_system(str(path)).nodes if n.name == 'space_plant').rt_rank is None


def test_launch_arguments_become_plan_keywords():
    names = [a[0] for a in LAUNCH_ARGUMENTS]
    assert names[:5] == ['system', 'mode', 'lockstep', 'record', 'rt']
    assert {'netft_address', 'robot_address', 'scenario', 'duration'} <= set(names)
    kw = plan_kwargs({})
    assert kw['system'] == 'hexafloat' and kw['mode'] == 'mock' and kw['lockstep'] is None
    assert kw['record'] is None and kw['duration'] is None and kw['rt'] is False
    assert bringup_plan(**kw).lockstep is True
    hw = plan_kwargs({'mode': 'hardware', 'duration': '30', 'record': '/tmp/bags', 'netft_address': '10.0.0.7'})
    assert bringup_plan(**hw).lockstep is False and hw['duration'] == 30.0
    with pytest.raises(BringupError, match='lockstep'):
        bringup_plan(**plan_kwargs({'mode': 'hardware', 'lockstep': 'true'}))
    with pytest.raises(BringupError, match='true/false'):
        plan_kwargs({'rt': 'maybe'})
    with pytest.raises(BringupError, match='unknown launch arguments'):
        plan_kwargs({'use_mock': 'true'})
    with pytest.raises(BringupError, match='mode'):
        bringup_plan('hexafloat', mode='gazebo')


def test_operator_driven_launch_has_no_automatic_run():
    plan = bringup_plan('hexafloat')                     # duration not given: wait for /hil/start
    sup = next(p for p in plan.processes if p.name == 'supervisor').parameters
    assert sup['autostart'] is True and sup['autostart_run'] is False and sup['run_duration'] == 0.0
    assert 'recorder' not in plan.managed and plan.bag_path is None


def test_scenario_nodes_and_values_reach_both_translations(tmp_path):
    plan = bringup_plan('hexafloat', 'faults', duration=1.0, stamp=STAMP)
    names = [p.name for p in plan.hil_nodes]
    assert names.index('supervisor') == len(names) - 1 and len(names) > len(load_system('hexafloat').nodes)
    overrides = write_overrides(plan, tmp_path / 'o.yaml')
    assert launch_view(launch_entries(plan)) == hil_run_view(plan, overrides, isolated=True)


def test_rt_policy_is_round_robin_unless_one_process_asks_for_fifo():
    """Equal-priority SCHED_FIFO processes never preempt each other: one process per node gets
    SCHED_RR (launch, hil run --isolated); one process may use FIFO."""
    from hil_nodes.runtime import rt_setup
    assert bringup_plan('space_iiwa', rt=True).hil_nodes[0].env['HIL_RT_POLICY'] == 'rr'
    assert bringup_plan('space_iiwa', rt=True, rt_policy='fifo').hil_nodes[0].env['HIL_RT_POLICY'] == 'fifo'
    with pytest.raises(ValueError, match='policy'):
        rt_setup.request_env(80, '', True, policy='deadline')


def test_launch_layout_argument(tmp_path):
    """layout:=one_process (the default, as `hil run`) asks for SCHED_FIFO with rt:=true, isolated
    for SCHED_RR (as `hil run --isolated`); an unknown layout or a missing params file is refused."""
    from hil_nodes.bringup.launch_plan import wants_layout
    assert wants_layout({}) == 'one_process'
    assert plan_kwargs({})['rt_policy'] == 'fifo' and plan_kwargs({'layout': 'isolated'})['rt_policy'] == 'rr'
    with pytest.raises(BringupError, match='layout'):
        plan_kwargs({'layout': 'container'})
    plan = bringup_plan('hexafloat')
    with pytest.raises(BringupError, match='layout'):
        launch_entries(plan, layout='two_process')
    with pytest.raises(ValueError, match='params_file'):
        launch_entries(plan, layout='one_process')


def test_realtime_parameters_apply_only_to_the_mock_in_real_time():
    """hybrid5's drives: 2.5 ms frames of 25 plant steps in real time (the controller's law in
    their loop, hil_nodes.runtime.servo_link); one 100 us frame per control cycle in lockstep."""
    def mock(**kw):
        return next(p for p in bringup_plan('hybrid5', **kw).processes if p.name == 'mock_hybrid5').parameters
    rt, ls = mock(lockstep=False), mock(lockstep=True)
    assert (rt['frame_period'], rt['substeps']) == (0.0025, 25) and 'frame_period' not in ls
    assert not any(p.name == 'mock_hybrid5' for p in bringup_plan('hybrid5', mode='hardware').processes)
