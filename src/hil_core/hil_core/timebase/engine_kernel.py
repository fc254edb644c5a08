"""numba kernels of the timebase engine: the per-reference write and the per-frame servo loop.

The algorithm is :class:`TimeBaseEngineNumpy`'s (engine.py, buffer.py, control.py,
blending.py, bspline.py: read those for the why), step for step, with the same floating-point
operations in the same order (numpy's einsum orders reproduced, the oracle's prefilter summed
left to right like here). Only transcendental functions may differ in the last bit (numpy's
SIMD sin/cos/atan2/pow against libm's) and only in the pose channels; the stamp channel, on
which the time-base control decides, is computed identically.

All engine state lives in arrays owned by :class:`hil_core.timebase.engine.TimeBaseEngine`
(layouts below); a frame allocates only its output arrays. The inverse kinematics of the
segment points runs inside the kernel when the engine's IK is the compiled hexaslide one; for
any other IK callable :func:`run_frame` returns ``NEED_IK`` with the segment poses in ``p7``,
the caller fills ``qs``/``oks`` and calls it again, and it resumes where it stopped.
"""
from __future__ import annotations

import math

from hil_core.hexaslide import inverse_kernel
from hil_core.hexaslide.inverse_kernel import ik_q
from hil_core.maths.jit import njit_cached

HIST = 16                         # engine.py _HIST: segment-point history (f and c rows)

# configuration (cf), float64
(K_T, K_H, K_TS, K_STEP, K_D0, K_GENTLE, K_MAX_STEPS, K_PATIENCE, K_ENABLED, K_PER_STEP_CYCLE,
 K_DEADBAND, K_EXTRAPOLATE, K_MAX_GAP, K_SIZE, K_NSEG, K_NSUB, K_STEP_SCALE, K_LAG, K_MAX_LEVEL,
 K_CYCLES, K_INLINE_IK) = range(21)
CONFIG_SIZE = 21

# integer state (ist), int64
(I_W, I_R, I_OVERRUNS, I_REFUSED, I_FILLED, I_N, I_LEVEL, I_STUCK, I_J, I_V, I_CYCLES, I_MOVE,
 I_EXTRAPOLATED, I_HOLDING, I_HOLDS, I_UNDERRUNS, I_FRAME_UNDERRUNS, I_FAULT, I_FAULT_MOVE,
 I_FAULT_K, I_PENDING, I_CYCLE) = range(22)
INT_SIZE = 22

# float state (fst)
F_PREV_E, F_START_STAMP, F_FAULT_POSE, F_LAST_VALID = 0, 1, 2, 9
FLOAT_SIZE = 16

# write results
W_OK, W_FILLED, W_STALE, W_INVALID = 0, 1, 2, 3
FRAME_DONE, NEED_IK = 0, 1


@njit_cached
def pose7_to_pose6(p, out):
    """buffer.pose7_to_pose6 for one pose: position and quat_to_rotvec (rotations.py)."""
    n = math.sqrt(((p[3] * p[3] + p[4] * p[4]) + p[5] * p[5]) + p[6] * p[6])
    x, y, z, w = p[3] / n, p[4] / n, p[5] / n, p[6] / n
    if w < 0:
        x, y, z, w = x * -1.0, y * -1.0, z * -1.0, w * -1.0
    s = math.sqrt((x * x + y * y) + z * z)
    angle = 2.0 * math.atan2(s, w)
    k = angle / s if s > 1e-12 else 2.0 + (2.0 / 3.0) * (s * s)
    out[0], out[1], out[2] = p[0], p[1], p[2]
    out[3], out[4], out[5] = x * k, y * k, z * k


@njit_cached
def _put(cf, ist, buf, src, stamp):
    """RingBuffer._put of src[:6] with ``stamp``."""
    size = int(cf[K_SIZE])
    if ist[I_W] - ist[I_R] >= size:
        ist[I_R] += 1                       # overwrite the oldest unread pose
        ist[I_OVERRUNS] += 1
    ist[I_W] += 1
    row = ist[I_W] % size
    for i in range(6):
        buf[row, i] = src[i]
    buf[row, 6] = stamp


