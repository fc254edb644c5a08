"""Repository rules that keep the architecture honest."""
import ast
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_hil_core_never_imports_rclpy():
    offenders = []
    for path in (ROOT / 'src' / 'hil_core').rglob('*.py'):
        tree = ast.parse(path.read_text(), filename=str(path))
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            if any(n == 'rclpy' or n.startswith('rclpy.') or n.endswith('_msgs') or '_msgs.' in n
                   for n in names):
                offenders.append(f'{path.relative_to(ROOT)}:{node.lineno}')
    assert not offenders, f'hil_core must stay ROS-free: {offenders}'


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
