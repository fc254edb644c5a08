"""The HMI's force joystick: a drag handle in the 3D view (viser's transform controls at the
platform) and, in the panel, the force and torque to push with. Dragging the handle away from
its rest point by d (m) and turning it by the rotation vector r (rad) asks for the wrench
[gain d, torque_gain r] in the base frame; releasing it (or Release) asks for zero and the handle
springs back. What is asked is only a request: the F/T node limits it in magnitude and rate and
releases it when it stops arriving (hil_core.ft.joystick), so nothing here is a safety limit.
The ROS shell publishes ``wrench()`` on topics.JOYSTICK_WRENCH at its own rate while it is not
zero, and a few zeros after a release."""
from __future__ import annotations

import threading

import numpy as np
from scipy.spatial.transform import Rotation

RELEASE_REPEATS = 3               # zeros sent after a release (a lost one does not leave a push on)


class JoystickModel:
    """The operator's requested wrench (base axes), set from viser's thread, read by the shell's."""

    def __init__(self, gain: float, torque_gain: float):
        self.gain, self.torque_gain = float(gain), float(torque_gain)
        self._lock = threading.Lock()
        self._wrench = np.zeros(6)
        self._zeros_left = 0

    def set(self, force, torque) -> None:
        w = np.concatenate([np.asarray(force, float).reshape(3), np.asarray(torque, float).reshape(3)])
        with self._lock:
            self._wrench = np.where(np.isfinite(w), w, 0.0)
            self._zeros_left = RELEASE_REPEATS

    def from_handle(self, displacement, wxyz) -> None:
        """The drag handle at ``displacement`` (m) from its rest point, turned by the quaternion ``wxyz``."""
        w, x, y, z = (float(v) for v in wxyz)
        rotvec = Rotation.from_quat([x, y, z, w]).as_rotvec() if abs(w) + abs(x) + abs(y) + abs(z) > 0 else np.zeros(3)
        self.set(self.gain * np.asarray(displacement, float), self.torque_gain * rotvec)

    def release(self) -> None:
        self.set(np.zeros(3), np.zeros(3))

    @property
    def requested(self) -> np.ndarray:
        with self._lock:
            return self._wrench.copy()

    def next_message(self) -> np.ndarray | None:
        """The wrench to publish now, or None (nothing asked and the release already sent)."""
        with self._lock:
            if self._wrench.any():
                return self._wrench.copy()
            if self._zeros_left > 0:
                self._zeros_left -= 1
                return np.zeros(6)
            return None


class JoystickPanel:
    """The widgets: a 'Force joystick' folder (force and torque to push with, Push / Release) and
    the drag handle in the 3D view, placed at ``anchor`` (the platform) by ``place``."""

    def __init__(self, server, model: JoystickModel, allowed, frame: str):
        self.server, self.model, self._allowed = server, model, allowed
        gui = server.gui
        self.folder = gui.add_folder('Force joystick')
        with self.folder:
            self.note = gui.add_markdown(f'Drag the handle at the platform (base axes, `{frame}`), or push with:')
            self.force = gui.add_vector3('Force (N)', initial_value=(0.0, 0.0, 0.0), step=1.0)
            self.torque = gui.add_vector3('Torque (N m)', initial_value=(0.0, 0.0, 0.0), step=0.1)
            self.push_button = gui.add_button('Push', color='violet')
            self.release_button = gui.add_button('Release')
            self.state = gui.add_markdown('**Joystick:** released')
        self.push_button.on_click(lambda _: self.push(self.force.value, self.torque.value))
        self.release_button.on_click(lambda _: self.release())
        self.anchor = np.zeros(3)
        self.handle = server.scene.add_transform_controls('/joystick', scale=0.12, disable_sliders=True,
                                                          depth_test=False)
        self.handle.on_update(self._dragged)

    def set_available(self, available: bool) -> None:
        """Show the folder and the handle only where an F/T node takes the push (Hexafloat)."""
        if self.folder.visible != available:
            self.folder.visible = available
            self.handle.visible = available

    def push(self, force, torque) -> None:
        if not self._allowed():
            self.state.content = '**Joystick:** REFUSED by the HMI: wrong or missing control token'
            return
        self.model.set(force, torque)
        f, t = np.asarray(force, float), np.asarray(torque, float)
        self.state.content = (f'**Joystick:** pushing |F| = {np.linalg.norm(f):.1f} N, |T| = {np.linalg.norm(t):.2f} '
                              'N m (the F/T node limits it)')

    def release(self) -> None:
        self.model.release()
        self.handle.position, self.handle.wxyz = tuple(self.anchor), (1.0, 0.0, 0.0, 0.0)
        self.state.content = '**Joystick:** released'

    def _dragged(self, event) -> None:
        # viser calls this at the grab ('start'), every move ('update') and the release ('end')
        if getattr(event, 'phase', 'update') == 'end' or not self._allowed():
            return self.release()
        d = np.asarray(self.handle.position, float) - self.anchor
        self.model.from_handle(d, self.handle.wxyz)
        w = self.model.requested
        self.state.content = (f'**Joystick:** dragging, F = [{w[0]:.1f}, {w[1]:.1f}, {w[2]:.1f}] N, '
                                  f'T = [{w[3]:.2f}, {w[4]:.2f}, {w[5]:.2f}] N m')

    def place(self, anchor) -> None:
        """Move the handle's rest point to the platform (not while it is being pushed)."""
        anchor = np.asarray(anchor, float)
        if not self.model.requested.any() and not np.allclose(anchor, self.anchor, atol=1e-4):
            self.anchor = anchor
            self.handle.position = tuple(anchor)
