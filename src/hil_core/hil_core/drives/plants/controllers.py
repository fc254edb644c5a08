"""The controllers the mock hardware emulates in front of its plant: what a stock Kilted
joint_trajectory_controller (JTC) or forward_command_controller (FCC) accepts, refuses and
writes to the command interfaces (STYLE.md section 2, docs/mock_hardware.md).

Both follow one small interface used by the node's frame cycle:

* ``accept(message, now_ns)`` -> :class:`Acceptance`: the stock controller's rules first
  (layer ``controller``), then the stricter guard (layer ``guard``: limits from the URDF,
  finiteness, duplicate names), each refusal with a stable reason and a sentence;
* ``apply(entry, start, now, measured)``: make an accepted command current at a frame;
* ``activate`` (the node's activation), ``hold`` (a lockstep frame's command did not come),
  ``frames_skipped`` (real time dropped frames: no jump ahead), ``brake`` (the watchdog's
  controlled stop);
* ``commands(t0, m, h)``: the command rows the plant integrates over a frame (``m`` steps of
  ``h`` from ``t0``); ``end()``: when the active command runs out (None: never).

:class:`TrajectoryFollower` (JTC, position interface) keeps the active trajectory as knots and
samples them at the plant's steps, as the former mock_hexapod did (``sample_knots``: cubic
Hermite with velocities, linear without; after the last knot its position with zero velocity,
which is what a position-only command interface receives from a JTC holding its last point).
An accepted message replaces the active trajectory; its segment before the first point starts
from the setpoint (``interpolate_from_desired_state``) or the measured state. Points with
accelerations are refused by the guard (quintic interpolation is not modelled here). Its rows
are setpoints at the step starts with their velocity and acceleration (the servo plant's), or,
with ``lead`` (a plant that takes the position command itself, the iiwa's), what a JTC writes
to the position interface at each update: the trajectory one update period ahead
(``command_next_``), i.e. at the end of the step. A trajectory that ends at rest by its
velocities carries its own stop (a braking profile, the iiwa's braking tail): without a new message (a late lockstep frame)
or across frames real time skipped, it goes on from where it was, as a JTC goes on with the
trajectory it has; any other is held at the current setpoint (the mock's stop).

:class:`ForwardCommand` (FCC): a message with any non-finite value is dropped whole; a size
mismatch deactivates the controller (its command becomes NaN and no later message is taken);
the last command persists (FCC has no timeout; the node's watchdog stops the robot). NaN is
"no command yet": the plant does what its drive does without a command.
Times are seconds relative to the node's start time (``rel``), as the plant steps use them.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from hil_core.drives.command_watchdog import braking_knots
from hil_core.drives.joint_trajectory import JtcSettings, Trajectory, guard_trajectory, jtc_validate, to_controller_order
from hil_core.drives.joint_trajectory_legacy import replan_knots, sample_knots
from hil_core.drives.plants.description import HardwareInfo
from hil_core.drives.plants.plain_trajectory import PlainAcceptance, PlainTrajectory, seconds

JTC_TYPE = 'joint_trajectory_controller/JointTrajectoryController'
# forward_command_controller and its one-interface specialisations (the interface is implied)
FCC_TYPES = {'forward_command_controller/ForwardCommandController': None,
             'position_controllers/JointGroupPositionController': 'position',
             'velocity_controllers/JointGroupVelocityController': 'velocity',
             'effort_controllers/JointGroupEffortController': 'effort'}


@dataclass(frozen=True)
class ControllerSpec:
    name: str
    type: str
    joints: tuple
    interface: str
    jtc: JtcSettings | None = None
    interpolate_from_desired_state: bool = False

    @property
    def trajectory(self) -> bool:
        return self.type == JTC_TYPE


def controller_spec(config: dict, name: str) -> ControllerSpec:
    """The controller ``name`` of a controllers YAML (``controller_manager`` lists its type)."""
    manager = (config.get('controller_manager') or {}).get('ros__parameters') or {}
    ctype = (manager.get(name) or {}).get('type')
    params = (config.get(name) or {}).get('ros__parameters')
    if ctype is None or params is None:
        raise ValueError(f'controller {name!r}: no type under controller_manager or no ros__parameters')
    if ctype != JTC_TYPE and ctype not in FCC_TYPES:
        raise ValueError(f'controller {name!r}: type {ctype!r} is not emulated by the mock hardware')
    joints = tuple(params.get('joints') or ())
    if not joints:
        raise ValueError(f'controller {name!r} lists no joints')
    if ctype == JTC_TYPE:
        method = params.get('interpolation_method', 'splines')
        if method != 'splines':
            raise ValueError(f'controller {name!r}: interpolation_method {method!r} is not emulated (splines only)')
        settings = JtcSettings.from_parameters(params)
        if settings.command_interfaces != ('position',):
            raise ValueError(f'controller {name!r}: the mock emulates a JTC on the position interface only, '
                             f'got {list(settings.command_interfaces)}')
        return ControllerSpec(name, ctype, joints, 'position', settings,
                              bool(params.get('interpolate_from_desired_state', False)))
    interface = FCC_TYPES[ctype] or params.get('interface_name')
    if not interface:
        raise ValueError(f'controller {name!r}: interface_name is required')
    return ControllerSpec(name, ctype, joints, interface)


@dataclass(frozen=True)
class Acceptance:
    """``layer``: '' (accepted), 'controller' (the stock rules) or 'guard' (the stricter layer)."""
    layer: str = ''
    reason: str = ''
    detail: str = ''
    entry: Any = None

    @property
    def accepted(self) -> bool:
        return not self.layer


def _hardware_order(spec: ControllerSpec, hardware: HardwareInfo) -> np.ndarray:
    """Index into the controller's joint order for each hardware joint."""
    if sorted(spec.joints) != sorted(hardware.joint_names):
        raise ValueError(f'controller {spec.name!r} joints {list(spec.joints)} are not the joints of the '
                         f'<ros2_control> block {list(hardware.joint_names)}')
    if hardware.command_interface() != spec.interface:
        raise ValueError(f'controller {spec.name!r} writes {spec.interface!r}, the joints take '
                         f'{hardware.command_interface()!r}')
    return np.array([spec.joints.index(name) for name in hardware.joint_names])


