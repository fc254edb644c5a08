"""numba kernel of the Hexaslide forward kinematics: the iteration of forward.py, compiled.

Line for line the algorithm of :class:`ForwardKinematicsNumpy` (its docstring explains it),
with the same floating-point operations in the same order. Two operations differ in rounding
only: the 6x6 inversion (Gauss-Jordan with partial pivoting here, LAPACK ``gesv`` in numpy)
and ``jinv @ f`` (a sequential dot product here, BLAS in numpy). Both change the Newton step
by a few ulps; the step is recomputed from the residual at every iterate, so the converged
poses agree to rounding (test/unit/test_hexaslide_compiled.py).

State, parameters and scratch are float64 arrays owned by the Python object (forward.py),
so a solve allocates nothing. Layouts are the constants below.
"""
from __future__ import annotations

import math

from hil_core.maths.jit import njit_cached

# parameters (prm)
C_TOL, C_MAX_ITER, C_FD_STEP, C_HALVINGS, C_REFRESH, C_CHORD, C_PREDICT, C_JFMD = range(8)
C_COS_UNI, C_COS_SPH, C_L2, C_HALF_INV_L, C_INV_L = 8, 9, 10, 11, 12
C_HOME = 13                      # (7,)
C_LEGS = 24                      # per leg: b_x, b_y, home slider x, y, u_x, u_y, link_home (3)
LEG = 9
PARAM_SIZE = C_LEGS + 6 * LEG
_CHORD_SAFETY = 0.01             # forward.py

# warm-start state (st)
S_STATE, S_PREV, S_JINV, S_HAS_PREV, S_HAS_JINV = 0, 7, 14, 50, 51
STATE_SIZE = 52

# result codes
CONVERGED, BAD_Q, BAD_GUESS, SINGULAR, NO_DESCENT, NO_CONVERGENCE = 0, 1, 2, 3, 4, 5
MINUS_ROOT, UNIVERSAL, SPHERICAL = 6, 7, 8           # assembly-mode problems (with a leg index)

# scratch (ws), slots of 7: s, s_new, f, f_new, dx, start, out, s0, perturbed s, its f; then
# base (6 x 4), jac (36), jinv (36), Gauss-Jordan tableau (6 x 12)
W_S, W_SNEW, W_F, W_FNEW, W_DX, W_START, W_OUT, W_S0, W_SK, W_FK = 0, 7, 14, 21, 28, 35, 42, 49, 56, 63
W_BASE, W_JAC, W_JINV, W_GJ = 70, 94, 130, 166
WORK_SIZE = 238


@njit_cached
def _rotate_quat(wx, wy, wz, x, y, z, w):
    th2 = wx * wx + wy * wy + wz * wz
    if th2 < 1e-12:
        s, c = 0.5 - th2 / 48.0, 1.0 - th2 / 8.0
    else:
        th = math.sqrt(th2)
        s, c = math.sin(0.5 * th) / th, math.cos(0.5 * th)
    ax, ay, az = wx * s, wy * s, wz * s
    nx = c * x + ax * w + ay * z - az * y
    ny = c * y - ax * z + ay * w + az * x
    nz = c * z + ax * y - ay * x + az * w
    nw = c * w - ax * x - ay * y - az * z
    n = 1.0 / math.sqrt(nx * nx + ny * ny + nz * nz + nw * nw)
    return nx * n, ny * n, nz * n, nw * n


@njit_cached
def _step(s, dx, lam, out):
    out[0], out[1], out[2] = s[0] + lam * dx[0], s[1] + lam * dx[1], s[2] + lam * dx[2]
    out[3], out[4], out[5], out[6] = _rotate_quat(lam * dx[3], lam * dx[4], lam * dx[5],
                                                  s[3], s[4], s[5], s[6])


@njit_cached
def _distance(a, b):
    m = abs(a[0] - b[0])
    for k in range(1, 7):
        v = abs(a[k] - b[k]) if k < 3 else 2.0 * abs(a[k] - b[k])
        if v > m:
            m = v
    return m


@njit_cached
def _max_abs(v):
    m = abs(v[0])
    for k in range(1, v.shape[0]):
        if abs(v[k]) > m:
            m = abs(v[k])
    return m


