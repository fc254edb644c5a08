"""`hil bench [NAME ...]`: run the scripts in bench/ and print their `name: value unit` lines, with
the machine's calibration (bench/_calibration.py) before and after them: machines of one kind
differ 2-3x in speed, so a figure is given with the calibration of the machine and the hour it
was measured in (docs/realtime.md, "Measured")."""
from __future__ import annotations

import pathlib
import re
import subprocess
import sys

from hil_nodes.bringup.system import repo_root

FIGURE = re.compile(r'^[\w.\-/\[\]]+: \S+( \S+)?$')


def add_parser(sub) -> None:
    p = sub.add_parser('bench', help='run benchmarks in bench/ and print their figures')
    p.add_argument('names', nargs='*', help='bench script names without .py (default: all)')
    p.add_argument('--list', action='store_true', help='list the available benchmarks')
    p.set_defaults(func=run)


def available() -> dict[str, pathlib.Path]:
    return {p.stem: p for p in sorted((repo_root() / 'bench').glob('*.py')) if not p.stem.startswith('_')}


def run(args) -> int:
    scripts = available()
    if args.list:
        for name in scripts:
            print(name)
        return 0
    names = args.names or list(scripts)
    unknown = [n for n in names if n not in scripts]
    if unknown:
        print(f'hil bench: unknown benchmark(s) {unknown}; available: {", ".join(scripts)}', file=sys.stderr)
        return 2
    calibration = repo_root() / 'bench' / '_calibration.py'
    failed = _run_script('calibration', calibration)
    for name in names:
        failed += _run_script(name, scripts[name])
    if names:
        failed += _run_script('calibration (after)', calibration)
    return 1 if failed else 0


def _run_script(title: str, script: pathlib.Path) -> int:
    """Run one bench script, print its figure lines under ``# title``; 1 if it failed."""
    print(f'# {title}', flush=True)
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True)
    for line in proc.stdout.splitlines():
        if FIGURE.match(line.strip()):
            print(line.strip(), flush=True)
    if proc.returncode != 0:
        print(f'{script.stem}.failed: 1 (exit {proc.returncode})', flush=True)
        print(proc.stderr[-2000:], file=sys.stderr)
        return 1
    return 0
