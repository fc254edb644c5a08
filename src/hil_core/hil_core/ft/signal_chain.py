"""The F/T signal chain of seed 000 (sections 3 and 5), streaming, per sample or per block.

    counts --(counts_per_force/torque)--> SI --validity--> - payload gravity - bias
           --> Butterworth low-pass (+ optional 50 Hz notch) --> decimation to the publish rate

* **Validity** (never publish bad input as a valid wrench): non-finite values, saturation
  (|value| >= sensing range, the ATI mini45 ranges by default), externally flagged samples
  (Net F/T status error bit), stamps not newer than the last one (out of order), and spikes:
  a sample-to-sample jump larger than ``spike_factor`` (10) times the running scale of such
  jumps (an exponential average, floored so that a quiet signal still allows real impulses).
  A jump that persists for ``spike_max_run`` samples is a real level change and is accepted.
* **Hold**: a rejected sample is replaced by the last valid one in the filter input, so a
  single glitch neither jumps nor freezes the output. Outputs stop altogether once no valid
  sample has arrived for ``stale_timeout`` (downstream then holds; see docs/ft_sensor.md).
* **Payload gravity compensation**: with the sensor orientation R (sensor -> base, from the
  TCP pose), payload mass m and centre of gravity p (sensor frame), gravity g (base frame):
  F_c = F - R^T m g,  T_c = T - p x (R^T m g).
* **Bias (tare)**: mean over the last ``bias_samples`` valid, gravity-compensated samples.
* **Decimation**: ``grid`` publishes the samples whose stamp is a multiple of the publish
  period (lockstep: the wrench for frame t_k leaves as soon as sample t_k is in); ``count``
  publishes every n-th sample (real time, stamps = arrival times).

``SignalChain`` runs a block as one compiled call (``ft.signal_chain_kernel``, numba; the
constructor compiles or loads it, :func:`warm_up` does so ahead of any chain);
``SignalChainNumpy`` (``ft.signal_chain_numpy``) is the plain Python/numpy chain it is tested
against (the oracle, same interface, test/unit/test_ft_compiled.py).
"""
from __future__ import annotations

import numpy as np

from hil_core.ft import signal_chain_kernel as _ck
# the configuration, output record, reason codes and gravity wrench are shared with the oracle
from hil_core.ft.signal_chain_numpy import (MINI45_RANGE, NONFINITE, OUT_OF_ORDER, REASONS, SATURATED, SPIKE,
                                            STATUS, VALID, ChainConfig, ChainOutput, Published, SignalChainNumpy,
                                            block_arrays, configure_chain, gravity_wrench, published_numpy,
                                            rotate_wrench)
from hil_core.maths.jit import timed_warm_up

__all__ = ['MINI45_RANGE', 'NONFINITE', 'OUT_OF_ORDER', 'REASONS', 'SATURATED', 'SPIKE', 'STATUS', 'VALID',
           'ChainConfig', 'ChainOutput', 'Published', 'SignalChain', 'SignalChainNumpy', 'counts_to_si',
           'gravity_wrench', 'published', 'published_numpy', 'rotate_wrench', 'warm_up']


def counts_to_si(counts, counts_per_force: float, counts_per_torque: float) -> np.ndarray:
    """RDT counts (..., 6) -> [N, N, N, N m, N m, N m]."""
    c = np.asarray(counts, dtype=float)
    if c.shape[-1] != 6:
        raise ValueError(f'a wrench has 6 components, got shape {c.shape}')
    scale = np.array([counts_per_force] * 3 + [counts_per_torque] * 3, dtype=float)
    return c / scale


def published(out: ChainOutput, R, raw_all: bool, rotate: bool) -> Published:
    """The rows of a block the F/T node publishes (:func:`published_numpy`, its oracle): one
    compiled call (``published_kernel``) where the selection, the indexing and the rotation into
    the base axes were eight numpy calls a frame. ``out`` as ``SignalChain.process`` returns it
    (int64 stamps and reasons, float rows); ``R`` a (3, 3) float array."""
    t = out.stamps
    n = t.shape[0]
    raw_t, pub_t = np.empty(n, dtype=np.int64), np.empty(n, dtype=np.int64)
    raw_out, pub_out = np.empty((n, 6)), np.empty((n, 6))
    n_raw, n_pub, n_bad = _ck.published_kernel(t, out.reason, out.publish, out.raw, out.filtered, bool(raw_all),
                                               bool(rotate), np.ascontiguousarray(R, dtype=float), raw_t, raw_out,
                                               pub_t, pub_out)
    return Published(raw_t[:n_raw].tolist(), raw_out[:n_raw], pub_t[:n_pub].tolist(), pub_out[:n_pub], n_bad)


