"""A lab gamepad as the force joystick: the axes and buttons of a ``sensor_msgs/Joy`` message (as
the ROS ``joy`` package publishes them, axes in [-1, 1]) mapped to the operator's wrench request,
the way ``teleop_twist_joy`` maps them to a twist: one axis per wrench component (or none),
a scale per component, a dead zone, and an enable ("deadman") button that must be held.

What this gives is only a request, like the HMI's drag handle: the F/T node limits it in
magnitude and rate and releases it when it goes silent (``hil_core.ft.joystick``). A message
whose mapped axis is missing or not finite is refused with the reason (nothing is asked then,
and a push that was on goes stale at the F/T node)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

NONE = -1                 # "no axis" / "no enable button"


@dataclass(frozen=True)
class JoyMapping:
    force_axes: tuple = (0, 1, NONE)          # Joy axis of fx, fy, fz
    torque_axes: tuple = (NONE, NONE, 3)      # Joy axis of tx, ty, tz
    force_scale: tuple = (50.0, 50.0, 50.0)   # N at full deflection (the sign turns the axis over)
    torque_scale: tuple = (5.0, 5.0, 5.0)     # N m at full deflection
    deadzone: float = 0.1                     # |axis| below this asks for nothing
    enable_button: int = 4                    # held to push (NONE: always enabled)

    def problem(self) -> str | None:
        axes = (*self.force_axes, *self.torque_axes)
        scales = (*self.force_scale, *self.torque_scale)
        if len(self.force_axes) != 3 or len(self.torque_axes) != 3 or len(scales) != 6:
            return 'joy mapping: 3 force axes, 3 torque axes and 3 scales for each'
        if any(int(a) != a or a < NONE for a in (*axes, self.enable_button)):
            return f'joy mapping: axis and button indices are integers >= {NONE} ({NONE}: none)'
        if not all(np.isfinite(s) for s in scales):
            return 'joy mapping: scales must be finite'
        if not 0.0 <= self.deadzone < 1.0:
            return f'joy mapping: deadzone must be in [0, 1), got {self.deadzone}'
        return None

    def wrench(self, axes, buttons) -> tuple[np.ndarray | None, str | None]:
        """(the requested wrench (6,), None), or (None, why the message is refused)."""
        if self.enable_button != NONE and not (self.enable_button < len(buttons) and buttons[self.enable_button]):
            return np.zeros(6), None                  # the enable button is not held: nothing asked
        out = np.zeros(6)
        for i, (axis, scale) in enumerate(zip((*self.force_axes, *self.torque_axes),
                                              (*self.force_scale, *self.torque_scale))):
            if axis == NONE:
                continue
            if axis >= len(axes):
                return None, f'joy message has {len(axes)} axes; the mapping reads axis {axis}'
            a = float(axes[axis])
            if not np.isfinite(a):
                return None, f'joy axis {axis} is not finite ({a})'
            a = min(max(a, -1.0), 1.0)
            mag = (abs(a) - self.deadzone) / (1.0 - self.deadzone)   # continuous at the dead zone's edge
            out[i] = scale * np.copysign(mag, a) if mag > 0 else 0.0
        return out, None
