"""Compiled kernels a node process loads after a node activated: the evidence that no numba
kernel is compiled, or loaded from its cache, in the middle of a run.

Each such load took 2.5-9 ms here, in the thread of every node of the process. A kernel is
loaded per signature: a read-only array, another dtype or layout is a signature of its own, so a
kernel warmed at configure with other argument types loads again at its first real call (the
time base's IK and the drives' plain-trajectory kernel did, at the first trajectory: 6 ms).

With ``HIL_KERNEL_LOADS=<dir>`` a node process (hil_nodes.runtime.runner) wraps numba's
``Dispatcher.compile``, creates ``<dir>/kernel_loads.<pid>.txt`` at start and appends every
compile or cache load that happens after the first activation in the process (wall time,
kernel, signature). An empty file is the evidence; `test/system/test_hil_run_hexafloat.py`
runs both layouts with it.
"""
from __future__ import annotations

import os
import pathlib
import time

_state = {'path': None, 'armed': False}


def install_from_env() -> None:
    """Install the hook when ``HIL_KERNEL_LOADS`` names a directory (node processes only)."""
    folder = os.environ.get('HIL_KERNEL_LOADS')
    if not folder:
        return
    from numba.core.dispatcher import Dispatcher
    path = pathlib.Path(folder) / f'kernel_loads.{os.getpid()}.txt'
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text('')
    _state['path'] = path
    compile_ = Dispatcher.compile

    def compile_and_record(self, sig):
        if _state['armed']:
            with path.open('a') as f:
                f.write(f'{time.time():.6f} {self.py_func.__module__}.{self.py_func.__qualname__} {sig}\n')
        return compile_(self, sig)
    Dispatcher.compile = compile_and_record


def arm() -> None:
    """A node of the process activated: from now on a kernel load is recorded."""
    _state['armed'] = True
