"""One control cycle of the hybrid robot's trajectory tracking (seed 003 fig. 6-7) and the
closed-loop fixed-step simulation against ``dynamics.Plant``.

Cycle k (Ts = 100 us): sample the path (trajectory) -> inverse kinematics with first and
second derivatives of both manipulators (eq. 7-11, 18-20) -> forward kinematics of the
measured legs for the model (eq. 12-15) -> reduced masses and gravity forces (eq. 23-24, 27)
-> CTM with the nonlinear integrator (eq. 28-36) -> leg forces F (N), table torques tau (N m).
``dtype`` selects float64 or float32 for the whole chain (the float32 study, table 3).
In float64 the cycle runs as one compiled call (``hybrid5.tracking_kernel``, numba; :func:`warm_up`
compiles or loads it) unless ``compiled=False``; the Python code below is the oracle it is tested
against and the float32 path, so there is no ``tracking_numpy`` twin.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from hil_core.maths.jit import timed_warm_up

from . import law_frame, tracking_kernel as ck
from . import dynamics, kinematics as kin
from .control import CTM
from .gcode import parse
from .params import Hybrid5Params, load_params
from .trajectory import PathTrajectory


@dataclass
class CycleOut:
    F: np.ndarray                  # leg forces (3,)
    tau: np.ndarray                # table torques (2,)
    l_d: list                      # desired leg lengths, velocities, accelerations (3 each)
    v_d: list
    a_d: list
    th_d: list                     # desired table angles, rates, accelerations (2 each)
    w_d: list
    e_d: list
    p_d: np.ndarray                # desired platform position (3,)
    e_leg: np.ndarray = field(default_factory=lambda: np.zeros(3))
    e_table: np.ndarray = field(default_factory=lambda: np.zeros(2))


def _scalars(arr, f):
    """Array -> list of per-axis numbers of the cycle's type (python floats for float64)."""
    return arr.tolist() if f is float else list(arr.astype(f))


