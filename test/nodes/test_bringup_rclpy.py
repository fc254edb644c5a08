"""rclpy resolves the bring-up plan's parameter sources as hil_nodes.bringup.plan.effective_parameters
says: each hil node of a system, built by real rclpy from the `--ros-args` that `hil run` passes
and from those launch_ros would pass (the node's files, then the plan's values in a file keyed by
the node's full name), ends up with the same values -- including lockstep over
config/supervisor.yaml's `lockstep: false`."""
import array

import pytest
import rclpy
import yaml
from rclpy.context import Context
from rclpy.node import Node

from conftest import next_domain_id
from hil_nodes.bringup.plan import bringup_plan, effective_parameters, process_commands, write_overrides
from hil_nodes.bringup.launch_plan import launch_entries

BUILTIN = {'use_sim_time', 'start_type_description_service'}


def rclpy_values(name: str, ros_args: list[str]) -> dict:
    ctx = Context()
    rclpy.init(args=['node', *ros_args], context=ctx, domain_id=next_domain_id())
    try:
        node = Node(name, context=ctx, automatically_declare_parameters_from_overrides=True)
        values = {k: (list(p.value) if isinstance(p.value, (array.array, tuple)) else p.value)
                  for k, p in node._parameters.items()}   # every override was declared from the files
        node.destroy_node()
        return values
    finally:
        rclpy.shutdown(context=ctx)


@pytest.mark.parametrize('mode', ['mock', 'hardware'])
def test_rclpy_gives_each_node_the_planned_values(tmp_path, mode):
    plan = bringup_plan('hexafloat', mode=mode, record=tmp_path / 'bags', duration=3.0)
    overrides = write_overrides(plan, tmp_path / 'run_params.yaml')
    entries = {e['name']: e for e in launch_entries(plan)}
    for name, cmd, _ in process_commands(plan, overrides, isolated=True):
        expected = effective_parameters(list(next(p for p in plan.hil_nodes if p.name == name).params)
                                        + [overrides], name)
        run_values = rclpy_values(name, cmd[cmd.index('--ros-args'):])
        launch_args = ['--ros-args']
        for i, p in enumerate(entries[name]['parameters']):
            if isinstance(p, dict):   # launch_ros writes a dict to a file under the node's full name
                path = tmp_path / f'{name}_{i}.yaml'
                path.write_text(yaml.safe_dump({'/' + name: {'ros__parameters': p}}))
                p = str(path)
            launch_args += ['--params-file', p]
        launch_values = rclpy_values(name, launch_args)
        for values in (run_values, launch_values):
            for builtin in BUILTIN - set(expected):   # declared by every rclpy node
                values.pop(builtin, None)
            assert values == expected, name
        assert run_values['lockstep'] is (mode == 'mock')
