"""One bring-up plan for `hil run` and `ros2 launch hil_nodes hil.launch.py` (one function, so the
two ways of starting a system cannot drift apart).

``bringup_plan(...)`` decides every process to start, in start order, with its final parameters,
remappings and environment; the clock owner; and the supervisor's ``managed_nodes`` (the
bring-up order: configure all in this order, then activate all). The two ways of starting a
system only translate it:

- ``hil run``: ``run_overrides(plan)`` is the params file that follows each node's own files,
  ``process_commands(plan, ...)`` the command lines (one process, or one per node);
- ``launch/hil.launch.py``: ``hil_nodes.bringup.launch_plan.launch_entries(plan)``, plain data mapped
  one to one onto launch_ros actions.

Clocks (agreed with the real-time work; docs/lab.md):
- mock, lockstep: the mock hardware owns /clock; every other node has use_sim_time true;
- mock, real time: no node uses sim time (wall clock everywhere); the mock publishes no /clock
  -- except at a time_scale other than 1, where sim time is not wall time: then as in lockstep;
- hardware: no clock owner, no sim time, no lockstep (a real robot does not wait).
``lockstep`` is set on every node to one value, whatever a node's own file says.

Namespace (``namespace='/rig_a'``; docs/CONTRACTS.md, "Namespaces"): every process of the graph
(hil nodes, the HMI, the lab side below it) runs in it, so every relative name of the suite
moves with it; '/clock' is remapped to '<ns>/clock' in each of them (rclpy's TimeSource and the
process clock subscribe the absolute '/clock'), so two simulated-time rigs keep their own
clocks. Parameter files keyed by node name are rewritten with the namespace at start
(``namespaced_files``: rcl matches keys against the fully qualified name). No namespace: every
name and command line is what it was without the option.

The operator's web HMI (``hmi=True``, docs/hmi.md) is a process of the plan of its own kind
('hmi'): never in the one-process container, not managed, not watched by the supervisor (no
heartbeat; its death is not a node's death), no real-time priority, no sim time; it reads the
graph's drained copies and is in no frame's chain. With it comes the view throttle
(``view_throttle``, kind 'hil', last): the newest message of each stream the HMI draws at its
view rate, on the ``hmi/...`` copies of ``topics.VIEW_STREAMS``; in the one-process container
(the graph's own process, where it takes the streams from the intra-process bus, so no reader
outside the process is left on a 400 Hz stream), a process of its own with ``--isolated``. It is
not managed and not monitored (a viewer's helper, like the HMI); the HMI's reading of each
stream is remapped to its copy (``view_remappings``).
"""
from __future__ import annotations

import datetime
import os
import pathlib
import sys
from dataclasses import dataclass, field, replace
from types import SimpleNamespace
from typing import Any

import yaml

from hil_nodes import topics
from hil_nodes.bringup import parts as hosts
from hil_nodes.bringup.lab_side import CONTROLLER_MANAGER, lab_processes
from hil_nodes.bringup.names import graph_namespace, static_peers
from hil_nodes.runtime import rt_setup
from hil_nodes.bringup.system import (BringupError, NodeSpec, Scenario, SystemDescription, apply_scenario,
                                      container_ros_args, load_scenario, load_system, namespaced_params_file,
                                      node_command, repo_root)

MODES = ('mock', 'hardware')
RECORDER = NodeSpec(name='recorder', package='hil_nodes', executable='recorder', managed=True, rt_rank=None)
HMI = 'hmi'                                 # the HMI's node and process name (kind 'hmi')
# the HMI's view streams at its view rate (docs/hmi.md): a plain node of the graph, no deadline
VIEW_THROTTLE = NodeSpec(name='view_throttle', package='hil_nodes', executable='view_throttle', managed=False,
                         rt_rank=None)


