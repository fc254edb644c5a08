"""package.xml says what each package needs: its imports, mapped to rosdep keys, and nothing else
(docs/lab.md has the map). A lab machine's `rosdep install --from-paths src` then installs what
the code imports; CI here gets the same from requirements.txt."""
import ast
import pathlib
import sys
import xml.etree.ElementTree as ET

import yaml

from hil_nodes.bringup.plan import bringup_plan
from hil_nodes.bringup.system import load_system

ROOT = pathlib.Path(__file__).resolve().parents[2]
PACKAGES = ('hil_core', 'hil_nodes', 'hil_sim')

# Python module -> rosdep key (rosdistro's rosdep/python.yaml, the kilted distribution, or this
# repository's rosdep.yaml). ROS packages are imported under their package name.
MODULE_KEYS = {
    'numpy': 'python3-numpy', 'scipy': 'python3-scipy', 'yaml': 'python3-yaml',
    'matplotlib': 'python3-matplotlib', 'numba': 'python3-numba', 'ruamel': 'python3-ruamel.yaml',
    'psutil': 'python3-psutil',
    'rosbags': 'python3-rosbags-pip', 'ruckig': 'python3-ruckig-pip', 'pinocchio': 'pinocchio',
    'mcap': 'python3-mcap-pip', 'mcap_ros2': 'mcap-ros2-support', 'viser': 'python3-viser-pip',
    'foxglove': 'python3-foxglove-sdk-pip',
    'websockets': 'python3-websockets', 'imageio': 'python3-imageio',
    'pytest': 'python3-pytest', 'hypothesis': 'python3-hypothesis', 'xdist': 'python3-pytest-xdist',
}
# keys with no import: pytest.ini's --timeout needs the plugin
NOT_IMPORTED_TEST_KEYS = {'python3-pytest-timeout'}
# launched only on request, so declared with a REP 149 condition a headless lab PC sets false:
# rviz2 (launch/rviz.launch.py, included with rviz:=true; hil.launch.py refuses rviz:=true without it)
OPTIONAL_LAUNCHED = {'rviz2': '$HIL_SUITE_HEADLESS != 1'}


def imported_modules(paths) -> set[str]:
    """Top-level names of absolute imports, standard library left out."""
    names = set()
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.Import):
                names.update(a.name.split('.')[0] for a in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names.add(node.module.split('.')[0])
    return {n for n in names if n not in sys.stdlib_module_names}


def rosdep_key(module: str) -> str:
    return MODULE_KEYS.get(module, module)


def declared(package: str, *tags: str) -> set[str]:
    """The unconditional dependencies of these kinds (conditional ones: `conditional`)."""
    tree = ET.parse(ROOT / 'src' / package / 'package.xml')
    return {e.text.strip() for tag in tags for e in tree.getroot().iter(tag) if 'condition' not in e.attrib}


def conditional(package: str, *tags: str) -> dict[str, str]:
    """REP 149 conditional dependencies of these kinds: name -> condition."""
    tree = ET.parse(ROOT / 'src' / package / 'package.xml')
    return {e.text.strip(): e.get('condition') for tag in tags for e in tree.getroot().iter(tag)
            if 'condition' in e.attrib}


def sources(package: str) -> list[pathlib.Path]:
    files = list((ROOT / 'src' / package / package).rglob('*.py'))
    if package == 'hil_nodes':                      # the launch files are installed with hil_nodes
        files += list((ROOT / 'launch').glob('*.py'))
    return files


def launched_packages() -> set[str]:
    """Packages hil_nodes' launch files always start: the lab side of every system's hardware
    mode and the plugin packages of the controllers config/controllers.yaml declares (rviz2, started
    only with rviz:=true, is OPTIONAL_LAUNCHED)."""
    out = set()
    for path in (ROOT / 'config' / 'systems').glob('*.yaml'):
        plan = bringup_plan(load_system(str(path)), mode='hardware')
        out |= {p.package for p in plan.lab_processes}
    cm = yaml.safe_load((ROOT / 'config' / 'controllers.yaml').read_text())['controller_manager']['ros__parameters']
    out |= {v['type'].split('/')[0] for v in cm.values() if isinstance(v, dict) and 'type' in v}
    return out


def test_every_import_is_declared_and_every_dependency_imported():
    for package in PACKAGES:
        needed = {rosdep_key(m) for m in imported_modules(sources(package))} - {package}
        have = declared(package, 'exec_depend', 'depend')
        extra = launched_packages() if package == 'hil_nodes' else set()
        assert needed - have == set(), f'{package}: imported but not in package.xml'
        assert have - needed - extra == set(), f'{package}: in package.xml but never imported or launched'


def test_optional_launched_packages_are_conditional_dependencies():
    """rviz2 is a REP 149 conditional dependency of hil_nodes, under the condition docs/lab.md
    gives (HIL_SUITE_HEADLESS=1 rosdep install leaves it out); nothing else is conditional, and
    nothing the code imports or always launches is."""
    assert conditional('hil_nodes', 'exec_depend', 'depend') == OPTIONAL_LAUNCHED
    assert not set(OPTIONAL_LAUNCHED) & (launched_packages() | declared('hil_nodes', 'exec_depend', 'depend'))
    for package in ('hil_core', 'hil_sim'):
        assert conditional(package, 'exec_depend', 'depend', 'test_depend', 'build_depend') == {}


def test_the_suite_imports_are_test_dependencies_of_hil_sim():
    """colcon test runs test/ as hil_sim's tests (colcon.meta): hil_sim is the top of the
    dependency graph, so every package the suite imports is reachable from it."""
    local = {p.stem for p in (ROOT / 'test').rglob('*.py')}
    needed = {rosdep_key(m) for m in imported_modules((ROOT / 'test').rglob('*.py'))} - local - {'hil_sim'}
    have = declared('hil_sim', 'exec_depend', 'depend', 'test_depend')
    assert needed - have == set(), 'imported by test/ but not a dependency of hil_sim'
    tests_only = declared('hil_sim', 'test_depend')
    assert tests_only - needed - NOT_IMPORTED_TEST_KEYS == set(), 'test_depend that test/ never imports'


def test_no_dependency_cycle_and_pip_keys_defined():
    """colcon refuses a cycle of any dependency kind (hil_nodes must not depend on hil_sim, even
    for tests); keys rosdistro lacks are defined in rosdep.yaml."""
    graph = {p: declared(p, 'exec_depend', 'depend', 'test_depend', 'build_depend') & set(PACKAGES)
             for p in PACKAGES}
    assert graph == {'hil_core': set(), 'hil_nodes': {'hil_core'}, 'hil_sim': {'hil_core', 'hil_nodes'}}
    local_keys = yaml.safe_load((ROOT / 'rosdep.yaml').read_text())
    every_key = set().union(*(declared(p, 'exec_depend', 'test_depend') for p in PACKAGES))
    assert {'python3-ruckig-pip'} <= set(local_keys) and set(local_keys) <= every_key
    for key in local_keys:
        assert local_keys[key]['ubuntu']['pip']['packages'], key


def test_imports_scan_sees_a_missing_dependency(tmp_path):
    """The scan itself: an import of an undeclared package is found."""
    module = tmp_path / 'm.py'
    module.write_text('import os\nimport numpy as np\nfrom rclpy.node import Node\nfrom . import sibling\n')
    assert {rosdep_key(m) for m in imported_modules([module])} == {'python3-numpy', 'rclpy'}
