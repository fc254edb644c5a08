"""One home per parameter: each node's Param table (``<package>/<node>/params.py``) is the only
place a parameter is declared, and everything else is generated from it or checked against it.

- the pages docs/parameters/*.md are generated from the tables and up to date;
- every value a config file, a system file or a scenario gives a node names a parameter of that
  node's table (or a common one) and has its declared type as the node reads it (rcl's typing
  of a params file: an integer where a double is declared is refused by the node, so here too),
  within its range and choices. A config file may set a parameter to its default: it says what
  the system runs with, so only names and types are compared, not values;
- a hand-written table of docs/ with a name/parameter column and a default column names only
  parameters of its node, with their defaults (where the cell is a plain value);
- the hil_core configurations are built by one declared mapping per node that covers every
  field, the tables live in params.py (never in node.py), and the report reads a run's designed
  values from its recorded parameters with the nodes' own functions.

It reads the nodes' tables, so it imports hil_nodes and hil_sim (a repository rule, like
test_layout.py).
"""
import ast
import importlib
import pathlib
import re
from types import SimpleNamespace

import pytest
import yaml

from hil_nodes.bringup.system import load_scenario, load_system
from hil_nodes.framework import param_docs
from hil_nodes.framework.param_sources import file_values, type_problem
from hil_nodes.framework.param_table import ConfigFields, ParameterError

ROOT = pathlib.Path(__file__).resolve().parents[2]
CONFIG = ROOT / 'config'
ROS_OWN = {'use_sim_time'}     # declared by rclpy itself in every node
INLINE_BLOCKS = ('parameters', 'mock_parameters', 'realtime_parameters')    # NodeSpec's, as written


def _systems():
    return [load_system(str(path), ROOT) for path in sorted((CONFIG / 'systems').glob('*.yaml'))]


def _executables() -> dict[str, set[str]]:
    """Node name -> the node (executable) it runs: every node under its default name (its
    executable's: the recorder is added so by the bring-up plan, mock_ft runs so in tests and
    launch files), and the names of every system and scenario."""
    out: dict[str, set[str]] = {node: {node} for node in param_docs.NODES}
    for system in _systems():
        for spec in system.nodes:
            out.setdefault(spec.name, set()).add(spec.executable)
        for path in sorted((CONFIG / 'scenarios' / system.name).glob('*.yaml')):
            for spec in load_scenario(system, path.stem, ROOT).nodes:
                out.setdefault(spec.name, set()).add(spec.executable)
    return out


def _problem(where: str, name: str, executable: str, parameter: str, value) -> str | None:
    """What is wrong with a value a file gives node ``name`` (None if nothing)."""
    if parameter in ROS_OWN:
        return None
    if executable not in param_docs.NODES:
        return f'{where}: node {name} runs {executable}, which has no Param table in param_docs.NODES'
    table = param_docs.node_params(executable)
    spec = table.get(parameter)
    if spec is None:
        return (f'{where}: node {name} ({executable}): parameter {parameter!r} = {value!r} is not in its Param '
                f'table ({param_docs.NODES[executable]}/{executable}/params.py, docs/parameters/{executable}.md)')
    problem = type_problem(spec.type, value)
    if problem is None:
        try:
            spec.validate(value)
        except ParameterError as exc:
            problem = str(exc)
    if problem:
        return (f'{where}: node {name} ({executable}): parameter {parameter!r}: {problem} '
                f'(declared: {param_docs.format_value(spec.default)} by default)')
    return None


def _params_files() -> dict[pathlib.Path, set[str]]:
    """Every config/*.yaml parameter file -> the node names it gives values to: the names it is
    keyed by, and for a wildcard section the nodes of every system that loads it."""
    known = _executables()
    loaded_by: dict[pathlib.Path, set[str]] = {}
    for system in _systems():
        for spec in system.nodes:
            for path in spec.params:
                loaded_by.setdefault(path.resolve(), set()).add(spec.name)
    out = {}
    for path in sorted(CONFIG.glob('*.yaml')):
        data = yaml.safe_load(path.read_text()) or {}
        sections = {k: v for k, v in data.items() if isinstance(v, dict) and 'ros__parameters' in v}
        names = {k.strip('/') for k in sections} - {'**'}
        if not sections or not (names & set(known) or path.resolve() in loaded_by):
            continue          # not a hil node's file (controllers.yaml: ros2_control's controllers)
        unknown = sorted(names - set(known))
        assert not unknown, f'{path.relative_to(ROOT)}: sections for nodes no system has: {unknown}'
        targets = set(names)
        if '**' in {k.strip('/') for k in sections}:
            targets |= loaded_by.get(path.resolve(), set())
        out[path] = targets
    return out


