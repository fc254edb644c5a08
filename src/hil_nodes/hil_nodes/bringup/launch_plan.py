"""The launch side of the bring-up plan, as plain data (no launch_ros import: tested here).

launch/hil.launch.py declares ``LAUNCH_ARGUMENTS``, turns their string values into
``bringup_plan`` keywords with ``plan_kwargs``, and maps each dict of ``launch_entries(plan)``
one to one onto a launch action:

- ``Node`` / ``LifecycleNode``: the keys are launch_ros's keyword arguments (package,
  executable, name, namespace, parameters, remappings, arguments, ros_arguments, additional_env,
  output). namespace is the graph's for every hil node ('' = the root; ``namespace:=/rig_a``: an
  absolute one, so an enclosing PushRosNamespace does not add to it), so launch_ros writes the
  parameter mapping under the node's full name and it wins over the node's own files (a '/**'
  mapping would not: config/supervisor.yaml's `lockstep: false` used to win that way); under a
  namespace the node's own files are the plan's rewritten copies (``bringup.namespaced_files``,
  which the launch file writes: their keys get the namespace) and '/clock' is remapped under it;
  the lab processes take the hardware's namespace below the graph's (lbr_fri_ros2_stack's
  ``lbr`` for the iiwa) and ros2_control_node the params file of ``plan.lab_parameters`` that
  the launch file writes (``lab_params_file``);
- ``layout:=one_process`` (the default, as `hil run`): the hil nodes become one ``Node`` running
  hil_nodes' ``container`` with no name (a name would rename every node in the process), their
  files and the plan's values (a params file the launch file writes with
  ``bringup.write_overrides``, keyed by node name) in ``ros_arguments`` and remappings scoped to
  their node, the namespace a global ``__ns`` rule -- ``bringup.container_parts``, the command
  line of `hil run`. ``layout:=isolated``:
  one action per node, as `hil run --isolated`. The lab side (ros2_control_node,
  robot_state_publisher, spawners) is one process each in both, and so is the HMI (hmi:=true:
  a plain ``Node``, never in the container);
- ``start_after``: a non-empty name puts the action in ``OnProcessStart(target_action=<that
  process>)`` (the controller spawners after ros2_control_node, as lbr_fri_ros2_stack does);
- ``IncludeLaunchDescription``: ``launch/<file>`` of ``package`` found with FindPackageShare,
  with ``launch_arguments``.
"""
from __future__ import annotations

import pathlib
from typing import Any

from hil_nodes.bringup.plan import MODES, BringupPlan, container_parts
from hil_nodes.bringup.system import BringupError

# (name, default, description, choices or None), in the style of lbr_fri_ros2_stack's mixins
LAUNCH_ARGUMENTS: tuple[tuple[str, str, str, list[str] | None], ...] = (
    ('system', 'hexafloat', 'config/systems/<system>.yaml of the data tree (share/hil_core)', None),
    ('mode', 'mock', 'mock: hil_sim mock hardware; hardware: robot_state_publisher, ros2_control_node '
     'and the controller spawners of the system\'s hardware: block', list(MODES)),
    ('lockstep', 'auto', 'auto: true with mode:=mock, false with mode:=hardware (which refuses true)',
     ['auto', 'true', 'false']),
    ('record', '', 'directory for a rosbag2 (mcap) of the run; empty: no recorder', None),
    ('rt', 'false', 'SCHED_FIFO, CPU affinity and mlockall for the hil processes where permitted '
     '(hil_nodes.runtime.rt_setup; each process logs what it got)', ['true', 'false']),
    ('rt_priority', '80', 'SCHED_FIFO priority with rt:=true (1-99)', None),
    ('rt_cpus', '', "CPU list for the hil processes with rt:=true, e.g. '1'; empty: all", None),
    ('scenario', '', 'config/scenarios/<system>/<scenario>.yaml; empty: none', None),
    ('duration', '', 'sim seconds of an automatic run (START after bring-up, STOP then); empty: '
     'the operator calls /hil/start and /hil/stop', None),
    ('time_scale', '', 'mock pace in sim s per wall s; empty: lockstep 0 (as fast as possible), real time 1', None),
    ('seed', '0', 'seed of every random source', None),
    ('namespace', '', "push the whole graph under this namespace, e.g. /rig_a (every topic, service and the clock "
     "move with it: two rigs in one DDS domain); empty: the root", None),
    ('netft_address', '', 'IP of the ATI Net F/T box (ft_sensor sensor_ip); empty: config/ft_sensor.yaml', None),
    ('robot_address', '', "IP of the robot controller: the iiwa's remote_host (lbr_fri_ros2_stack; empty: "
     "INADDR_ANY, any robot), else the URDF <ros2_control> <param name=\"robot_address\">; empty: as in the URDF",
     None),
    ('robot_port', '', "the iiwa's FRI port_id (30200-30209, lbr_fri_ros2_stack); empty: 30200", None),
    ('rviz', 'false', 'also start rviz2 with config/rviz/<system>.rviz', ['true', 'false']),
    ('layout', 'one_process', 'one_process: every hil node in one process (hil_nodes container, as `hil run`: '
     'the layout that holds real time on a small PC, README "Real time"); isolated: one process per node '
     '(as `hil run --isolated`)', ['one_process', 'isolated']),
    # hosts (docs/lab.md "Two or three hosts"): one part per host, the same domain id on each
    ('part', '', "only this part of the system's split (bringup/parts.py; `hil plan` lists them); empty: every "
     'part. The part holding the supervisor takes scenario, duration and record', None),
    ('split', '', "which split of the system file's parts; empty: its first", None),
    ('peers', '', 'comma-separated addresses of the other hosts: ROS_STATIC_PEERS of every process (discovery '
     'by unicast, for networks without multicast); empty: as the environment says', None),
    ('hmi', 'false', "also start the operator's web HMI (docs/hmi.md), a process of its own in every layout "
     'that prints its address (hmi: http://HOST:PORT) first', ['true', 'false']),
    ('hmi_port', '8080', 'TCP port of the HMI page with hmi:=true (0: any free port, printed)', None),
    ('hmi_host', '127.0.0.1', 'address the HMI page is served on (any other than localhost needs hmi_token)', None),
    ('hmi_token', '', "control token the HMI page asks for before a control is sent", None),
)
LAYOUTS = ('one_process', 'isolated')


