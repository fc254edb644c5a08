"""launch/*.launch.py map the plan's entries one to one onto launch / launch_ros actions.

launch_ros cannot be installed here, so the files run against recording stand-ins of the
classes they use. Each stand-in has the constructor signature of the real class (read in
ros2/launch_ros rolling f9ab937, the Kilted line: launch_ros/actions/node.py, lifecycle_node.py,
substitutions/find_package.py; ros2/launch 3.7.1: actions/declare_launch_argument.py,
include_launch_description.py, opaque_function.py, register_event_handler.py,
event_handlers/on_process_start.py, event_handlers/on_shutdown.py,
substitutions/path_join_substitution.py; ament_index_python packages.py): a
keyword the real class does not take, or a missing required one (LifecycleNode's name and
namespace), fails here as it would on a lab machine. docs/lab.md lists what was checked.
"""
import importlib.util
import pathlib
import sys
import types

import pytest
import yaml

from hil_core.data_paths import data_root
from hil_nodes.bringup.plan import bringup_plan
from hil_nodes.bringup.launch_plan import LAUNCH_ARGUMENTS, launch_entries, plan_kwargs

ROOT = pathlib.Path(__file__).resolve().parents[2]
# keyword arguments of launch.actions.ExecuteProcess that Node passes on (execute_process.py)
EXECUTE_PROCESS_KWARGS = {'output', 'additional_env', 'cwd', 'env', 'shell', 'emulate_tty', 'respawn',
                          'respawn_delay', 'sigterm_timeout', 'sigkill_timeout', 'log_cmd', 'prefix', 'name',
                          'on_exit', 'cached_output', 'condition'}


class Recorded:
    def __init__(self, kind, **kw):
        self.kind, self.kw = kind, kw


def _node(*, executable, package=None, name=None, namespace=None, exec_name=None, parameters=None,
          remappings=None, ros_arguments=None, arguments=None, **kwargs):
    assert set(kwargs) <= EXECUTE_PROCESS_KWARGS, set(kwargs) - EXECUTE_PROCESS_KWARGS
    return Recorded('Node', executable=executable, package=package, name=name, namespace=namespace,
                    parameters=parameters, remappings=remappings, arguments=arguments,
                    ros_arguments=ros_arguments, **kwargs)


def _lifecycle_node(*, name, namespace, **kwargs):
    rec = _node(name=name, namespace=namespace, **kwargs)
    rec.kind = 'LifecycleNode'
    return rec


class _LaunchConfiguration:
    def __init__(self, variable_name, *, default=None):
        self.name, self.default = variable_name, default

    def perform(self, context):
        return context[self.name]


INSTALLED = {'rviz2'}      # the packages the ament_index stand-in finds (tests change it)


class _PackageNotFoundError(KeyError):
    pass


def _share(package_name, print_warning=True):
    if package_name not in INSTALLED:
        raise _PackageNotFoundError(package_name)
    return f'/opt/ros/kilted/share/{package_name}'


