"""The mock drives' former trajectory checks and setpoint interpolation (kept while the mock
moves to the JTC-exact functions).

* :func:`validate_joint_trajectory` / :func:`order_joint_trajectory`: the mock hexapod's
  *combined* check (JTC-like structure + finiteness + drive limits, duplicates refused, past
  trajectories not refused). It is NOT what a Kilted joint_trajectory_controller does: use
  :func:`hil_core.drives.joint_trajectory.jtc_validate` (exact acceptance rules) followed by
  :func:`hil_core.drives.joint_trajectory.guard_trajectory` (the stricter layer with its own reasons).
  No node calls it any more (the mock hardware's controllers, ``hil_core.drives.plants.controllers``,
  run the JTC rules and the guard); test/unit/test_servo.py still checks it.
* :func:`sample_knots`: the setpoint between knots. With velocities the segment between two
  knots is the cubic Hermite polynomial (what the JTC's spline interpolation does with
  positions + velocities); without velocities it is linear (velocity = slope, no
  acceleration), as the JTC does for position-only points. After the last knot the setpoint
  holds the last position with zero velocity (the JTC holds the last point *as given*, see
  :mod:`hil_core.drives.jtc_sampling`).
"""
from __future__ import annotations

from typing import Sequence

import numpy as np


def _as_points(values, n_points: int, what: str, allow_empty: bool):
    """List of per-point arrays -> (n_points, n) float array, or None when every point is empty."""
    rows = [np.asarray(v, dtype=float).ravel() for v in values]
    if len(rows) != n_points:
        return None, f'{what}: {len(rows)} entries for {n_points} points'
    if allow_empty and all(r.size == 0 for r in rows):
        return None, ''
    return rows, ''


def _check_rows(rows, n: int, plural: str, singular: str) -> str:
    for i, r in enumerate(rows):
        if r.size != n:
            return f'wrong joint count: point {i} has {r.size} {plural} for {n} joints'
    finite = np.isfinite(np.asarray(rows))
    if not np.all(finite):
        return f'non-finite (NaN/inf) {singular} in point {int(np.argwhere(~finite)[0][0])}'
    return ''


def validate_joint_trajectory(joint_names: Sequence[str], expected_names: Sequence[str],
                              times: Sequence[float], positions: Sequence[Sequence[float]],
                              velocities: Sequence[Sequence[float]] | None = None,
                              position_min=None, position_max=None,
                              velocity_max=None) -> tuple[bool, str]:
    """Check one trajectory command; return ``(True, '')`` or ``(False, reason)``.

    ``times`` are the points' ``time_from_start`` in seconds; ``positions``/``velocities``
    one sequence per point, in the order of ``joint_names`` (velocities may be empty for
    every point). Limits, when given, are in the order of ``expected_names``.
    """
    names = list(joint_names)
    expected = list(expected_names)
    if len(names) != len(expected):
        return False, f'wrong joint count: expected {len(expected)} joints, got {len(names)}'
    seen = set()
    for name in names:
        if name in seen:
            return False, f'duplicate joint name {name!r}'
        seen.add(name)
    unknown = [n for n in names if n not in set(expected)]
    if unknown:
        return False, f'unknown joint name(s) {unknown} (expected {expected})'
    t = np.asarray(times, dtype=float).ravel()
    if t.size == 0:
        return False, 'trajectory has no points'
    if not np.all(np.isfinite(t)):
        return False, 'non-finite time_from_start'
    if t[0] < 0.0:
        return False, f'negative time_from_start {t[0]:.9g} s'
    if t.size > 1 and np.any(np.diff(t) <= 0.0):
        bad = int(np.argmax(np.diff(t) <= 0.0)) + 1
        return False, (f'non-monotonic time_from_start: point {bad} at {t[bad]:.9g} s '
                       f'does not follow {t[bad - 1]:.9g} s')
    n = len(expected)
    rows, problem = _as_points(positions, t.size, 'positions', allow_empty=False)
    if problem:
        return False, problem
    problem = _check_rows(rows, n, 'positions', 'position')
    if problem:
        return False, problem
    vrows = None
    if velocities is not None:
        vrows, problem = _as_points(velocities, t.size, 'velocities', allow_empty=True)
        if problem:
            return False, problem
        problem = _check_rows(vrows, n, 'velocities', 'velocity') if vrows is not None else ''
        if problem:
            return False, problem
    order = [names.index(e) for e in expected]
    p = np.asarray(rows)[:, order]
    lo = None if position_min is None else np.asarray(position_min, dtype=float)
    hi = None if position_max is None else np.asarray(position_max, dtype=float)
    lo = np.full(n, -np.inf) if lo is None else lo
    hi = np.full(n, np.inf) if hi is None else hi
    beyond = (p < lo) | (p > hi)
    if np.any(beyond):
        i, j = map(int, np.argwhere(beyond)[0])
        return False, (f'position {p[i, j]:.6g} of {expected[j]} in point {i} is beyond its limits '
                       f'[{lo[j]:.6g}, {hi[j]:.6g}]')
    if vrows is not None and velocity_max is not None:
        v = np.asarray(vrows)[:, order]
        vmax = np.asarray(velocity_max, dtype=float)
        over = np.abs(v) > vmax
        if np.any(over):
            i, j = map(int, np.argwhere(over)[0])
            return False, (f'velocity {v[i, j]:.6g} of {expected[j]} in point {i} exceeds '
                           f'its limit {vmax[j]:.6g}')
    return True, ''


