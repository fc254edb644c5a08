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
"""
from __future__ import annotations

import numpy as np

GRID_NS = 10_000_000          # 10 ms: stop times rounded up to this grid
MIN_SPAN_NS = 50_000_000      # 50 ms: the space plant's default max_gap; the shortest message


def braking_tail(q_next, v, a_max, period_ns: int, grid_ns: int = GRID_NS,
                 min_span_ns: int = MIN_SPAN_NS) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(times_ns, positions, velocities)``: the point ``(q_next, v)`` at ``period_ns``, then one
    point per distinct stop time of the moving joints, the last at rest no earlier than
    ``min_span_ns``. ``a_max`` > 0 per joint (or one value); ValueError otherwise."""
    q_next = np.asarray(q_next, dtype=float)
    v = np.asarray(v, dtype=float)
    a = np.broadcast_to(np.asarray(a_max, dtype=float), v.shape)
    if not (np.all(a > 0) and np.all(np.isfinite(a))) or period_ns <= 0 or grid_ns <= 0:
        raise ValueError('a_max, period_ns and grid_ns must be positive and finite')
    moving = v != 0.0
    # stop time of each moving joint, rounded up to the grid (never 0: a moving joint needs one)
    steps = np.where(moving, np.ceil(np.abs(v) / a * 1e9 / grid_ns - 1e-9), 0.0)
    stop_ns = np.maximum(steps, moving).astype(np.int64) * grid_ns
    knots = np.unique(stop_ns[moving])
    end = max(int(knots[-1]) if knots.size else 0, int(min_span_ns) - int(period_ns))
    if not knots.size or end > knots[-1]:
        knots = np.append(knots, end) if end > 0 else knots
    tau = np.concatenate(([0], knots)).astype(np.int64)            # after the first point
    # per joint: v_i (1 - tau/T_i) until T_i, then 0; positions its integral
    T = np.where(moving, stop_ns, 1) * 1e-9
    s = np.minimum(tau[:, None] * 1e-9, T[None, :])
    vel = np.where(moving, v * (1.0 - s / T), 0.0)
    pos = q_next + np.where(moving, v * s - 0.5 * v / T * s * s, 0.0)
    return tau + int(period_ns), pos, vel
