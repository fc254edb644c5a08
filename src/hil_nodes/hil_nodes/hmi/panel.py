"""The HIL panel in viser's control sidebar (docked right): start / stop / reset and the
supervisor's answer, the HIL state and health, the mode history, and strip charts of the
time-base factor and the W-R distance. EMERGENCY STOP is not in it but in a window of its own
(hmi.estop_window), so collapsing or minimising the sidebar never hides it.
Buttons only hand a request to ``on_request`` (the ROS shell calls the service, never from
viser's thread); ``update`` redraws from a ``PanelModel`` at the panel rate."""
from __future__ import annotations

from typing import Callable

import numpy as np
from viser import uplot

from hil_nodes.hmi.estop_window import EstopWindow
from hil_nodes.hmi.panel_model import PanelModel

REQUESTS = ('start', 'stop', 'reset', 'estop')


def _chart(gui, title: str, colour: str, unit: str):
    return gui.add_uplot(data=(np.zeros(1), np.full(1, np.nan)), title=title, aspect=2.5,
                         series=(uplot.Series(label='t (s)'), uplot.Series(label=unit, stroke=colour, width=2)),
                         scales={'x': uplot.Scale(time=False, auto=True)})


class Panel:
    def __init__(self, server, on_request: Callable[[str], None] | None, token: str = ''):
        gui = server.gui
        self._on_request = on_request
        self._token = token
        self.controls = on_request is not None
        if self.controls:
            self.estop = EstopWindow(server, lambda: self._request('estop'))
            self.token_box = gui.add_text('Control token', initial_value='', visible=bool(token),
                                          hint='controls need this token when the HMI listens beyond localhost')
            self.buttons = {}
            for name, colour in (('start', 'green'), ('stop', 'orange'), ('reset', 'blue')):
                b = gui.add_button(name.capitalize(), color=colour)
                b.on_click(lambda _, n=name: self._request(n))
                self.buttons[name] = b
            self.answer = gui.add_markdown('**Supervisor:** no request yet')
        self.state = gui.add_markdown('**Mode:** waiting for the supervisor')
        self.history = gui.add_markdown('')
        self._charts_seen = False
        self.factor = _chart(gui, 'time-base factor', '#1e88e5', 'factor')
        self.distance = _chart(gui, 'W-R distance', '#e53935', 'frames')

    def token_ok(self) -> bool:
        """The control token rule for every control of the page (none needed on localhost)."""
        return not self._token or (self.controls and self.token_box.value == self._token)

    def _request(self, name: str) -> None:
        if not self.token_ok():
            self.show_answer(name, False, 'refused by the HMI: wrong or missing control token')
            return
        self.answer.content = f'**Supervisor:** {name} requested…'
        if name == 'estop':
            self.estop.show_answer('estop requested…')
        self._on_request(name)

    def show_answer(self, request: str, accepted: bool | None, message: str) -> None:
        """The supervisor's answer (accepted, its reason) or why there is none (accepted None)."""
        verdict = {True: 'accepted', False: 'REFUSED', None: 'no answer'}[accepted]
        self.answer.content = f'**Supervisor:** {request} {verdict}: {message or "(no reason given)"}'
        if request == 'estop':
            self.estop.show_answer(f'estop {verdict}: {message or "(no reason given)"}')

    def update(self, model: PanelModel, now: float) -> None:
        """Redraw from ``model``; ``now`` (monotonic s) paces the re-opening of the estop window."""
        if self.controls:
            self.estop.show_mode(model.mode)
            self.estop.keep_open(now)
        self.state.content = '  \n'.join(model.summary_lines())
        self.history.content = f'**Modes:** {model.history_text()}' if model.modes else ''
        for chart, strip in ((self.factor, model.factor), (self.distance, model.distance)):
            if len(strip) >= 2:
                chart.data = strip.arrays()
            shown = len(strip) >= 2 or self._charts_seen      # only a system with a time base has them
            if chart.visible != shown:
                chart.visible = shown
        self._charts_seen = self._charts_seen or len(model.factor) >= 2
