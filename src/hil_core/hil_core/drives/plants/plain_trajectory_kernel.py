"""Compiled (numba) acceptance of a plain joint trajectory: the kernel behind
``plain_trajectory.PlainAcceptance.accept`` (its numpy twin is ``PlainAcceptance.accept_numpy``;
both have the full check, ``controllers.TrajectoryFollower.accept``, as their test oracle).
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit


@njit(cache=True)
def plain_kernel(times_ns, pos, vel, cols, order, lo, hi, vmax, check_end, end_epsilon):
    """:meth:`PlainAcceptance.accept_numpy` after the name and end-time checks, in one pass:
    (accepted, times s, positions and velocities in hardware order). ``vel`` of shape (0, 0):
    no velocities. ``cols``: index into the message's names of each controller joint;
    ``order``: the controller's index of each hardware joint; limits in controller order."""
    m, n = pos.shape
    has_vel = vel.shape[0] > 0
    t_out = np.empty(m)
    p_out = np.empty((m, n))
    v_out = np.empty((m, n) if has_vel else (0, 0))
    for i in range(m):
        t = times_ns[i]
        if t < 0 or (i > 0 and t <= times_ns[i - 1]):
            return False, t_out, p_out, v_out
        t_out[i] = (t // 1_000_000_000) + (t % 1_000_000_000) * 1e-9
        for h in range(n):
            j = order[h]
            c = cols[j]
            q = pos[i, c]
            if not (q >= lo[j] and q <= hi[j] and math.isfinite(q)):
                return False, t_out, p_out, v_out
            p_out[i, h] = q
            if has_vel:
                v = vel[i, c]
                if not (abs(v) <= vmax[j] and math.isfinite(v)):
                    return False, t_out, p_out, v_out
                if check_end and i == m - 1 and not abs(v) <= end_epsilon:
                    return False, t_out, p_out, v_out
                v_out[i, h] = v
    return True, t_out, p_out, v_out