class SignalChain:
    """The chain of ``SignalChainNumpy`` (same interface and numbers), one compiled call per
    block; the state lives in arrays the kernel updates in place."""

    def __init__(self, cfg: ChainConfig):
        configure_chain(self, cfg)
        self._bias_buf = np.zeros((int(cfg.bias_samples), 6))     # ring buffer (deque maxlen)
        self._ist = np.zeros(_ck.N_ISTATE, dtype=np.int64)
        self._fst = np.zeros(_ck.N_FSTATE)
        self._fst[_ck.JS:_ck.JS + 2] = cfg.spike_floor
        self._counts = np.zeros(len(REASONS), dtype=np.int64)
        self._fcfg, self._icfg = _ck.pack_config(cfg)
        self._eye = np.eye(3)
        self._no_rows = np.zeros((1, 6))
        self._no_flags = np.zeros(1, dtype=np.bool_)
        _run_kernel_once(self)

    # --- state as SignalChainNumpy exposes it ------------------------------------------------------
    @property
    def counters(self) -> dict:
        return {r: int(c) for r, c in zip(REASONS, self._counts)}

    @property
    def last_stamp(self) -> int | None:
        return int(self._ist[_ck.LAST]) if self._ist[_ck.HAS_LAST] else None

    @property
    def last_valid_stamp(self) -> int | None:
        return int(self._ist[_ck.LAST_VALID]) if self._ist[_ck.HAS_VALID] else None

    def delay_estimate(self, f_hi: float = 7.0) -> float:
        return SignalChainNumpy.delay_estimate(self, f_hi)

    _gravity_row = SignalChainNumpy._gravity_row     # the oracle's one-orientation gravity row

    def tare(self) -> tuple[bool, str]:
        need, have = self._bias_buf.shape[0], int(self._ist[_ck.BUF_LEN])
        if have < need:
            return False, f'bias needs {need} valid samples, only {have} available'
        head = int(self._ist[_ck.BUF_HEAD])       # oldest first, the deque's order
        self.bias = np.mean(np.concatenate([self._bias_buf[head:], self._bias_buf[:head]]), axis=0)
        return True, 'bias set from {} samples: [{}]'.format(need, ', '.join(f'{v:.4g}' for v in self.bias))

    def clear_bias(self) -> None:
        self.bias = np.zeros(6)

    def is_stale(self, now_ns: int) -> bool:
        last = self.last_valid_stamp
        return bool(last is None or now_ns - last > self.stale_ns)

    def process(self, stamps_ns, x_si, R=None, flagged=None) -> ChainOutput:
        """As ``SignalChainNumpy.process``: (N,) stamps, (N, 6) SI samples, R (3, 3) or (N, 3, 3),
        flagged (N,) bool."""
        t, x = block_arrays(stamps_ns, x_si)
        # C-contiguous inputs: another memory layout would compile a new kernel mid-run
        t, x = np.ascontiguousarray(t), np.ascontiguousarray(x)
        n = t.shape[0]
        rows, Rm, mode = self._no_rows, self._eye, 0
        if self.cfg.payload_mass != 0.0:
            if R is None or np.ndim(R) == 2:
                mode, Rm = 1, (self._eye if R is None else np.ascontiguousarray(R, dtype=float))
            else:
                mode = 2
                rows = gravity_wrench(R, self.cfg.payload_mass, self.cfg.payload_cog, self.cfg.gravity)
        flags = self._no_flags if flagged is None else np.ascontiguousarray(flagged, dtype=np.bool_)
        reason = np.empty(n, dtype=np.int64)
        raw = np.empty((n, 6))
        filtered = np.empty((n, 6))
        publish = np.empty(n, dtype=np.bool_)
        f = self.filter
        _ck.process_kernel(t, x, flags, flagged is not None, mode, Rm, rows, self._fcfg, self._icfg,
                           f.sos, f.zi, f._zi_unit, self.bias, self._bias_buf, self._ist, self._fst,
                           self._counts, reason, raw, filtered, publish)
        f.initialised = bool(self._ist[_ck.FILTER_INIT])
        return ChainOutput(stamps=t, reason=reason, raw=raw, filtered=filtered, publish=publish)


def _run_kernel_once(chain) -> None:
    """Run the kernel once on copies of ``chain``'s state with its argument types (numba
    cache load or compilation now, not at the first sample)."""
    t = np.array([1], dtype=np.int64)
    x = np.zeros((1, 6))
    for mode in (0, 1, 2):
        f = chain.filter
        _ck.process_kernel(t, x, np.zeros(1, dtype=np.bool_), False, mode, np.eye(3), np.zeros((1, 6)),
                           chain._fcfg, chain._icfg, f.sos, f.zi.copy(), f._zi_unit, chain.bias,
                           chain._bias_buf.copy(), chain._ist.copy(), chain._fst.copy(), chain._counts.copy(),
                           np.empty(1, np.int64), np.empty((1, 6)), np.empty((1, 6)), np.empty(1, np.bool_))
    out = ChainOutput(stamps=t, reason=np.zeros(1, np.int64), raw=x, filtered=x, publish=np.ones(1, np.bool_))
    published(out, np.eye(3), False, True)      # the publication kernel too (the F/T node's every frame)


def warm_up() -> float:
    """Compile or load the chain's kernel by building a default chain (hil_core.warmup); seconds taken."""
    return timed_warm_up(lambda: SignalChain(ChainConfig()))
