"""One iteration of the space-manipulator HIL loop (seed 002 section 4.1, its six steps).

1. take the measured joint angles (theta_m)_test (and velocities when the robot sends them);
2. joint rates: the measured ones, else a filtered derivative (first-order low-pass of the
   secant; the seed's raw numerical derivative caused torque peaks); satellite twist by eq. 7;
3. integrate the satellite pose. The twist used for the pose update is eq. 7 with the
   *secant* rate (q_k - q_{k-1}) / dt and the trapezoidal mean of the momentum maps
   G = -H2^-1 H3 at both ends of the joint step: the satellite then follows the recorded
   joint path to second order in dt, whatever the noise on the velocity estimate (the momentum
   map is linear in the joint rates, so the displacement depends only on the joint increment;
   G at q_{k-1} is reused from the previous frame: one crba per frame). The pose is kept as SE3 (quaternion internally);
4. inertial end-effector pose by eq. 12 (satellite pose * mounting * arm FK);
5. desired joint rates by eq. 11 (``DynamicJacobianController``);
6. smooth velocity / acceleration / position limiting (``JointLimiter``): the command sent.

``SpacePlant`` runs steps 2-6 as one compiled call (``space.plant_kernel``, numba, no
pinocchio call per frame; :func:`warm_up` compiles or loads it ahead of any plant);
``SpacePlantNumpy`` (``space.plant_numpy``) is the pinocchio + numpy frame it is tested against
(the oracle, same interface; test/unit/test_space_compiled.py).
"""
from __future__ import annotations

import numpy as np
import pinocchio as pin

from hil_core.maths.jit import timed_warm_up
from hil_core.space import model_kernel as ck
from hil_core.space import plant_kernel as cf
from hil_core.space.control import ControlGains
from hil_core.space.model import FreeFloatingModel
# the frame result is shared with the oracle, which the compiled class extends
from hil_core.space.plant_numpy import PlantOutput, SpacePlantNumpy

__all__ = ['PlantOutput', 'SpacePlant', 'SpacePlantNumpy', 'warm_up']