@njit_cached
def _eval(s, base, l2, f, jac, want_jac):
    """Residuals f (6,) at state s, and the analytic Jacobian rows into jac (36,) if asked."""
    px, py, pz = s[0], s[1], s[2]
    x, y, z, w = s[3], s[4], s[5], s[6]
    r00, r01 = 1 - 2 * (y * y + z * z), 2 * (x * y - z * w)
    r10, r11 = 2 * (x * y + z * w), 1 - 2 * (x * x + z * z)
    r20, r21 = 2 * (x * z - y * w), 2 * (y * z + x * w)
    for i in range(6):
        bx, by, cx, cy = base[4 * i], base[4 * i + 1], base[4 * i + 2], base[4 * i + 3]
        rx, ry, rz = r00 * bx + r01 * by, r10 * bx + r11 * by, r20 * bx + r21 * by
        lx, ly, lz = px + rx - cx, py + ry - cy, pz + rz
        f[i] = lx * lx + ly * ly + lz * lz - l2
        if want_jac:
            o = 6 * i
            jac[o], jac[o + 1], jac[o + 2] = 2 * lx, 2 * ly, 2 * lz
            jac[o + 3] = 2 * (ry * lz - rz * ly)
            jac[o + 4] = 2 * (rz * lx - rx * lz)
            jac[o + 5] = 2 * (rx * ly - ry * lx)


@njit_cached
def _invert6(a, out, m):
    """Gauss-Jordan with partial pivoting of a (36,) row-major into out, in the tableau m (6, 12);
    False if singular (a zero pivot, numpy's LinAlgError) or not finite."""
    for i in range(6):
        for j in range(6):
            m[i, j] = a[6 * i + j]
            m[i, 6 + j] = 1.0 if i == j else 0.0
    for c in range(6):
        p = c
        for r in range(c + 1, 6):
            if abs(m[r, c]) > abs(m[p, c]):
                p = r
        if m[p, c] == 0.0:
            return False
        if p != c:
            for j in range(12):
                m[c, j], m[p, j] = m[p, j], m[c, j]
        inv_piv = 1.0 / m[c, c]
        for j in range(12):
            m[c, j] *= inv_piv
        for r in range(6):
            if r != c and m[r, c] != 0.0:
                g = m[r, c]
                for j in range(12):
                    m[r, j] -= g * m[c, j]
    for i in range(6):
        for j in range(6):
            v = m[i, 6 + j]
            if not math.isfinite(v):
                return False
            out[6 * i + j] = v
    return True


@njit_cached
def _inverse(prm, s, base, f, ws):
    """Inverse Jacobian at s into ws[W_JINV]: analytic (newton) or forward differences (jfmd)."""
    jac = ws[W_JAC:W_JAC + 36]
    if prm[C_JFMD] == 0.0:
        _eval(s, base, prm[C_L2], ws[W_FK:W_FK + 6], jac, True)
    else:
        h = prm[C_FD_STEP]
        sk, fk = ws[W_SK:W_SK + 7], ws[W_FK:W_FK + 6]
        for k in range(6):
            for i in range(7):
                sk[i] = s[i]
            if k < 3:
                sk[k] += h
            else:
                w0, w1, w2 = (h if k == 3 else 0.0), (h if k == 4 else 0.0), (h if k == 5 else 0.0)
                sk[3], sk[4], sk[5], sk[6] = _rotate_quat(w0, w1, w2, s[3], s[4], s[5], s[6])
            _eval(sk, base, prm[C_L2], fk, jac, False)
            for i in range(6):
                jac[6 * i + k] = (fk[i] - f[i]) / h
    return _invert6(jac, ws[W_JINV:W_JINV + 36], ws[W_GJ:W_GJ + 72].reshape(6, 12))


@njit_cached
def _newton_step(ws, f, dx):
    jinv = ws[W_JINV:W_JINV + 36]
    for r in range(6):
        acc = 0.0
        for c in range(6):
            acc += jinv[6 * r + c] * f[c]
        dx[r] = acc
    return _max_abs(dx)