@dataclass(frozen=True)
class BringupPlan:
    system: str
    mode: str
    lockstep: bool
    rt: bool
    processes: tuple[NodeSpec, ...]          # start order (the HMI, the lab side, then the hil nodes)
    clock_owner: str                         # '' when nobody publishes /clock
    managed: tuple[str, ...]                 # supervisor's managed_nodes = lifecycle bring-up order
    bag_path: pathlib.Path | None
    record_topics: tuple[str, ...]
    rviz_config: str = ''                    # config/rviz/<system>.rviz of the data tree, if any
    namespace: str = ''                      # the graph's namespace ('' = the root, else '/rig_a')
    # hardware mode: the params file of ros2_control_node's process (its own values and its
    # controllers', under their full node names), written by the launch file
    lab_parameters: dict[str, Any] = field(default_factory=dict, compare=False)
    description: SystemDescription | None = field(default=None, compare=False, repr=False)
    # hosts (bringup/parts.py): the split used, the part this plan starts ('' = all of them), each
    # part's processes by name (of the whole plan), and the processes of the other parts
    split: str = ''
    part: str = ''
    parts: dict[str, tuple[str, ...]] = field(default_factory=dict, compare=False)
    others: tuple[NodeSpec, ...] = field(default=(), compare=False, repr=False)

    @property
    def hil_nodes(self) -> list[NodeSpec]:
        """The hil_suite nodes (what `hil run` starts)."""
        return [p for p in self.processes if p.kind == 'hil']

    @property
    def hmi(self) -> NodeSpec | None:
        """The operator's web HMI (``hmi=True``): a process of its own in every layout."""
        return next((p for p in self.processes if p.kind == 'hmi'), None)

    @property
    def lab_processes(self) -> list[NodeSpec]:
        """robot_state_publisher, ros2_control_node and spawners (hardware mode, launch only)."""
        return [p for p in self.processes if p.kind == 'lab']


def bag_path_for(record_dir: str | os.PathLike, system: str, seed: int,
                 stamp: datetime.datetime | None = None) -> pathlib.Path:
    """<record_dir>/<system>_<date>_<time>_seed<seed>: one bag per run."""
    stamp = stamp or datetime.datetime.now()
    return pathlib.Path(record_dir).expanduser().resolve() / f'{system}_{stamp:%Y%m%d_%H%M%S}_seed{seed}'


def _resolve_path(root: pathlib.Path, value):
    """A relative file path in a system/scenario file is relative to the data tree (a node's
    working directory may be anywhere)."""
    if isinstance(value, str) and value and not os.path.isabs(value) and (root / value).exists():
        return str((root / value).resolve())
    return value


def _load(system, scenario) -> tuple[SystemDescription, Scenario | None]:
    desc = system if isinstance(system, SystemDescription) else load_system(str(system))
    if isinstance(scenario, str) and scenario:
        scenario = load_scenario(desc, scenario)
    return apply_scenario(desc, scenario or None), scenario or None


def system_urdf(desc: SystemDescription, hardware: bool) -> str:
    """The system's robot description file: the hardware block's with mode:=hardware, else the
    mock hardware's ``robot_description`` parameter ('' when neither names one)."""
    if hardware and desc.hardware is not None:
        return str(desc.hardware.robot_description)
    for spec in desc.select(use_mock=not hardware):
        value = _resolve_path(repo_root(), spec.parameters.get('robot_description', ''))
        if isinstance(value, str) and value.endswith('.urdf') and os.path.isfile(value):
            return value
    return ''


def hmi_spec(desc: SystemDescription, hardware: bool, port: int, host: str, token: str) -> NodeSpec:
    """The HMI's process (docs/hmi.md): its values checked here against its own Param table,
    so a bad port or a host beyond localhost without a token is said before anything starts."""
    from hil_nodes.framework.param_table import ParameterError   # (lazy: the HMI's table is rclpy's)
    from hil_nodes.hmi.params import PARAMS, check_values
    table = {p.name: p for p in PARAMS}
    values = {'host': host, 'port': port, 'urdf': system_urdf(desc, hardware), 'control_token': token}
    try:
        checked = {name: table[name].validate(value) for name, value in values.items()}
    except ParameterError as exc:
        raise BringupError(f'hmi: {exc}') from None
    problems = check_values(SimpleNamespace(**checked))
    if problems:
        raise BringupError(f'hmi: {problems[0]}')
    if not checked['control_token']:
        del checked['control_token']
    return NodeSpec(name=HMI, package='hil_nodes', executable='hmi', parameters=checked, managed=False,
                    rt_rank=None, kind='hmi')


def view_remappings() -> dict[str, str]:
    """The HMI's remappings with the view throttle: each full-rate stream it draws read from its
    throttled copy (relative both: rcl resolves them in the graph's namespace)."""
    return dict(topics.VIEW_STREAMS)


