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
            module = ROOT / 'src' / pkg / pkg / f'{name}.py'
            assert module.exists(), f'{pkg} lists console script {name} but {module} is missing'
            assert re.search(r'^def main|^main = ', module.read_text(), re.M), f'{module} has no main'
