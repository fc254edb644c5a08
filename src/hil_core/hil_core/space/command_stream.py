"""The space plant's joint command as a stock joint_trajectory_controller takes it: one
trajectory per joint sample that carries its own controlled stop (docs/space_iiwa.md, "Command
path").

The law's limited joint velocity ``v`` (constant over the sample's period ``P``) moves the
commanded positions to ``q_next`` at the stamp + P. After that point the trajectory does not end
moving: each joint decelerates from ``v_i`` to rest at no more than its acceleration limit
``a_i`` and holds (a braking tail). A new message replaces it at every sample, so in a running
loop the controller only ever executes the first period of each; when the messages stop (the
space plant died, a message was refused, the link broke) the controller plays the last tail out
and holds, as a stock JTC does with any trajectory that ends at rest. The stop is on the robot
side and needs nothing more from the sender.

Why not ``cmd_timeout`` with ``decelerate_on_cancel`` (what the hexapod's controller has):
a kilted JTC counts ``cmd_timeout`` only past the end of its trajectory, and until then writes
the last point's position to a position-only interface (a frozen command, the abrupt stop this
avoids), then ramps from the *measured* state, so its first command jumps back by the tracking
error (docs/lab.md, "The iiwa on lbr_fri_ros2_stack", lists the upstream lines).

Each joint stops on its own (the profile of the JTC's ``decelerate_to_hold_position``: constant
deceleration from the current velocity, then hold), so its stopping distance is
``v_i^2 / (2 d_i)`` with ``d_i <= a_i``: the distance the space plant's limiter keeps free before
each joint limit (``hil_core.space.control.JointLimiter``). Stop times are rounded up to
``grid_ns`` (so consecutive messages share their layout; the deceleration becomes
``|v_i| / T_i <= a_i``). The last point lies at least ``min_span_ns`` after the stamp, so a
message delivered that late still passes the JTC's "ends in the past" rule. Between the points
every joint is either on one constant-deceleration parabola or at rest, which the JTC's cubic
(positions + velocities) reproduces exactly.

Times are integer nanoseconds after the stamp (``time_from_start``), as the message holds them.

Two implementations, one result: :func:`braking_tail` runs the compiled kernel
(``command_stream_kernel``, compiled or loaded from the cache by :func:`warm_up` or at its first
call); ``command_stream_numpy.braking_tail`` is the plain-numpy oracle it is tested against.
"""

from __future__ import annotations

import numpy as np

from hil_core.space import command_stream_kernel
from hil_core.space.command_stream_numpy import GRID_NS, MIN_SPAN_NS

__all__ = ['GRID_NS', 'MIN_SPAN_NS', 'braking_tail', 'warm_up']

_F64 = np.dtype(np.float64)


def _vector(x, n: int) -> np.ndarray:
    if type(x) is not np.ndarray or x.dtype is not _F64:
        x = np.asarray(x, dtype=float)
    return x if x.shape == (n,) else np.broadcast_to(x, (n,))


def braking_tail(q_next, v, a_max, period_ns: int, grid_ns: int = GRID_NS,
                 min_span_ns: int = MIN_SPAN_NS) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(times_ns, positions, velocities)``: the point ``(q_next, v)`` at ``period_ns``, then one
    point per distinct stop time of the moving joints, the last at rest no earlier than
    ``min_span_ns``. ``a_max`` > 0 per joint (or one value), ``q_next`` and ``v`` finite;
    ValueError otherwise (no command is made of a bad one)."""
    v = _vector(v, np.shape(v)[0] if np.ndim(v) else 1)
    n = v.shape[0]
    q_next = _vector(q_next, n)
    a = _vector(a_max, n)
    if period_ns <= 0 or grid_ns <= 0:
        raise ValueError('a_max, period_ns and grid_ns must be positive and finite')
    warm_up()
    stop = np.empty(n + 1, np.int64)
    knots = np.empty(n + 1, np.int64)
    times = np.empty(n + 2, np.int64)
    pos = np.empty((n + 2, n))
    vel = np.empty((n + 2, n))
    rows = command_stream_kernel.tail(q_next, v, a, int(period_ns), int(grid_ns), int(min_span_ns),
                                      stop, knots, times, pos, vel)
    if rows == command_stream_kernel.BAD_LIMITS:
        raise ValueError('a_max, period_ns and grid_ns must be positive and finite')
    if rows == command_stream_kernel.BAD_COMMAND:
        raise ValueError('q_next and v must be finite')
    return times[:rows], pos[:rows], vel[:rows]


def warm_up() -> float:
    """Compile (or load from numba's cache) the kernel; seconds taken (0.0 when done before)."""
    return command_stream_kernel.warm_up()
