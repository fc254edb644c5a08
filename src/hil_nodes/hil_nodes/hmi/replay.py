"""``hil hmi BAG``: a recorded run in the live view (no ROS needed): the bag's robot, TF, wrench
and TCPs at the slider time, its modes and events on a timeline bar, the panel as it was at
that time, and the time-base factor and W-R distance of the whole run. Play/pause and speed
move the slider; one thread redraws at the view rate, only when the time shown changed."""
from __future__ import annotations

import threading
import time

import numpy as np

from hil_nodes.hmi.app import build_scene, initial_camera, start_server, url
from hil_nodes.hmi.panel import Panel
from hil_nodes.hmi.timeline import Timeline
from hil_nodes.hmi.timeline_svg import timeline_svg

SPEEDS = ('0.1', '0.25', '0.5', '1', '2', '5')


class Replay:
    def __init__(self, timeline: Timeline, host: str = '127.0.0.1', port: int = 8080, urdf_text: str = '',
                 view_rate: float = 30.0, panel_rate: float = 10.0, wrench_scale: float = 0.002,
                 sensor_frame: str = 'ft_sensor'):
        description = urdf_text or timeline.robot_description
        if not description:
            raise ValueError(f'{timeline.path}: the bag has no /robot_description: give the robot\'s URDF (--urdf)')
        self.timeline = timeline
        self.server = start_server(host, port, f'hil_suite replay: {timeline.path.name}')
        self.url = url(self.server)
        self.view_period, self.panel_period = 1.0 / view_rate, 1.0 / panel_rate
        gui = self.server.gui
        self.slider = gui.add_slider('Time (s)', min=0.0, max=max(timeline.duration, 1e-3), step=0.0025,
                                     initial_value=0.0)
        self.play = gui.add_button('Play / pause', color='green')
        self.play.on_click(lambda _: self.toggle())
        self.speed = gui.add_dropdown('Speed', SPEEDS, initial_value='1')
        self.bar = gui.add_html(timeline_svg(timeline.modes, timeline.events, timeline.duration, 0.0))
        labels = [f'{t:.2f} s {name} ({source})' for t, source, name, _, _ in timeline.events]
        self._event_times = dict(zip(labels, (e[0] for e in timeline.events)))
        self.jump = gui.add_dropdown('Jump to event', ('-', *labels), initial_value='-')
        self.jump.on_update(lambda _: self._jump())
        self.panel = Panel(self.server, None)
        for chart, key in ((self.panel.factor, 'factor'), (self.panel.distance, 'fractional_distance')):
            t, v = timeline.series('timebase: buffer', key)
            if key == 'fractional_distance' and not len(t):
                t, v = timeline.series('timebase: buffer', 'distance')
            if len(t) >= 2:
                chart.data = (t, v)
        self.scene = build_scene(self.server, description, wrench_scale, sensor_frame)
        initial_camera(self.server, self.scene, self._view_shown)
        self.playing = False
        self.shown = None              # slider time the scene shows
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name='hmi-replay', daemon=True)

    def _view_shown(self):
        view = self.timeline.view_at(self.shown or 0.0)
        return view.positions, view.tf

    def start(self) -> 'Replay':
        self.show(0.0)
        self._thread.start()
        return self

    def toggle(self) -> None:
        if not self.playing and self.slider.value >= self.timeline.duration:
            self.slider.value = 0.0
        self.playing = not self.playing

    def _jump(self) -> None:
        t = self._event_times.get(self.jump.value)
        if t is not None:
            self.playing = False
            self.slider.value = float(np.clip(t, 0.0, self.timeline.duration))

    def show(self, t: float) -> None:
        """Draw the run at slider time ``t`` (s from the bag's start)."""
        self.scene.update(self.timeline.view_at(t))
        panel = self.timeline.panel_at(t)
        panel.workspace_level = self.scene.workspace_level
        self.panel.state.content = '  \n'.join([f'**Replay time:** {t:.3f} s', *panel.summary_lines()])
        self.panel.history.content = f'**Modes:** {panel.history_text()}' if panel.modes else ''
        self.bar.content = timeline_svg(self.timeline.modes, self.timeline.events, self.timeline.duration, t)
        self.shown = t

    def _loop(self) -> None:
        last = time.monotonic()
        while not self._stop.wait(self.view_period):
            now = time.monotonic()
            dt, last = now - last, now
            if self.playing:
                t = min(self.slider.value + dt * float(self.speed.value), self.timeline.duration)
                self.slider.value = t
                if t >= self.timeline.duration:
                    self.playing = False
            t = float(self.slider.value)
            if t != self.shown:
                self.show(t)

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=2.0)
        self.server.stop()