class HybridController:
    """CTM tracking of both manipulators; ``cycle(k, l, theta)`` with measured joints.

    float64 runs compiled (``compiled=True``, the default) or on python floats (the oracle);
    float32 on numpy float32 scalars (every operation rounded to float32, as the seed's
    single-precision controllers). In the compiled path the integrator and encoder state live
    in arrays (``self._il`` .. ``self._ft``), not in ``self.legs`` / ``self.table``."""

    def __init__(self, params: Hybrid5Params, path: PathTrajectory | None, dtype=np.float64,
                 plain_integrator: bool = False, compiled: bool = True):
        self.prm, self.path, self.dtype = params, path, np.dtype(dtype)
        f = self.f = float if self.dtype == np.float64 else self.dtype.type
        self.R = f(params.R)
        m = params.model
        self.m = tuple(f(x) for x in (m.m_p, m.m_s, m.J_r, m.m_g))
        self.J44, self.J55, self.m4r4g = f(m.J44), f(m.J55), f(m.m4r4 * dynamics.G0)
        pl = params.plant              # encoder resolutions: the drives report counts
        self.legs = CTM(params.legs, 3, params.Ts, f, plain_integrator, pl.encoder_leg)
        self.table = CTM(params.table, 2, params.Ts, f, plain_integrator, pl.encoder_table)
        self.compiled = bool(compiled) and f is float
        if self.compiled:
            self._gl = ck.gains_array(params.legs, params.Ts, pl.encoder_leg, plain_integrator)
            self._gt = ck.gains_array(params.table, params.Ts, pl.encoder_table, plain_integrator)
            self._model = np.array([m.m_p, m.m_s, m.J_r, m.m_g, m.J44, m.J55, m.m4r4 * dynamics.G0])
            self._table = None if path is None else ck.PathTable(path)
            self.reset()
            self._warm_up()

    def set_path(self, path: PathTrajectory) -> None:
        """A new program (the motion took it: ``Hybrid5Motion.set_path``); the integrators go on."""
        self.path = path
        if self.compiled:
            self._table = ck.PathTable(path)

    def reset(self) -> None:
        self.legs.reset()
        self.table.reset()
        if self.compiled:
            self._il, self._fl = ck.new_state(3)
            self._it, self._ft = ck.new_state(2)

    @property
    def boosts(self) -> int:
        """Reversals/stops the nonlinear integrators detected (both axis groups)."""
        if self.compiled:
            return int(self._il[1] + self._it[1])
        return self.legs.integrator.boosts + self.table.integrator.boosts

    def _warm_up(self) -> None:
        """Load (or compile) the kernels now, on copies of the state, not at the first cycle."""
        law_frame.warm_up()                       # the drives' quiet steps (real time, servo_link)
        out, ref = np.zeros(ck.N_OUT), np.zeros(15)
        ref[0:3] = 1.0
        states = [x.copy() for x in (self._il, self._fl, self._it, self._ft)]
        ck.cycle_kernel(np.ones(3), np.zeros(2), ref, self.R, self._model, self._gl, states[0], states[1],
                        self._gt, states[2], states[3], out)
        if self._table is not None:
            t = self._table
            ck.path_cycle_kernel(0, np.ones(3), np.zeros(2), self.R, self._model, self._gl, states[0], states[1],
                                 self._gt, states[2], states[3], t.Ts, t.n_cycles, t.k0, t.prof, t.kind, t.axes,
                                 t.geo, out)
            ck.reference(t, 0, self.R)

    def law_arrays(self, k_first: int, source, sat: np.ndarray, max_err: float):
        """This controller as the compiled law frame steps it (``law_frame.LawArrays``; its
        integrators advance in place) from cycle ``k_first`` with ``source`` (``Hybrid5Motion.
        quiet_source``), or None where it does not run compiled (float32, ``compiled=False``)."""
        if not self.compiled or self._table is None:
            return None
        k_stop, kind, k0, fixed, table = source
        return law_frame.LawArrays(k_first, k_stop, kind, k0, fixed, self._table if table is None else table,
                                   self.R, self._model, self._gl, self._il, self._fl, self._gt, self._it,
                                   self._ft, sat, max_err)

    def desired(self, k: int):
        """Joint-space reference at cycle k: ((l, ld, ldd), (th, w, e), p) as per-axis lists."""
        if self.compiled:
            return ck.reference(self._table, k, self.R)
        (p, v, a), (g, gd, gdd) = self.path.sample_cycle(k, self.dtype)
        return self.joint_reference(p, v, a, g, gd, gdd)

    def joint_reference(self, p, v, a, g, gd, gdd):
        f = self.f
        r = kin.ik_derivatives_scalar(*_scalars(p, f), *_scalars(v, f), *_scalars(a, f), self.R)
        t = kin.table_inverse(g, gd, gdd)
        return (r[0:3], r[3:6], r[6:9]), tuple(_scalars(x, f) for x in t), p

    def cycle(self, k: int, l, theta, desired=None) -> CycleOut:
        if self.compiled:
            return self._cycle_compiled(k, l, theta, desired)
        f = self.f
        (l_d, v_d, a_d), (th_d, w_d, e_d), p_d = self.desired(k) if desired is None else desired
        ml = self.legs.measure(l)                          # counts -> lengths, velocities
        mt = self.table.measure(theta)
        l = ml[0]
        x, y, z2, z = kin.fk_scalar(l[0], l[1], l[2], self.R)   # model needs the pose: eq. 12-15
        r = dynamics.leg_model_scalar(x, y, z, self.R, *self.m)
        F, e_leg, _ = self.legs.update(l_d, v_d, a_d, ml, r[:3], r[3:])
        t4 = mt[0][0]
        Gt = (self.m4r4g * (math.sin(t4) if f is float else np.sin(t4)), f(0.0))
        tau, e_tab, _ = self.table.update(th_d, w_d, e_d, mt, (self.J44, self.J55), Gt)
        return CycleOut(np.array(F), np.array(tau), l_d, v_d, a_d, th_d, w_d, e_d, p_d,
                        np.array(e_leg), np.array(e_tab))


    def _cycle_compiled(self, k, l, theta, desired) -> CycleOut:
        """``cycle`` in one compiled call; the outputs are views of one fresh buffer."""
        out = np.empty(ck.N_OUT)
        l_raw = np.asarray(l, dtype=float)
        th_raw = np.asarray(theta, dtype=float)
        if desired is None:
            t = self._table
            ck.path_cycle_kernel(int(k), l_raw, th_raw, self.R, self._model, self._gl, self._il, self._fl, self._gt,
                                 self._it, self._ft, t.Ts, t.n_cycles, t.k0, t.prof, t.kind, t.axes, t.geo, out)
            return CycleOut(out[0:3], out[3:5], out[5:8], out[8:11], out[11:14], out[14:16], out[16:18],
                            out[18:20], out[20:23], out[23:26], out[26:28])
        (l_d, v_d, a_d), (th_d, w_d, e_d), p_d = desired
        ref = np.array([*l_d, *v_d, *a_d, *th_d, *w_d, *e_d], dtype=float)
        ck.cycle_kernel(l_raw, th_raw, ref, self.R, self._model, self._gl, self._il, self._fl, self._gt,
                        self._it, self._ft, out)
        return CycleOut(out[0:3], out[3:5], l_d, v_d, a_d, th_d, w_d, e_d, p_d, out[23:26], out[26:28])