def test_generated_parameter_pages_are_up_to_date():
    stale = param_docs.stale_pages(ROOT / param_docs.PAGES_DIR)
    assert not stale, (f'docs/parameters/ is not what the Param tables give ({", ".join(stale)}): '
                       f'run `{param_docs.COMMAND}`')


def test_config_files_set_only_declared_parameters_of_the_declared_type():
    files = _params_files()
    assert {'ft_sensor.yaml', 'timebase.yaml', 'mock_hexapod.yaml', 'mock_ft.yaml', 'supervisor.yaml'} <= {p.name for p in files}
    known = _executables()
    problems = []
    for path, names in files.items():
        for name in sorted(names):
            for executable in sorted(known[name]):
                for parameter, value in file_values(str(path), '/' + name):    # typed as rcl types them
                    problems.append(_problem(str(path.relative_to(ROOT)), name, executable, parameter, value))
    problems = [p for p in problems if p]
    assert not problems, '\n'.join(problems)


def _inline_values():
    """(where, node name, executable, parameter, value) of every value written in a system or
    scenario file (``hil run`` passes them on in a params file: their YAML types are what the
    node gets)."""
    for system in _systems():
        where = str(system.path.relative_to(ROOT))
        for spec in system.nodes:
            for block in INLINE_BLOCKS:
                for parameter, value in getattr(spec, block).items():
                    yield f'{where} ({block})', spec.name, spec.executable, parameter, value
        if system.hardware is not None:
            by_name = {s.name: s.executable for s in system.nodes}
            for name, values in system.hardware.parameters.items():
                for parameter, value in values.items():
                    yield f'{where} (hardware parameters)', name, by_name[name], parameter, value
        for path in sorted((CONFIG / 'scenarios' / system.name).glob('*.yaml')):
            scenario = load_scenario(system, path.stem, ROOT)
            where = str(path.relative_to(ROOT))
            by_name = {s.name: s.executable for s in (*system.nodes, *scenario.nodes)}
            for name, values in scenario.parameters.items():
                for parameter, value in values.items():
                    # a name no node of the system has: the plan's own (the recorder)
                    yield f'{where} (parameters)', name, by_name.get(name, name), parameter, value
            for spec in scenario.nodes:
                for block in INLINE_BLOCKS:
                    for parameter, value in getattr(spec, block).items():
                        yield f'{where} (nodes: {block})', spec.name, spec.executable, parameter, value


def test_system_and_scenario_files_set_only_declared_parameters_of_the_declared_type():
    values = list(_inline_values())
    assert any(w.startswith('config/scenarios/') for w, *_ in values)
    problems = [p for p in (_problem(*v) for v in values) if p]
    assert not problems, '\n'.join(problems)


@pytest.mark.parametrize('mode, lockstep', [('mock', True), ('mock', False), ('hardware', False)])
def test_the_bring_up_plan_gives_each_node_only_declared_parameters(mode, lockstep, tmp_path):
    """What the plan adds to the files' values (the run's seed, lockstep, the supervisor's node
    lists, the recorder's bag): a node would warn 'unknown parameter ... ignored' in every run."""
    from hil_nodes.bringup.plan import bringup_plan
    problems = []
    for system in _systems():
        if mode == 'hardware' and system.hardware is None:
            continue
        plan = bringup_plan(system, mode=mode, lockstep=lockstep, record=tmp_path, duration=1.0, hmi=True)
        for spec in plan.hil_nodes:
            for parameter, value in spec.parameters.items():
                problems.append(_problem(f'plan of {system.name} ({mode})', spec.name, spec.executable,
                                         parameter, value))
    assert not [p for p in problems if p], '\n'.join(p for p in problems if p)