def order_joint_trajectory(joint_names: Sequence[str], expected_names: Sequence[str],
                           positions, velocities=None) -> tuple[np.ndarray, np.ndarray | None]:
    """Reorder a *validated* command to ``expected_names``: (points, joints) arrays.

    Velocities come back as None when the command carries none (position-only points)."""
    names = list(joint_names)
    order = [names.index(e) for e in expected_names]
    p = np.asarray([np.asarray(r, dtype=float).ravel() for r in positions])[:, order]
    v = None
    if velocities is not None and len(velocities) and any(len(r) for r in velocities):
        v = np.asarray([np.asarray(r, dtype=float).ravel() for r in velocities])[:, order]
    return p, v


def sample_knots(knot_t: np.ndarray, knot_p: np.ndarray, knot_v: np.ndarray | None,
                 t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Setpoint position and velocity at times ``t`` (M,) from knots (K,), (K, n), (K, n)|None.

    Knot times are inclusive (at a knot the knot's own velocity is returned). Before the
    first knot its position is held; after the last, the last position with zero velocity
    (a drive holds the end of its trajectory).

    Compiled (``hil_core.drives.servo_kernel.sample``; the mock drives call this every frame); the
    numpy oracle :func:`sample_knots_numpy` does the calls the kernel does not take (other
    shapes, knot times not finite or not strictly increasing, non-finite times)."""
    kernel = _kernel or _load_kernel()
    kt = knot_t if type(knot_t) is np.ndarray and knot_t.dtype is _F64 else np.asarray(knot_t, dtype=float)
    kp = knot_p if type(knot_p) is np.ndarray and knot_p.dtype is _F64 else np.asarray(knot_p, dtype=float)
    tt = t if type(t) is np.ndarray and t.dtype is _F64 else np.asarray(t, dtype=float)
    kv = kp if knot_v is None else np.asarray(knot_v, dtype=float)
    if (kt.ndim == 1 and tt.ndim == 1 and kp.ndim == 2 and kt.size >= 1 and kp.shape[0] == kt.size
            and kv.shape == kp.shape):
        out_p = np.empty((tt.size, kp.shape[1]))
        out_v = np.empty((tt.size, kp.shape[1]))
        if kernel.sample(kt, kp, kv, knot_v is not None, tt, out_p, out_v) == kernel.OK:
            return out_p, out_v
    return sample_knots_numpy(knot_t, knot_p, knot_v, t)


def replan_knots(knots, entry, start: float, now: float, measured=None):
    """The knots after an accepted trajectory ``entry`` = (times s, positions, velocities|None),
    starting at ``start``, is made active at ``now``: the setpoint at ``now`` (from ``knots``, or
    ``measured`` = (position, velocity) arrays, the robot's state, when the controller does not
    interpolate from its desired state), then the trajectory's points after ``now``. Returns
    (knots, True); when no point lies after ``now`` (the trajectory ends exactly now),
    ((now, its last point, None), False): the last point is held.

    One compiled call (``hil_core.drives.servo_kernel.replan``), the drives' command in every
    real-time frame; :func:`replan_knots_numpy` is its oracle and takes the calls the kernel
    does not (knots ``sample`` leaves to numpy, other shapes or types)."""
    kernel = _kernel or _load_kernel()
    knot_t, knot_p, knot_v = knots
    times, pos, vel = entry
    # (dtypes compared with ==: an array a numba kernel returned, as the drives' accepted commands
    # are, has a float64 dtype object of its own, so an ``is`` test sent every frame the numpy way)
    if (type(times) is np.ndarray and type(pos) is np.ndarray and type(knot_t) is np.ndarray
            and type(knot_p) is np.ndarray and times.dtype == _F64 and pos.dtype == _F64 and knot_t.dtype == _F64
            and knot_p.dtype == _F64 and knot_p.ndim == 2 and pos.ndim == 2 and times.ndim == 1 and knot_t.ndim == 1
            and pos.shape == (times.size, knot_p.shape[1]) and knot_t.size == knot_p.shape[0] and knot_t.size >= 1
            and (vel is None or (type(vel) is np.ndarray and vel.dtype == _F64 and vel.shape == pos.shape))
            and (knot_v is None or (type(knot_v) is np.ndarray and knot_v.dtype == _F64
                                    and knot_v.shape == knot_p.shape))):
        rows = times.size + 1
        out_t, out_p, out_v = np.empty(rows), np.empty((rows, pos.shape[1])), np.empty((rows, pos.shape[1]))
        if measured is None:
            sp_p = sp_v = knot_t
        else:
            sp_p, sp_v = (np.ascontiguousarray(x, dtype=float) for x in measured)
        if sp_p.ndim == 1 and sp_v.ndim == 1 and (measured is None or sp_p.size == sp_v.size == pos.shape[1]):
            n = kernel.replan(knot_t, knot_p, knot_p if knot_v is None else knot_v, knot_v is not None, sp_p, sp_v,
                              measured is None, times, pos, pos if vel is None else vel, vel is not None,
                              float(start), float(now), out_t, out_p, out_v)
            if n > 0:
                return (out_t[:n], out_p[:n], None if vel is None else out_v[:n]), True
            if n == 0:
                return (np.array([now]), pos[-1:], None), False
    return replan_knots_numpy(knots, entry, start, now, measured)


def replan_knots_numpy(knots, entry, start: float, now: float, measured=None):
    """:func:`replan_knots` in plain numpy (the oracle)."""
    times, pos, vel = entry
    if measured is None:
        sp_p, sp_v = sample_knots_numpy(*knots, np.array([now]))
    else:
        sp_p, sp_v = (np.asarray(x, dtype=float)[None, :] for x in measured)
    kt = start + times
    keep = kt > now + 1e-12
    kt, pos_kept = kt[keep], pos[keep]
    vel = None if vel is None else vel[keep]
    if kt.size == 0:                       # ends exactly now: hold its last point
        return (np.array([now]), pos[-1:], None), False
    knot_v = None if vel is None else np.vstack([sp_v, vel])
    return (np.concatenate(((now,), kt)), np.vstack([sp_p, pos_kept]), knot_v), True


_F64 = np.dtype(np.float64)
_kernel = None


def _load_kernel():
    """Import and compile (or load) the kernel on first use: importing this module stays cheap."""
    global _kernel
    from hil_core.drives import servo_kernel
    servo_kernel.warm_up()
    _kernel = servo_kernel
    return _kernel


def sample_knots_numpy(knot_t: np.ndarray, knot_p: np.ndarray, knot_v: np.ndarray | None,
                       t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`sample_knots` in plain numpy (the oracle)."""
    knot_t = np.asarray(knot_t, dtype=float)
    knot_p = np.atleast_2d(np.asarray(knot_p, dtype=float))
    t = np.asarray(t, dtype=float)
    n_knots = knot_t.size
    if n_knots < 2:
        return np.tile(knot_p[0], (t.size, 1)), np.zeros((t.size, knot_p.shape[1]))
    # Clamping t to the knot span gives the held positions outside it; velocities there are 0.
    tc = np.clip(t, knot_t[0], knot_t[-1])
    outside = ((t < knot_t[0]) | (t > knot_t[-1]))[:, None]
    seg = np.clip(np.searchsorted(knot_t, tc, side='right') - 1, 0, n_knots - 2)
    t0, t1 = knot_t[seg], knot_t[seg + 1]
    dt = (t1 - t0)[:, None]
    s = ((tc - t0) / (t1 - t0))[:, None]
    p0, p1 = knot_p[seg], knot_p[seg + 1]
    if knot_v is None:
        vel = (p1 - p0) / dt
        return p0 + s * (p1 - p0), np.where(outside, 0.0, vel)
    knot_v = np.atleast_2d(np.asarray(knot_v, dtype=float))
    v0, v1 = knot_v[seg] * dt, knot_v[seg + 1] * dt   # tangents in the unit parameter
    s2, s3 = s * s, s * s * s
    h00, h10, h01, h11 = 2 * s3 - 3 * s2 + 1, s3 - 2 * s2 + s, -2 * s3 + 3 * s2, s3 - s2
    d00, d10, d01, d11 = 6 * s2 - 6 * s, 3 * s2 - 4 * s + 1, -6 * s2 + 6 * s, 3 * s2 - 2 * s
    pos = h00 * p0 + h10 * v0 + h01 * p1 + h11 * v1
    vel = (d00 * p0 + d10 * v0 + d01 * p1 + d11 * v1) / dt
    return pos, np.where(outside, 0.0, vel)
