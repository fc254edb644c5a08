"""The bring-up plan with the HMI: the view throttle in the container (the one-process layout, `hil
run` and the launch file's), a process of its own with --isolated, neither managed nor watched by
the supervisor; the HMI's reading of every stream it draws remapped to the throttled copy, which
rcl resolves to the copy's name (in the graph's namespace too), for the HMI's node and its
polled readers' alike, while its own EE target still goes to space_plant's topic; without the
HMI nothing of it."""
from __future__ import annotations

import pathlib

import pytest
import rclpy
from rclpy.context import Context

from hil_nodes import topics
from hil_nodes.bringup.launch_plan import launch_entries
from hil_nodes.bringup.plan import bringup_plan, container_parts, process_commands
from hil_nodes.bringup.system import node_ros_args

THROTTLE = 'hil_nodes.view_throttle.node:view_throttle'
OVERRIDES = pathlib.Path('/tmp/hil_view_throttle_plan.yaml')


@pytest.mark.parametrize('system', ['hexafloat', 'space_iiwa', 'hybrid5'])
def test_hmi_puts_the_throttle_in_the_container_and_remaps_the_hmi(system):
    plan = bringup_plan(system, hmi=True, duration=1.0)
    names = [s.name for s in plan.hil_nodes]
    assert names[-1] == 'view_throttle' and names.count('view_throttle') == 1
    throttle = plan.hil_nodes[-1]
    assert (throttle.managed, throttle.rt_rank, throttle.executable) == (False, None, 'view_throttle')
    sup = next(s for s in plan.processes if s.name == 'supervisor').parameters
    assert 'view_throttle' not in sup['managed_nodes'] + sup.get('monitored_nodes', [])

    args, _, _ = container_parts(plan, OVERRIDES)                  # `hil run`: one container
    assert args[-2:] == ['--node', THROTTLE]
    [(name, cmd, _)] = process_commands(plan, OVERRIDES, isolated=False)
    assert name == 'container' and THROTTLE in cmd
    isolated = process_commands(plan, OVERRIDES, isolated=True)    # --isolated: a process of its own
    assert [n for n, _, _ in isolated][-1] == 'view_throttle'
    [container] = [e for e in launch_entries(plan, layout='one_process', params_file=OVERRIDES)
                   if e['executable'] == 'container']                # ros2 launch ... layout:=one_process
    assert container['arguments'][-2:] == ['--node', THROTTLE]

    assert plan.hmi.remappings == {**topics.VIEW_STREAMS}
    without = bringup_plan(system, duration=1.0)
    assert 'view_throttle' not in [s.name for s in without.processes]
    assert THROTTLE not in container_parts(without, OVERRIDES)[0]


@pytest.mark.parametrize('namespace', ['', '/rig_a'])
def test_rcl_resolves_the_hmi_streams_to_the_throttled_copies(namespace, domain_id):
    plan = bringup_plan('hexafloat', hmi=True, duration=1.0, namespace=namespace)
    ros_args = node_ros_args(plan.hmi)                              # the HMI's command line, as `hil run` starts it
    context = Context()
    rclpy.init(args=['hmi', *ros_args], context=context, domain_id=domain_id)
    try:
        hmi = rclpy.create_node('hmi', context=context)
        readers = rclpy.create_node('_hmi_view_readers', context=context)   # hmi.node's PolledReaders
        for node in (hmi, readers):
            for stream, copy in topics.VIEW_STREAMS.items():
                assert node.resolve_topic_name(stream) == topics.resolve(copy, namespace), stream
            # what it reads as it is and what it sends are not remapped
            for name in (topics.TF_STATIC, topics.ROBOT_DESCRIPTION, topics.SPACE_EE_SETPOINT, topics.JOYSTICK_WRENCH):
                assert node.resolve_topic_name(name) == topics.resolve(name, namespace)
        hmi.destroy_node()
        readers.destroy_node()
    finally:
        rclpy.shutdown(context=context)
