"""Lab launch file: `ros2 launch hil_nodes hil.launch.py system:=hexafloat mode:=mock|hardware`.

A thin translation. hil_nodes.bringup.plan.bringup_plan decides every process, its parameters,
remappings and the start order -- the same function `hil run` uses, and
test/nodes/test_bringup_equivalence.py checks that both give the same nodes, parameters,
remappings and order. hil_nodes.bringup.launch_plan.launch_entries turns the plan into plain dicts; this
file maps each dict onto one launch_ros action and nothing else (docs/lab.md lists the arguments
and what was checked against launch_ros's source). With layout:=one_process (the default) it
also writes the plan's parameter values to a params file for the one container process, as
launch_ros writes a dict of parameters to a temporary file, and in mode:=hardware
ros2_control_node's params file (the plan's lab_parameters), and with namespace:=NS the nodes'
params files rewritten with their keys under it. They live in one temporary
directory, removed when the launch shuts down (OnShutdown; atexit if it ends otherwise).
hmi:=true adds the operator's web HMI as one more plain Node (hil_nodes' hmi console script,
its own process in both layouts; docs/hmi.md, "Start"). rviz:=true needs the rviz2 package, an optional dependency (package.xml): a headless lab PC
installs without it and is told so here.
"""
import atexit
import pathlib
import tempfile

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, IncludeLaunchDescription, OpaqueFunction, RegisterEventHandler
from launch.event_handlers import OnProcessStart, OnShutdown
from launch.launch_description_sources import PythonLaunchDescriptionSource
from launch.substitutions import LaunchConfiguration, PathJoinSubstitution
from launch_ros.actions import LifecycleNode, Node
from launch_ros.substitutions import FindPackageShare

from hil_nodes.bringup.plan import bringup_plan, namespaced_files, write_lab_parameters, write_overrides
from hil_nodes.bringup.system import BringupError
from hil_nodes.bringup.launch_plan import LAUNCH_ARGUMENTS, launch_entries, plan_kwargs, wants_layout, wants_rviz

NODE_ACTIONS = {'Node': Node, 'LifecycleNode': LifecycleNode}
NODE_KEYS = ('package', 'executable', 'name', 'namespace', 'parameters', 'remappings', 'arguments',
             'ros_arguments', 'additional_env', 'output')


def _rviz_installed() -> bool:
    from ament_index_python.packages import PackageNotFoundError, get_package_share_directory
    try:
        get_package_share_directory('rviz2')
        return True
    except PackageNotFoundError:
        return False


def _actions(context):
    values = {name: LaunchConfiguration(name).perform(context) for name, _, _, _ in LAUNCH_ARGUMENTS}
    plan = bringup_plan(**plan_kwargs(values))
    if wants_rviz(values) and not _rviz_installed():
        raise BringupError('rviz:=true but rviz2 is not installed (an optional dependency of hil_nodes: '
                           'apt install ros-kilted-rviz2, or leave rviz:=false on a headless PC)')
    layout, params_file, lab_params_file = wants_layout(values), None, None
    tmp = tempfile.TemporaryDirectory(prefix='hil_launch_')
    atexit.register(tmp.cleanup)             # (a second cleanup is a no-op)
    # namespace:=NS: the nodes' params files with their keys under it (as nav2's RewrittenYaml)
    plan = namespaced_files(plan, pathlib.Path(tmp.name) / 'params')
    if layout == 'one_process':
        params_file = write_overrides(plan, pathlib.Path(tmp.name) / 'params.yaml')
    if plan.lab_parameters:
        lab_params_file = write_lab_parameters(plan, pathlib.Path(tmp.name) / 'ros2_control.yaml')
    started, after, actions = {}, {}, []
    for entry in launch_entries(plan, rviz=wants_rviz(values), layout=layout, params_file=params_file,
                                lab_params_file=lab_params_file):
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
    handlers.append(RegisterEventHandler(OnShutdown(on_shutdown=[OpaqueFunction(function=lambda _: tmp.cleanup())])))
    return handlers + actions


def generate_launch_description():
    return LaunchDescription(
        [DeclareLaunchArgument(name, default_value=default, description=description, choices=choices)
         for name, default, description, choices in LAUNCH_ARGUMENTS]
        + [OpaqueFunction(function=_actions)])