def _stand_ins():
    mods = {name: types.ModuleType(name) for name in (
        'launch', 'launch.actions', 'launch.event_handlers', 'launch.launch_description_sources',
        'launch.substitutions', 'launch_ros', 'launch_ros.actions', 'launch_ros.substitutions',
        'ament_index_python', 'ament_index_python.packages')}
    mods['ament_index_python.packages'].PackageNotFoundError = _PackageNotFoundError
    mods['ament_index_python.packages'].get_package_share_directory = _share
    mods['launch.event_handlers'].OnShutdown = lambda *, on_shutdown, **kw: Recorded('OnShutdown',
                                                                                      on_shutdown=on_shutdown)
    mods['launch'].LaunchDescription = lambda initial_entities=None, *, deprecated_reason=None: Recorded(
        'LaunchDescription', entities=list(initial_entities or []))
    a = mods['launch.actions']
    a.DeclareLaunchArgument = lambda name, *, default_value=None, description=None, choices=None, **kw: Recorded(
        'DeclareLaunchArgument', name=name, default_value=default_value, description=description, choices=choices)
    a.OpaqueFunction = lambda *, function, args=None, kwargs=None, **kw: Recorded('OpaqueFunction', function=function)
    a.RegisterEventHandler = lambda event_handler, **kw: Recorded('RegisterEventHandler', handler=event_handler)
    a.IncludeLaunchDescription = lambda launch_description_source, *, launch_arguments=None, **kw: Recorded(
        'IncludeLaunchDescription', source=launch_description_source, launch_arguments=launch_arguments, **kw)
    mods['launch.event_handlers'].OnProcessStart = lambda *, target_action=None, on_start, **kw: Recorded(
        'OnProcessStart', target_action=target_action, on_start=on_start)
    mods['launch.launch_description_sources'].PythonLaunchDescriptionSource = lambda launch_file_path: Recorded(
        'PythonLaunchDescriptionSource', path=launch_file_path)
    mods['launch.substitutions'].LaunchConfiguration = _LaunchConfiguration
    mods['launch.substitutions'].PathJoinSubstitution = lambda substitutions: Recorded(
        'PathJoinSubstitution', parts=list(substitutions))
    mods['launch_ros.actions'].Node = _node
    mods['launch_ros.actions'].LifecycleNode = _lifecycle_node
    mods['launch_ros.substitutions'].FindPackageShare = lambda package: Recorded('FindPackageShare', package=package)
    return mods


def _load(monkeypatch, name):
    for mod_name, mod in _stand_ins().items():
        monkeypatch.setitem(sys.modules, mod_name, mod)
    spec = importlib.util.spec_from_file_location(name.replace('.', '_'), ROOT / 'launch' / name)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.generate_launch_description()


def _run(monkeypatch, **values):
    ld = _load(monkeypatch, 'hil.launch.py')
    declared = [e for e in ld.kw['entities'] if e.kind == 'DeclareLaunchArgument']
    assert [(d.kw['name'], d.kw['default_value'], d.kw['choices']) for d in declared] == [
        (n, default, choices) for n, default, _, choices in LAUNCH_ARGUMENTS]
    [opaque] = [e for e in ld.kw['entities'] if e.kind == 'OpaqueFunction']
    context = {n: default for n, default, _, _ in LAUNCH_ARGUMENTS}
    context.update(values)
    return opaque.kw['function'](context), context