# m/s or rad/s: slower than this at its last point, a trajectory ends at rest
END_AT_REST = 1e-6


class TrajectoryFollower:
    late_action = 'held the last setpoint'

    def __init__(self, spec: ControllerSpec, hardware: HardwareInfo, initial_positions, lead: bool = False):
        self.spec = spec
        self.lead = bool(lead)
        self.order = _hardware_order(spec, hardware)
        lo, hi = hardware.command_limits()
        ctl = np.argsort(self.order)                   # hardware index of each controller joint
        self.limits = (lo[ctl], hi[ctl], hardware.velocity_limits()[ctl])
        x0 = np.asarray(initial_positions, dtype=float)
        self.knots = (np.array([0.0]), x0[None, :], None)    # active setpoint trajectory (rel. s)
        self.braking = False                                 # the knots are the watchdog's stop
        self._plain = PlainAcceptance(spec.joints, spec.jtc, self.limits, self.order)

    def accept_plain(self, plain: PlainTrajectory, now_ns: int) -> Acceptance | None:
        """The acceptance of a plain trajectory decided on whole arrays (hil_core.drives.plants.
        plain_trajectory); None: not decided there, ``accept`` decides (and gives any refusal)."""
        entry = self._plain.accept(plain, now_ns)
        return None if entry is None else Acceptance(entry=entry)

    def accept(self, traj: Trajectory, now_ns: int) -> Acceptance:
        verdict = jtc_validate(traj, self.spec.jtc, now_ns)
        if not verdict:
            return Acceptance('controller', verdict.reason, verdict.detail)
        verdict = guard_trajectory(traj, self.spec.joints, *self.limits)
        if not verdict:
            return Acceptance('guard', verdict.reason, verdict.detail)
        if any(pt.accelerations for pt in traj.points):
            return Acceptance('guard', 'accelerations', 'points with accelerations (quintic interpolation) are '
                                                        'not emulated by the mock hardware')
        hold = self.knots[1][-1][np.argsort(self.order)]    # omitted joints (partial goals) hold
        order = to_controller_order(traj, self.spec.joints, hold)
        pos = order.positions[:, self.order]
        vel = None if order.velocities is None else order.velocities[:, self.order]
        return Acceptance(entry=(seconds(order.times_ns), pos, vel))

    def setpoint(self, now: float) -> tuple[np.ndarray, np.ndarray]:
        sp_p, sp_v = sample_knots(*self.knots, np.array([now]))
        return sp_p, sp_v

    def apply(self, entry, start: float, now: float, measured) -> None:
        """Make an accepted trajectory (starting at ``start``) the active one at frame ``now``;
        its first segment starts from the setpoint or, without interpolate_from_desired_state,
        from the measured state (``measured()``: the plant's states)."""
        state = None
        if not self.spec.interpolate_from_desired_state:
            state = measured()
            state = (state['position'], state['velocity'])
        self.knots, replanned = replan_knots(self.knots, entry, start, now, state)   # (compiled)
        if replanned:                          # (one that ends exactly now holds its last point)
            self.braking = False

    def activate(self, now: float) -> None:
        """Keep the current setpoint, no jump (zero velocity feedforward): a JTC's hold position
        on activation, and the mock's stop of a trajectory that ends moving."""
        sp_p, _ = self.setpoint(now)
        self.knots = (np.array([now]), sp_p, None)
        self.braking = False

    def carries_its_stop(self) -> bool:
        """The active trajectory ends at rest by its own velocities (a braking profile, the
        iiwa's tail): it can go on unattended. One without velocities ends on a linear segment's
        slope, one that ends moving does not stop: neither can."""
        return self.braking or (self.knots[2] is not None and not self.ends_moving())

    def hold(self, now: float) -> None:
        """No command for this frame: a trajectory that carries its own stop goes on (a JTC keeps
        the trajectory it has; past its end it holds the last point); any other stops at the
        current setpoint (:meth:`activate`)."""
        if not self.carries_its_stop():
            self.activate(now)

    def frames_skipped(self, now: float, later: float) -> None:
        """Real time skipped the frames from ``now`` to ``later`` (the plant did not move): the
        setpoint must not jump ahead. A trajectory that carries its own stop (a braking profile,
        the iiwa's tail) goes on from where it was, later (the stop stays controlled); any other
        is dropped (held)."""
        if self.carries_its_stop():
            t, p, v = self.knots
            self.knots = (t + (later - now), p, v)
        else:
            self.activate(now)

    def brake(self, now: float, deceleration, dt: float) -> None:
        """From the current setpoint to rest at ``deceleration`` (hil_core.drives.command_watchdog)."""
        sp_p, sp_v = self.setpoint(now)
        times, pos, vel = braking_knots(sp_p[0], sp_v[0], deceleration, dt)
        self.knots = (np.array([now]), pos, None) if times.size == 1 else (now + times, pos, vel)
        self.braking = True

    def commands(self, t0: float, m: int, h: float) -> dict:
        knot_t, knot_p, knot_v = self.knots
        if self.lead:            # the JTC's command: the trajectory at each step's end
            return {'position': sample_knots(knot_t, knot_p, knot_v, t0 + h * np.arange(1, m + 1))[0]}
        ref_p, ref_v = sample_knots(knot_t, knot_p, knot_v, t0 + h * np.arange(m + 1))
        # feedforward acceleration: the setpoint's mean over each step (none for linear segments)
        acc = np.diff(ref_v, axis=0) / h if knot_v is not None else np.zeros((m, ref_p.shape[1]))
        return {'position': ref_p[:m], 'velocity': ref_v[:m], 'acceleration': acc}

    def end(self) -> float:
        return float(self.knots[0][-1])

    def ends_moving(self, tolerance: float = END_AT_REST) -> bool:
        """Whether the active trajectory ends with a velocity (a stream cut while moving): the
        frames past its end are late commands. One that ends at rest ends by design (the planner
        went IDLE, a move reached its goal): the JTC holds its last point, nothing is late."""
        v = self.knots[2]
        return v is not None and bool(np.any(np.abs(v[-1]) > tolerance))


