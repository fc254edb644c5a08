"""The planner's safety invariants as one checker (and the path of a compliant recovery), shared by the defect tests
(test_planner_hardening.py) and the hypothesis property tests (test_planner_hypothesis.py), and
checked here against sequences that break each of them (a checker that cannot fail proves nothing).

Every invariant is computed independently of the planner, from the published poses only:

* finite poses with unit quaternions;
* per-DOF translational velocity and acceleration (first and second differences) within v_max, a_max;
* angular velocity and acceleration computed from consecutive quaternions (log of the relative
  rotation, in the base frame and in the platform frame) within the rotational v_max, a_max;
* the hard limit is never left: the level h of the next pose is <= max(k, h of the last one)
  (a robot started outside may only come closer);
* the orientation range (seed 001 table 3, roll/pitch/yaw of R = Rz Ry Rx) is never left, in the
  same sense per angle.
"""
import pathlib

import numpy as np

from hil_core.planner.config import Workspace
from hil_core.planner.recovery import CompliantRecovery
from hil_core.maths.rotations import quat_conjugate, quat_multiply, quat_to_rotvec, quat_to_rpy

ROOT = pathlib.Path(__file__).resolve().parents[2]
WS = Workspace.load(str(ROOT / 'config' / 'workspace_hexaslide_scaled.yaml'))
HOME = np.asarray(WS.home_pose, dtype=float)
DT = 0.0025
A_MAX = np.array([6.0, 6.0, 6.0, 20.0, 20.0, 20.0])
V_MAX = np.array([0.15, 0.1, 0.1, 1.0, 1.0, 1.0])
REL = 1e-9                      # relative slack for float rounding only


def angular_rates(quats, dt=DT):
    """(w_space, w_body) from consecutive unit quaternions (N-1, 3) each: the rotation vector of
    q_k q_{k-1}^-1 (base frame) and of q_{k-1}^-1 q_k (platform frame), divided by dt."""
    q = np.asarray(quats, dtype=float)
    space = quat_to_rotvec(quat_multiply(q[1:], quat_conjugate(q[:-1]))) / dt
    body = quat_to_rotvec(quat_multiply(quat_conjugate(q[:-1]), q[1:])) / dt
    return space, body


def violations(poses, dt=DT, a_max=A_MAX, v_max=V_MAX, ws=WS):
    """Names of the invariants the pose sequence (N, 7) breaks, each with its worst ratio."""
    p = np.asarray(poses, dtype=float)
    out = {}
    if not np.all(np.isfinite(p)):
        return {'finite': np.inf}
    qn = np.linalg.norm(p[:, 3:], axis=1)
    if np.max(np.abs(qn - 1.0)) > 1e-12:
        out['unit_quaternion'] = float(np.max(np.abs(qn - 1.0)))
    if len(p) >= 2:
        vel = np.abs(np.diff(p[:, :3], axis=0)) / dt / v_max[:3]
        if vel.max() > 1 + REL:
            out['velocity'] = float(vel.max())
        for name, w in zip(('angular_velocity_space', 'angular_velocity_body'), angular_rates(p[:, 3:], dt)):
            r = np.abs(w) / v_max[3:]
            if r.max() > 1 + REL:
                out[name] = float(r.max())
            if len(w) >= 2:
                r = np.abs(np.diff(w, axis=0)) / dt / a_max[3:]
                if r.max() > 1 + REL:
                    out[name.replace('velocity', 'acceleration')] = float(r.max())
    if len(p) >= 3:
        acc = np.abs(np.diff(p[:, :3], 2, axis=0)) / dt ** 2 / a_max[:3]
        if acc.max() > 1 + REL:
            out['acceleration'] = float(acc.max())
    level = ws.soft.level(p[:, :3] - np.asarray(ws.soft.centre))
    allowed = np.maximum(ws.hard_expansion, level[:-1])
    if len(p) >= 2 and np.any(level[1:] > allowed + 1e-12):
        out['hard_limit'] = float(np.max(level[1:] / allowed))
    if ws.orientation_range is not None:
        rpy = np.abs(quat_to_rpy(p[:, 3:]))
        rng = np.asarray(ws.orientation_range)
        allowed = np.maximum(rng, rpy[:-1])
        if len(p) >= 2 and np.any(rpy[1:] > allowed + 1e-12):
            out['orientation_range'] = float(np.max(rpy[1:] / allowed))
    return out


def assert_safe(poses, label='', **kw):
    bad = violations(poses, **kw)
    assert not bad, f'{label}: invariants broken (worst ratio): {bad}'


# --- the checker catches what it must --------------------------------------------------------------
def recovery_path(p0, v, a_max, v_max, steps):
    """A compliant recovery from an exit at position ``p0`` with translational velocity ``v``: the
    DOF vectors of the frame before the exit, of the exit and of each step until back inside (at
    most ``steps``), and whether it came back."""
    rec = CompliantRecovery(WS.soft, WS.hard_expansion, DT, a_max, v_max=v_max)
    x0 = np.r_[p0, 0.0, 0.0, 0.0]
    rec.start(x0, np.r_[v, 0.0, 0.0, 0.0])
    xs = [x0 - np.r_[v, 0.0, 0.0, 0.0] * DT, x0]
    back = False
    for _ in range(steps):
        x, back = rec.step()
        xs.append(x)
        if back:
            break
    return np.array(xs), back


def _rest(n=40):
    return np.tile(HOME, (n, 1))


def test_a_pose_sequence_at_rest_is_safe():
    assert violations(_rest()) == {}


def test_the_checker_catches_each_broken_invariant():
    from hil_core.maths.rotations import rpy_to_quat
    p = _rest()
    p[20:, 0] += 0.001                                       # 1 mm step: 160 m/s^2, 0.4 m/s
    assert {'velocity', 'acceleration'} <= set(violations(p))
    p = _rest()
    p[5, 3:] *= 1.01
    assert 'unit_quaternion' in violations(p)
    p = _rest()
    p[7, 1] = np.nan
    assert violations(p) == {'finite': np.inf}
    # yaw ramp at 1.5 rad/s: too fast (angular velocity), then beyond the +-3 deg yaw range
    yaw = np.minimum(np.arange(60) * DT * 1.5, 0.2)
    p = np.tile(HOME, (60, 1))
    p[:, 3:] = rpy_to_quat(np.stack([0 * yaw, 0 * yaw, yaw], axis=1))
    bad = violations(p)
    assert 'angular_velocity_space' in bad and 'angular_velocity_body' in bad and 'orientation_range' in bad
    # outward beyond the hard limit, slowly (no rate violation)
    u = np.array([1.0, 0.0, 0.0])
    r_hard = WS.hard_expansion * WS.soft.radius(u)
    p = np.tile(HOME, (400, 1))
    p[:, 0] += np.linspace(0.99, 1.01, 400) * r_hard
    assert set(violations(p)) == {'hard_limit'}
    # a robot outside that comes closer is not a violation
    assert violations(p[::-1]) == {}


def test_angular_rates_of_a_constant_rotation_are_exact():
    from hil_core.maths.rotations import rotvec_to_quat
    axis = np.array([0.3, -0.5, 0.8]) / np.linalg.norm([0.3, -0.5, 0.8])
    t = np.arange(50) * DT
    q = rotvec_to_quat(0.7 * t[:, None] * axis)
    ws, wb = angular_rates(q)
    np.testing.assert_allclose(ws, np.tile(0.7 * axis, (49, 1)), atol=1e-12)
    np.testing.assert_allclose(wb, np.tile(0.7 * axis, (49, 1)), atol=1e-12)
