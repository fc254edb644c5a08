"""Lab launch file: `ros2 launch launch/hil.launch.py system:=hexafloat use_mock:=true`.

Builds the same node graph as `hil run` from config/systems/<system>.yaml through
hil_nodes.system.launch_entries (tested without launch_ros); this file only turns those entries
into launch_ros actions. On real hardware (use_mock:=false) the sim_only nodes are left out and
ros2_control's controllers take their topics; use_sim_time follows use_mock.
"""
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import LifecycleNode, Node

from hil_nodes.system import load_system, launch_entries


def _nodes(context):
    system = load_system(LaunchConfiguration('system').perform(context))
    use_mock = LaunchConfiguration('use_mock').perform(context).lower() in ('1', 'true', 'yes')
    entries = launch_entries(system, use_mock=use_mock,
                             extra_parameters={'*': {'use_sim_time': use_mock}})
    actions = []
    for e in entries:
        cls = LifecycleNode if e['managed'] else Node
        kwargs = dict(package=e['package'], executable=e['executable'], name=e['name'],
                      parameters=e['parameters'], remappings=e['remappings'], output='screen')
        if cls is LifecycleNode:
            kwargs['namespace'] = ''
        actions.append(cls(**kwargs))
    return actions


def generate_launch_description():
    return LaunchDescription([
        DeclareLaunchArgument('system', default_value='hexafloat', description='config/systems/<system>.yaml'),
        DeclareLaunchArgument('use_mock', default_value='true', description='hil_sim mock hardware instead of real drives'),
        OpaqueFunction(function=_nodes),
    ])
