"""How much of a stage's frame is its compiled kernels, and how much the Python around them.

docs/realtime.md asks each chain stage's own work outside its compiled kernels to stay under a
bound per frame (its "glue"). The ``<node>: cycle`` status measures a frame's CPU time as a
whole (``cpu_p50_us``); with ``HIL_KERNEL_TIMES=1`` a node process (hil_nodes.runtime.runner)
also times every call from Python into a numba kernel, and each cycle's status then reports
``kernel_cpu_p50_us`` (the frame's CPU inside kernels) and ``glue_cpu_p50_us`` (the frame's CPU
outside them: the p50 of ``cpu - kernel`` over the same cycles; hil_nodes.framework.cycle_status).

How: numba's ``Dispatcher.__call__`` (the entry from Python into a compiled kernel; a kernel
calling another kernel does not pass through it) is wrapped to add the calling thread's CPU
time inside the call to a per-thread total. A cycle takes the difference of that total over
its ``with`` block. The wrapper costs about 1 us per kernel call here (measured: 1.27 us for a
wrapped call of a trivial kernel against 0.46 us), part of it counted as glue, so the figures
are an upper bound of the glue and the hook is for measuring (``hil bench headroom``'s glue
run), not for runs whose timing matters.
"""
from __future__ import annotations

import os
import threading
import time

_local = threading.local()
_thread_time = time.thread_time
ENABLED = False


def spent() -> float:
    """CPU seconds this thread has spent inside compiled kernels since the hook was installed."""
    return getattr(_local, 'cpu', 0.0)


def dispatcher_class():
    """numba's ``Dispatcher``, the class whose calls are timed."""
    from numba.core.dispatcher import Dispatcher
    return Dispatcher


def install() -> None:
    """Time every call into a numba kernel from now on (see the module docstring); idempotent."""
    global ENABLED
    if ENABLED:
        return
    Dispatcher = dispatcher_class()
    call = Dispatcher.__call__

    def timed_call(self, *args, **kwargs):
        t0 = _thread_time()
        try:
            return call(self, *args, **kwargs)
        finally:
            _local.cpu = getattr(_local, 'cpu', 0.0) + (_thread_time() - t0)
    Dispatcher.__call__ = timed_call
    ENABLED = True


def install_from_env() -> None:
    """Install the hook when ``HIL_KERNEL_TIMES=1`` (node processes only)."""
    if os.environ.get('HIL_KERNEL_TIMES') == '1':
        install()
