"""System descriptions (config/systems/<system>.yaml) -> the list of nodes to start.

One reader serves both ways of starting a system: ``hil_nodes.bringup.plan.bringup_plan`` reads it
for ``launch/hil.launch.py`` (lab machines) and for the ``hil`` command here (``node_command`` /
the container). No ROS import: the loader is tested on its own.
"""
from __future__ import annotations

import pathlib
import sys
from dataclasses import dataclass, field, replace
from typing import Any

import yaml

from hil_core.data_paths import DataNotFound, data_root


class BringupError(ValueError):
    """A system that cannot be brought up as described or asked (its system file, a scenario, a
    launch argument or a ``hil run`` option); the message says which entry and why."""


def repo_root() -> pathlib.Path:
    """The data tree holding config/ and urdf/: $HIL_SUITE_ROOT, the source checkout, or
    share/hil_core of a colcon install (hil_core.data_paths says in which order and why)."""
    try:
        return data_root()
    except DataNotFound as exc:
        raise BringupError(str(exc)) from None


@dataclass(frozen=True)
class NodeSpec:
    name: str
    package: str
    executable: str
    params: tuple[pathlib.Path, ...] = ()
    parameters: dict[str, Any] = field(default_factory=dict)
    # applied on top of ``parameters`` only with the mock hardware (e.g. the F/T node reads the
    # simulated sensor in-process instead of a Net F/T box)
    mock_parameters: dict[str, Any] = field(default_factory=dict)
    # applied last, only with the mock hardware in real time (e.g. hybrid5's drives run 2.5 ms
    # frames of 25 control cycles there instead of one 100 us lockstep frame per cycle)
    realtime_parameters: dict[str, Any] = field(default_factory=dict)
    remappings: dict[str, str] = field(default_factory=dict)
    managed: bool = True
    sim_only: bool = False
    clock_owner: bool = False
    # with --rt / rt:=true, how many steps below the run's priority this node's process runs:
    # 0 for the drives, then the chain in its order, the supervisor last; None = no real-time
    # priority at all (the recorder: it has no deadline). One process takes its nodes' highest.
    rt_rank: int | None = 0
    # set by the bring-up plan only (hil_nodes.bringup.plan), never read from a system file:
    kind: str = 'hil'                            # 'hil' node, or 'lab' (ros2_control, robot_state_publisher)
    # the graph's namespace ('' = the root, else absolute: '/rig_a'); the lab processes' is below
    # it (lbr_fri_ros2_stack's 'lbr' at the root, '/rig_a/lbr' under /rig_a)
    namespace: str = ''
    arguments: tuple[str, ...] = ()              # plain command-line arguments (controller spawners)
    start_after: str = ''                        # start once this process has started (spawners)
    env: dict[str, str] = field(default_factory=dict)   # extra environment of the process

    @property
    def module(self) -> str:
        """The node's ROS shell: every node lives in its own folder, ``<package>/<executable>/node.py``."""
        return f'{self.package}.{self.executable}.node'


@dataclass(frozen=True)
class HardwareSpec:
    """The `hardware:` block of a system file: the lab side that replaces the sim_only nodes.
    robot_state_publisher gets the URDF; ros2_control_node gets the controllers file (and the
    URDF's <ros2_control> block through /robot_description); one spawner per controller.
    ``lbr``: the robot is a KUKA iiwa on lbr_fri_ros2_stack (``robot_name``: its namespace and
    joint prefix; ``system_config``: overrides of lbr_system_config.yaml's hardware values):
    the URDF's block becomes the one its SystemInterface requires (hil_core.iiwa.lbr).
    ``remappings``: per hil node, the topics it takes from the lab side under their lab names."""
    robot_description: pathlib.Path
    controllers: tuple[str, ...]
    controllers_file: pathlib.Path
    parameters: dict[str, dict[str, Any]] = field(default_factory=dict)   # node values in hardware mode
    remappings: dict[str, dict[str, str]] = field(default_factory=dict)   # node remappings in hardware mode
    lbr: dict[str, Any] | None = None

    @property
    def namespace(self) -> str:
        """The lab processes' namespace ('' = the root)."""
        return self.lbr['robot_name'] if self.lbr else ''