# --- hand-written tables in docs/ -------------------------------------------------------------------

# a unit that scales the number written before it: such a cell is not compared
_SCALED_UNITS = re.compile(r'\b(ms|us|kHz|mm|um|deg|%)$')
_PLAIN_UNITS = re.compile(r'\s+(s|Hz|m|N|rad|wall s)$')
_NAME_COLUMNS = ('name', 'parameter')


def _split(text: str, sep: str) -> list[str]:
    """Split on ``sep`` outside brackets."""
    parts, depth, current = [], 0, ''
    for ch in text:
        depth += ch == '['
        depth -= ch == ']'
        if ch == sep and depth == 0:
            parts.append(current)
            current = ''
        else:
            current += ch
    return [p.strip() for p in [*parts, current]]


def _plain_value(text: str):
    """A default cell as a value (number, bool, '' or a word, a [list] of them); None when the
    cell describes the default instead of writing it ('3.0 x6', 'derived from 3 Hz')."""
    text = text.replace('`', '').strip()
    if text in ("''", '""'):
        return ''
    if text in ('true', 'false'):
        return text == 'true'
    if text.startswith('[') and text.endswith(']'):
        items = [_plain_value(t) for t in _split(text[1:-1], ',')] if text[1:-1].strip() else []
        return None if any(i is None for i in items) else items
    try:
        return float(text)
    except ValueError:
        return text if re.fullmatch(r'[\w./-]+', text) else None


def _same(doc, declared) -> bool | None:
    """Does a written default equal the declared one (None: not comparable, a description)."""
    if isinstance(declared, bool) or isinstance(doc, bool):
        return doc is declared if isinstance(doc, bool) and isinstance(declared, bool) else None
    if isinstance(declared, (int, float)):
        return doc == pytest.approx(declared, rel=1e-9, abs=1e-15) if isinstance(doc, float) else None
    if isinstance(declared, str):
        return doc == declared if isinstance(doc, str) else None
    if isinstance(declared, (list, tuple)) and isinstance(doc, list):
        if len(doc) != len(declared):
            return False
        each = [_same(d, v) for d, v in zip(doc, declared)]
        return None if None in each else all(each)
    return None


def _tables(path: pathlib.Path):
    """(heading, header, [(line number, cells)] of the rows) of every markdown table in a file."""
    heading, table = '', []
    for number, line in enumerate([*path.read_text().splitlines(), ''], 1):
        if line.startswith('|'):
            table.append((number, [c.strip() for c in line.strip().strip('|').split('|')]))
            continue
        if len(table) > 2:
            yield heading, [c.lower() for c in table[0][1]], table[2:]
        table = []
        if line.startswith('#'):
            heading = line


def _table_node(path: pathlib.Path, heading: str) -> str | None:
    """The node a table is about: named in its heading, else the page's file name."""
    names = _executables()
    for word in re.findall(r'[a-z][a-z0-9_]+', heading):
        if word in param_docs.NODES:
            return word
        if word in names and len(names[word]) == 1:
            return next(iter(names[word]))
    return path.stem if path.stem in param_docs.NODES else None


def test_parameter_tables_in_docs_agree_with_the_param_tables():
    problems = []
    pages = [p for p in (ROOT / 'docs').rglob('*.md') if param_docs.PAGES_DIR.name not in p.parts]
    for path in sorted(pages):
        for heading, header, rows in _tables(path):
            name_col = next((header.index(c) for c in _NAME_COLUMNS if c in header), None)
            if name_col is None or 'default' not in header:
                continue
            node = _table_node(path, heading)
            if node is None:
                problems.append(f'{path.relative_to(ROOT)}:{rows[0][0] - 2}: a parameter table whose node is '
                                f'named neither by its heading {heading!r} nor by the file name')
                continue
            table = param_docs.node_params(node)
            for line, row in rows:
                where = f'{path.relative_to(ROOT)}:{line}'
                cell_names, cell_default = row[name_col], row[header.index('default')]
                written_cell = cell_default
                names = re.findall(r'`([^`]+)`', cell_names) or [cell_names.strip()]
                for name in names:
                    if name not in table:
                        problems.append(f'{where}: node {node}: parameter {name!r} is not in its Param table')
                if _SCALED_UNITS.search(cell_default.replace('`', '').strip()):
                    continue
                cell_default = _PLAIN_UNITS.sub('', cell_default.replace('`', '').strip())
                sep = next((s for s in (',', '/') if len(_split(cell_default, s)) == len(names)), None)
                if len(names) > 1 and sep is None:
                    continue              # defaults not written one per name
                for name, written in zip(names, _split(cell_default, sep) if len(names) > 1 else [cell_default]):
                    if name not in table:
                        continue
                    if _same(_plain_value(written), table[name].default) is False:
                        problems.append(f'{where}: node {node}: parameter {name!r}: the table says default '
                                        f'{written_cell!r}, its Param table '
                                        f'{param_docs.format_value(table[name].default)}')
    assert not problems, '\n'.join(problems)


