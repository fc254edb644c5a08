"""Joint friction with sliding and pre-sliding regimes, solved at a fixed step (seed 004).

The seed's simulator uses the Single State Integral Friction Model: LuGre-like behaviour
(pre-sliding spring with hysteresis, Stribeck breakaway, viscous sliding) obtained from a
closed-form solution so that a fixed real-time step works. LuGre integrated explicitly needs
steps of ~20 us at realistic bristle stiffness; this module reaches 1 ms as follows.

Model (per joint, LuGre state z):  dz/dt = v - sigma0 |v| z / g(v),
  g(v) = F_c + (F_s - F_c) exp(-(v / v_s)^2),   f = sigma0 z + sigma1 dz/dt + sigma2 v.

Discrete scheme over a step h (``JointFriction.step``):
* closed form of the z equation for the end-of-step velocity v held over the step (exact for
  constant v): z(v) = z_ss + (z_k - z_ss) exp(-sigma0 |v| h / g), z_ss = sign(v) g / sigma0;
  g is evaluated at the previous velocity (the only explicit part: the Stribeck curve is smooth);
* implicit coupling with the joint inertia m: v solves
  m (v - v_k) / h = tau - sigma0 z(v) - sigma1 (z(v) - z_k) / h - sigma2 v.
  z(v) is monotone in v (up to the small Stribeck overshoot right after breakaway, dominated
  by m/h), so the left side minus the right side is strictly increasing: a unique root, found
  by a bracketed Newton iteration (bisection when Newton leaves the bracket).
Being implicit in v, the stick state is a stable fixed point at any step: no chattering at
zero velocity (a Karnopp switch is not needed), and the pre-sliding spring sigma0 cannot go
unstable with h.

Two implementations with one interface: :class:`JointFriction` (what the iiwa mock uses) runs
the step in a numba kernel (``hil_core.drives.joint_friction_kernel``, a few microseconds per
step for 7 joints, compiled or loaded from the cache by its constructor or by :func:`warm_up`);
:class:`JointFrictionNumpy` (``hil_core.drives.joint_friction_numpy``, with
:class:`FrictionParams`) is the plain-numpy oracle the tests compare it with
(test/unit/test_joint_friction_compiled.py, 1e-12).
"""
from __future__ import annotations

import numpy as np

from hil_core.drives import joint_friction_kernel
# the parameters are shared with the oracle, which the compiled class extends
from hil_core.drives.joint_friction_numpy import FrictionParams, JointFrictionNumpy

__all__ = ['FrictionParams', 'JointFriction', 'JointFrictionNumpy', 'warm_up']


_F64 = np.dtype(np.float64)


def _joints(x, n: int):
    """x as a float64 array of shape (n,) (a scalar or a length-1 array broadcast, read-only),
    or None when it is not one (then the numpy step, which broadcasts anything, does the call)."""
    if type(x) is np.ndarray and x.dtype is _F64 and x.shape == (n,):
        return x
    x = np.asarray(x, dtype=float)
    if x.shape == (n,):
        return x
    if x.ndim <= 1 and x.size == 1:
        return np.broadcast_to(x.reshape(()), (n,))
    return None


class JointFriction(JointFrictionNumpy):
    """:class:`JointFrictionNumpy` with ``step`` in a numba kernel
    (``hil_core.drives.joint_friction_kernel``): same interface, same numbers to rounding, a few
    microseconds per step. The constructor compiles or loads the kernel, so no step pays that.

    Every step assigns new ``z`` and returns new arrays, as the numpy class does (a caller may
    keep the previous ones). Inputs the kernel does not take (arrays that broadcast to more
    than the n joints, a non-scalar step) go to the numpy method. The parameters are packed for
    the kernel when ``p`` is assigned (the constructor does): assign a new ``FrictionParams``
    rather than editing the arrays of ``p`` in place.
    """

    def __init__(self, params: FrictionParams):
        super().__init__(params)
        warm_up()

    @property
    def p(self) -> FrictionParams:
        return self._p

    @p.setter
    def p(self, params: FrictionParams) -> None:
        params.validate()
        self._p = params
        self._params = np.array([params.fc, params.fs, params.vs, params.sigma0, params.sigma1, params.sigma2],
                                dtype=float)
        self._n = self._params.shape[1]

    def step(self, v_k, tau, m, h: float):
        """Advance one step: joint velocity v_k, torque tau (all but friction), inertia m.

        Returns (v_next, friction f_next); updates the internal state z.
        """
        n = self._n
        z0 = self.z
        vk, tq, mm = _joints(v_k, n), _joints(tau, n), _joints(m, n)
        if isinstance(h, float):
            hh = h
        elif np.ndim(h) == 0:
            hh = float(h)
        else:
            hh = None
        if (vk is None or tq is None or mm is None or hh is None or type(z0) is not np.ndarray
                or z0.dtype is not _F64 or z0.shape != (n,)):
            return super().step(v_k, tau, m, h)
        out = np.empty((joint_friction_kernel.ROWS, n))
        joint_friction_kernel.step(self._params, z0, vk, tq, mm, hh, self.ITERATIONS, out)
        # rows Z_NEXT, V_NEXT, F_NEXT of the kernel's output, as literals (no lookups per step)
        self.z = out[1]
        return out[0], out[2]


def warm_up() -> float:
    """Compile or load the friction step kernel (hil_core.warmup); seconds taken."""
    return joint_friction_kernel.warm_up()