def parse_hardware(entry: Any, where: str, root: pathlib.Path) -> HardwareSpec:
    if not isinstance(entry, dict):
        raise BringupError(f'{where} must be a mapping')
    unknown = set(entry) - {'robot_description', 'controllers', 'controllers_file', 'parameters', 'remappings', 'lbr'}
    if unknown:
        raise BringupError(f'{where}: unknown keys {sorted(unknown)}')
    urdf = entry.get('robot_description')
    if not isinstance(urdf, str) or not (root / urdf).is_file():
        raise BringupError(f'{where}: robot_description must name an existing URDF file (got {urdf!r})')
    controllers = entry.get('controllers')
    if not isinstance(controllers, list) or not controllers or not all(isinstance(c, str) and c for c in controllers):
        raise BringupError(f'{where}: controllers must be a non-empty list of controller names')
    parameters = entry.get('parameters') or {}
    if not isinstance(parameters, dict) or not all(isinstance(v, dict) for v in parameters.values()):
        raise BringupError(f'{where}: parameters must map node names to parameter values')
    remappings = entry.get('remappings') or {}
    if not isinstance(remappings, dict) or not all(
            isinstance(v, dict) and all(isinstance(a, str) and isinstance(b, str) for a, b in v.items())
            for v in remappings.values()):
        raise BringupError(f'{where}: remappings must map node names to {{topic: topic}}')
    lbr = entry.get('lbr')
    if lbr is not None:
        if not isinstance(lbr, dict) or set(lbr) - {'robot_name', 'system_config'} or \
                not isinstance(lbr.get('robot_name', 'lbr'), str) or not isinstance(lbr.get('system_config') or {}, dict):
            raise BringupError(f'{where}: lbr takes robot_name (a name) and system_config (a mapping)')
        lbr = {'robot_name': lbr.get('robot_name', 'lbr'), 'system_config': dict(lbr.get('system_config') or {})}
    return HardwareSpec(robot_description=(root / urdf).resolve(), controllers=tuple(controllers),
                        controllers_file=(root / entry.get('controllers_file', 'config/controllers.yaml')).resolve(),
                        parameters={k: dict(v) for k, v in parameters.items()},
                        remappings={k: dict(v) for k, v in remappings.items()}, lbr=lbr)


@dataclass(frozen=True)
class SystemDescription:
    name: str
    description: str
    nodes: tuple[NodeSpec, ...]
    path: pathlib.Path
    # relative names, resolved in the graph's namespace as the nodes' own (hil_nodes.topics)
    record_topics: tuple[str, ...] = ('joint_states', 'hil/mode', 'hil/events')
    # recorded topic after whose message the recorder takes its checkpoint steps ('' = on its timer)
    record_checkpoint_after: str = ''
    summary: tuple[str, ...] = ()      # 'node/key' diagnostics values added to the `hil run` summary
    hardware: HardwareSpec | None = None   # what `mode:=hardware` starts instead of the sim_only nodes
    # hosts (bringup/parts.py): split name -> part name -> its nodes; the first split is the default
    parts: dict[str, dict[str, tuple[str, ...]]] = field(default_factory=dict)

    def select(self, use_mock: bool = True, extra: tuple[NodeSpec, ...] = ()) -> list[NodeSpec]:
        """Nodes to start: sim-only nodes only with the mock hardware."""
        return [n for n in self.nodes if use_mock or not n.sim_only] + list(extra)

    def managed_names(self, use_mock: bool = True) -> list[str]:
        return [n.name for n in self.select(use_mock) if n.managed]


_KNOWN_KEYS = {'name', 'package', 'executable', 'params', 'parameters', 'mock_parameters', 'realtime_parameters',
               'remappings', 'managed', 'sim_only', 'clock_owner', 'rt_rank'}
RT_RANK_MAX = 20


def system_path(name_or_path: str, root: pathlib.Path | None = None) -> pathlib.Path:
    candidate = pathlib.Path(name_or_path)
    if candidate.suffix in ('.yaml', '.yml') and candidate.exists():
        return candidate.resolve()
    root = root or repo_root()
    path = root / 'config' / 'systems' / f'{name_or_path.replace("-", "_")}.yaml'
    if not path.exists():
        known = sorted(p.stem for p in (root / 'config' / 'systems').glob('*.yaml'))
        raise BringupError(f"unknown system '{name_or_path}' (known: {', '.join(known)})")
    return path


def parse_node(entry: Any, where: str, root: pathlib.Path) -> NodeSpec:
    """One node entry of a system or scenario file (parameter files resolved against root)."""
    if not isinstance(entry, dict):
        raise BringupError(f'{where} must be a mapping')
    unknown = set(entry) - _KNOWN_KEYS
    if unknown:
        raise BringupError(f'{where}: unknown keys {sorted(unknown)}')
    for key in ('name', 'package', 'executable'):
        if not isinstance(entry.get(key), str) or not entry[key]:
            raise BringupError(f'{where}: "{key}" is required')
    rank = entry.get('rt_rank', 0)
    if rank is not None and (isinstance(rank, bool) or not isinstance(rank, int) or not 0 <= rank <= RT_RANK_MAX):
        raise BringupError(f'{where} ({entry["name"]}): rt_rank must be an integer 0-{RT_RANK_MAX} or null, '
                           f'not {rank!r}')
    params = []
    for p in entry.get('params', []) or []:
        full = (root / p).resolve()
        if not full.exists():
            raise BringupError(f'{where} ({entry["name"]}): parameter file {p} does not exist')
        params.append(full)
    return NodeSpec(name=entry['name'], package=entry['package'], executable=entry['executable'],
                    params=tuple(params), parameters=dict(entry.get('parameters') or {}),
                    mock_parameters=dict(entry.get('mock_parameters') or {}),
                    realtime_parameters=dict(entry.get('realtime_parameters') or {}),
                    remappings=dict(entry.get('remappings') or {}), managed=bool(entry.get('managed', True)),
                    sim_only=bool(entry.get('sim_only', False)), clock_owner=bool(entry.get('clock_owner', False)),
                    rt_rank=rank)


