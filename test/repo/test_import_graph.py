"""The import graph of the suite's Python packages: no cycle, hil_core in layers, few loose modules,
one naming rule for compiled code.

hil_core is grouped by what it models (DESIGN.md, "Repository layout"). A cycle, or an import
running from a lower package back up to a higher one, ties packages together so that none can
be read, tested or changed on its own. Every module is parsed with ``ast``; nothing is
imported. Every import counts, also one inside a function (it runs as soon as the function
does).
"""
import ast
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[2]
SRC = ROOT / 'src'

# Layer of each part of hil_core; a module belongs to the longest part that names it or its
# package. A module imports its own part and parts of lower layers only: two parts of one layer
# never import each other, so the table fixes the one direction between any two areas.
LAYERS = {
    # 0: shared maths (rotations, TF frames, the numba cache) and small helpers every area may
    # use; they use nothing of hil_core
    'hil_core.maths': 0, 'hil_core.data_paths': 0, 'hil_core.fault_injection': 0, 'hil_core.shm_cleanup': 0,
    'hil_core.config_check': 0,
    # 1: the supervision vocabulary the areas react to (HIL modes, cycle timing health)
    'hil_core.supervision': 1,
    # 2: models that stand on the shared maths alone (drives: servo axes, JTC rules, joint friction)
    'hil_core.ft': 2, 'hil_core.admittance': 2, 'hil_core.hexaslide': 2, 'hil_core.hybrid5': 2,
    'hil_core.drives': 2,
    # 3: models built on one of those: the time base solves the hexaslide IK, the planner limits
    # the hexaslide workspace, the iiwa's simulated joints use the drives' joint friction
    'hil_core.timebase': 3, 'hil_core.planner': 3, 'hil_core.iiwa': 3,
    # 4: the space manipulator carries the iiwa; the mock's plants wrap the servo axes, the iiwa
    # arm and the hybrid robot, so drives.plants sits above the rest of drives and the models
    'hil_core.space': 4, 'hil_core.drives.plants': 4,
    # 5: transparency judges a run against the admittance model, the F/T chain and the time base
    'hil_core.transparency': 5,
    # 6: message accounting reports with transparency's validity records; warmup loads every area
    'hil_core.accounting': 6, 'hil_core.warmup': 6,
}
MAX_LOOSE_MODULES = 8


def modules(package_dir: pathlib.Path) -> dict[str, pathlib.Path]:
    """Dotted module name -> file, for every module of the package at ``package_dir``."""
    out = {}
    for path in sorted(package_dir.rglob('*.py')):
        parts = [package_dir.name, *path.relative_to(package_dir).with_suffix('').parts]
        if parts[-1] == '__init__':
            parts.pop()
        out['.'.join(parts)] = path
    return out


def _import_nodes(tree: ast.AST, in_functions: bool):
    """Import statements of a module; below a def or lambda only when ``in_functions``."""
    stack = [tree]
    while stack:
        node = stack.pop()
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                yield child
            elif in_functions or not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                stack.append(child)


def imports_of(name: str, path: pathlib.Path, known: dict, in_functions: bool) -> dict[str, int]:
    """Modules of ``known`` that module ``name`` imports -> line of the first such import.
    ``from package import x`` imports the module ``package.x`` when there is one, else the package."""
    own_package = name.split('.') if path.name == '__init__.py' else name.split('.')[:-1]
    found = {}
    for node in _import_nodes(ast.parse(path.read_text(), filename=str(path)), in_functions):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        else:
            if node.level:
                base = own_package[:len(own_package) - node.level + 1]
                module = '.'.join(base + ([node.module] if node.module else []))
            else:
                module = node.module
            targets = [f'{module}.{a.name}' if f'{module}.{a.name}' in known else module for a in node.names]
        for target in targets:
            while target and target not in known:       # an attribute of a module: the module
                target = target.rpartition('.')[0]
            if target and target != name:
                found.setdefault(target, node.lineno)
    return found


def import_graph(package_dirs, in_functions: bool) -> dict[str, dict[str, int]]:
    known = {}
    for package_dir in package_dirs:
        known.update(modules(package_dir))
    return {name: imports_of(name, path, known, in_functions) for name, path in known.items()}


def cycles(graph: dict) -> list[list[str]]:
    """One import cycle (a -> b -> ... -> a) per strongly connected set of modules (Tarjan)."""
    index, low, on_stack, stack, found = {}, {}, set(), [], []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            members = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                members.add(w)
                if w == v:
                    break
            if len(members) > 1:
                found.append(_path_back(v, members, graph))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def _path_back(start: str, members: set, graph: dict) -> list[str]:
    """Shortest path start -> ... -> start inside one strongly connected set."""
    paths, seen = [[start]], {start}
    while paths:
        path = paths.pop(0)
        for w in sorted(graph[path[-1]]):
            if w == start:
                return path + [start]
            if w in members and w not in seen:
                seen.add(w)
                paths.append(path + [w])
    raise AssertionError(f'no cycle through {start}')


