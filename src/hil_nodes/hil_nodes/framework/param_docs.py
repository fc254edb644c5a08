"""Every node's parameters as one markdown page each, generated from its Param table.

A node declares its parameters once, in ``<package>/<node>/params.py`` (``PARAMS``); the pages
``docs/parameters/<node>.md``, ``docs/parameters/common.md`` (``HilLifecycleNode.COMMON_PARAMS``,
taken by every node but the supervisor) and the index ``docs/parameters/README.md`` are written
from those tables and never by hand. ``NODES`` is the list of nodes; ``node_params`` gives a
node's full table (common parameters, then its own, which win), as the node declares them.

    python -m hil_nodes.framework.param_docs            # write the pages
    python -m hil_nodes.framework.param_docs --check    # exit 1 if a page is stale

The repository test test_param_home.py runs the check, and checks the config files and the
hand-written tables of docs/ against the same tables.
"""
from __future__ import annotations

import argparse
import importlib
import pathlib
import sys
from types import ModuleType

from hil_core.data_paths import checkout_root
from hil_nodes.framework.base import HilLifecycleNode
from hil_nodes.framework.param_sources import TYPE_NAMES
from hil_nodes.framework.param_table import REQUIRED, Param

# node (its executable: <package>/<node>/params.py) -> package
NODES = {
    'admittance': 'hil_nodes', 'ft_sensor': 'hil_nodes', 'planner': 'hil_nodes', 'timebase': 'hil_nodes',
    'kinematics': 'hil_nodes', 'supervisor': 'hil_nodes', 'space_plant': 'hil_nodes',
    'hybrid_controller': 'hil_nodes', 'recorder': 'hil_nodes', 'hmi': 'hil_nodes',
    'joy_wrench': 'hil_nodes', 'view_throttle': 'hil_nodes',
    'mock_hardware': 'hil_sim', 'mock_ft': 'hil_sim', 'reference_source': 'hil_sim', 'reference_faults': 'hil_sim',
}
# plain rclpy nodes, not HilLifecycleNodes: each declares its own table only (no common parameters)
STANDALONE = frozenset({'supervisor', 'hmi', 'joy_wrench', 'view_throttle'})
COMMON_PAGE = 'common'
PAGES_DIR = pathlib.Path('docs') / 'parameters'
COMMAND = 'python -m hil_nodes.framework.param_docs'


def params_module(node: str) -> ModuleType:
    return importlib.import_module(f'{NODES[node]}.{node}.params')


def node_params(node: str) -> dict[str, Param]:
    """The node's full table, name -> Param: the common parameters, then its own (which win)."""
    common = () if node in STANDALONE else HilLifecycleNode.COMMON_PARAMS
    return {p.name: p for p in (*common, *params_module(node).PARAMS)}


def format_value(value) -> str:
    """A value as a YAML parameter file writes it (a double always with its decimal point: an
    integer where a double is declared is refused)."""
    if value is REQUIRED:
        return 'required'
    if isinstance(value, bool):
        return 'true' if value else 'false'
    if isinstance(value, float):
        text = format(value, '.12g')
        return text + '.0' if text.lstrip('-').isdigit() else text
    if isinstance(value, str):
        return value if value else "''"
    if isinstance(value, (list, tuple)):
        return '[' + ', '.join(format_value(v) for v in value) + ']'
    return str(value)


def _cell(text: str) -> str:
    return text.replace('|', '\\|').replace('\n', ' ')


def _text_cell(text: str) -> str:
    """A cell of prose: '<node>' is text, not an HTML tag."""
    return _cell(text).replace('<', '&lt;').replace('>', '&gt;')


def _constraints(p: Param) -> str:
    parts = [p.constraints()] if p.constraints() else []
    if p.read_only:
        parts.append('read-only')
    return '; '.join(parts)


def table(params) -> str:
    rows = ['| name | type | default | constraints | description |', '| --- | --- | --- | --- | --- |']
    for p in params:
        rows.append(f'| `{p.name}` | {TYPE_NAMES[p.type]} | `{_cell(format_value(p.default))}` | '
                    f'{_text_cell(_constraints(p))} | {_text_cell(p.description)} |')
    return '\n'.join(rows) + '\n'


