"""numba kernel of hybrid5's law frame (``hil_core.hybrid5.law_frame``): the quiet control
cycles of one drives' frame in one call.

Each step does what the drives' loop of ``hil_sim.mock_hardware.link.ServoLink`` does with the
hybrid controller's law, in the same order and with the same kernels: the encoder positions
of the plant (``dynamics.Plant.encoder_positions``), the reference of cycle k
(``tracking_kernel.reference_kernel`` of the motion's path, or its hold), the control cycle
(``tracking_kernel.cycle_kernel``), the checks of the controller node (finite, not saturated,
tracking error within bounds) and of the drives (the forward command controller's limits),
and one plant step (``dynamics_kernel.step``). The first step that is not quiet -- a change of
phase due at its cycle, an output to saturate or refuse, a fault -- is undone (the
integrators' state put back) and the kernel returns how many steps it did: the plain loop
takes the frame from there, so every event, refusal and fault stays in one place.
"""
from __future__ import annotations

import numpy as np
from numba import types

from hil_core.maths.jit import FrozenKernels, njit_cached

from . import dynamics_kernel as dk
from . import tracking_kernel as tk
from .kinematics import SQRT3_2

N_REF = 18          # l, ld, ldd (9), th, w, e (6), p (3): tracking_kernel.reference_kernel's layout
N_ERR = 2           # the largest |leg error| (m) and |table error| (rad) of the steps done


@njit_cached(depends=(tk, dk))
def law_steps(n, k_first, k_stop, src_kind, src_k0, fixed, R, Ts, n_cycles, pk0, prof, kind, axes, geo,
              model, gl, il, fl, gt, it, ft, sat, max_err,
              pc, p, v, theta, omega, dt, ql, qt, order, lo, hi,
              ref_out, cmd_out, err_out):
    """Up to ``n`` quiet steps from cycle ``k_first`` (see the module docstring); returns the
    number done. ``src_kind`` 1: the path sampled at k - ``src_k0``, 0: the hold ``fixed`` (18);
    ``k_stop``: the cycle of the next change of phase. The state arrays (integrators ``il``..
    ``ft``, plant ``p``..``omega``) advance in place; ``ref_out`` (18) and ``cmd_out`` (5, the
    drives' order) get the last step's reference and command, ``err_out`` the errors' maxima."""
    ref = np.empty(N_REF)
    out = np.empty(tk.N_OUT)
    l_raw = np.empty(3)
    th_raw = np.empty(2)
    u = np.empty(5)
    entry = np.empty(5)
    saved_il, saved_fl = il.copy(), fl.copy()
    saved_it, saved_ft = it.copy(), ft.copy()
    pR = pc[0]
    c = SQRT3_2 * pR
    half = pR / 2
    e_leg_max = 0.0
    e_tab_max = 0.0
    for i in range(n):
        k = k_first + i
        if k >= k_stop:
            return i
        # the encoders (dynamics.Plant.encoder_positions: kinematics.ik_scalar of the plant's
        # geometry, pc[0], then the counts)
        x, y, z = p[0], p[1], p[2]
        zz = z * z
        yh = y + half
        l_raw[0] = (x * x + (y - pR) ** 2 + zz) ** 0.5
        l_raw[1] = ((x - c) ** 2 + yh * yh + zz) ** 0.5
        l_raw[2] = ((x + c) ** 2 + yh * yh + zz) ** 0.5
        th_raw[0], th_raw[1] = theta[0], theta[1]
        if ql > 0:
            for j in range(3):
                l_raw[j] = np.rint(l_raw[j] / ql) * ql
        if qt > 0:
            for j in range(2):
                th_raw[j] = np.rint(th_raw[j] / qt) * qt
        if src_kind == 1:
            tk.reference_kernel(k - src_k0, R, Ts, n_cycles, pk0, prof, kind, axes, geo, ref)
        else:
            ref[:] = fixed
        saved_il[:] = il
        saved_fl[:] = fl
        saved_it[:] = it
        saved_ft[:] = ft
        tk.cycle_kernel(l_raw, th_raw, ref[0:15], R, model, gl, il, fl, gt, it, ft, out)
        for j in range(3):
            u[j] = out[tk.O_F + j]
        for j in range(2):
            u[3 + j] = out[tk.O_TAU + j]
        quiet = True
        for j in range(5):
            if not np.isfinite(u[j]) or abs(u[j]) > sat[j]:
                quiet = False
        e_leg = max(abs(out[tk.O_ELEG]), abs(out[tk.O_ELEG + 1]), abs(out[tk.O_ELEG + 2]))
        e_tab = max(abs(out[tk.O_ETAB]), abs(out[tk.O_ETAB + 1]))
        if not (max(e_leg, e_tab) <= max_err):
            quiet = False
        for j in range(5):
            entry[j] = u[order[j]]
            if not (lo[j] <= entry[j] <= hi[j]):
                quiet = False
        if not quiet:
            il[:] = saved_il
            fl[:] = saved_fl
            it[:] = saved_it
            ft[:] = saved_ft
            return i
        dk.step(pc, p, v, theta, omega, entry[0:3], entry[3:5], dt, 1)
        e_leg_max = max(e_leg_max, e_leg)
        e_tab_max = max(e_tab_max, e_tab)
        ref_out[:] = ref
        cmd_out[:] = entry
        err_out[0], err_out[1] = e_leg_max, e_tab_max
    return n


_F = types.float64[::1]
_I = types.int64[::1]
_F2 = types.float64[:, ::1]
_I2 = types.int64[:, ::1]
_i, _f = types.int64, types.float64
# the one signature the law frame calls with (law_frame checks the arrays against it first)
KERNELS = FrozenKernels({law_steps: [(_i, _i, _i, _i, _i, _F, _f, _f, _i, _I, _F2, _I, _I2, _F2,
                                      _F, _F, _I, _F, _F, _I, _F, _F, _f,
                                      _F, _F, _F, _F, _F, _f, _f, _f, _I, _F, _F,
                                      _F, _F, _F)]})