@pytest.mark.parametrize('layout', ['one_process', 'isolated'])
@pytest.mark.parametrize('mode', ['mock', 'hardware'])
def test_hil_launch_maps_every_entry_onto_one_action(monkeypatch, mode, layout):
    actions, context = _run(monkeypatch, system='hexafloat', mode=mode, duration='5', layout=layout)
    shutdown = [a for a in actions if a.kind == 'RegisterEventHandler' and a.kw['handler'].kind == 'OnShutdown']
    handlers = [a for a in actions if a.kind == 'RegisterEventHandler' and a not in shutdown]
    nodes = [a for a in actions if a.kind in ('Node', 'LifecycleNode')]
    params_file = lab_file = None
    plan = bringup_plan(**plan_kwargs(context))
    written = []
    if layout == 'one_process':   # the launch file wrote the plan's values for its one container
        [container] = [n for n in nodes if n.kw['executable'] == 'container']
        ros_args = container.kw['ros_arguments']
        files = [ros_args[i + 1] for i, a in enumerate(ros_args) if a == '--params-file']
        params_file = pathlib.Path(files[-1])     # after every node's own files: the plan's values win
        assert params_file.parent.name.startswith('hil_launch_')
        assert yaml.safe_load(params_file.read_text()) == {
            s.name: {'ros__parameters': s.parameters} for s in plan.hil_nodes if s.parameters}
        assert container.kw['name'] is None and container.kw['package'] == 'hil_nodes'
        written.append(params_file)
    if mode == 'hardware':        # and ros2_control_node's params file (the plan's lab parameters)
        [cm] = [n for n in nodes if n.kw['executable'] == 'ros2_control_node']
        lab_file = pathlib.Path(cm.kw['parameters'][0])
        assert yaml.safe_load(lab_file.read_text()) == plan.lab_parameters
        written.append(lab_file)
    entries = launch_entries(plan, layout=layout, params_file=params_file, lab_params_file=lab_file)
    direct = [e for e in entries if not e['start_after']]
    assert [(n.kind, n.kw['name']) for n in nodes] == [(e['action'], e['name']) for e in direct]
    for node, entry in zip(nodes, direct):
        for key in ('package', 'executable', 'namespace', 'parameters', 'remappings', 'arguments',
                    'ros_arguments', 'additional_env', 'output'):
            assert node.kw[key] == entry[key], (entry['name'], key)
    if mode == 'hardware':   # spawners start on ros2_control_node's OnProcessStart
        [handler] = handlers
        on_start = handler.kw['handler']
        assert on_start.kind == 'OnProcessStart' and on_start.kw['target_action'].kw['name'] == 'controller_manager'
        assert [s.kw['arguments'][0] for s in on_start.kw['on_start']] == ['joint_state_broadcaster',
                                                                            'hexapod_controller']
        assert actions.index(handler) < actions.index(on_start.kw['target_action'])
    else:
        assert handlers == []
    # the temporary files live until the launch shuts down, then their directory is removed
    [handler] = shutdown
    [cleanup] = handler.kw['handler'].kw['on_shutdown']
    assert all(f.is_file() for f in written)
    cleanup.kw['function'](None)
    assert not any(f.exists() for f in written) and not any(f.parent.exists() for f in written)


def test_rviz_is_optional_and_its_absence_is_said(monkeypatch):
    """package.xml: rviz2 is a conditional dependency (REP 149) a headless PC leaves out; rviz:=true
    there is refused with the reason, rviz:=false needs no rviz2."""
    from hil_nodes.bringup.system import BringupError
    monkeypatch.setattr(sys.modules[__name__], 'INSTALLED', set())
    actions, _ = _run(monkeypatch, system='space_iiwa', rviz='false')
    assert not [a for a in actions if a.kind == 'IncludeLaunchDescription']
    with pytest.raises(BringupError, match='rviz2 is not installed'):
        _run(monkeypatch, system='space_iiwa', rviz='true')
    import xml.etree.ElementTree as ET
    deps = ET.parse(ROOT / 'src' / 'hil_nodes' / 'package.xml').getroot().findall('exec_depend')
    [rviz] = [d for d in deps if d.text == 'rviz2']
    assert rviz.get('condition') == '$HIL_SUITE_HEADLESS != 1'


def test_rviz_is_included_from_the_installed_share(monkeypatch):
    actions, _ = _run(monkeypatch, system='space_iiwa', rviz='true')
    [include] = [a for a in actions if a.kind == 'IncludeLaunchDescription']
    parts = include.kw['source'].kw['path'].kw['parts']
    assert parts[0].kind == 'FindPackageShare' and parts[0].kw['package'] == 'hil_nodes'
    assert parts[1:] == ['launch', 'rviz.launch.py']
    assert include.kw['launch_arguments'] == [('rviz_config', str(data_root() / 'config' / 'rviz' / 'space_iiwa.rviz'))]
    ld = _load(monkeypatch, 'rviz.launch.py')
    [rviz] = [e for e in ld.kw['entities'] if e.kind == 'Node']
    assert rviz.kw['package'] == 'rviz2' and rviz.kw['arguments'][0] == '-d'