def _header(title: str, source: str) -> str:
    return (f'# {title}\n\n'
            f'<!-- generated from {source} by `{COMMAND}`: edit the table there, then run it -->\n\n')


def node_page(node: str) -> str:
    package = NODES[node]
    source = f'src/{package}/{package}/{node}/params.py'
    own = params_module(node).PARAMS
    text = _header(f'`{node}` parameters', source)
    text += (f'The parameters of the `{node}` node (`{package}.{node}.node`), as its Param table declares '
             f'them: [`{source}`](../../{source}), the only place they are declared. ')
    if node in STANDALONE:
        text += 'It is a plain rclpy node and takes these parameters only (no common ones).\n\n'
    else:
        redeclared = sorted(p.name for p in own if p.name in {c.name for c in HilLifecycleNode.COMMON_PARAMS})
        text += 'It also takes the [common parameters](common.md) of every node'
        text += (': ' + ', '.join(f'`{n}`' for n in redeclared) + ' it declares again below, with its own '
                 'default and meaning.\n\n' if redeclared else '.\n\n')
    text += ('A double is written with its decimal point in a parameter file (`1.0`, not `1`): '
             'an integer where a double is declared refuses the configuration.\n\n')
    return text + table(own)


def common_page() -> str:
    source = 'src/hil_nodes/hil_nodes/framework/base.py'
    text = _header('Common parameters', f'{source} (HilLifecycleNode.COMMON_PARAMS)')
    text += (f'Every node but the supervisor takes these (`HilLifecycleNode.COMMON_PARAMS` in '
             f'[`{source}`](../../{source})); a node that declares one again in its own table '
             'gives it its own default there.\n\n')
    return text + table(HilLifecycleNode.COMMON_PARAMS)


def index_page() -> str:
    text = _header('Node parameters', 'the nodes\' params.py files')
    text += ('One page per node, generated from its Param table (`<package>/<node>/params.py`, the only '
             'place a parameter is declared). The config files under `config/` and the parameter tables '
             'elsewhere in docs/ are checked against these tables by the repository test '
             'test_param_home.py.\n\n'
             '| node | package | parameters |\n| --- | --- | --- |\n')
    for node, package in NODES.items():
        text += f'| [`{node}`]({node}.md) | {package} | {len(params_module(node).PARAMS)} |\n'
    text += f'| [common](common.md) | hil_nodes (every node but the supervisor) | ' \
            f'{len(HilLifecycleNode.COMMON_PARAMS)} |\n'
    return text


def pages() -> dict[str, str]:
    """File name (in docs/parameters/) -> text."""
    out = {f'{node}.md': node_page(node) for node in NODES}
    out[f'{COMMON_PAGE}.md'] = common_page()
    out['README.md'] = index_page()
    return out


def stale_pages(folder: pathlib.Path) -> list[str]:
    """The pages in ``folder`` that are missing or differ from their tables, and stray pages."""
    wanted = pages()
    stale = [name for name, text in wanted.items()
             if not (folder / name).is_file() or (folder / name).read_text() != text]
    stray = [p.name for p in folder.glob('*.md') if p.name not in wanted] if folder.is_dir() else []
    return sorted(stale + stray)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog=COMMAND, description=__doc__.split('\n')[0])
    parser.add_argument('--check', action='store_true', help='exit 1 if a page is missing or stale')
    parser.add_argument('--out', type=pathlib.Path, help='folder of the pages (default: docs/parameters of the '
                        'source checkout)')
    args = parser.parse_args(argv)
    folder = args.out
    if folder is None:
        root = checkout_root()
        if root is None:
            parser.error('not running from the source checkout: give --out')
        folder = root / PAGES_DIR
    if args.check:
        stale = stale_pages(folder)
        if stale:
            print(f'{folder}: stale or stray: {", ".join(stale)}; run `{COMMAND}`', file=sys.stderr)
            return 1
        return 0
    folder.mkdir(parents=True, exist_ok=True)
    wanted = pages()
    for name, text in wanted.items():
        path = folder / name
        if not path.is_file() or path.read_text() != text:
            path.write_text(text)
            print(f'wrote {path}')
    for path in folder.glob('*.md'):     # the folder holds generated pages only
        if path.name not in wanted:
            path.unlink()
            print(f'removed {path} (no such node)')
    return 0


if __name__ == '__main__':
    sys.exit(main())
