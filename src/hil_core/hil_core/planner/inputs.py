"""Validation of everything the planner is given, before any arithmetic on it (fault hardening).

A pose is accepted only as 7 finite numbers whose position lies within ``position_bound`` of the
workspace centre (compared per component first, so even 1.7e308 costs no overflow) and whose
quaternion has a norm within ``quaternion_tolerance`` of 1: such a near-unit quaternion is
normalised (one that is unit to 1e-12 is kept as the same object, so a feasible reference still
passes bit-identical); any other is refused. A reference stamp must be an integer (ns), newer than
the last accepted one, and within [now - max_age, now + max_lead] of the frame's sim time; without
a frame clock the planner bounds the lead against the last accepted stamp plus the frames since
(so one far-future stamp can never become "the newest" and freeze the stream).

A refused reference is treated like a missing one: the last good reference is held (the limiter
decelerates), ``reference_invalid`` names the reason once per streak, and frames without a usable
reference count towards ``reference_stale`` (a stamp frozen in the future is refused every frame,
so it ends there too).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

UNIT = 1e-12                     # a quaternion this close to unit norm is used as it is
MAX_FUTURE_ROWS = 256            # look-ahead buffer rows accepted at most (bounds the work per frame)


@dataclass(frozen=True)
class InputRules:
    centre: tuple
    position_bound: float        # m, max distance of a position from the workspace centre
    quaternion_tolerance: float  # |norm - 1| up to which a quaternion is normalised
    max_age_ns: int
    max_lead_ns: int
    dt_ns: int


def check_pose(pose, rules: InputRules):
    """(pose, None) for a valid pose (normalised if needed), (None, reason) otherwise."""
    try:
        p = np.asarray(pose, dtype=float)
    except (TypeError, ValueError):
        return None, 'not an array of numbers'
    if p.shape != (7,):
        return None, f'{p.size} values instead of 7 (x, y, z, qx, qy, qz, qw)'
    x, y, z, qx, qy, qz, qw = p.tolist()            # plain floats: the per-cycle path
    if not all(map(math.isfinite, (x, y, z, qx, qy, qz, qw))):
        return None, 'not finite (NaN or inf)'
    c = rules.centre
    off = max(abs(x - c[0]), abs(y - c[1]), abs(z - c[2]))
    if off > rules.position_bound or math.hypot(x - c[0], y - c[1], z - c[2]) > rules.position_bound:
        return None, (f'position {off:.3g} m from the workspace centre, beyond the plausible bound '
                      f'{rules.position_bound:.3g} m')
    big = max(abs(qx), abs(qy), abs(qz), abs(qw))
    if big > 2.0:
        return None, f'quaternion component {big:.3g}: not a rotation'
    n = math.sqrt(qx * qx + qy * qy + qz * qz + qw * qw)
    if abs(n - 1.0) > rules.quaternion_tolerance:
        return None, f'quaternion norm {n:.6g} not within {rules.quaternion_tolerance:g} of 1'
    if abs(n - 1.0) > UNIT:
        p = p.copy()
        p[3:] /= n
    return p, None


def check_stamp(stamp, last, now, rules: InputRules, frames_since_last: int):
    """None if the stamp is acceptable, else the reason."""
    if isinstance(stamp, bool) or not isinstance(stamp, (int, np.integer)):
        return f'stamp {stamp!r} is not an integer number of ns'
    stamp = int(stamp)
    if now is not None:
        if stamp > now + rules.max_lead_ns:
            return f'stamp {stamp} is {(stamp - now) * 1e-9:.3g} s in the future (more than {rules.max_lead_ns * 1e-9:g} s)'
        if stamp < now - rules.max_age_ns:
            return f'stamp {stamp} is {(now - stamp) * 1e-9:.3g} s old (more than {rules.max_age_ns * 1e-9:g} s)'
    elif last is not None and stamp > last + (frames_since_last + 1) * rules.dt_ns + rules.max_lead_ns:
        return (f'stamp {stamp} is {(stamp - last) * 1e-9:.3g} s after the last accepted one, '
                f'{frames_since_last} frames ago: too far in the future')
    if last is not None and stamp <= last:
        return f'stamp {stamp} not after the last one {last}'
    return None


class ReferenceInput:
    """The model's reference stream: validation, the held last good reference, staleness."""

    def __init__(self, rules: InputRules, timeout_frames: int):
        self.rules = rules
        self.timeout = int(timeout_frames)
        self.last_ref = None          # last valid reference pose
        self.last_stamp = None
        self.since_accept = 0         # frames since the last accepted reference
        self.unusable = 0             # consecutive consuming frames without a usable reference
        self.bad_streak = 0

    def take(self, reference, stamp_ns, now_ns, consuming: bool, events: list):
        """The reference for this frame: the new one if valid, else the last good one (or None; the
        planner treats a frame without a new valid one as a dropout: ``since_accept`` > 0).
        ``events`` receives (name, message) pairs."""
        self.since_accept += 1
        if reference is None:
            self._unusable(consuming, events, 'no reference')
            return self.last_ref
        pose, reason = check_pose(reference, self.rules)
        if reason is None and stamp_ns is not None:
            reason = check_stamp(stamp_ns, self.last_stamp, now_ns, self.rules, self.since_accept - 1)
        if reason is not None:
            self.refuse(reason, events)
            self._unusable(consuming, events, 'no valid reference')
            return self.last_ref
        self.bad_streak = 0
        self.unusable = 0
        self.since_accept = 0
        if stamp_ns is not None:
            self.last_stamp = int(stamp_ns)
        self.last_ref = pose
        return pose

    def refuse(self, reason, events) -> None:
        """A reference refused before ``take`` (by a node that screens stamps): same streak."""
        self.bad_streak += 1
        if self.bad_streak == 1:
            events.append(('reference_invalid', f'reference refused: {reason}: a dropout frame (controlled stop)'))

    def _unusable(self, consuming, events, what):
        if not consuming:
            return
        self.unusable += 1
        if self.unusable == self.timeout:
            events.append(('reference_stale', f'{what} for {self.unusable} frames: dropout frames '
                                              '(controlled stop)'))


def check_future(future, rules: InputRules):
    """(rows, None): the rows of a look-ahead buffer that are valid poses ((M, 7), possibly empty),
    by the same rules as ``check_pose`` (vectorised); (None, reason) for a malformed buffer."""
    try:
        f = np.asarray(future, dtype=float)
    except (TypeError, ValueError):
        return None, 'look-ahead buffer is not an array of numbers'
    if f.size % 7 or f.size > 7 * MAX_FUTURE_ROWS:
        return None, f'look-ahead buffer of {f.size} values: not 0..{MAX_FUTURE_ROWS} poses of 7'
    f = f.reshape(-1, 7)
    ok = np.all(np.isfinite(f), axis=1)
    ok &= np.all(np.abs(f[:, :3] - np.asarray(rules.centre)) <= rules.position_bound, axis=1)
    ok &= np.all(np.abs(f[:, 3:]) <= 2.0, axis=1)
    q = np.where(ok[:, None], f[:, 3:], 0.0)
    ok &= np.abs(np.sqrt(np.sum(q * q, axis=1)) - 1.0) <= rules.quaternion_tolerance
    ok &= np.linalg.norm(np.where(ok[:, None], f[:, :3] - np.asarray(rules.centre), 0.0), axis=1) <= rules.position_bound
    return f[ok], None
