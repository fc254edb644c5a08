"""Real-time timers on the frame grid: callbacks just after each instant k * period of the wall
clock, whatever the phase of activation.

An rclpy timer keeps the phase of its creation. Created at a random phase, a timer that reads or
integrates "the frame that just ended" does so up to a whole period late: the F/T source's sample
of instant t then reached the time base after it had moved on to t + T (every reference a frame
late), and the mock drives published the joint state of t_k up to a frame after t_k, so the
kinematics node judged 93 % of its cycles late (its deadline is one frame from the stamp) and the
supervisor stopped the run two seconds in. Both now start on the grid plus a small offset.
"""
from __future__ import annotations

import time

# just after the grid instant: a sensor's transport (the F/T source reads then)
GRID_OFFSET_NS = 200_000
# the drives publish the state of the grid instant before the sensor chain runs: in one process
# the kinematics node then has it long before its deadline, and the chain is not held up later
DRIVES_OFFSET_NS = 50_000


def delay_to_grid(now_ns: int, period_ns: int, offset_ns: int = GRID_OFFSET_NS) -> int:
    """Nanoseconds from ``now_ns`` to the next instant k * period_ns + offset_ns (0 included)."""
    return (offset_ns - now_ns) % period_ns


def create_grid_timer(node, period_s: float, callback, clock=None, offset_ns: int = GRID_OFFSET_NS):
    """``node.create_timer`` started on the grid of the node's clock (the wall clock in real time)
    plus ``offset_ns``: it sleeps up to one period first (at activation, never in a frame)."""
    period_ns = int(round(period_s * 1e9))
    time.sleep(delay_to_grid(node.get_clock().now().nanoseconds, period_ns, offset_ns) * 1e-9)
    return node.create_timer(period_ns * 1e-9, callback, clock=clock)     # None: the node's clock
