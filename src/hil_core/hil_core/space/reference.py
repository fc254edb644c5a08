"""Offline reference of a HIL run (seed 002, "Control system validation", figs 10-13).

The HIL plant obtains the satellite motion from the momentum constraint (eq. 7). The
reference obtains it from the *dynamics* (eq. 4) instead: the recorded joint angles are
interpolated by a C2 cubic spline (q, qdot, qddot), and the unactuated satellite rows of
eq. 4 in zero gravity, M_ss nudot + M_sm qddot + c_s(q, v) = 0, are integrated with classic
RK4 on the free-flyer configuration (pinocchio ``integrate``) at a small fixed step. The
satellite rows come from pinocchio's RNEA with the base acceleration set to zero, so
c_s + M_sm qddot = rnea(q, v, [0, qddot])[:6] and nudot = -M_ss^-1 of that. This equals
"inverse dynamics of the recorded joints, then forward dynamics of the whole system" (what
the seed did in Simscape) without a round trip through joint torques.
"""
from __future__ import annotations

import numpy as np
import pinocchio as pin
from scipy.interpolate import CubicSpline

from hil_core.space.model import FreeFloatingModel, pose_of


def simulate(model: FreeFloatingModel, times, q_samples, sat_pose0=None, dt: float = 2.5e-4,
             qd0=None, out_every: int = 1):
    """Satellite and EE poses (inertial) at ``times[::out_every]`` from recorded joint angles.

    ``qd0`` sets the initial joint rate of the spline (clamped end); default zero, the seed's
    initial condition (system at rest, zero momentum). The RK4 step is ``dt`` (shortened to
    land on the output instants).
    """
    times = np.asarray(times, float)
    qs = np.asarray(q_samples, float)
    qd0 = np.zeros(qs.shape[1]) if qd0 is None else np.asarray(qd0, float)
    spline = CubicSpline(times, qs, bc_type=((1, qd0), 'not-a-knot'))
    d1, d2 = spline.derivative(1), spline.derivative(2)
    mdl, data = model.model, model.data
    x = np.concatenate([[0, 0, 0, 0, 0, 0, 1] if sat_pose0 is None else sat_pose0, qs[0]])
    nu = model.base_twist(qs[0], d1(times[0]))

    def accel(xq, nuv, t):
        q_arm, qd_arm, qdd_arm = spline(t), d1(t), d2(t)
        xq = np.concatenate([xq[:7], q_arm])
        v = np.concatenate([nuv, qd_arm])
        a = np.concatenate([np.zeros(6), qdd_arm])
        tau = pin.rnea(mdl, data, xq, v, a)
        M = model.mass_matrix(xq)
        return v, -np.linalg.solve(M[:6, :6], tau[:6])

    idx = np.arange(0, len(times), int(out_every))
    out_sat = np.empty((len(idx), 7))
    out_ee = np.empty((len(idx), 7))
    t = times[0]
    for j, k in enumerate(idx):
        t_next = times[k]
        while t < t_next - 1e-12:
            h = min(dt, t_next - t)
            v1, a1 = accel(x, nu, t)
            v2, a2 = accel(pin.integrate(mdl, x, 0.5 * h * v1), nu + 0.5 * h * a1, t + 0.5 * h)
            v3, a3 = accel(pin.integrate(mdl, x, 0.5 * h * v2), nu + 0.5 * h * a2, t + 0.5 * h)
            v4, a4 = accel(pin.integrate(mdl, x, h * v3), nu + h * a3, t + h)
            x = pin.integrate(mdl, x, h / 6.0 * (v1 + 2 * v2 + 2 * v3 + v4))
            nu = nu + h / 6.0 * (a1 + 2 * a2 + 2 * a3 + a4)
            t += h
            x[7:] = spline(t)
        x[7:] = qs[k]
        out_sat[j] = x[:7]
        out_ee[j] = pose_of(model.ee_pose(x))
    return out_sat, out_ee


def angle_between(q_a, q_b) -> np.ndarray:
    """Rotation angle (rad) between quaternions [x y z w] (vectorised)."""
    d = np.abs(np.sum(np.asarray(q_a) * np.asarray(q_b), axis=-1))
    return 2.0 * np.arccos(np.clip(d, -1.0, 1.0))


def compare(hil_sat, hil_ee, ref_sat, ref_ee) -> dict:
    """Max differences HIL vs reference (seed 002 figs 11 and 13): m and deg."""
    return {
        'satellite_position_diff_m': float(np.max(np.linalg.norm(hil_sat[:, :3] - ref_sat[:, :3], axis=1))),
        'satellite_attitude_diff_deg': float(np.degrees(np.max(angle_between(hil_sat[:, 3:], ref_sat[:, 3:])))),
        'ee_position_diff_m': float(np.max(np.linalg.norm(hil_ee[:, :3] - ref_ee[:, :3], axis=1))),
        'ee_orientation_diff_deg': float(np.degrees(np.max(angle_between(hil_ee[:, 3:], ref_ee[:, 3:])))),
    }
