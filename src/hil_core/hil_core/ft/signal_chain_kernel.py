"""Compiled (numba) F/T signal chain: one call per block of samples, the per-sample loop inside.

Profile (cProfile, bench/ft_chain.py, 4-sample frames at 1.6 kHz): 85 us per frame, of which
about half in ``scipy.signal.sosfilt`` (argument validation and axis juggling for 4 rows:
``_validate_sos``, ``moveaxis``, ``normalize_axis_tuple``), a fifth in the per-sample
classification in Python, the rest in ``process``'s own per-sample bookkeeping. Here the
whole block (validity, gravity, bias window, hold, staleness, DF2T biquads, decimation) is
one compiled loop over the samples working on the chain's own state arrays; the caller
allocates only the block's output arrays.

The arithmetic is that of ``signal_chain_numpy.SignalChainNumpy`` and of scipy's ``sosfilt``
(transposed direct form II, the order of ``StreamFilter.step``), sample by sample; tests:
test/unit/test_ft_compiled.py.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

VALID, OUT_OF_ORDER, NONFINITE, SATURATED, SPIKE, STATUS = range(6)
# integer state slots
HAS_LAST, LAST, HAS_VALID, LAST_VALID, HAS_HELD, SPIKE_RUN, COUNT, BUF_LEN, BUF_HEAD, FILTER_INIT = range(10)
N_ISTATE = 10
# float state slots: jump scale (2), last valid SI sample (6), held compensated input (6)
JS, LAST_X, HELD = 0, 2, 8
N_FSTATE = 14
# configuration packed in two arrays (fewer kernel arguments: each costs ~0.1 us per call)
F_RANGE, F_SPIKE_FACTOR, F_FLOOR_F, F_FLOOR_T, F_WINDOW, F_MASS, F_COG, F_GRAVITY = 0, 6, 7, 8, 9, 10, 11, 14
N_FCFG = 17
I_MAX_RUN, I_STALE_NS, I_PERIOD_NS, I_DECIMATE, I_GRID = range(5)
N_ICFG = 5


def pack_config(cfg) -> tuple[np.ndarray, np.ndarray]:
    """(float config, int config) arrays of a ChainConfig for ``process_kernel``."""
    f = np.zeros(N_FCFG)
    f[F_RANGE:F_RANGE + 6] = cfg.sensing_range
    f[F_SPIKE_FACTOR], f[F_FLOOR_F], f[F_FLOOR_T] = cfg.spike_factor, cfg.spike_floor[0], cfg.spike_floor[1]
    f[F_WINDOW], f[F_MASS] = cfg.spike_window, cfg.payload_mass
    f[F_COG:F_COG + 3] = cfg.payload_cog
    f[F_GRAVITY:F_GRAVITY + 3] = cfg.gravity
    i = np.zeros(N_ICFG, dtype=np.int64)
    i[I_MAX_RUN] = int(cfg.spike_max_run)
    i[I_STALE_NS] = int(round(cfg.stale_timeout * 1e9))
    i[I_PERIOD_NS] = int(round(1e9 / cfg.publish_rate))
    i[I_DECIMATE] = max(1, int(round(cfg.sample_rate / cfg.publish_rate)))
    i[I_GRID] = cfg.decimation == 'grid'
    return f, i


@njit(cache=True)
def _classify(t, x, i, flagged, has_flags, fcfg, spike_max_run, ist, fst):
    if ist[HAS_LAST] and t <= ist[LAST]:
        return OUT_OF_ORDER
    for c in range(6):
        if not math.isfinite(x[i, c]):
            return NONFINITE
    for c in range(6):
        if abs(x[i, c]) >= fcfg[F_RANGE + c]:
            return SATURATED
    if has_flags and flagged[i]:
        return STATUS
    spike_factor = fcfg[F_SPIKE_FACTOR]
    floor_f, floor_t = fcfg[F_FLOOR_F], fcfg[F_FLOOR_T]
    if spike_factor > 0 and ist[HAS_VALID]:
        lx = fst[LAST_X:LAST_X + 6]
        jf = math.sqrt((x[i, 0] - lx[0]) ** 2 + (x[i, 1] - lx[1]) ** 2 + (x[i, 2] - lx[2]) ** 2)
        jt = math.sqrt((x[i, 3] - lx[3]) ** 2 + (x[i, 4] - lx[4]) ** 2 + (x[i, 5] - lx[5]) ** 2)
        k = spike_factor
        if jf > k * max(fst[JS], floor_f) or jt > k * max(fst[JS + 1], floor_t):
            ist[SPIKE_RUN] += 1
            if ist[SPIKE_RUN] < spike_max_run:
                return SPIKE
            fst[JS] = floor_f                         # a real step: accept it, restart the scale
            fst[JS + 1] = floor_t
        else:
            w = 1.0 / fcfg[F_WINDOW]
            fst[JS] = fst[JS] + (jf - fst[JS]) * w
            fst[JS + 1] = fst[JS + 1] + (jt - fst[JS + 1]) * w
    ist[SPIKE_RUN] = 0
    return VALID


@njit(cache=True)
def process_kernel(t, x, flagged, has_flags, grav_mode, R, g_rows, fcfg, icfg, sos, zi, zi_unit, bias,
                   bias_buf, ist, fst, counters, reason, raw, filtered, publish):
    """Run samples t (N,), x (N, 6) through the chain, updating the state in place.

    grav_mode 0: no payload; 1: one orientation R (3, 3) for the block (payload and gravity
    from fcfg); 2: per-sample gravity wrenches g_rows (N, 6). fcfg, icfg: ``pack_config``.
    Outputs (N,): reason, raw (N, 6), filtered (N, 6; NaN without filter input), publish."""
    n = t.shape[0]
    spike_max_run, stale_ns, period_ns = icfg[I_MAX_RUN], icfg[I_STALE_NS], icfg[I_PERIOD_NS]
    decimate_every, grid = icfg[I_DECIMATE], icfg[I_GRID] != 0
    g = np.zeros(6)
    if grav_mode == 1:                               # SignalChainNumpy._gravity_row
        m = fcfg[F_MASS]
        gx, gy, gz = fcfg[F_GRAVITY], fcfg[F_GRAVITY + 1], fcfg[F_GRAVITY + 2]
        f0 = m * (R[0, 0] * gx + R[1, 0] * gy + R[2, 0] * gz)
        f1 = m * (R[0, 1] * gx + R[1, 1] * gy + R[2, 1] * gz)
        f2 = m * (R[0, 2] * gx + R[1, 2] * gy + R[2, 2] * gz)
        p0, p1, p2 = fcfg[F_COG], fcfg[F_COG + 1], fcfg[F_COG + 2]
        g[0], g[1], g[2] = f0, f1, f2
        g[3], g[4], g[5] = p1 * f2 - p2 * f1, p2 * f0 - p0 * f2, p0 * f1 - p1 * f0
    nbuf = bias_buf.shape[0]
    n_sec = sos.shape[0]
    for i in range(n):
        ti = t[i]
        r = _classify(ti, x, i, flagged, has_flags, fcfg, spike_max_run, ist, fst)
        reason[i] = r
        counters[r] += 1
        for c in range(6):
            raw[i, c] = 0.0
            filtered[i, c] = np.nan
        publish[i] = False
        if r == OUT_OF_ORDER:
            continue
        ist[HAS_LAST] = 1
        ist[LAST] = ti
        if r == VALID:
            head = ist[BUF_HEAD]
            for c in range(6):
                comp = x[i, c] - (g_rows[i, c] if grav_mode == 2 else g[c])
                if nbuf > 0:
                    bias_buf[head, c] = comp
                fst[HELD + c] = comp - bias[c]
                fst[LAST_X + c] = x[i, c]
            if nbuf > 0:                                 # deque(maxlen=bias_samples)
                ist[BUF_HEAD] = (head + 1) % nbuf
                if ist[BUF_LEN] < nbuf:
                    ist[BUF_LEN] += 1
            ist[HAS_VALID] = 1
            ist[LAST_VALID] = ti
            ist[HAS_HELD] = 1
        if ist[HAS_HELD]:
            if not ist[FILTER_INIT]:                     # steady state of the first input
                for s in range(n_sec):
                    for c in range(6):
                        zi[s, 0, c] = zi_unit[s, 0] * fst[HELD + c]
                        zi[s, 1, c] = zi_unit[s, 1] * fst[HELD + c]
                ist[FILTER_INIT] = 1
            for c in range(6):
                u = fst[HELD + c]
                raw[i, c] = u
                cur = u
                for s in range(n_sec):               # scipy sosfilt, transposed direct form II
                    out = sos[s, 0] * cur + zi[s, 0, c]
                    zi[s, 0, c] = sos[s, 1] * cur - sos[s, 4] * out + zi[s, 1, c]
                    zi[s, 1, c] = sos[s, 2] * cur - sos[s, 5] * out
                    cur = out
                filtered[i, c] = cur
            fresh = ti - ist[LAST_VALID] <= stale_ns
            if grid:
                publish[i] = fresh and (ti % period_ns) == 0
            else:
                ist[COUNT] += 1
                publish[i] = (ist[COUNT] % decimate_every) == 0


@njit(cache=True)
def _put_row(x, k, rotate, R, out, n):
    """out[n] = x[k], in the base axes with ``rotate`` ([R f, R t], as ``rotate_wrench``)."""
    if rotate:
        for i in range(3):
            out[n, i] = x[k, 0] * R[i, 0] + x[k, 1] * R[i, 1] + x[k, 2] * R[i, 2]
            out[n, 3 + i] = x[k, 3] * R[i, 0] + x[k, 4] * R[i, 1] + x[k, 5] * R[i, 2]
    else:
        for i in range(6):
            out[n, i] = x[k, i]


@njit(cache=True)
def published_kernel(t, reason, publish, raw, filtered, raw_all, rotate, R, raw_t, raw_out, pub_t, pub_out):
    """What a block publishes (``signal_chain.published``): the raw rows of valid samples (all
    of them with ``raw_all``, else those on the publish grid) and the filtered rows on the grid,
    in the base axes with ``rotate``, with their stamps, into the outputs (N rows each).
    Returns (raw rows, published rows, rejected samples)."""
    n_raw = n_pub = n_bad = 0
    for k in range(t.shape[0]):
        valid = reason[k] == VALID
        if not valid:
            n_bad += 1
        if valid and (raw_all or publish[k]):
            _put_row(raw, k, rotate, R, raw_out, n_raw)
            raw_t[n_raw] = t[k]
            n_raw += 1
        if publish[k]:
            _put_row(filtered, k, rotate, R, pub_out, n_pub)
            pub_t[n_pub] = t[k]
            n_pub += 1
    return n_raw, n_pub, n_bad