class SpacePlant(SpacePlantNumpy):
    """``SpacePlantNumpy`` with ``step`` as one compiled call: same interface, state and
    numbers (to rounding). The satellite pose lives in two arrays (``sat`` is built from them
    on access); ``ctrl`` and ``limiter`` keep their arrays, which the kernel updates in place.
    A model the kernel does not cover (not a free flyer + revolute chain) falls back to the
    pinocchio frame (``compiled`` False)."""

    def __init__(self, model: FreeFloatingModel, gains: ControlGains, v_max, a_max,
                 velocity_cutoff_hz: float = 50.0, position_margin: float = 0.02):
        self._sat_R, self._sat_p = np.eye(3), np.zeros(3)
        super().__init__(model, gains, v_max, a_max, velocity_cutoff_hz, position_margin)
        try:
            self._chain = ck.ChainModel(model)
        except ValueError:
            self._chain, self.compiled = None, False
            return
        self.compiled = True
        g, c = self.ctrl.g, np.zeros(ck.N_CTL)
        c[ck.C_KP:ck.C_KP + 6], c[ck.C_KI:ck.C_KI + 6] = self.ctrl.kp, self.ctrl.ki
        c[ck.C_KD], c[ck.C_DCUT], c[ck.C_ILIM] = g.kd, g.derivative_cutoff_hz, g.integral_limit
        c[ck.C_ROTVEC], c[ck.C_STHR], c[ck.C_LMAX] = g.orientation_error == 'rotvec', g.sigma_threshold, g.lambda_max
        c[ck.C_VCUT] = self.velocity_cutoff_hz
        self._ctl = c
        lm = self.limiter
        self._lim = np.ascontiguousarray(np.vstack([lm.lower, lm.upper, lm.v_max, lm.a_max]), dtype=float)
        self._flags = np.zeros(3, dtype=np.int64)
        self._prev_err = np.zeros(6)
        self._no_qd = np.zeros(self._chain.n)
        self._warm_up()

    @property
    def sat(self) -> pin.SE3:
        return pin.SE3(self._sat_R, self._sat_p)

    @sat.setter
    def sat(self, M: pin.SE3) -> None:
        self._sat_R[:, :] = M.rotation
        self._sat_p[:] = M.translation

    def _momentum_map(self, q) -> np.ndarray:
        ch = self._chain
        return ck.momentum_map(np.ascontiguousarray(q, dtype=float), ch.jp, ch.jtype, ch.axis, ch.inert)

    def _warm_up(self) -> None:
        """Load (or compile) the kernels at construction, on a scratch copy of this plant."""
        q = np.zeros(self._chain.n)
        self._frame(q, 1e-3, None, True, self._sat_R.copy(), self._sat_p.copy(), q.copy(), self._momentum_map(q),
                    np.zeros(q.size), np.zeros(6), np.zeros(6), np.zeros(6), np.zeros(3, np.int64), np.zeros(q.size),
                    np.zeros(3), np.eye(3))

    def _frame(self, q, dt, qd_measured, control, sat_R, sat_p, q_prev, G_prev, qd_filt, integral, d_filt,
               prev_err, flags, last, r_des, R_des) -> np.ndarray:
        ch, out = self._chain, np.empty(ck.N_OUT)
        has_qd = qd_measured is not None
        qd = np.ascontiguousarray(qd_measured, dtype=float) if has_qd else self._no_qd
        cf.frame_kernel(q, float(dt), qd, has_qd, bool(control), ch.jp, ch.jtype, ch.axis, ch.inert, ch.ee,
                        self._ctl, self._lim, sat_R, sat_p, q_prev, G_prev, qd_filt, integral, d_filt, prev_err,
                        flags, last, r_des, R_des, out)
        return out

    def reset(self, q0, sat_pose=None) -> None:
        super().reset(q0, sat_pose)
        if self.compiled:
            self.G_prev = self._momentum_map(self.q_prev)

    def step(self, q, dt: float, qd_measured=None, control: bool = True) -> PlantOutput:
        """One HIL frame (see ``SpacePlantNumpy.step``), compiled."""
        if not self.compiled:
            return super().step(q, dt, qd_measured, control)
        q = np.ascontiguousarray(q, dtype=float)
        if self.q_prev is None:
            self.reset(q)
        ctrl, flags = self.ctrl, self._flags
        if ctrl.prev_error is None:
            flags[cf.F_HAS_PREV_ERROR] = 0
        else:
            if ctrl.prev_error is not self._prev_err:
                self._prev_err[:] = ctrl.prev_error
            flags[cf.F_HAS_PREV_ERROR] = 1
        flags[cf.F_LIMITED] = self.limited
        new_setpoint = self.r_des is None
        if new_setpoint:
            r_des, R_des = np.zeros(3), np.eye(3)
        else:
            r_des, R_des = self.r_des, self.R_des
        flags[cf.F_HAS_SETPOINT] = not new_setpoint
        out = self._frame(q, dt, qd_measured, control, self._sat_R, self._sat_p, self.q_prev, self.G_prev,
                          self.qd_filt, ctrl.integral, ctrl.d_filtered, self._prev_err, flags, self.limiter.last,
                          r_des, R_des)
        if flags[cf.F_HAS_PREV_ERROR]:
            ctrl.prev_error = self._prev_err
        if new_setpoint:
            self.r_des, self.R_des = r_des, R_des
        self.limited = bool(flags[cf.F_LIMITED])
        return PlantOutput(out[ck.O_CMD:ck.O_RAW], out[ck.O_RAW:ck.O_SAT], out[ck.O_SAT:ck.O_NU],
                           out[ck.O_NU:ck.O_EE], out[ck.O_EE:ck.O_E], out[ck.O_E:ck.O_DAMP], float(out[ck.O_DAMP]),
                           float(out[ck.O_SMIN]), bool(out[ck.O_LIMITED]), out[ck.O_QD:])


def warm_up() -> float:
    """Load (or compile, ~20 s cold on a loaded 2-core machine) the plant's kernels by building
    the default plant; returns the seconds. Run once after installing so that the space_plant
    node's configure never waits for numba (the cache lives next to the sources)."""
    def build():
        model = FreeFloatingModel()
        SpacePlant(model, ControlGains(), np.asarray(model.model.velocityLimit[6:]), np.full(7, 5.0))
    return timed_warm_up(build)