@njit_cached
def _iterate(prm, s0, base, have_jinv, ws):
    """Damped (chord) Newton from s0 (forward.py ``_iterate``); the result state in ws[W_OUT],
    the inverse Jacobian in ws[W_JINV] (valid on entry if have_jinv).
    Returns (ok, jinv_valid, iterations, residual, code)."""
    s, s_new = ws[W_S:W_S + 7], ws[W_SNEW:W_SNEW + 7]
    f, f_new, dx = ws[W_F:W_F + 6], ws[W_FNEW:W_FNEW + 6], ws[W_DX:W_DX + 6]
    out = ws[W_OUT:W_OUT + 7]
    tol, refresh, l2, half_inv_l = prm[C_TOL], prm[C_REFRESH], prm[C_L2], prm[C_HALF_INV_L]
    max_iter, halvings = int(prm[C_MAX_ITER]), int(prm[C_HALVINGS])
    for i in range(7):
        s[i] = s0[i]
    _eval(s, base, l2, f, ws, False)
    merit = 0.0
    for i in range(6):
        merit += f[i] * f[i]
    prev = math.inf
    jinv_ok = have_jinv
    size = 0.0
    for it in range(max_iter + 1):
        residual = half_inv_l * _max_abs(f)
        fresh = not jinv_ok
        if fresh:
            jinv_ok = _inverse(prm, s, base, f, ws)
            if not jinv_ok:
                return False, False, it, residual, SINGULAR
        size = _newton_step(ws, f, dx)
        if not fresh and size >= tol and (size > refresh or size * size >= _CHORD_SAFETY * tol * prev):
            fresh = True
            jinv_ok = _inverse(prm, s, base, f, ws)
            if not jinv_ok:
                return False, False, it, residual, SINGULAR
            size = _newton_step(ws, f, dx)
        if size < tol:
            _step(s, dx, -1.0, out)
            return True, True, it, residual, CONVERGED
        if it == max_iter:
            break
        lam = -1.0
        descended = False
        for _ in range(halvings):
            _step(s, dx, lam, s_new)
            _eval(s_new, base, l2, f_new, ws, False)
            merit_new = 0.0
            for i in range(6):
                merit_new += f_new[i] * f_new[i]
            if merit_new < merit:
                descended = True
                break
            if not fresh:                       # old (chord) Jacobian: refresh before damping
                fresh = True
                jinv_ok = _inverse(prm, s, base, f, ws)
                if not jinv_ok:
                    return False, False, it, residual, SINGULAR
                size = _newton_step(ws, f, dx)
                continue
            lam *= 0.5
        if not descended:
            return False, False, it, residual, NO_DESCENT
        if size * -lam > refresh:
            jinv_ok = False                     # far from the solution: plain damped Newton
        for i in range(7):
            s[i] = s_new[i]
        for i in range(6):
            f[i] = f_new[i]
        merit, prev = merit_new, size * -lam
    for i in range(7):
        out[i] = s[i]
    return False, False, max_iter, half_inv_l * _max_abs(f), NO_CONVERGENCE


@njit_cached
def _branch_problem(prm, s, base):
    """0 if every leg is on the + root with plausible passive joints, else (code, leg)."""
    px, py, pz = s[0], s[1], s[2]
    x, y, z, w = s[3], s[4], s[5], s[6]
    r00, r01, r02 = 1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)
    r10, r11, r12 = 2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)
    r20, r21, r22 = 2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)
    inv_l = prm[C_INV_L]
    for i in range(6):
        bx, by, cx, cy = base[4 * i], base[4 * i + 1], base[4 * i + 2], base[4 * i + 3]
        o = C_LEGS + LEG * i
        ux, uy, hx, hy, hz = prm[o + 4], prm[o + 5], prm[o + 6], prm[o + 7], prm[o + 8]
        lx = (px + r00 * bx + r01 * by - cx) * inv_l
        ly = (py + r10 * bx + r11 * by - cy) * inv_l
        lz = (pz + r20 * bx + r21 * by) * inv_l
        if lx * ux + ly * uy >= 0.0:
            return MINUS_ROOT, i
        if lx * hx + ly * hy + lz * hz < prm[C_COS_UNI]:
            return UNIVERSAL, i
        rhx, rhy, rhz = r00 * hx + r01 * hy + r02 * hz, r10 * hx + r11 * hy + r12 * hz, r20 * hx + r21 * hy + r22 * hz
        if lx * rhx + ly * rhy + lz * rhz < prm[C_COS_SPH]:
            return SPHERICAL, i
    return 0, -1


