"""Repository rules that keep the architecture honest, read from the files alone.

Where a test lives says what it needs:
- test/unit/: pure hil_core. No file there imports hil_nodes, hil_sim, rclpy or a message
  package, not even inside a function (test_unit_tests_are_pure_hil_core), so they run without ROS.
- test/nodes/: every test that imports hil_nodes, hil_sim, rclpy or a message package: the nodes
  over DDS (one shared rig, test/nodes/rig.py), and the pure-Python tools of hil_nodes (bring-up
  plan, report, CLI, bag writer) as well, whose home is the same package.
- test/system/: whole runs of the `hil` command.
- test/repo/: rules about the repository as files (this one, package.xml against the imports):
  they may import any package to read what it declares.
"""
import ast
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _imports(path: pathlib.Path):
    """(line, module) of every import in a file, at any depth (function-level ones too)."""
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            yield from ((node.lineno, a.name) for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            yield node.lineno, node.module


def _is_ros(module: str) -> bool:
    parts = module.split('.')
    return parts[0] == 'rclpy' or any(part.endswith('_msgs') for part in parts)


def test_hil_core_never_imports_rclpy():
    offenders = [f'{path.relative_to(ROOT)}:{line}' for path in (ROOT / 'src' / 'hil_core').rglob('*.py')
                 for line, module in _imports(path) if _is_ros(module)]
    assert not offenders, f'hil_core must stay ROS-free: {offenders}'


def test_unit_tests_are_pure_hil_core():
    offenders = [f'{path.relative_to(ROOT)}:{line} imports {module}'
                 for path in sorted((ROOT / 'test' / 'unit').rglob('*.py')) for line, module in _imports(path)
                 if _is_ros(module) or module.split('.')[0] in ('hil_nodes', 'hil_sim')]
    assert not offenders, 'test/unit is pure hil_core; these belong in test/nodes (or test/repo): ' + \
        ', '.join(offenders)


def test_every_console_script_has_a_module_with_main():
    for pkg in ('hil_nodes', 'hil_sim'):
        setup = (ROOT / 'src' / pkg / 'setup.py').read_text()
        names = re.search(r'NODES = \[(.*?)\]', setup, re.S).group(1)
        for name in re.findall(r"'(\w+)'", names):
            module = ROOT / 'src' / pkg / pkg / name / 'node.py'
            assert module.exists(), f'{pkg} lists console script {name} but {module} is missing'
            assert re.search(r'^def main|^main = ', module.read_text(), re.M), f'{module} has no main'


# Attributes rclpy's Node keeps for the executor: a subclass that assigns one of them silently
# removes entities from the executor (e.g. `self._timers = []` drops the heartbeat timers).
_NODE_PRIVATE = ('_timers', '_subscriptions', '_publishers', '_services', '_clients', '_guards',
                 '_waitables', '_parameters', '_clock', '_logger', '_context')


def _base_names(cls: ast.ClassDef) -> list[str]:
    return [b.id if isinstance(b, ast.Name) else getattr(b, 'attr', '') for b in cls.bases]


def test_nodes_never_overwrite_rclpy_node_internals():
    offenders = []
    for pkg in ('hil_nodes', 'hil_sim'):
        for path in (ROOT / 'src' / pkg / pkg).rglob('*.py'):
            tree = ast.parse(path.read_text())
            for cls in (n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)):
                if not any('Node' in b for b in _base_names(cls)):
                    continue
                for node in ast.walk(cls):
                    targets = node.targets if isinstance(node, ast.Assign) else (
                        [node.target] if isinstance(node, (ast.AugAssign, ast.AnnAssign)) else [])
                    for t in targets:
                        if (isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name)
                                and t.value.id == 'self' and t.attr in _NODE_PRIVATE):
                            offenders.append(f'{path.relative_to(ROOT)}:{node.lineno}: self.{t.attr}')
    assert not offenders, 'these shadow rclpy Node attributes: ' + ', '.join(offenders)