@pytest.mark.parametrize('layout', ['one_process', 'isolated'])
def test_hmi_true_adds_the_hmi_as_a_node_of_its_own(monkeypatch, layout):
    """hmi:=true hmi_port:=... hmi_host:=... hmi_token:=...: one plain Node running hil_nodes' hmi
    console script with the plan's values, in both layouts (never inside the container), before
    the graph; the container hosts exactly the nodes it hosts without the HMI plus the view
    throttle (hil_nodes.view_throttle), its own process in the isolated layout."""
    actions, _ = _run(monkeypatch, system='hexafloat', duration='5', layout=layout, hmi='true', hmi_port='8777',
                      hmi_host='0.0.0.0', hmi_token='tok')
    nodes = [a for a in actions if a.kind in ('Node', 'LifecycleNode')]
    [hmi] = [n for n in nodes if n.kw['executable'] == 'hmi']
    assert nodes[0] is hmi and hmi.kind == 'Node'
    assert (hmi.kw['package'], hmi.kw['name'], hmi.kw['namespace'], hmi.kw['output']) == ('hil_nodes', 'hmi', '', 'screen')
    assert hmi.kw['parameters'] == [{'host': '0.0.0.0', 'port': 8777, 'control_token': 'tok',
                                     'urdf': str(data_root() / 'urdf' / 'hexafloat_scaled.urdf')}]
    assert hmi.kw['additional_env'] == {} and hmi.kw['ros_arguments'] is None
    without, _ = _run(monkeypatch, system='hexafloat', duration='5', layout=layout)
    others = [(a.kind, a.kw['executable'], a.kw['arguments'], a.kw['name']) for a in without if a.kind in ('Node', 'LifecycleNode')]
    expected = [(k, e, a + ['--node', 'hil_nodes.view_throttle.node:view_throttle'] if e == 'container' else a, n)
                for k, e, a, n in others]
    if layout == 'isolated':
        expected.append(('Node', 'view_throttle', [], 'view_throttle'))
    assert [(a.kind, a.kw['executable'], a.kw['arguments'], a.kw['name']) for a in nodes[1:]] == expected
    with pytest.raises(Exception, match='true/false'):
        _run(monkeypatch, system='hexafloat', hmi='maybe')


@pytest.mark.parametrize('layout', ['one_process', 'isolated'])
def test_namespace_puts_every_node_and_its_clock_under_it(monkeypatch, layout):
    """namespace:=/rig_a: every node action is in it (launch_ros passes `-r __ns:=/rig_a`), the
    clock is remapped under it, and the nodes' own params files are the copies the launch file
    wrote with their keys under the namespace (rcl matches keys against the full name), removed
    at shutdown with the rest."""
    actions, _ = _run(monkeypatch, system='hexafloat', mode='mock', layout=layout, namespace='/rig_a')
    nodes = [a for a in actions if a.kind in ('Node', 'LifecycleNode')]
    assert nodes and all(n.kw['namespace'] == '/rig_a' for n in nodes)
    files = []
    for n in nodes:
        if n.kw['executable'] == 'container':
            args = n.kw['ros_arguments']
            assert args[:2] == ['-r', '__ns:=/rig_a'] and 'mock_hexapod:/clock:=/rig_a/clock' in args
            files += [args[i + 1] for i, a in enumerate(args) if a == '--params-file'][:-1]   # (last: the plan's)
        else:
            assert ('/clock', '/rig_a/clock') in n.kw['remappings']
            files += [p for p in n.kw['parameters'] if isinstance(p, str)]
    assert files
    for f in map(pathlib.Path, files):
        assert f.parent.parent.name.startswith('hil_launch_')
        keys = set(yaml.safe_load(f.read_text()))
        assert keys and all(k.startswith('/rig_a/') or '*' in k for k in keys), (f, keys)
    [handler] = [a for a in actions if a.kind == 'RegisterEventHandler' and a.kw['handler'].kind == 'OnShutdown']
    handler.kw['handler'].kw['on_shutdown'][0].kw['function'](None)
    assert not any(pathlib.Path(f).exists() for f in files)
