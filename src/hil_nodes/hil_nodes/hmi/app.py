"""The web server the live HMI and the replay share: a viser server bound to ``host:port``,
the control sidebar docked right (EMERGENCY STOP is in a window of its own, hmi.estop_window,
since the operator can collapse the sidebar), the scene built from a robot description once
one is known."""
from __future__ import annotations

import contextlib
import io

import numpy as np
import viser

from hil_nodes.hmi.extras import robot_extras
from hil_nodes.hmi.robot_model import load_model
from hil_nodes.hmi.scene import Scene
from hil_nodes.hmi.tf_tree import TfTree


def start_server(host: str, port: int, label: str) -> viser.ViserServer:
    """A viser server on exactly ``host:port`` (0: any free port); OSError saying so when the
    port is taken (viser would quietly serve on the next free one: an operator told the address
    would open another program's page, or none)."""
    # viser prints a banner of its own: the HMI's first line must be its ``hmi: URL``
    with contextlib.redirect_stdout(io.StringIO()):
        server = viser.ViserServer(host=host, port=port, label=label, verbose=False)
        if port and server.get_port() != port:
            server.stop()
            raise OSError(f'port {port} on {host} is in use: give another port, or 0 for any free one')
    server.gui.configure_theme(control_width='large', show_logo=False, show_share_button=False)
    server.gui.main_panel.dock_right()        # docked, not floating over the 3D view
    return server


def url(server: viser.ViserServer) -> str:
    host = server.get_host()
    return f'http://{"127.0.0.1" if host in ("0.0.0.0", "::") else host}:{server.get_port()}'


def build_scene(server: viser.ViserServer, urdf_text: str, wrench_scale: float, sensor_frame: str) -> Scene:
    model = load_model(urdf_text)
    return Scene(server, model, robot_extras(model.name, model.root), wrench_scale, sensor_frame)


def initial_camera(server: viser.ViserServer, scene: Scene, state=None) -> None:
    """A camera that frames the robot for every new browser tab: from the front-right, above,
    at a distance scaled to the robot's size, around its links as drawn when the tab connects
    (``state()``: the view's (positions, tf) then, in the fixed frame the scene draws in: a
    robot on a satellite or a platform on /tf is not where its zero pose is), else at its zero
    pose."""

    def framing():
        poses = {}
        if state is not None:
            try:
                positions, tf = state()
                _, poses = scene.model.link_poses(positions, tf)
            except RuntimeError:       # the view changed while copied (another thread): the zero pose
                poses = {}
        if len(poses) < 2:
            _, poses = scene.model.link_poses({}, TfTree())
        pts = np.array([p[0] for p in poses.values()] or [np.zeros(3)])
        centre = 0.5 * (pts.min(0) + pts.max(0))
        size = max(float(np.ptp(pts, axis=0).max()), 0.3)
        look_at = (float(centre[0]), float(centre[1]), float(centre[2]))
        return (look_at[0] + 0.95 * size, look_at[1] - 0.95 * size, look_at[2] + 0.65 * size), look_at

    @server.on_client_connect
    def _(client) -> None:
        client.camera.position, client.camera.look_at = framing()
