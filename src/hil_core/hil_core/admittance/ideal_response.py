"""Ideal response of a model to a recorded wrench history (seed 000 section 5: "simulated system").

``ideal_response`` replays a recording through a copy of a model with exact zero-order-hold
discretisation at the recording's own sample intervals (a non-uniform recording is handled:
each interval gets its own matrix exponential, cached). The convention is the node's: the pose
returned for sample k is the one reached at ``t[k] + dt[k]`` with wrench k held over the interval,
i.e. exactly what the ``admittance`` node publishes with stamp ``t[k]``. ``reached_at`` gives
those times for plotting against measured motion.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass

import numpy as np

from hil_core.admittance import pose_offset
from hil_core.admittance.lti_model import LtiAdmittanceModel


@dataclass(frozen=True)
class IdealResponse:
    """Per input sample k: stamp, time the pose is reached, offset, pose, twist, acceleration."""
    times: np.ndarray       # (N,) input sample times t[k] (= stamps of the node's output)
    reached_at: np.ndarray  # (N,) t[k] + dt[k]
    offsets: np.ndarray     # (N, 6) pose offset of the model's reference point about home
    poses: np.ndarray       # (N, 7) TCP [x, y, z, qx, qy, qz, qw] in the control frame
    twists: np.ndarray      # (N, 6)
    accels: np.ndarray      # (N, 6)


def ideal_response(model: LtiAdmittanceModel, times, wrenches, from_rest: bool = True) -> IdealResponse:
    """Ideal pose history of ``model`` for wrenches (N, 6) sampled at ``times`` (N,).

    The model is copied (the caller's state is untouched); ``from_rest`` starts from home at
    rest, otherwise from the model's current state. The last interval uses the model's period.
    """
    t = np.asarray(times, dtype=float).reshape(-1)
    w = np.asarray(wrenches, dtype=float)
    if w.ndim != 2 or w.shape[1] != 6 or w.shape[0] != t.size:
        raise ValueError(f'wrenches must be (N, 6) with N = len(times) = {t.size}, got {w.shape}')
    if not (np.all(np.isfinite(w)) and np.all(np.isfinite(t))):
        raise ValueError('times and wrenches must be finite (clean NaN/inf samples first)')
    dt = np.append(np.diff(t), model.period)
    if np.any(dt <= 0):
        raise ValueError('times must be strictly increasing')
    m = copy.deepcopy(model)
    if from_rest:
        m.reset()
    n = m.n
    xs = np.empty((t.size, m.x.size))
    us = np.empty((t.size, n))
    uniform = np.all(np.abs(dt - m.period) < 1e-9)
    fast = (uniform and m.wrench_frame == 'control' and not m._has_tcp
            and type(m).extra_force is LtiAdmittanceModel.extra_force)
    if fast:
        # Linear, uniform: the input does not depend on the state; only the recursion loops.
        U = (w * m.force_scale)[:, m.idx] + m._k_eq
        Ad, BdT = m.Ad, m.Bd
        x = m.x.copy()
        BU = U @ BdT.T
        for k in range(t.size):
            x = Ad @ x + BU[k]
            xs[k] = x
        us[:] = U
    else:
        for k in range(t.size):
            m.step(w[k], None if abs(dt[k] - m.period) < 1e-9 else dt[k])
            xs[k] = m.x
            us[k] = m._u_eff
    q = np.zeros((t.size, 6))
    qd = np.zeros((t.size, 6))
    qdd = np.zeros((t.size, 6))
    q[:, m.idx] = xs[:, :n]
    qd[:, m.idx] = xs[:, n:2 * n]
    qdd[:, m.idx] = xs @ m._acc_rows.T + us @ m._Mi.T
    poses = pose_offset.offset_to_pose(m.home, q)
    twists = pose_offset.offset_rate_to_twist(q, qd)
    accels = pose_offset.offset_accel_to_accel(q, qd, qdd)
    if m._has_tcp:
        poses, twists, accels = pose_offset.point_outputs(poses, twists, accels, m.tcp_offset)
    return IdealResponse(times=t, reached_at=t + dt, offsets=q, poses=poses, twists=twists, accels=accels)
