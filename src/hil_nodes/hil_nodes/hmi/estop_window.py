"""EMERGENCY STOP in a window of its own, one click away whatever the operator did to the page.

The HIL panel lives in viser's main panel, docked right; viser lets the operator collapse that
docked area to a rail (its chevron) or minimise it, and a button inside it is then two clicks
away. viser has no panel that cannot be minimised, so the emergency stop is a standalone panel
(``gui.add_panel``, its own floating window over the bottom-left corner of the 3D view, apart
from the docked area: collapsing the docked area leaves it open), and the HMI re-asserts
``expand()`` on it every ``REASSERT_S`` while a browser is connected: viser's placement commands
are write-only, so the server cannot hear that the operator minimised it, but a newly sent
command applies over the operator's gesture (viser's placement gate: a fresher stamp wins), and
viser keeps only the newest one in its replay buffer. Under the button: the HIL mode and the
supervisor's answer to the last emergency stop."""
from __future__ import annotations

from typing import Callable

REASSERT_S = 1.0
WIDTH_PX = 300


class EstopWindow:
    def __init__(self, server, on_click: Callable[[], None]):
        gui = server.gui
        self.window = gui.add_panel()
        with self.window.add_tab('Emergency stop'):
            self.button = gui.add_button('EMERGENCY STOP', color='red',
                                         hint='the supervisor goes to FAULT with a controlled stop (/hil/estop)')
            self.status = gui.add_markdown('**Mode:** waiting for the supervisor')
        self.button.on_click(lambda _: on_click())
        # x, y from the canvas' left and bottom edges (negative y: from the bottom), so the
        # window stays clear of the docked panel on the right however wide the operator makes it
        self.window.float(x=15, y=-15, width=WIDTH_PX)
        self._mode = 'waiting for the supervisor'
        self._answer = ''
        self._asserted = float('-inf')

    def keep_open(self, now: float) -> bool:
        """Re-open the window if it was minimised (at most every REASSERT_S); True when sent."""
        if now - self._asserted < REASSERT_S:
            return False
        self._asserted = now
        self.window.expand()
        return True

    def show_mode(self, mode: str) -> None:
        if mode != self._mode:
            self._mode = mode
            self._redraw()

    def show_answer(self, text: str) -> None:
        self._answer = text
        self._redraw()

    def _redraw(self) -> None:
        self.status.content = f'**Mode:** {self._mode}' + (f'  \n{self._answer}' if self._answer else '')
