"""A process of the suite that crashes in native code says where: Python's fault handler.

A segmentation fault in rclpy, Fast DDS or a compiled kernel ends a process without a Python
traceback; all that is left is an exit code of -11 (`hil bench headroom` once got one from a
`hil run` launcher, with nothing to tell which thread or call). ``faulthandler`` writes every
thread's Python stack to stderr on SIGSEGV, SIGFPE, SIGABRT, SIGBUS and SIGILL, at no cost while
nothing crashes. Node processes write stderr into the run's log directory (`hil run`), the
launcher to the terminal.
"""
from __future__ import annotations

import faulthandler
import sys


def enable() -> None:
    """Dump every thread's Python stack to stderr if this process crashes (idempotent). The
    handler writes to a file descriptor: where ``sys.stderr`` has none (a caller capturing it,
    as pytest does), the process's own stderr, file descriptor 2."""
    if faulthandler.is_enabled():
        return
    try:
        sys.stderr.fileno()
        out = sys.stderr
    except (AttributeError, OSError, ValueError):   # io.UnsupportedOperation is an OSError
        out = sys.__stderr__
    if out is not None:
        faulthandler.enable(file=out, all_threads=True)
