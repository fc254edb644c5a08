"""How many executor callbacks the nodes of this process have run: the spin loop's way to tell
a turn of the executor that served an event from an idle one.

In lockstep, one process, the chain feeds itself through the intra-process bus and the
executor's own events (timers on both clocks, heartbeats and statuses over DDS, services) get
turns between two drains. A fixed slice of wall time spent most of it in idle turns (1 ms of
every 6); a fixed number of turns fell behind once the chain ran faster (sim-time timers come
faster too), and the supervisor found a node's sim-time heartbeat 0.56 s late. So the loop
turns until a turn runs no callback (hil_nodes.runtime.runner). IntraProcessNode counts the timers,
subscriptions and services it creates; rclpy's own entities (lifecycle services) are not
counted: a turn that served only one of them ends the slice, and the rest waits one drain.
"""
from __future__ import annotations

import functools
import inspect

SERVED = [0]


def counted(callback, node=None):
    """``callback`` counting its calls in ``SERVED``; rclpy still sees its signature (TimerInfo,
    MessageInfo) and whether it is a coroutine function (an async service callback is awaited),
    and gets its arguments passed on.

    The signature is computed once, here, and kept as ``__signature__``: rclpy's EventsExecutor
    asks ``inspect.signature`` of a timer's callback at every call (is there a TimerInfo
    parameter?), and for a bound method behind ``functools.wraps`` that took ~8 us, 2 % of the
    container's CPU in real time (py-spy, 2026-11-26); ``inspect`` returns a ``__signature__``
    at once.

    With ``node`` (one that can ``fail_in_place``, hil_nodes.framework.liveness): an exception of the
    callback stops that node in place instead of the process (``fail_in_place``), and a stopped
    node's callbacks are skipped; a service then answers with its untouched response."""
    fail = getattr(node, 'fail_in_place', None)
    where = f'its callback {getattr(callback, "__qualname__", callback)!r}'
    if inspect.iscoroutinefunction(callback):
        @functools.wraps(callback)
        async def served_async(*args, **kwargs):
            SERVED[0] += 1
            if fail is None:
                return await callback(*args, **kwargs)
            if node.failure:
                return _unanswered(args)
            try:
                return await callback(*args, **kwargs)
            except Exception as exc:
                fail(exc, where)
                return _unanswered(args)
        served_async.__signature__ = inspect.signature(callback)
        return served_async

    @functools.wraps(callback)
    def served(*args, **kwargs):
        SERVED[0] += 1
        if fail is None:
            return callback(*args, **kwargs)
        if node.failure:
            return _unanswered(args)
        try:
            return callback(*args, **kwargs)
        except Exception as exc:
            fail(exc, where)
            return _unanswered(args)
    served.__signature__ = inspect.signature(callback)
    return served


def _unanswered(args):
    """What a skipped callback returns: a service's response as it came (request, response), else None."""
    return args[1] if len(args) == 2 else None
