"""Is an inertial end-effector target reachable by the space manipulator from where it is now?

On a free-floating satellite the answer is not a workspace of the arm alone: every joint motion
turns and shifts the satellite (momentum conservation, seed 002 eq. 7), so the inertial poses
the end effector can reach depend on the path. The check therefore runs the node's own loop
(``SpacePlantNumpy``: satellite integration, Dynamic-Jacobian law, damped pseudo-inverse and
the smooth joint limits, with the node's parameters) on an ideal arm that follows its command,
from the measured joints and satellite pose, for ``horizon`` s of model time. The target is
reachable when the law brings the errors within the tolerances; otherwise the reason says how
close it came and what stopped it (joints held at their limits, a near-singular J_d, or the law
still converging at the horizon).

It answers "would space_plant's law take the arm there from here", the question an operator's
command asks; a target the law cannot reach from here (though another path might) is refused.
The model's step is coarser than the node's (``dt``, 10 ms against the joint rate), which the
law's 1 s time constants and the limiter's acceleration ramps tolerate."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hil_core.space.plant_numpy import SpacePlantNumpy

SINGULAR_SIGMA = 1e-3        # sigma_min of J_d below this: near a singularity


@dataclass
class Reach:
    reachable: bool
    reason: str                  # why not, or how it was reached
    time: float                  # model s to converge (or the horizon)
    position_error: float        # closest |e_p| (m)
    orientation_error_deg: float  # |e_o| at that instant (deg)
    q_final: np.ndarray          # the arm's joints at the end
    sat_final: np.ndarray        # the satellite's pose at the end [x y z qx qy qz qw]


def reach(plant: SpacePlantNumpy, q0, sat_pose0, r_des, R_des, joint_names=None, horizon: float = 20.0,
          dt: float = 0.01, position_tol: float = 1e-3, orientation_tol_deg: float = 0.1) -> Reach:
    """Run ``plant`` (reset here) from joints ``q0`` and satellite pose ``sat_pose0`` ([x y z qx qy
    qz qw], inertial) toward the inertial target (``r_des`` m, rotation ``R_des``)."""
    names = list(joint_names or (f'joint {i + 1}' for i in range(7)))
    q = np.asarray(q0, float).copy()
    if q.shape != (7,) or not np.all(np.isfinite(q)):
        raise ValueError(f'joint positions: 7 finite values, got {q0!r}')
    plant.reset(q, sat_pose0)
    plant.set_setpoint(r_des, R_des)
    lim = plant.limiter
    qd = np.zeros(7)
    best = (np.inf, np.inf, 0.0)
    sigma_low = np.inf
    at_limit = np.zeros(7, bool)
    steps = int(round(horizon / dt))
    for k in range(steps):
        out = plant.step(q, dt, qd_measured=qd)
        ep = float(np.linalg.norm(out.error[:3]))
        eo = float(np.degrees(np.linalg.norm(out.error[3:])))
        if ep < best[0]:
            best = (ep, eo, k * dt)
        sigma_low = min(sigma_low, float(out.sigma_min))
        if ep <= position_tol and eo <= orientation_tol_deg:
            return Reach(True, f'reached in {k * dt:.1f} s of the model (|e_p| {ep * 1e3:.2f} mm, '
                         f'|e_o| {eo:.3f} deg)', k * dt, ep, eo, q, out.sat_pose)
        qd = out.command
        q = q + qd * dt
        # a joint held within 1 mrad of its (margin) limit during the last second
        if k >= steps - int(1.0 / dt):
            at_limit |= (q <= lim.lower + 1e-3) | (q >= lim.upper - 1e-3)
    ep, eo, t_best = best
    why = f'not reached within {horizon:g} s of the model: closest |e_p| {ep * 1e3:.1f} mm (|e_o| {eo:.2f} deg)'
    if at_limit.any():
        why += '; held at their limits: ' + ', '.join(n for n, a in zip(names, at_limit) if a)
    if sigma_low < SINGULAR_SIGMA:
        why += f'; J_d near-singular (sigma_min {sigma_low:.1e})'
    if not at_limit.any() and sigma_low >= SINGULAR_SIGMA:
        why += '; the law was still converging (no joint at a limit, J_d regular)'
    return Reach(False, why, t_best, ep, eo, q, out.sat_pose)