@dataclass
class SimLog:
    p_d: np.ndarray        # (N, 3) desired platform position
    p: np.ndarray          # (N, 3) plant platform position
    th_d: np.ndarray       # (N, 2)
    th: np.ndarray         # (N, 2)
    e_leg: np.ndarray      # (N, 3) controller's leg errors
    F: np.ndarray          # (N, 3)
    tau: np.ndarray        # (N, 2)
    v_d: np.ndarray        # (N, 3) desired leg velocities

    @property
    def position_error(self) -> np.ndarray:
        """|p_d - p| per cycle (m): the tool's Cartesian tracking error."""
        return np.linalg.norm(self.p_d - self.p, axis=1)


def simulate(params: Hybrid5Params, path: PathTrajectory, n_cycles: int | None = None,
             plain_integrator: bool = False, dtype=np.float64, substeps: int = 1,
             plant_params: Hybrid5Params | None = None, settle_cycles: int = 2000,
             compiled: bool = True) -> SimLog:
    """Closed loop at Ts: controller cycle k on the encoder readings, then one plant step.

    The plant starts at rest on the path's first point with the integrators empty and is
    held there under control for ``settle_cycles`` (not logged: a machine is under control
    before a program starts, and the integrators take up the model's gravity mismatch)."""
    n = path.n_cycles if n_cycles is None else min(int(n_cycles), path.n_cycles)
    (p0, _, _), (g0, _, _) = path.sample_cycle(0)
    plant = dynamics.Plant(plant_params or params, p0, g0, params.Ts, substeps)
    ctl = HybridController(params, path, dtype, plain_integrator, compiled)
    log = SimLog(*(np.zeros((n, k)) for k in (3, 3, 2, 2, 3, 3, 2, 3)))
    (p, v, a), (g, gd, gdd) = path.sample_cycles(np.zeros(1, np.int64), dtype)
    hold = ctl.joint_reference(p[0], v[0], a[0], g[0], gd[0], gdd[0])
    for _ in range(int(settle_cycles)):
        l, th = plant.measure()
        out = ctl.cycle(0, l, th, hold)
        plant.step(out.F.astype(float), out.tau.astype(float))
    for k0 in range(0, n, 4096):                # references in vectorised blocks (same numbers)
        ks = np.arange(k0, min(n, k0 + 4096))
        (p, v, a), (g, gd, gdd) = path.sample_cycles(ks, dtype)
        l_d, v_d, a_d = kin.inverse_derivatives(p, v, a, params.R)
        rows = [_scalars(x, ctl.f) for x in (l_d, v_d, a_d, g, gd, gdd)] if ctl.f is float else \
            [[list(r) for r in x] for x in (l_d, v_d, a_d, g, gd, gdd)]
        for j, k in enumerate(ks):
            l, th = plant.measure()
            ref = ((rows[0][j], rows[1][j], rows[2][j]), (rows[3][j], rows[4][j], rows[5][j]), p[j])
            out = ctl.cycle(k, l, th, ref)
            log.p_d[k], log.p[k], log.th_d[k], log.th[k] = out.p_d, plant.p, out.th_d, plant.theta
            log.e_leg[k], log.F[k], log.tau[k], log.v_d[k] = out.e_leg, out.F, out.tau, out.v_d
            plant.step(out.F.astype(float), out.tau.astype(float))
    return log


def warm_up() -> float:
    """Load (or compile, ~5-20 s cold) the kernels by building a controller on a short path of
    a line and an arc; returns the seconds. Run once after installing so that a node's
    configure never waits for numba (the cache lives next to the sources)."""
    def run():
        P = load_params()
        t = P.trajectory
        path = PathTrajectory(parse('G21 G90\nG1 X1 F100\nG2 X2 Y1 I1 J0\n', t.rapid_feed), P.Ts, t.a_max, t.j_max,
                              math.radians(t.angular_feed) / 60, P.work_origin)
        HybridController(P, path).cycle(0, [1.0, 1.0, 1.0], [0.0, 0.0])
    return timed_warm_up(run)