def bringup_plan(system: str | SystemDescription, scenario: str | Scenario | None = None, *, mode: str = 'mock',
                 lockstep: bool | None = None, record: str | os.PathLike | None = None, rt: bool = False,
                 time_scale: float | None = None, duration: float | None = None, seed: int = 0,
                 netft_address: str = '', robot_address: str = '', robot_port: str = '', rt_priority: int = 80,
                 rt_cpus: str = '',
                 rt_policy: str = 'rr', stamp: datetime.datetime | None = None, hmi: bool = False,
                 hmi_port: int = 8080, hmi_host: str = '127.0.0.1', hmi_token: str = '',
                 namespace: str = '', split: str = '', part: str = '', peers: str = '',
                 nodes_timeout: float | None = None) -> BringupPlan:
    """The processes of one run of ``system`` (see the module docstring).

    lockstep: None = the mode's default (mock: true, hardware: false). record: a directory (the
    bag is <record>/<system>_<date>_seed<seed>). duration: sim seconds of an automatic run (the
    supervisor requests START after bring-up and STOP then); None = no automatic run (the
    operator calls /hil/start). time_scale: the mock's pace (default lockstep 0 = as fast as
    possible, real time 1). netft_address: the ft_sensor nodes' sensor_ip. robot_address: the
    robot's IP in the URDF's <ros2_control> block (hardware mode): lbr_fri_ros2_stack's
    ``remote_host`` for an iiwa (``robot_port``: its ``port_id``), else the block's
    <param name="robot_address">. rt: the HIL_RT_*
    environment of every hil process (rt_policy 'rr' or 'fifo' at rt_priority minus the node's
    rt_rank, affinity rt_cpus, mlockall; hil_nodes.runtime.rt_setup applies them where permitted). One
    process per node (launch, `hil run --isolated`) wants 'rr': equal-priority FIFO processes
    never preempt each other. hmi: also start the operator's web HMI, a process of its own first
    (``hmi_spec``: served on hmi_host:hmi_port, 0 = any free port; beyond localhost it needs
    hmi_token), with the system's URDF. namespace: the graph's ('' = the root; module docstring).
    split, part: the processes of one part of the split (bringup/parts.py; '' = the first split,
    every part); every part plans the whole graph. peers: comma-separated addresses,
    ROS_STATIC_PEERS of every process (discovery without multicast, docs/lab.md). nodes_timeout:
    the supervisor's wait for the nodes of every part (wall s; None: its file's value).
    """
    if mode not in MODES:
        raise BringupError(f"mode must be one of {MODES}, not {mode!r}")
    hardware = mode == 'hardware'
    if lockstep is None:
        lockstep = not hardware
    if hardware and lockstep:
        raise BringupError('lockstep needs the mock hardware: a real robot does not wait for frames')
    ns = graph_namespace(namespace)
    desc, scenario = _load(system, scenario)
    sim_only = {n.name for n in desc.nodes if n.sim_only}
    try:
        split, parts = hosts.split_of(desc, split)
        if part:     # the whole graph on one host takes any scenario
            hosts.check_scenario(scenario, parts, sim_only, desc.nodes)
    except hosts.PartsError as exc:
        raise BringupError(str(exc)) from None
    if part and part not in parts:
        raise BringupError(f'unknown part {part!r} of {desc.name}' + (f' (split {split}: parts {", ".join(parts)})'
                                                                        if parts else ' (it names no parts)'))
    home = hosts.supervisor_part(parts)
    given = [n for n, v in (('record', record), ('duration', duration), ('scenario', scenario), ('hmi', hmi)) if v]
    if part and part != home and given:
        raise BringupError(f'{", ".join(given)}: given to the part that holds the supervisor ({home}), not to {part}')
    root = repo_root()
    bag_path = bag_path_for(record, desc.name, seed, stamp) if record else None
    lab, lab_params = lab_processes(desc, robot_address, str(robot_port or ''), ns) if hardware else ([], {})
    # every process of the graph hears its own clock (module docstring)
    clock = {'/clock': f'{ns}/clock'} if ns else {}
    nodes = ([RECORDER] if bag_path else []) + desc.select(use_mock=not hardware)
    if time_scale is None:
        time_scale = 0.0 if lockstep else 1.0
    sim_clock = not hardware and (lockstep or float(time_scale) != 1.0)
    owner = next((n.name for n in nodes if n.clock_owner), '') if sim_clock else ''
    managed = tuple(n.name for n in nodes if n.managed)
    monitored = [n.name for n in nodes if not n.managed and n.name != 'supervisor']
    hw_params = desc.hardware.parameters if (hardware and desc.hardware) else {}
    hw_remap = desc.hardware.remappings if (hardware and desc.hardware) else {}
    # the recorder records the lab's topics under the names the nodes take them by
    lab_topic = {src: dst for remap in hw_remap.values() for src, dst in remap.items()}
    try:
        rt_env = rt_setup.request_env(rt_priority, rt_cpus, mlock=True, policy=rt_policy) if rt else {}
    except ValueError as exc:
        raise BringupError(f'rt_cpus: {exc}') from None
    planned = []
    for spec in nodes:
        p = {k: _resolve_path(root, v) for k, v in spec.parameters.items()}
        if not hardware:   # e.g. the F/T node reads the simulated sensor in-process
            p.update({k: _resolve_path(root, v) for k, v in spec.mock_parameters.items()})
            if not lockstep:   # e.g. hybrid5's drives: frames of 25 control cycles in real time
                p.update({k: _resolve_path(root, v) for k, v in spec.realtime_parameters.items()})
        p.update(hw_params.get(spec.name, {}))
        if netft_address and spec.executable == 'ft_sensor':
            p['sensor_ip'] = netft_address
        p.update(use_sim_time=sim_clock and spec.name != owner, lockstep=lockstep, seed=int(seed))
        if spec.clock_owner and not hardware:
            p['time_scale'] = float(time_scale)
        if spec.name == 'supervisor':
            p.update(managed_nodes=list(managed), autostart=True, autostart_run=duration is not None,
                     run_duration=float(duration or 0.0))
            if owner in managed:     # its frames wait for the chain: it goes first at shutdown
                p['clock_owner'] = owner
            if monitored:   # an empty list has no type in a params file
                p['monitored_nodes'] = monitored
            # started as a part: the other parts' nodes, named in its wait for them (the whole graph
            # on one host starts every node itself and configures them as they come)
            remote = hosts.remote_nodes(nodes, parts, sim_only, hosts.supervisor_part(parts)) if part else []
            if remote:
                p['node_parts'] = remote
            if nodes_timeout is not None:
                p['nodes_timeout'] = float(nodes_timeout)
        if spec is RECORDER:
            p.update(bag_path=str(bag_path), topics=[lab_topic.get(t, t) for t in desc.record_topics],
                     checkpoint_after=lab_topic.get(desc.record_checkpoint_after, desc.record_checkpoint_after))
        env = rt_setup.ranked_env(rt_env, spec.rt_rank) if rt else {}
        if peers:
            env['ROS_STATIC_PEERS'] = static_peers(peers)
        remappings = {**clock, **spec.remappings, **hw_remap.get(spec.name, {})}
        planned.append(replace(spec, parameters=p, env=env, remappings=remappings, namespace=ns))
    first = []
    if hmi:      # first: its page is up (and its address said) before the graph starts
        for name in (HMI, VIEW_THROTTLE.name):
            if any(spec.name == name for spec in planned):
                raise BringupError(f'hmi: {desc.name} has a node named {name!r} already')
        first = [replace(hmi_spec(desc, hardware, hmi_port, hmi_host, hmi_token), namespace=ns,
                         remappings={**clock, **view_remappings()})]
        # last: in the container after the chain's nodes (its subscriptions after theirs); no
        # real-time request of its own (one process takes its nodes' highest)
        planned.append(replace(VIEW_THROTTLE, namespace=ns, remappings=dict(clock),
                               env={'ROS_STATIC_PEERS': static_peers(peers)} if peers else {}))
    if peers:
        first = [replace(s, env={**s.env, 'ROS_STATIC_PEERS': static_peers(peers)}) for s in first]
        lab = [replace(s, env={**s.env, 'ROS_STATIC_PEERS': static_peers(peers)}) for s in lab]
    rviz = root / 'config' / 'rviz' / f'{desc.name}.rviz'
    processes = tuple(first + lab + planned)
    where = {s.name: hosts.part_of(s, parts, sim_only) for s in processes} if parts else {}
    return BringupPlan(system=desc.name, mode=mode, lockstep=lockstep, rt=rt,
                       processes=tuple(s for s in processes if not part or where[s.name] == part),
                       clock_owner=owner, managed=managed, bag_path=bag_path, record_topics=desc.record_topics,
                       rviz_config=str(rviz) if rviz.is_file() else '', namespace=ns, lab_parameters=lab_params,
                       description=desc, split=split, part=part,
                       parts={p: tuple(n for n, w in where.items() if w == p) for p in parts},
                       others=tuple(s for s in processes if part and where[s.name] != part))


