"""Lab launch file: `ros2 launch hil_nodes hil.launch.py system:=hexafloat mode:=mock|hardware`.

A thin translation. hil_nodes.bringup.plan.bringup_plan decides every process, its parameters,
remappings and the start order -- the same function `hil run` uses, and
test/nodes/test_bringup_equivalence.py checks that both give the same nodes, parameters,
remappings and order. hil_nodes.bringup.launch_plan.launch_entries turns the plan into plain dicts; this
file maps each dict onto one launch_ros action and nothing else (docs/lab.md lists the arguments
and what was checked against launch_ros's source). With layout:=one_process (the default) it
also writes the plan's parameter values to a params file for the one container process, as
launch_ros writes a dict of parameters to a temporary file.
"""
import os
import pathlib
import tempfile

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, IncludeLaunchDescription, OpaqueFunction, RegisterEventHandler
from launch.event_handlers import OnProcessStart
from launch.launch_description_sources import PythonLaunchDescriptionSource
from launch.substitutions import LaunchConfiguration, PathJoinSubstitution
from launch_ros.actions import LifecycleNode, Node
from launch_ros.substitutions import FindPackageShare

from hil_nodes.bringup.plan import bringup_plan, write_overrides
from hil_nodes.bringup.launch_plan import LAUNCH_ARGUMENTS, launch_entries, plan_kwargs, wants_layout, wants_rviz

NODE_ACTIONS = {'Node': Node, 'LifecycleNode': LifecycleNode}
NODE_KEYS = ('package', 'executable', 'name', 'namespace', 'parameters', 'remappings', 'arguments',
             'ros_arguments', 'additional_env', 'output')


def _actions(context):
    values = {name: LaunchConfiguration(name).perform(context) for name, _, _, _ in LAUNCH_ARGUMENTS}
    plan = bringup_plan(**plan_kwargs(values))
    layout, params_file = wants_layout(values), None
    if layout == 'one_process':
        fd, path = tempfile.mkstemp(prefix='hil_launch_params_', suffix='.yaml')
        os.close(fd)
        params_file = write_overrides(plan, pathlib.Path(path))
    started, after, actions = {}, {}, []
    for entry in launch_entries(plan, rviz=wants_rviz(values), layout=layout, params_file=params_file):
        if entry['action'] == 'IncludeLaunchDescription':
            source = PathJoinSubstitution([FindPackageShare(entry['package']), 'launch', entry['file']])
            actions.append(IncludeLaunchDescription(PythonLaunchDescriptionSource(source),
                                                    launch_arguments=entry['launch_arguments']))
            continue
        action = NODE_ACTIONS[entry['action']](**{k: entry[k] for k in NODE_KEYS})
        if entry['start_after']:
            after.setdefault(entry['start_after'], []).append(action)
        else:
            if entry['name']:         # the container has none: it hosts many nodes
                started[entry['name']] = action
            actions.append(action)
    # handlers first: registered before any process can report its start
    handlers = [RegisterEventHandler(OnProcessStart(target_action=started[name], on_start=waiting))
                for name, waiting in after.items()]
    return handlers + actions


def generate_launch_description():
    return LaunchDescription(
        [DeclareLaunchArgument(name, default_value=default, description=description, choices=choices)
         for name, default, description, choices in LAUNCH_ARGUMENTS]
        + [OpaqueFunction(function=_actions)])
