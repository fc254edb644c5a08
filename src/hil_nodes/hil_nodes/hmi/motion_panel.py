"""The 'Motion command' folder of the HIL panel: the input widgets of the running system
(hil_nodes.hmi.motion_commands says what each takes and who checks it) and the answer. Buttons
only hand ``(kind, values)`` to ``on_command``; the ROS shell sends it and calls ``show_answer``."""
from __future__ import annotations

from typing import Callable

from hil_nodes.hmi import motion_commands as mc

VIA_EXAMPLE = '1.0  0.02 -0.01 0.03 0.0 0.01 -0.02'


class MotionPanel:
    def __init__(self, server, on_command: Callable[[str, object], None], allowed: Callable[[], bool]):
        self._on_command, self._allowed = on_command, allowed
        gui = server.gui
        self.system = None
        with gui.add_folder('Motion command'):
            self.which = gui.add_markdown('**Motion command:** waiting to see which system runs')
            self.via = gui.add_text('Via points (t q1..q6; ...)', initial_value=VIA_EXAMPLE, visible=False,
                                    hint='time_from_start (s) then the six slider positions (m), one point per ";"')
            self.send_via = gui.add_button('Send via points', visible=False)
            self.ee_position = gui.add_vector3('EE position (m)', initial_value=(1.448, -0.236, 0.094), step=0.01,
                                               visible=False)
            self.ee_euler = gui.add_vector3('EE attitude z y x (deg)', initial_value=(-88.38, -37.27, -56.99),
                                            step=1.0, visible=False)
            self.send_ee = gui.add_button('Send EE target', visible=False)
            self.gcode = gui.add_text('G-code file', initial_value='config/gcode/agh.nc', visible=False)
            self.send_gcode = gui.add_button('Load program', visible=False)
            self.jog = gui.add_text('Jog (G-code, relative)', initial_value='X2 Y-1 F600', visible=False,
                                    hint='one straight move from where the robot holds: mm, deg (A tilt, C rotary); '
                                    'G1 needs F. Taken in IDLE at rest')
            self.send_jog = gui.add_button('Jog', visible=False)
            self.answer = gui.add_markdown('')
        self.send_via.on_click(lambda _: self._command('via_points', self.via.value))
        self.send_ee.on_click(lambda _: self._command('ee_target', (self.ee_position.value, self.ee_euler.value)))
        self.send_gcode.on_click(lambda _: self._command('gcode', self.gcode.value))
        self.send_jog.on_click(lambda _: self._command('jog', self.jog.value))
        self._widgets = {'hexafloat_scripted': (self.via, self.send_via),
                         'space_iiwa': (self.ee_position, self.ee_euler, self.send_ee),
                         'hybrid5': (self.gcode, self.send_gcode, self.jog, self.send_jog)}

    def set_system(self, system: str | None) -> None:
        if system == self.system:
            return
        self.system = system
        for name, widgets in self._widgets.items():
            for w in widgets:
                w.visible = name == system
        self.which.content = (f'**Motion command** ({system})' if system else
                              '**Motion command:** none taken by the running system (the Hexafloat is moved by '
                              'its loads: use the force joystick)')

    def _command(self, kind: str, values) -> None:
        if not self._allowed():
            self.show_answer(kind, False, 'refused by the HMI: wrong or missing control token')
            return
        self.answer.content = f'**{kind}:** sent…'
        self._on_command(kind, values)

    def show_answer(self, kind: str, accepted: bool | None, message: str) -> None:
        verdict = {True: 'accepted', False: 'REFUSED', None: 'no answer'}[accepted]
        self.answer.content = f'**{kind}:** {verdict}: {message or "(no reason given)"}'


def command_problem(kind: str, values) -> str | None:
    """The HMI-side check before sending (the same the node applies, hil_nodes.hmi.motion_commands)."""
    if kind == 'ee_target':
        return mc.check_ee_target(*values)
    if kind == 'gcode':
        return mc.check_gcode(values)
    if kind == 'jog':
        return mc.check_jog(values)
    if kind == 'via_points':
        try:
            mc.parse_via_text(values)
        except ValueError as exc:
            return str(exc)
    return None
