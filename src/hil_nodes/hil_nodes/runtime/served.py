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


def counted(callback):
    """``callback`` counting its calls in ``SERVED``; rclpy still sees its signature (TimerInfo,
    MessageInfo) and whether it is a coroutine function (an async service callback is awaited),
    and gets its arguments passed on.

    The signature is computed once, here, and kept as ``__signature__``: rclpy's EventsExecutor
    asks ``inspect.signature`` of a timer's callback at every call (is there a TimerInfo
    parameter?), and for a bound method behind ``functools.wraps`` that took ~8 us, 2 % of the
    container's CPU in real time (py-spy, 2026-11-26); ``inspect`` returns a ``__signature__``
    at once."""
    if inspect.iscoroutinefunction(callback):
        @functools.wraps(callback)
        async def served_async(*args, **kwargs):
            SERVED[0] += 1
            return await callback(*args, **kwargs)
        served_async.__signature__ = inspect.signature(callback)
        return served_async

    @functools.wraps(callback)
    def served(*args, **kwargs):
        SERVED[0] += 1
        return callback(*args, **kwargs)
    served.__signature__ = inspect.signature(callback)
    return served