@njit_cached
def _extrapolate(a, b, out):
    """Constant-velocity prediction b + (b - a), rotation b a^-1 b (forward.py)."""
    ax, ay, az, aw = -a[3], -a[4], -a[5], a[6]
    bx, by, bz, bw = b[3], b[4], b[5], b[6]
    dx = bw * ax + bx * aw + by * az - bz * ay
    dy = bw * ay - bx * az + by * aw + bz * ax
    dz = bw * az + bx * ay - by * ax + bz * aw
    dw = bw * aw - bx * ax - by * ay - bz * az
    out[0], out[1], out[2] = 2 * b[0] - a[0], 2 * b[1] - a[1], 2 * b[2] - a[2]
    out[3] = dw * bx + dx * bw + dy * bz - dz * by
    out[4] = dw * by - dx * bz + dy * bw + dz * bx
    out[5] = dw * bz + dx * by - dy * bx + dz * bw
    out[6] = dw * bw - dx * bx - dy * by - dz * bz


@njit_cached
def solve(prm, st, q, guess, guess_state, ws):
    """One solve (forward.py ``solve``): q (6,) slider displacements; guess_state 0: none,
    1: ``guess`` (7,) to check, 2: a guess that could not be read. On success the warm-start
    state ``st`` is updated; on failure it is untouched.
    Returns (code, iterations, residual, leg) with leg >= 0 for the assembly-mode codes."""
    for i in range(6):
        if not math.isfinite(q[i]):
            return BAD_Q, 0, math.inf, -1
    start, s0, base = ws[W_START:W_START + 7], ws[W_S0:W_S0 + 7], ws[W_BASE:W_BASE + 24]
    trusted = guess_state == 0
    if guess_state == 2:
        return BAD_GUESS, 0, math.inf, -1
    if trusted:
        for i in range(7):
            start[i] = st[S_STATE + i]
        have_jinv = prm[C_CHORD] != 0.0 and st[S_HAS_JINV] != 0.0
        if have_jinv:
            for i in range(36):
                ws[W_JINV + i] = st[S_JINV + i]
    else:
        n = math.sqrt(guess[3] * guess[3] + guess[4] * guess[4] + guess[5] * guess[5] + guess[6] * guess[6])
        for i in range(7):
            if not math.isfinite(guess[i]):
                return BAD_GUESS, 0, math.inf, -1
        if not n > 1e-9:
            return BAD_GUESS, 0, math.inf, -1
        for i in range(7):
            start[i] = guess[i] if i < 3 else guess[i] / n
        have_jinv = False
    for i in range(7):
        s0[i] = start[i]
    if prm[C_PREDICT] != 0.0 and trusted and st[S_HAS_PREV] != 0.0:
        _extrapolate(st[S_PREV:S_PREV + 7], start, ws[W_SK:W_SK + 7])
        if _distance(ws[W_SK:W_SK + 7], start) < prm[C_REFRESH]:       # consecutive samples only
            for i in range(7):
                s0[i] = ws[W_SK + i]
    for i in range(6):
        o = C_LEGS + LEG * i
        base[4 * i], base[4 * i + 1] = prm[o], prm[o + 1]
        base[4 * i + 2], base[4 * i + 3] = prm[o + 2] + q[i] * prm[o + 4], prm[o + 3] + q[i] * prm[o + 5]
    ok, jinv_ok, iterations, residual, code = _iterate(prm, s0, base, have_jinv, ws)
    out = ws[W_OUT:W_OUT + 7]
    leg = -1
    # a far move may land on another assembly mode: check, and retry once from home (forward.py)
    if ok and (not trusted or _distance(out, start) > prm[C_REFRESH]):
        problem, leg = _branch_problem(prm, out, base)
        at_home = True
        for i in range(7):
            if start[i] != prm[C_HOME + i]:
                at_home = False
        if problem != 0 and (not trusted or not at_home):
            ok, _, it2, residual, code = _iterate(prm, prm[C_HOME:C_HOME + 7], base, False, ws)
            jinv_ok = False
            iterations += it2
            problem, leg = _branch_problem(prm, out, base) if ok else (0, -1)
        if problem != 0:
            ok, code = False, problem
    if not ok:
        return code, iterations, residual, leg
    for i in range(7):
        st[S_PREV + i] = st[S_STATE + i]
        st[S_STATE + i] = out[i]
    st[S_HAS_PREV] = 1.0 if trusted else 0.0
    st[S_HAS_JINV] = 1.0 if jinv_ok else 0.0
    if jinv_ok:
        for i in range(36):
            st[S_JINV + i] = ws[W_JINV + i]
    return CONVERGED, iterations, residual, -1
