"""A bring-up plan under a namespace, read back by real rclpy: every node of the graph, built from
the `--ros-args` that `hil run` passes (one process per node and the one-process container) and
from those launch_ros would pass, is in the namespace, gets the same parameter values as without
one (its files are keyed by node name: the plan's rewritten copies carry the namespace), and
resolves the suite's names and the clock under it (docs/CONTRACTS.md, "Namespaces")."""
import array
import datetime

import pytest
import rclpy
import yaml
from rclpy.context import Context
from rclpy.node import Node

from conftest import next_domain_id
from hil_nodes import topics
from hil_nodes.bringup.launch_plan import launch_entries
from hil_nodes.bringup.names import graph_namespace
from hil_nodes.bringup.plan import bringup_plan, effective_parameters, namespaced_files, process_commands, write_overrides
from hil_nodes.bringup.system import BringupError, container_ros_args

NS = '/rig_a'
BUILTIN = {'use_sim_time', 'start_type_description_service'}


def _built(names: list[str], ros_args: list[str]) -> dict[str, dict]:
    """{node: (fully qualified name, parameter values, resolved names)} of nodes rclpy builds in one
    context from ``ros_args`` (as a process of the plan does)."""
    ctx = Context()
    rclpy.init(args=['node', *ros_args], context=ctx, domain_id=next_domain_id())
    out = {}
    try:
        for name in names:
            node = Node(name, context=ctx, automatically_declare_parameters_from_overrides=True)
            values = {k: (list(p.value) if isinstance(p.value, (array.array, tuple)) else p.value)
                      for k, p in node._parameters.items() if k not in BUILTIN}
            resolved = {t: node.resolve_topic_name(t) for t in (topics.CLOCK, topics.FT_WRENCH, topics.DIAGNOSTICS,
                                                                 topics.TF, topics.HIL_START)}
            out[name] = (node.get_fully_qualified_name(), values, resolved)
            node.destroy_node()
        return out
    finally:
        rclpy.shutdown(context=ctx)


def _expected(plan, overrides, name):
    spec = next(p for p in plan.hil_nodes if p.name == name)
    values = effective_parameters(list(spec.params) + [overrides], name)
    return {k: v for k, v in values.items() if k not in BUILTIN}


def _check(node, name, expected):
    fqn, values, resolved = node
    assert fqn == f'{NS}/{name}'
    assert values == expected, name
    assert resolved == {topics.CLOCK: f'{NS}/clock', topics.FT_WRENCH: f'{NS}/ft_sensor/wrench',
                        topics.DIAGNOSTICS: f'{NS}/diagnostics', topics.TF: f'{NS}/tf',
                        topics.HIL_START: f'{NS}/hil/start'}


@pytest.fixture
def plans(tmp_path):
    """(plan at the root, its params file; the same plan under NS, its files rewritten, its params file)."""
    kwargs = dict(record=tmp_path / 'bags', duration=3.0, stamp=datetime.datetime(2026, 1, 2, 3, 4, 5))
    root = bringup_plan('hexafloat', **kwargs)
    plan = namespaced_files(bringup_plan('hexafloat', namespace=NS, **kwargs), tmp_path / 'params')
    return (root, write_overrides(root, tmp_path / 'root.yaml'), plan,
            write_overrides(plan, tmp_path / 'run_params.yaml'))


def test_each_process_of_hil_run_is_in_the_namespace_with_the_values_it_has_at_the_root(plans):
    root, root_overrides, plan, overrides = plans
    assert plan.namespace == NS and {p.namespace for p in plan.processes} == {NS}
    for name, cmd, _ in process_commands(plan, overrides, isolated=True):
        [node] = _built([name], cmd[cmd.index('--ros-args'):]).values()
        _check(node, name, _expected(root, root_overrides, name))
    [(_, cmd, _)] = process_commands(plan, overrides, isolated=False)
    names = [s.name for s in plan.hil_nodes]
    for name, node in _built(names, cmd[cmd.index('--ros-args'):]).items():
        _check(node, name, _expected(root, root_overrides, name))


def test_launch_gives_the_same_namespace_values_and_clock(plans, tmp_path):
    root, root_overrides, plan, _ = plans
    for entry in launch_entries(plan, layout='isolated'):
        if entry['action'] not in ('Node', 'LifecycleNode'):
            continue
        assert entry['namespace'] == NS and ('/clock', f'{NS}/clock') in entry['remappings']
        # as launch_ros passes them: -r __node, -r __ns, the files (a dict under the node's full
        # name), the remappings
        args = ['--ros-args', '-r', f'__node:={entry["name"]}', '-r', f'__ns:={entry["namespace"]}']
        for i, p in enumerate(entry['parameters']):
            if isinstance(p, dict):
                path = tmp_path / f'{entry["name"]}_{i}.yaml'
                path.write_text(yaml.safe_dump({f'{NS}/{entry["name"]}': {'ros__parameters': p}}))
                p = str(path)
            args += ['--params-file', p]
        for src, dst in entry['remappings']:
            args += ['-r', f'{src}:={dst}']
        [node] = _built([entry['name']], args).values()
        _check(node, entry['name'], _expected(root, root_overrides, entry['name']))


def test_without_a_namespace_nothing_changes(plans):
    root, root_overrides, _, _ = plans
    assert root.namespace == '' and namespaced_files(root, root_overrides.parent / 'unused') is root
    for _, cmd, _ in process_commands(root, root_overrides, isolated=True):
        assert not any(a.startswith(('__ns:=', '/clock:=')) for a in cmd)
    assert set(yaml.safe_load(root_overrides.read_text())) == {p.name for p in root.hil_nodes if p.parameters}


def test_names_under_a_namespace():
    assert topics.resolve(topics.FT_WRENCH, '') == '/ft_sensor/wrench' == topics.ROOT.FT_WRENCH
    assert topics.resolve(topics.FT_WRENCH, '/a/b/') == '/a/b/ft_sensor/wrench'
    assert topics.resolve(topics.CLOCK, '/a') == '/clock'                 # absolute: stays (remapped instead)
    assert topics.strip_namespace('/a/b/ft_sensor/wrench', 'a/b') == '/ft_sensor/wrench'
    assert topics.strip_namespace('/a/clock', '/a') == '/clock'
    assert topics.strip_namespace('/ab/clock', '/a') == '/ab/clock'       # another namespace is not stripped
    assert topics.strip_namespace('/ft_sensor/wrench', '') == '/ft_sensor/wrench'
    assert graph_namespace('rig_a/') == '/rig_a' and graph_namespace('/') == ''
    for bad in ('/1rig', '/rig-a', '/rig a', '~/x'):
        with pytest.raises(BringupError):
            graph_namespace(bad)


def test_one_process_hosts_one_namespace(plans):
    _, _, plan, _ = plans
    a, b = plan.hil_nodes[:2]
    from dataclasses import replace
    with pytest.raises(BringupError):
        container_ros_args([a, replace(b, namespace='/rig_b')])
