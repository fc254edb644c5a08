"""Position-servo drive axes (the mock hexapod's sliders), vectorised over the axes.

Model (per axis, PMAC-like position loop with feedforward, seed 000 fig. 4)::

    a_cmd = Kaff * a_ref + Kp * (r - p) + Kv * (Kvff * v_ref - v)
    Kp = w_n**2,  Kv = 2 * zeta * w_n,  w_n = 2 pi * bandwidth

acting on a rigid axis (p'' = a). With ``Kvff = Kaff = 1`` the tracking error
``e = r - p`` obeys ``e'' + 2 zeta w_n e' + w_n**2 e = 0``: the feedforward makes the loop
transparent to a smooth setpoint (no lag), and the feedback only removes initial errors and
disturbances with the second-order dynamics of ``bandwidth`` / ``damping``. Feedforward
gains below 1 reproduce a drive tuned without full feedforward (lag ~ 2 zeta / w_n).

Discretisation (documented because tests compare against it): the loop is a sampled-data
controller running ``internal_steps`` times per servo period (default 0.625 ms / 5 =
125 us, a drive's velocity-loop rate). At each internal step of length h the command is
computed from the state and setpoint at the step start, with the feedforward acceleration
equal to the setpoint's *mean* acceleration over the step ``(v_ref(t+h) - v_ref(t)) / h``,
held constant over the step (zero-order hold), and the rigid axis is integrated exactly for
that constant acceleration: ``p += v h + a h^2 / 2``, ``v += a h``. With position-only
setpoints (linear interpolation) the acceleration feedforward is zero.

Limits are enforced on the applied acceleration, so nothing ever teleports:

1. velocity: ``a <= (v_hi - v) / h`` and ``a >= (v_lo - v) / h`` with ``v_hi <= v_max``;
2. position: ``v_hi`` is also the largest velocity from which the axis can still stop
   before ``position_max`` with ``acceleration_max`` (the discrete braking curve
   ``v^2 = 2 a_max (p_max - p_next)``), symmetric for ``position_min``;
3. acceleration: the result is clipped to ``+-acceleration_max`` last, so the acceleration
   limit always wins; full braking keeps the braking invariant (see ``_limit``), hence the
   position limits hold in continuous time, not only at the steps.

Two implementations with one interface: :class:`ServoAxes` (what the mocks use) runs the step
loop and the knot sampling in numba kernels (``hil_core.drives.servo_kernel``, a few microseconds per
2.5 ms frame, compiled or loaded from the cache by its constructor or by :func:`warm_up`);
:class:`ServoAxesNumpy` (``hil_core.drives.servo_numpy``, with :class:`ServoConfig`) is the
plain-numpy oracle the tests compare it with (test/unit/test_servo_compiled.py, 1e-12).
"""
from __future__ import annotations

import numpy as np

from hil_core.drives import servo_kernel
# the configuration is shared with the oracle, which the compiled class extends
from hil_core.drives.servo_numpy import ServoAxesNumpy, ServoConfig

__all__ = ['ServoAxes', 'ServoAxesNumpy', 'ServoConfig', 'warm_up']


_F64 = np.dtype(np.float64)


def _f64(x) -> np.ndarray:
    """x as a float64 array without a copy when it already is one."""
    return x if type(x) is np.ndarray and x.dtype is _F64 else np.asarray(x, dtype=float)