def load_system(name_or_path: str, root: pathlib.Path | None = None) -> SystemDescription:
    """Read and validate a system description; parameter file paths become absolute."""
    path = system_path(name_or_path, root)
    root = root or repo_root()
    data = yaml.safe_load(path.read_text()) or {}
    entries = data.get('nodes')
    if not isinstance(entries, list) or not entries:
        raise BringupError(f'{path}: "nodes" must be a non-empty list')
    nodes, seen = [], set()
    for i, entry in enumerate(entries):
        spec = parse_node(entry, f'{path.name}: nodes[{i}]', root)
        if spec.name in seen:
            raise BringupError(f'{path.name}: nodes[{i}]: duplicate node name {spec.name!r}')
        seen.add(spec.name)
        nodes.append(spec)
    record = data.get('record_topics') or list(SystemDescription.record_topics)
    if not all(isinstance(t, str) and t.strip('/') and ' ' not in t for t in record):
        raise BringupError(f'{path.name}: record_topics must be topic names (relative: in the graph\'s namespace)')
    after = data.get('record_checkpoint_after') or ''
    if after and after not in record:
        raise BringupError(f'{path.name}: record_checkpoint_after {after!r} is not one of record_topics')
    summary = data.get('summary') or []
    if not all(isinstance(k, str) and k.count('/') == 1 for k in summary):
        raise BringupError(f'{path.name}: summary entries are node/key')
    hardware = parse_hardware(data['hardware'], f'{path.name}: hardware', root) if 'hardware' in data else None
    if hardware is not None and (set(hardware.parameters) | set(hardware.remappings)) - seen:
        raise BringupError(f'{path.name}: hardware parameters or remappings for unknown node(s) '
                           f'{sorted((set(hardware.parameters) | set(hardware.remappings)) - seen)}')
    from hil_nodes.bringup.parts import PartsError, parse_parts     # (its rules live with the parts)
    try:
        parts = parse_parts(data.get('parts'), f'{path.name}: parts', nodes)
    except PartsError as exc:
        raise BringupError(str(exc)) from None
    return SystemDescription(name=str(data.get('system', path.stem)),
                             description=str(data.get('description', '')), nodes=tuple(nodes), path=path,
                             record_topics=tuple(record), record_checkpoint_after=str(after),
                             summary=tuple(summary), hardware=hardware, parts=parts)


def node_ros_args(spec: NodeSpec, overrides_file: pathlib.Path | None = None) -> list[str]:
    """`--ros-args` for one node in its own process: name, namespace, parameter files, remappings.
    ``overrides_file`` (written by ``hil run``: the YAML's inline ``parameters`` and per-run
    values such as use_sim_time) comes last and wins."""
    args = ['--ros-args', '-r', f'__node:={spec.name}']
    if spec.namespace:
        args += ['-r', f'__ns:={spec.namespace}']
    for p in spec.params:
        args += ['--params-file', str(p)]
    if overrides_file is not None:
        args += ['--params-file', str(overrides_file)]
    for src, dst in spec.remappings.items():
        args += ['-r', f'{src}:={dst}']
    return args


def namespaced_params_file(source: pathlib.Path, namespace: str, target: pathlib.Path) -> pathlib.Path:
    """A copy of a params file whose node keys are under ``namespace`` ('planner:' or '/planner:'
    becomes '/rig_a/planner:'), as nav2's RewrittenYaml(root_key=...) does: rcl matches a key
    against the node's fully qualified name, so a plain 'planner:' never reaches /rig_a/planner.
    Wildcard keys ('/**', '/**/planner') match in any namespace and stay. Only the keys' text
    changes: the values keep their YAML exactly as written (rcl types them from the text)."""
    text = source.read_text()
    root = yaml.compose(text)
    if not isinstance(root, yaml.MappingNode):
        target.write_text(text)
        return target
    lines = text.splitlines(keepends=True)
    for key, _ in reversed(root.value):      # from the end: earlier positions stay valid
        name = str(key.value)
        if '*' in name or not name.strip('/'):
            continue
        start, end = key.start_mark, key.end_mark
        if start.line != end.line:
            raise BringupError(f'{source}: node key {name!r} spans lines')
        line = lines[start.line]
        lines[start.line] = line[:start.column] + f'{namespace}/{name.strip("/")}' + line[end.column:]
    target.write_text(''.join(lines))
    return target