def namespaced_files(plan: BringupPlan, directory: pathlib.Path) -> BringupPlan:
    """The plan with each hil process's parameter files rewritten under the graph's namespace
    into ``directory`` (``system.namespaced_params_file``); the plan itself without one."""
    if not plan.namespace:
        return plan
    directory.mkdir(parents=True, exist_ok=True)
    copies: dict[pathlib.Path, pathlib.Path] = {}
    for source in (p for s in plan.processes if s.kind in ('hil', 'hmi') for p in s.params):
        if source not in copies:
            target = directory / f'{len(copies):02d}_{source.name}'
            copies[source] = namespaced_params_file(source, plan.namespace, target)
    processes = tuple(replace(s, params=tuple(copies[p] for p in s.params)) if s.kind in ('hil', 'hmi') else s
                      for s in plan.processes)
    return replace(plan, processes=processes)



# ---- the `hil run` translation ------------------------------------------------------------------

def run_overrides(plan: BringupPlan) -> dict[str, dict[str, Any]]:
    """The params file `hil run` passes after every node's own files (keyed by node name, by its
    fully qualified name under a namespace: rcl matches keys against it)."""
    return {f'{s.namespace}/{s.name}' if s.namespace else s.name: {'ros__parameters': dict(s.parameters)}
            for s in plan.processes if s.kind in ('hil', 'hmi') and s.parameters}