def part_of(name: str) -> str | None:
    """The part of hil_core (a key of LAYERS) that module ``name`` belongs to."""
    parts = name.split('.')
    for k in range(len(parts), 0, -1):
        if '.'.join(parts[:k]) in LAYERS:
            return '.'.join(parts[:k])
    return None


CORE = import_graph([SRC / 'hil_core' / 'hil_core'], in_functions=True)


def test_hil_core_has_no_import_cycle():
    found = cycles(CORE)
    assert not found, 'import cycles in hil_core: ' + '; '.join(' -> '.join(c) for c in found)


def test_every_hil_core_module_has_a_layer():
    unplaced = [name for name in CORE if name != 'hil_core' and part_of(name) is None]
    assert not unplaced, f'add these to LAYERS in {pathlib.Path(__file__).name}: {unplaced}'


def test_hil_core_imports_only_its_own_part_or_lower_layers():
    upward = []
    for name, imported in CORE.items():
        mine = part_of(name)
        for target, line in imported.items():
            theirs = part_of(target)
            if mine and theirs and theirs != mine and LAYERS[theirs] >= LAYERS[mine]:
                upward.append(f'{name}:{line} ({mine}, layer {LAYERS[mine]}) imports {target} '
                              f'({theirs}, layer {LAYERS[theirs]})')
    assert not upward, 'imports that do not go down the layers:\n' + '\n'.join(upward)


def test_the_root_package_and_maths_import_no_other_part():
    assert not CORE['hil_core']
    for name, imported in CORE.items():
        if part_of(name) == 'hil_core.maths':
            assert all(part_of(t) == 'hil_core.maths' for t in imported), (name, imported)


def test_hil_core_has_few_loose_top_level_modules():
    loose = sorted(p.name for p in (SRC / 'hil_core' / 'hil_core').glob('*.py') if p.name != '__init__.py')
    assert len(loose) <= MAX_LOOSE_MODULES, f'{len(loose)} loose modules in hil_core: {loose}'


def test_compiled_code_follows_one_naming_rule():
    """``X.py`` public (with ``warm_up()``), ``X_numpy.py`` the plain-numpy oracle, ``X_kernel.py``
    the numba kernels; ``njit_cached`` in ``maths/jit.py``. A kernel or twin never imports its
    public module (the public module builds on them)."""
    problems = []
    for name, path in modules(SRC / 'hil_core' / 'hil_core').items():
        package, _, leaf = name.rpartition('.')
        stem, _, role = leaf.rpartition('_')
        public = f'{package}.{stem}'
        if role != 'kernel' and name != 'hil_core.maths.jit' and _compiles(path):
            problems.append(f'{name} compiles with numba: kernels live in a *_kernel.py module')
        if role in ('kernel', 'numpy'):
            if public not in CORE:
                problems.append(f'{name} has no public module {public}')
            elif public in CORE[name]:
                problems.append(f'{name} imports its public module {public}')
    assert not problems, '\n'.join(problems)


def _compiles(path: pathlib.Path) -> bool:
    """The module imports numba or decorates with njit_cached."""
    tree = ast.parse(path.read_text())
    for node in _import_nodes(tree, in_functions=True):
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or '']
        if any(n == 'numba' or n.startswith('numba.') for n in names):
            return True
    return any(isinstance(n, ast.Name) and n.id == 'njit_cached' for n in ast.walk(tree))


def test_every_public_compiled_module_warms_up():
    import hil_core.warmup
    for name in hil_core.warmup.GROUPS:
        path = modules(SRC / 'hil_core' / 'hil_core')[name]
        defined = {n.name for n in ast.parse(path.read_text()).body if isinstance(n, ast.FunctionDef)}
        assert 'warm_up' in defined, f'{name} is in hil_core.warmup.GROUPS but defines no warm_up()'


NODES = import_graph([SRC / 'hil_nodes' / 'hil_nodes', SRC / 'hil_sim' / 'hil_sim'], in_functions=True)


def test_hil_nodes_and_hil_sim_have_no_import_cycle():
    found = cycles(NODES)
    assert not found, 'import cycles in hil_nodes/hil_sim: ' + '; '.join(' -> '.join(c) for c in found)


def test_hil_nodes_has_few_top_level_modules():
    loose = sorted(p.name for p in (SRC / 'hil_nodes' / 'hil_nodes').glob('*.py') if p.name != '__init__.py')
    assert len(loose) <= MAX_LOOSE_MODULES, f'{len(loose)} top-level modules in hil_nodes: {loose}'


def test_the_cycle_finder_reports_a_cycle():
    graph = {'a': {'b': 1}, 'b': {'c': 1}, 'c': {'a': 1, 'd': 1}, 'd': {}}
    assert cycles(graph) == [['a', 'b', 'c', 'a']]
    assert cycles({'a': {'b': 1}, 'b': {}}) == []
