"""hybrid5's law frame: the quiet control cycles of one drives' frame in one compiled call
(``law_frame_kernel``).

Why: in real time the mock drives run 25 plant steps of 100 us in every 2.5 ms frame, each
commanded by the hybrid controller's law (``hil_nodes.runtime.servo_link``). Step by step that
is five Python calls around three compiled kernels (the motion's reference, the control cycle,
the controller's and the drives' checks, the plant step, the encoders): about 24 us a step,
600 us a frame of an idle machine, and on a machine half as fast the kinematics node behind
the drives came late in 10-19 % of its cycles. Nearly every step is quiet: no change of phase,
no saturation, no refusal, no fault. The kernel runs those; the first step that is not quiet
goes back to the plain loop, which stays the oracle (``test_hybrid5_law_frame.py`` requires the
same plant, controller and motion state bit for bit).

The callers hand their state as arrays: ``LawArrays`` (the controller and its reference source)
and ``DriveArrays`` (the plant and the forward command controller); both advance in place.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hil_core.hybrid5 import law_frame_kernel as K

NEVER = 2 ** 62            # k_stop of a phase that does not end by itself


def warm_up() -> float:
    """Compile (or load from the cache) and freeze the kernel; seconds taken (0.0 when done)."""
    return K.KERNELS.warm_up()


@dataclass
class LawArrays:
    """The law's side: the reference source of the steps to come and the controller's state."""
    k_first: int                  # cycle of the first step
    k_stop: int                   # cycle of the next change of phase (NEVER: none)
    src_kind: int                 # 1: the path from src_k0, 0: the hold ``fixed``
    src_k0: int
    fixed: np.ndarray             # (18,) the hold's reference (zeros for a path)
    table: object                 # tracking_kernel.PathTable (also a hold's, unread)
    R: float
    model: np.ndarray
    gl: np.ndarray                # gains and state of the legs' and the table's CTM
    il: np.ndarray
    fl: np.ndarray
    gt: np.ndarray
    it: np.ndarray
    ft: np.ndarray
    sat: np.ndarray               # (5,) the law's saturation (force_max x3, torque_max x2)
    max_err: float                # max_tracking_error


@dataclass
class DriveArrays:
    """The drives' side: the plant's state and step, the encoders, the controller's limits."""
    constants: np.ndarray         # dynamics_kernel.plant_constants
    p: np.ndarray
    v: np.ndarray
    theta: np.ndarray
    omega: np.ndarray
    dt: float
    ql: float                     # encoder resolutions (legs m, table rad; 0: none)
    qt: float
    order: np.ndarray             # (5,) int64: the command's values in the drives' joint order
    lo: np.ndarray
    hi: np.ndarray


@dataclass
class Done:
    """What the quiet steps did: how many, and the last one's reference and command."""
    steps: int
    reference: np.ndarray         # (18,) l, ld, ldd, th, w, e, p of the last step
    command: np.ndarray           # (5,) the last command, in the drives' order
    errors: np.ndarray            # (2,) the largest |leg error| (m) and |table error| (rad)


def _float_vector(a) -> bool:
    return type(a) is np.ndarray and a.dtype == np.float64 and a.ndim == 1 and a.flags.c_contiguous \
        and a.flags.writeable


def quiet_steps(n: int, law: LawArrays, drive: DriveArrays) -> Done:
    """Up to ``n`` quiet steps (module docstring); ``Done.steps`` 0: none (the plain loop runs
    the whole frame), e.g. for state arrays the frozen kernel does not take."""
    ref, cmd, err = np.zeros(K.N_REF), np.zeros(5), np.zeros(K.N_ERR)
    if not all(map(_float_vector, (drive.p, drive.v, drive.theta, drive.omega, law.fl, law.ft))):
        return Done(0, ref, cmd, err)
    t = law.table
    done = K.law_steps(int(n), int(law.k_first), int(law.k_stop), int(law.src_kind), int(law.src_k0), law.fixed,
                       float(law.R), float(t.Ts), int(t.n_cycles), t.k0, t.prof, t.kind, t.axes, t.geo,
                       law.model, law.gl, law.il, law.fl, law.gt, law.it, law.ft, law.sat, float(law.max_err),
                       drive.constants, drive.p, drive.v, drive.theta, drive.omega, float(drive.dt),
                       float(drive.ql), float(drive.qt), drive.order, drive.lo, drive.hi, ref, cmd, err)
    return Done(int(done), ref, cmd, err)
