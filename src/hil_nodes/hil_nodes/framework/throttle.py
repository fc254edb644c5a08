"""The one throttle of reports on a per-message path: at most one per kind of problem per interval.

A 400 Hz stream of bad input must not become 400 log lines and statuses a second: rclpy's logger
inspects the caller's source file on every call, throttled or not (~0.8 ms here), and a refusal
logged per command made a late real-time graph later still. So every node reports a problem
through ``HilLifecycleNode.report_problem`` (hil_nodes.framework.base), which counts on this
throttle; the supervisor, a plain node, calls ``due`` itself. Counting the problem stays the
caller's: every occurrence is counted, only its report is throttled.

``INTERVAL`` is the default. A node passes its own interval only where it has a reason, said in
a comment where it does (a parameter of its own, a faster sensor, a rarer event).
"""
from __future__ import annotations

import math
import time

INTERVAL = 0.5      # wall s between two reports of one kind: two a second for a stream of bad input


def due(last: dict[str, float], kind: str, interval: float = INTERVAL) -> bool:
    """True at most once per ``interval`` wall seconds for ``kind`` (``last`` keeps the times)."""
    now = time.monotonic()
    if now - last.get(kind, -math.inf) < interval:
        return False
    last[kind] = now
    return True