class ServoAxes(ServoAxesNumpy):
    """:class:`ServoAxesNumpy` with ``run``, ``follow`` and ``hold`` in numba kernels
    (``hil_core.drives.servo_kernel``): same interface, same numbers to rounding, a few microseconds
    per frame. The constructor compiles or loads the kernels, so no frame pays that.

    Every call assigns new position/velocity/acceleration arrays, as the numpy class does
    (a caller may keep the previous ones). Inputs the kernels do not take (other shapes,
    scalars to broadcast, zero steps, knot times not strictly increasing) go to the numpy
    methods. The gains and limits are read at construction (as ``_gains`` / ``_limits``).
    """

    def __init__(self, config: ServoConfig, position0):
        super().__init__(config, position0, fast_path=False)
        self._limits = np.array([self.p_min, self.p_max, self.v_max, self.a_max])
        self._gains = np.array([self.kp, self.kv, self.kvff, self.kaff, self.h])
        self._steps = int(config.internal_steps)
        servo_kernel.warm_up()

    def _take(self, status: int, out: np.ndarray) -> bool:
        """Adopt the kernel's new state; False when the numpy method must do the call."""
        if status == 0:          # servo_kernel.OK (indexing: a third of the cost of unpacking)
            self.position = out[0]
            self.velocity = out[1]
            self.acceleration = out[2]
            return True
        if status == servo_kernel.NOT_FINITE:
            raise ValueError('servo setpoint is not finite: refused (state unchanged)')
        return False

    def run(self, ref_p, ref_v, ref_a=None) -> None:
        ref_p, ref_v = _f64(ref_p), _f64(ref_v)
        n = self.position.size
        rows = ref_v.shape[0] if ref_v.ndim else 0
        m = rows - 1 if ref_a is None else None
        ra = ref_v if ref_a is None else _f64(ref_a)
        if ref_a is not None and ra.ndim == 2:
            m = ra.shape[0]
        if (m is None or m < 1 or ref_p.shape != (m + 1, n) or ref_v.shape != (m + 1, n)
                or (ref_a is not None and ra.shape != (m, n))):
            return super().run(ref_p, ref_v, ref_a)
        out = np.empty((3, n))
        status = servo_kernel.run(self.position, self.velocity, self.acceleration, self._limits, self._gains,
                                  ref_p, ref_v, ra, ref_a is not None, out)
        self._take(status, out)

    def follow(self, t0: float, n_servo: int, knot_t, knot_p, knot_v=None) -> None:
        kt, kp = _f64(knot_t), _f64(knot_p)
        kv = kp if knot_v is None else _f64(knot_v)
        m = int(n_servo) * self._steps
        n = self.position.size
        if m >= 1 and kt.ndim == 1 and kt.size >= 1 and kp.shape == (kt.size, n) and kv.shape == kp.shape:
            out = np.empty((3, n))
            status = servo_kernel.follow(self.position, self.velocity, self.acceleration, self._limits, self._gains,
                                         float(t0), m, kt, kp, kv, knot_v is not None, out)
            if self._take(status, out):
                return
        super().follow(t0, n_servo, knot_t, knot_p, knot_v)

    def follow_compiled(self, t0: float, m: int, knot_t, knot_p, knot_v) -> bool:
        """``m`` loop updates along the knots in the kernel only (float64 arrays, ``m`` >= 1):
        True when it took them; False, state unchanged, for anything the kernel does not take
        or a setpoint that is not finite (the caller's own path decides then)."""
        n = self.position.size
        kv = knot_p if knot_v is None else knot_v
        if not (knot_t.ndim == 1 and knot_t.size >= 1 and knot_p.shape == (knot_t.size, n) and kv.shape == knot_p.shape):
            return False
        out = np.empty((3, n))
        try:
            status = servo_kernel.follow(self.position, self.velocity, self.acceleration, self._limits,
                                         self._gains, t0, m, knot_t, knot_p, kv, knot_v is not None, out)
        except TypeError:            # arrays of another dtype or layout: the frozen kernel refuses them
            return False
        if status != 0:
            return False
        self.position, self.velocity, self.acceleration = out[0], out[1], out[2]
        return True

    def hold(self, n_servo: int, setpoint) -> None:
        sp = _f64(setpoint)
        m = int(n_servo) * self._steps
        n = self.position.size
        if m < 1 or sp.shape != (n,):
            return super().hold(n_servo, setpoint)
        out = np.empty((3, n))
        status = servo_kernel.hold(self.position, self.velocity, self.acceleration, self._limits, self._gains,
                                   m, sp, out)
        self._take(status, out)


def warm_up() -> float:
    """Compile or load the servo and knot-sampling kernels (hil_core.warmup); seconds taken."""
    return servo_kernel.warm_up()