class ForwardCommand:
    late_action = 'braked'

    def __init__(self, spec: ControllerSpec, hardware: HardwareInfo):
        self.spec = spec
        self.order = _hardware_order(spec, hardware)
        self.set_limits(*hardware.command_limits())
        self.command = np.full(len(self.order), np.nan)     # reset to NaN on activate
        self.active = True
        self.deactivated_by = ''

    def accept(self, data, now_ns: int = 0) -> Acceptance:
        if not self.active:
            return Acceptance('controller', 'inactive', f'{self.spec.name} is inactive ({self.deactivated_by})')
        v = np.asarray(data, dtype=float)
        if v.shape == self.order.shape:
            # a command of the right size with every value finite and inside its limits, decided
            # on floats (a law in the drives' loop sends 10000 a second); anything else, and every
            # refusal with its reason, by the checks below
            entry = v[self.order]
            values, (lo, hi) = entry.tolist(), self._limit_lists
            if all(a <= x <= b for x, a, b in zip(values, lo, hi)) and all(map(math.isfinite, values)):
                return Acceptance(entry=entry)
        return self.check(v)

    def set_limits(self, lo, hi) -> None:
        """The command limits (the hardware's, in its joint order), in the three forms the checks
        read: arrays (``check``), floats (``accept``'s fast path), contiguous arrays with the
        order (``limit_arrays``, a compiled loop)."""
        self.limits = (lo, hi)
        self._limit_lists = (np.asarray(lo, float).tolist(), np.asarray(hi, float).tolist())
        self._limit_arrays = (np.ascontiguousarray(self.order, dtype=np.int64),
                              np.ascontiguousarray(lo, dtype=float), np.ascontiguousarray(hi, dtype=float))

    def limit_arrays(self):
        """``(order, lo, hi)`` as int64 / float64 arrays: what ``accept`` takes, for a compiled loop
        that decides it the same way (hil_core.hybrid5.law_frame); None while inactive."""
        return self._limit_arrays if self.active else None

    def check(self, v: np.ndarray) -> Acceptance:
        """The full check of an active controller's command (the fast path's oracle)."""
        if not np.all(np.isfinite(v)):
            return Acceptance('controller', 'non_finite', 'non-finite value(s) in the command: dropped')
        if v.size != self.order.size:
            # update() returns ERROR and the controller manager deactivates the controller; its
            # command is reset to NaN
            self.active, self.command = False, np.full(self.order.size, np.nan)
            self.deactivated_by = (f'command size {v.size} does not match the {self.order.size} joints '
                                   f'{list(self.spec.joints)}')
            return Acceptance('controller', 'size_mismatch', f'{self.deactivated_by}: controller deactivated')
        v = v[self.order]
        lo, hi = self.limits
        beyond = (v < lo) | (v > hi)
        if np.any(beyond):
            j = int(np.flatnonzero(beyond)[0])
            return Acceptance('guard', 'command_limit', f'{self.spec.interface} {v[j]:.6g} of joint #{j} beyond '
                                                        f'its limits [{lo[j]:.6g}, {hi[j]:.6g}]')
        return Acceptance(entry=v)

    def apply(self, entry, start: float = 0.0, now: float = 0.0, measured=None) -> None:
        self.command = entry

    def activate(self, now: float) -> None:
        """(Re)activated: active again, its command reset to NaN (no command yet)."""
        self.active, self.deactivated_by = True, ''
        self.command = np.full(self.order.size, np.nan)

    def hold(self, now: float) -> None:
        """No command for this frame: the drives stop by themselves (NaN), a later one resumes."""
        self.command = np.full(self.order.size, np.nan)

    def frames_skipped(self, now: float, later: float) -> None:
        """The last command persists (FCC has no timeout)."""

    def brake(self, now: float, deceleration, dt: float) -> None:
        self.command = np.full(self.order.size, np.nan)     # the plant brakes at its deceleration

    def commands(self, t0: float, m: int, h: float) -> dict:
        # one row: a view (a command array is replaced, never changed in place)
        rows = self.command.reshape(1, -1) if m == 1 else np.tile(self.command, (m, 1))
        return {self.spec.interface: rows}

    def end(self) -> None:
        return None
