"""`hil bench [NAME ...]`: run the scripts in bench/ and print their `name: value unit` lines."""
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
    failed = 0
    for name in names:
        print(f'# {name}', flush=True)
        proc = subprocess.run([sys.executable, str(scripts[name])], capture_output=True, text=True)
        for line in proc.stdout.splitlines():
            if FIGURE.match(line.strip()):
                print(line.strip(), flush=True)
        if proc.returncode != 0:
            failed += 1
            print(f'{name}.failed: 1 (exit {proc.returncode})', flush=True)
            print(proc.stderr[-2000:], file=sys.stderr)
    return 1 if failed else 0