def node_command(spec: NodeSpec, overrides_file: pathlib.Path | None = None) -> list[str]:
    return [sys.executable, '-m', spec.module, *node_ros_args(spec, overrides_file)]


def container_ros_args(specs: list[NodeSpec], overrides_file: pathlib.Path | None = None) -> list[str]:
    """`--ros-args` for all nodes in one process: parameter files are keyed by node name, so they
    can all be global; inline values and remappings become node-specific. The nodes share one
    namespace (the graph's), a global ``__ns`` rule."""
    args = ['--ros-args']
    spaces = {spec.namespace for spec in specs}
    if len(spaces) > 1:
        raise BringupError(f'one process hosts nodes of one namespace, not {sorted(spaces)}')
    if spaces and next(iter(spaces)):
        args += ['-r', f'__ns:={next(iter(spaces))}']
    for spec in specs:
        for p in spec.params:
            args += ['--params-file', str(p)]
    if overrides_file is not None:
        args += ['--params-file', str(overrides_file)]
    for spec in specs:
        for src, dst in spec.remappings.items():
            args += ['-r', f'{spec.name}:{src}:={dst}']
    return args


@dataclass(frozen=True)
class Scenario:
    """An experiment on a system (config/scenarios/<system>/<name>.yaml): parameter values per
    node, extra nodes (e.g. a fault relay) and remappings of existing nodes."""
    name: str
    description: str
    parameters: dict[str, dict[str, Any]]
    nodes: tuple[NodeSpec, ...]
    remap: dict[str, dict[str, str]]
    duration: float | None


def load_scenario(system: SystemDescription, name: str, root: pathlib.Path | None = None) -> Scenario:
    root = root or repo_root()
    folder = root / 'config' / 'scenarios' / system.name
    path = folder / f'{name}.yaml'
    if not path.exists():
        known = sorted(p.stem for p in folder.glob('*.yaml'))
        raise BringupError(f"unknown scenario '{name}' for {system.name} (known: {', '.join(known) or 'none'})")
    data = yaml.safe_load(path.read_text()) or {}
    unknown = set(data) - {'description', 'parameters', 'nodes', 'remap', 'duration'}
    if unknown:
        raise BringupError(f'{path.name}: unknown keys {sorted(unknown)}')
    extra = tuple(parse_node(e, f'{path.name}: nodes[{i}]', root) for i, e in enumerate(data.get('nodes') or []))
    names = {n.name for n in system.nodes} | {n.name for n in extra} | {'recorder'}
    for key in ('parameters', 'remap'):
        bad = set(data.get(key) or {}) - names
        if bad:
            raise BringupError(f'{path.name}: {key} for unknown node(s) {sorted(bad)}')
    duration = data.get('duration')
    return Scenario(name=name, description=str(data.get('description', '')),
                    parameters={k: dict(v or {}) for k, v in (data.get('parameters') or {}).items()},
                    nodes=extra, remap={k: dict(v or {}) for k, v in (data.get('remap') or {}).items()},
                    duration=float(duration) if duration is not None else None)


def apply_scenario(system: SystemDescription, scenario: Scenario | None) -> SystemDescription:
    """The system with the scenario's nodes (before the supervisor), remappings and inline values."""
    if scenario is None:
        return system
    nodes = []
    for spec in system.nodes:
        if spec.name == 'supervisor':
            nodes += list(scenario.nodes)
        remap = dict(spec.remappings, **scenario.remap.get(spec.name, {}))
        given = scenario.parameters.get(spec.name, {})
        params = dict(spec.parameters, **given)
        mock = {k: v for k, v in spec.mock_parameters.items() if k not in given}   # the scenario wins
        realtime = {k: v for k, v in spec.realtime_parameters.items() if k not in given}
        nodes.append(replace(spec, remappings=remap, parameters=params, mock_parameters=mock,
                             realtime_parameters=realtime))
    if not any(s.name == 'supervisor' for s in system.nodes):
        nodes += list(scenario.nodes)
    extra_names = {n.name for n in scenario.nodes}
    nodes = [replace(n, parameters=dict(n.parameters, **scenario.parameters.get(n.name, {})))
             if n.name in extra_names else n for n in nodes]
    return replace(system, nodes=tuple(nodes))