# --- one mapping per configuration, tables in params.py, the report ---------------------------------

@pytest.mark.parametrize('node', sorted(param_docs.NODES))
def test_config_mappings_cover_every_field_with_a_declared_parameter(node):
    module = param_docs.params_module(node)
    table = param_docs.node_params(node)
    mappings = [m for m in vars(module).values() if isinstance(m, ConfigFields)]
    for m in mappings:
        fields = set(m.fields())
        named = set(m.renamed) | set(m.derived) | set(m.fixed)
        assert named <= fields, f'{node}: {m.config.__name__} has no fields {sorted(named - fields)}'
        missing = [f for f in m.fields() if m.parameter(f) is not None and m.parameter(f) not in table]
        assert not missing, (f'{node}: {m.config.__name__} fields {missing} have no parameter of that name: '
                             'add it to the table, or map the field in renamed/derived/fixed')


@pytest.mark.parametrize('node', sorted(param_docs.NODES))
def test_the_node_class_takes_its_table_from_params_py(node):
    package = param_docs.NODES[node]
    node_file = ROOT / 'src' / package / package / node / 'node.py'
    declared = [n.lineno for n in ast.walk(ast.parse(node_file.read_text()))
                if isinstance(n, ast.Call) and getattr(n.func, 'id', None) == 'Param']
    assert not declared, f'{node_file.relative_to(ROOT)}:{declared}: parameters are declared in params.py only'
    module = importlib.import_module(f'{package}.{node}.node')
    classes = [c for c in vars(module).values()
               if isinstance(c, type) and c.__module__ == module.__name__ and 'PARAMS' in vars(c)]
    assert classes and all(c.PARAMS is param_docs.params_module(node).PARAMS for c in classes)


def test_the_report_reads_designed_values_from_the_recorded_parameters():
    from hil_nodes.report import designed
    from hil_nodes.timebase import params as timebase_params
    defaults, _ = designed.chain_design({})
    tb = param_docs.node_params('timebase')
    assert defaults.buffer_delay_s == pytest.approx((tb['default_distance'].default + 1.5) * tb['move_time'].default
                                                    + tb['segmentation_time'].default)
    run = {'ft_sensor': {'filter_cutoff_hz': 20.0},
           'timebase': {'default_distance': 3, 'max_gap_fill': 3, 'lockstep': True}}
    design, notes = designed.chain_design(run)
    assert not notes and design.buffer_delay_s == pytest.approx(defaults.buffer_delay_s + 0.0025)
    assert design.filter_delay_s > 1.9 * defaults.filter_delay_s        # half the cut-off: about twice the delay
    assert design.wr_distance == 3                                       # lockstep: the default distance
    realtime = {'timebase': {'lockstep': False, 'lead_frames': 1}}
    assert designed.chain_design(realtime)[0].wr_distance == designed.wr_distance(realtime) == 1
    # the node's own rule, from the same values
    values = SimpleNamespace(**{p.name: p.default for p in tb.values()})
    assert timebase_params.designed_distance(values) == tb['default_distance'].default - tb['lead_frames'].default
    refused = designed.chain_design({'timebase': {'default_distance': 5, 'buffer_size': 4}})
    assert refused[0].buffer_delay_s == defaults.buffer_delay_s and 'refused' in refused[1][0]