def process_commands(plan: BringupPlan, overrides_file: pathlib.Path,
                     isolated: bool) -> list[tuple[str, list[str], dict[str, str]]]:
    """(process name, command line, extra environment) of every hil node process `hil run`
    starts: one per node (isolated) or one container with every node, in the plan's order. The
    lab side of mode:=hardware (ros2_control_node, robot_state_publisher, spawners) is started by
    `ros2 launch hil_nodes hil.launch.py` only. The HMI (``hmi_commands``) is not among them."""
    nodes = plan.hil_nodes
    if isolated:
        return [(s.name, node_command(s, overrides_file), dict(s.env)) for s in nodes]
    args, ros_args, env = container_parts(plan, overrides_file)
    return [('container', [sys.executable, '-m', 'hil_nodes.runtime.container', *args, '--ros-args', *ros_args], env)]


def hmi_commands(plan: BringupPlan, overrides_file: pathlib.Path) -> list[tuple[str, list[str], dict[str, str]]]:
    """The HMI's process, in every layout its own (empty without ``hmi``)."""
    spec = plan.hmi
    return [] if spec is None else [(spec.name, node_command(spec, overrides_file), dict(spec.env))]


def container_parts(plan: BringupPlan, overrides_file: pathlib.Path) -> tuple[list[str], list[str], dict[str, str]]:
    """The one-process layout (`hil run`, launch's layout:=one_process): the container's own
    arguments (``--node module:name`` in start order), its ROS arguments (every node's params
    files, then ``overrides_file``; remappings scoped to their node) and its environment."""
    nodes = plan.hil_nodes
    args = [a for s in nodes for a in ('--node', f'{s.module}:{s.name}')]
    return args, container_ros_args(nodes, overrides_file)[1:], rt_setup.highest_env([s.env for s in nodes])


def write_overrides(plan: BringupPlan, path: pathlib.Path) -> pathlib.Path:
    path.write_text(yaml.safe_dump(run_overrides(plan), sort_keys=False))
    return path


def write_lab_parameters(plan: BringupPlan, path: pathlib.Path) -> pathlib.Path:
    """ros2_control_node's params file of a hardware plan (``lab_parameters``)."""
    path.write_text(yaml.safe_dump(plan.lab_parameters, sort_keys=False))
    return path


def effective_parameters(sources: list[Any], node: str) -> dict[str, Any]:
    """The values a node ends up with from params files / params-file mappings applied in order,
    as rclpy resolves them (checked against rclpy in test/integration/test_bringup_rclpy.py): a
    later source wins, whether it names the node ('x' or '/x') or the wildcard '/**'."""
    out: dict[str, Any] = {}
    for src in sources:
        data = src if isinstance(src, dict) else (yaml.safe_load(pathlib.Path(src).read_text()) or {})
        for key, body in data.items():
            if key.strip('/') in ('**', node.strip('/')):
                out.update(_flatten((body or {}).get('ros__parameters', {})))
    return out


def final_parameters(spec: NodeSpec) -> dict[str, Any]:
    """The values a planned node ends up with: its parameter files, then the plan's values."""
    out = effective_parameters(list(spec.params), spec.name)
    out.update(spec.parameters)
    return out


def _flatten(values: dict[str, Any], prefix: str = '') -> dict[str, Any]:
    out = {}
    for k, v in values.items():
        if isinstance(v, dict):
            out.update(_flatten(v, f'{prefix}{k}.'))
        else:
            out[f'{prefix}{k}'] = v
    return out