def _bool(name: str, text: str) -> bool:
    if text.lower() in ('true', '1', 'yes'):
        return True
    if text.lower() in ('false', '0', 'no'):
        return False
    raise BringupError(f'launch argument {name}:={text} is not true/false')


def plan_kwargs(values: dict[str, str]) -> dict[str, Any]:
    """Launch argument strings (defaults filled in) -> bringup_plan keywords."""
    v = {name: default for name, default, _, _ in LAUNCH_ARGUMENTS}
    unknown = set(values) - set(v)
    if unknown:
        raise BringupError(f'unknown launch arguments {sorted(unknown)}')
    v.update(values)
    try:
        return dict(system=v['system'], scenario=v['scenario'] or None, mode=v['mode'],
                    lockstep=None if v['lockstep'] == 'auto' else _bool('lockstep', v['lockstep']),
                    record=v['record'] or None, rt=_bool('rt', v['rt']), rt_priority=int(v['rt_priority']),
                    rt_cpus=v['rt_cpus'],
                    time_scale=float(v['time_scale']) if v['time_scale'] else None,
                    duration=float(v['duration']) if v['duration'] else None, seed=int(v['seed']),
                    netft_address=v['netft_address'], robot_address=v['robot_address'],
                    robot_port=v['robot_port'], hmi=_bool('hmi', v['hmi']), hmi_port=int(v['hmi_port']),
                    hmi_host=v['hmi_host'], hmi_token=v['hmi_token'], namespace=v['namespace'],
                    part=v['part'], split=v['split'], peers=v['peers'],
                    # as `hil run`: equal-priority FIFO processes never preempt each other
                    rt_policy='fifo' if wants_layout(v) == 'one_process' else 'rr')
    except ValueError as exc:
        if isinstance(exc, BringupError):
            raise
        raise BringupError(f'bad launch argument: {exc}') from None


def wants_rviz(values: dict[str, str]) -> bool:
    return _bool('rviz', values.get('rviz', 'false'))


def wants_layout(values: dict[str, str]) -> str:
    layout = values.get('layout', 'one_process')
    if layout not in LAYOUTS:
        raise BringupError(f'launch argument layout:={layout} is not one of {list(LAYOUTS)}')
    return layout


def launch_entries(plan: BringupPlan, rviz: bool = False, layout: str = 'isolated',
                   params_file: pathlib.Path | None = None,
                   lab_params_file: pathlib.Path | None = None) -> list[dict[str, Any]]:
    """One dict per launch action, in start order (see the module docstring). ``layout``
    'one_process' needs ``params_file``: the plan's values written by ``bringup.write_overrides``;
    a hardware plan ``lab_params_file``: its lab parameters (``bringup.write_lab_parameters``)."""
    if layout not in LAYOUTS:
        raise BringupError(f'layout must be one of {list(LAYOUTS)}, not {layout!r}')
    if layout == 'one_process' and params_file is None:
        raise ValueError("layout 'one_process' needs params_file (bringup.write_overrides of the plan)")
    out = []
    for spec in plan.processes:
        if layout == 'one_process' and spec.kind == 'hil':
            if spec is plan.hil_nodes[0]:
                out.append(_container_entry(plan, params_file))
            continue
        parameters: list[Any] = [str(p) for p in spec.params]
        if spec.kind == 'lab' and spec.executable == 'ros2_control_node' and lab_params_file is not None:
            parameters.append(str(lab_params_file))     # (hil.launch.py always writes it)
        if spec.parameters:
            parameters.append(dict(spec.parameters))
        out.append({'action': 'LifecycleNode' if spec.managed else 'Node', 'package': spec.package,
                    'executable': spec.executable, 'name': spec.name, 'namespace': spec.namespace,
                    'parameters': parameters, 'remappings': list(spec.remappings.items()),
                    'arguments': list(spec.arguments), 'ros_arguments': None, 'additional_env': dict(spec.env),
                    'output': 'screen', 'start_after': spec.start_after})
    if rviz:
        if not plan.rviz_config:
            raise BringupError(f'rviz:=true but there is no config/rviz/{plan.system}.rviz')
        out.append({'action': 'IncludeLaunchDescription', 'package': 'hil_nodes', 'file': 'rviz.launch.py',
                    'launch_arguments': [('rviz_config', plan.rviz_config)]})
    return out


def _container_entry(plan: BringupPlan, params_file: pathlib.Path) -> dict[str, Any]:
    args, ros_args, env = container_parts(plan, params_file)
    return {'action': 'Node', 'package': 'hil_nodes', 'executable': 'container', 'name': None,
            'namespace': plan.namespace, 'parameters': [], 'remappings': [], 'arguments': args, 'ros_arguments': ros_args,
            'additional_env': env, 'output': 'screen', 'start_after': ''}