@njit_cached
def buffer_write(cf, ist, buf, pose6, stamp, scratch):
    """RingBuffer.write: returns (W_* code, poses filled). ``scratch`` (12,): prev, fill pose."""
    for i in range(6):
        if not math.isfinite(pose6[i]):
            ist[I_REFUSED] += 1
            return W_INVALID, 0
    if not math.isfinite(stamp):
        ist[I_REFUSED] += 1
        return W_INVALID, 0
    if ist[I_W] >= 0:
        size = int(cf[K_SIZE])
        last = buf[ist[I_W] % size, 6]
        gap = (stamp - last) / cf[K_T]
        if gap < 0.5:
            ist[I_REFUSED] += 1
            return W_STALE, 0
        missing = int(round(gap)) - 1
        if missing >= 1:
            # fill the last max_gap_fill missing periods by linear interpolation (buffer.py)
            n_fill = min(missing, int(cf[K_MAX_GAP]))
            prev, fill = scratch[0:6], scratch[6:12]
            for i in range(6):
                prev[i] = buf[ist[I_W] % size, i]
            for i in range(missing - n_fill + 1, missing + 1):
                a = i / (missing + 1)
                for c in range(6):
                    fill[c] = prev[c] + a * (pose6[c] - prev[c])
                _put(cf, ist, buf, fill, last + a * (stamp - last))
            ist[I_FILLED] += n_fill
            _put(cf, ist, buf, pose6, stamp)
            return W_FILLED, n_fill
    _put(cf, ist, buf, pose6, stamp)
    return W_OK, 0


@njit_cached
def write(cf, ist, buf, pose7, stamp, scratch):
    """TimeBaseEngine.write after the shape check: validity, chart change, buffer write."""
    n2 = 0.0
    for i in range(7):
        if not math.isfinite(pose7[i]):
            ist[I_REFUSED] += 1
            return W_INVALID, 0
    for i in range(3, 7):
        n2 += pose7[i] * pose7[i]
    if math.sqrt(n2) < 1e-9:
        ist[I_REFUSED] += 1
        return W_INVALID, 0
    pose6 = scratch[12:18]
    pose7_to_pose6(pose7, pose6)
    return buffer_write(cf, ist, buf, pose6, stamp, scratch)


@njit_cached
def control_update(cf, ist, fst, distance):
    """TimeBaseControl.update (control.py)."""
    if cf[K_ENABLED] == 0.0:
        ist[I_N] = 0
        return
    e = distance - cf[K_D0]
    deadband = cf[K_DEADBAND]
    n = ist[I_N]
    if abs(e) <= deadband:
        n -= (n > 0) - (n < 0)
        ist[I_LEVEL] = 0
        ist[I_STUCK] = 0
    else:
        prev = fst[F_PREV_E]
        outside_before = abs(prev) > deadband
        worse = outside_before and abs(e) > abs(prev) + 1e-12
        ist[I_STUCK] = 0 if abs(e) < abs(prev) - 1e-12 else ist[I_STUCK] + 1
        if worse or ist[I_STUCK] >= cf[K_PATIENCE]:
            ist[I_LEVEL] = min(ist[I_LEVEL] + 1, int(cf[K_MAX_LEVEL]))
            ist[I_STUCK] = 0
        needed = int(math.ceil(abs(e) / (cf[K_PATIENCE] * cf[K_PER_STEP_CYCLE]) - 1e-9))
        limit = min(int(cf[K_MAX_STEPS]), int(cf[K_GENTLE]) * (ist[I_LEVEL] + 1))
        target = min(needed, limit) * (1 if e > 0 else -1)
        n += (target > n) - (target < n)
    ist[I_N] = n
    fst[F_PREV_E] = e


