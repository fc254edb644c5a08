"""The first log message of a node process, made cheap before a run needs it.

rclpy's logger finds the calling frame with ``inspect.getframeinfo`` (rclpy/impl/rcutils_logger.py,
``CallerId``), and ``inspect.getmodule`` builds its file -> module map on its first call by
reading the file of every module loaded (later calls read only the modules imported since). In
a node process with numpy, scipy and numba loaded (about 1 100 modules) the first log call took
30 ms here, the later ones 0.2 ms. When that first call came in a run, from the drives refusing a
late setpoint, the drives' process stood still 40-48 ms and skipped 15-19 frames (Hexafloat in
real time over two emulated hosts, once in every run). ``warm()`` makes that lookup once, where
a stall costs nothing: when the process has built its nodes, and after each activation (the
modules configure imported).
"""
from __future__ import annotations

import inspect
import types

_NOWHERE = '<hil_nodes.runtime.caller_lookup: no file>'


def warm() -> None:
    """Bring ``inspect``'s file -> module map up to date with every loaded module, as a log call
    from a module not yet mapped does: a lookup of an object of no module and of a file no module
    has makes ``inspect.getmodule`` read every module it has not read yet (a lookup from a mapped
    file would return at once and read none)."""
    inspect.getmodule(types.SimpleNamespace(), _NOWHERE)