@njit_cached
def _begin_move(cf, ist, buf, targets, seg, p7):
    """First half of _start_move: read the buffer (or extrapolate / hold), shift the targets,
    blend the segment points into seg (n_seg, 7) and their poses into p7.
    Returns True when their inverse kinematics is needed (no fault latched)."""
    size = int(cf[K_SIZE])
    n_seg = int(cf[K_NSEG])
    slot = -1
    while ist[I_W] > ist[I_R]:
        ist[I_R] += 1
        slot = ist[I_R] % size
        # poses already covered by an extrapolated move are skipped (their stamp is not newer)
        if not buf[slot, 6] <= targets[2, 6] + 0.5 * cf[K_T]:
            break
        slot = -1
    for r in range(2):
        for c in range(7):
            targets[r, c] = targets[r + 1, c]
    if slot >= 0:
        for c in range(7):
            targets[2, c] = buf[slot, c]
        ist[I_EXTRAPOLATED] = 0
        ist[I_HOLDING] = 0
    else:
        ist[I_UNDERRUNS] += 1
        ist[I_FRAME_UNDERRUNS] += 1
        if ist[I_EXTRAPOLATED] < cf[K_EXTRAPOLATE] and ist[I_HOLDING] == 0:
            # the pose is late: continue at constant velocity (engine.py)
            for c in range(7):
                targets[2, c] = 2.0 * targets[1, c] - targets[0, c]
            ist[I_EXTRAPOLATED] += 1
        else:
            for c in range(7):
                targets[2, c] = targets[1, c]       # stream gone: hold (zero move, no jump)
            ist[I_HOLDING] = 1
            ist[I_HOLDS] += 1
    ist[I_MOVE] += 1
    for k in range(n_seg):                          # blending.blend at x = (k + 1) / n_seg
        x = (k + 1) / n_seg
        a = 1.0 - 0.5 * ((1.0 - x) * (1.0 - x))
        b = 0.5 * x * x
        for c in range(7):
            seg[k, c] = (targets[0, c] + a * (targets[1, c] - targets[0, c])) + b * (targets[2, c] - targets[1, c])
    if ist[I_FAULT] != 0:
        return False
    for k in range(n_seg):                          # pose6_to_pose7 (rotvec_to_quat)
        v0, v1, v2 = seg[k, 3], seg[k, 4], seg[k, 5]
        angle = math.sqrt((v0 * v0 + v1 * v1) + v2 * v2)
        half = 0.5 * angle
        kk = math.sin(half) / angle if angle > 1e-8 else 0.5 - (angle * angle) / 48.0
        p7[k, 0], p7[k, 1], p7[k, 2] = seg[k, 0], seg[k, 1], seg[k, 2]
        p7[k, 3], p7[k, 4], p7[k, 5], p7[k, 6] = v0 * kk, v1 * kk, v2 * kk, math.cos(half)
    return True


@njit_cached
def _push(ist, fh, ch, w, row):
    """Append one segment point (joints + stamp) and its prefiltered control point."""
    ist[I_J] += 1
    j = ist[I_J]
    r = j % HIST
    for c in range(fh.shape[1]):
        fh[r, c] = row[c]
    for c in range(fh.shape[1]):
        acc = w[0] * fh[j % HIST, c]
        for i in range(1, 4):
            acc += w[i] * fh[(j - i) % HIST, c]
        ch[r, c] = acc


@njit_cached
def _finish_move(cf, ist, fst, fh, ch, w, seg, p7, qs, oks, rows, held_row):
    """Second half of _start_move: joint rows from the IK (latching a failure) into f and c."""
    n_seg = int(cf[K_NSEG])
    nj = qs.shape[1]
    held = fh[ist[I_J] % HIST]
    for c in range(nj + 1):
        held_row[c] = held[c]
    if ist[I_FAULT] == 0:
        k = n_seg
        for i in range(n_seg):
            good = oks[i]
            for c in range(nj):
                if not math.isfinite(qs[i, c]):
                    good = False
            if not good:
                k = i
                break
        for i in range(n_seg):
            for c in range(nj):
                rows[i, c] = qs[i, c]
            rows[i, nj] = seg[i, 6]
        if k > 0:
            for c in range(7):
                fst[F_LAST_VALID + c] = p7[k - 1, c]
        if k < n_seg:
            # latch: hold the last reachable segment point; only a restart clears it
            ist[I_FAULT], ist[I_FAULT_MOVE], ist[I_FAULT_K] = 1, ist[I_MOVE], k
            for c in range(7):
                fst[F_FAULT_POSE + c] = p7[k, c]
            for i in range(k, n_seg):
                for c in range(nj + 1):
                    rows[i, c] = rows[k - 1, c] if k > 0 else held_row[c]
    else:
        for i in range(n_seg):
            for c in range(nj + 1):
                rows[i, c] = held_row[c]
    for i in range(n_seg):
        _push(ist, fh, ch, w, rows[i])


@njit_cached(depends=(inverse_kernel,))
def run_frame(cf, ist, fst, buf, targets, fh, ch, w, seg, p7, qs, oks, rows, held_row, ikp,
              frame_time, has_frame_time, vs, factors, distances, frac, pos, vel):
    """step_frame's servo cycles (engine.py); FRAME_DONE with the outputs written, or NEED_IK
    (callback IK: fill qs, oks for p7 and call again)."""
    n_cycles = int(cf[K_CYCLES])
    step_scale = int(cf[K_STEP_SCALE])
    scale = int(cf[K_NSUB]) * step_scale
    T, Ts = cf[K_T], cf[K_TS]
    resumed = ist[I_PENDING] != 0
    if resumed:
        ist[I_PENDING] = 0
        _finish_move(cf, ist, fst, fh, ch, w, seg, p7, qs, oks, rows, held_row)
        i = ist[I_CYCLE]
    else:
        ist[I_FRAME_UNDERRUNS] = 0
        i = 0
    while i < n_cycles:
        n = ist[I_N]
        if not resumed:
            ist[I_V] += step_scale + n
            ist[I_CYCLES] += 1
        resumed = False
        v_int = ist[I_V]
        need = -(-v_int // scale) + 1                 # control points up to ceil(v) + 1
        while ist[I_J] < need:
            if _begin_move(cf, ist, buf, targets, seg, p7):
                if cf[K_INLINE_IK] == 0.0:
                    ist[I_PENDING], ist[I_CYCLE] = 1, i
                    return NEED_IK
                ik_q(ikp, p7, qs, oks)
            _finish_move(cf, ist, fst, fh, ch, w, seg, p7, qs, oks, rows, held_row)
        v = v_int / scale
        vs[i] = v
        factors[i] = 1.0 + n * cf[K_STEP]
        distances[i] = ist[I_W] - ist[I_R]
        # W-R distance with sub-pose resolution, from the stamp channel of the output
        j = need - 2
        t = v - j
        sc = fh.shape[1] - 1
        # Python's float ** 3 is libm pow: math.pow here, not t * t * t
        ref = ((math.pow(1 - t, 3.0) * ch[(j - 1) % HIST, sc]
                + (3 * math.pow(t, 3.0) - 6 * t * t + 4) * ch[j % HIST, sc]
                + (-3 * math.pow(t, 3.0) + 3 * t * t + 3 * t + 1) * ch[(j + 1) % HIST, sc]
                + math.pow(t, 3.0) * ch[(j + 2) % HIST, sc]) / 6.0)
        if has_frame_time:
            now = frame_time + (i + 1) * Ts
        else:
            now = fst[F_START_STAMP] + ist[I_CYCLES] * Ts
        frac[i] = (now - ref) / T - cf[K_LAG]
        # while holding on an underrun there is nothing to catch up with: relax instead
        control_update(cf, ist, fst, cf[K_D0] if ist[I_HOLDING] != 0 else frac[i])
        i += 1
    for i in range(n_cycles):                       # bspline.basis and evaluate
        j = int(math.ceil(vs[i])) - 1
        t = vs[i] - j
        t2, t3 = t * t, t * t * t
        u = 1 - t
        p0, p1 = math.pow(u, 3.0) / 6.0, (3 * t3 - 6 * t2 + 4) / 6.0
        p2, p3 = (-3 * t3 + 3 * t2 + 3 * t + 1) / 6.0, t3 / 6.0
        d0, d1 = (-3 * (u * u)) / 6.0, (9 * t2 - 12 * t) / 6.0
        d2, d3 = (-9 * t2 + 6 * t + 3) / 6.0, (3 * t2) / 6.0
        r0, r1, r2, r3 = (j - 1) % HIST, j % HIST, (j + 1) % HIST, (j + 2) % HIST
        speed = factors[i] / cf[K_H]
        for c in range(fh.shape[1]):
            pos[i, c] = p0 * ch[r0, c] + p1 * ch[r1, c] + p2 * ch[r2, c] + p3 * ch[r3, c]   # einsum order
            vel[i, c] = (d0 * ch[r0, c] + d1 * ch[r1, c] + d2 * ch[r2, c] + d3 * ch[r3, c]) * speed
    return FRAME_DONE
