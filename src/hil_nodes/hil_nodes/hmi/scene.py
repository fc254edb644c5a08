"""The 3D view on a viser server: the robot's URDF visuals placed by the transform tree, the
Hexaslide legs, the workspace soft and hard limits as translucent surfaces (tinted while the
achieved TCP is beyond the soft one), the F/T wrench as an arrow at the sensor, and the
reference and achieved TCP as two frames. ``update(state)`` moves what moved; it is called
by one thread at the view rate (never per message)."""
from __future__ import annotations

import numpy as np

from hil_core.maths.tf_frames import quat_rotate
from hil_nodes.hmi.extras import LEG_FRAMES, RobotExtras
from hil_nodes.hmi.robot_model import RobotModel
from hil_nodes.hmi.tf_tree import xyzw_to_wxyz
from hil_nodes.hmi.view_state import ViewState

ROOT = '/robot'


def _rgb(rgba) -> tuple[int, int, int]:
    return tuple(int(round(255 * max(0.0, min(1.0, c)))) for c in rgba[:3])


class Scene:
    def __init__(self, server, model: RobotModel, extras: RobotExtras, wrench_scale: float,
                 sensor_frame: str):
        self.server, self.model, self.extras = server, model, extras
        self.wrench_scale, self.sensor_frame = wrench_scale, sensor_frame
        scene = server.scene
        scene.set_up_direction('+z')
        scene.add_grid('/grid', width=2.0, height=2.0, cell_size=0.1, plane='xy', position=(0.0, 0.0, -0.01))
        self.links = {}
        for link in model.links:
            self.links[link] = scene.add_frame(f'{ROOT}/{link}', show_axes=False, visible=False)
        for i, v in enumerate(model.visuals):
            name = f'{ROOT}/{v.link}/visual_{i}'
            pose = dict(position=tuple(v.xyz), wxyz=xyzw_to_wxyz(v.quat_xyzw))
            opacity = v.rgba[3] if len(v.rgba) > 3 and v.rgba[3] < 1.0 else None
            if v.kind == 'box':
                scene.add_box(name, dimensions=v.size, color=_rgb(v.rgba), opacity=opacity, **pose)
            elif v.kind == 'cylinder':
                scene.add_cylinder(name, radius=v.size[0], height=v.size[1], color=_rgb(v.rgba), opacity=opacity,
                                   **pose)
            elif v.kind == 'sphere':
                scene.add_icosphere(name, radius=v.size[0], color=_rgb(v.rgba), opacity=opacity, **pose)
        self.legs = {}
        if extras.leg_length:
            for leg in LEG_FRAMES:
                frame = scene.add_frame(f'{ROOT}/{leg}', show_axes=False, visible=False)
                scene.add_cylinder(f'{ROOT}/{leg}/rod', radius=extras.leg_radius, height=extras.leg_length,
                                   color=(200, 200, 215), position=(0.0, 0.0, 0.5 * extras.leg_length))
                self.legs[leg] = frame
        self.surfaces = {}
        for s in extras.surfaces:
            frame = scene.add_frame(f'/workspace/{s.name}', show_axes=False, visible=False)
            mesh = scene.add_mesh_simple(f'/workspace/{s.name}/mesh', s.vertices, s.faces, color=s.rgb,
                                         opacity=s.opacity, side='double', cast_shadow=False, receive_shadow=False)
            self.surfaces[s.name] = (frame, mesh, s)
        self.reference = scene.add_frame('/tcp/reference', axes_length=0.06, axes_radius=0.003, visible=False)
        self.achieved = scene.add_frame('/tcp/achieved', axes_length=0.09, axes_radius=0.0015, visible=False)
        scene.add_label('/tcp/reference/label', 'reference', position=(0.0, 0.0, 0.02))
        scene.add_label('/tcp/achieved/label', 'achieved', position=(0.0, 0.0, -0.02))
        self.wrench = scene.add_arrows('/wrench', np.zeros((1, 2, 3)), (230, 200, 20), shaft_radius=0.004,
                                       head_radius=0.01, head_length=0.02, visible=False)
        self.fixed = model.root
        self.workspace_level: float | None = None
        self._soft_tinted = False

    def update(self, state: ViewState) -> None:
        fixed, poses = self.model.link_poses(state.positions, state.tf)
        self.fixed = fixed
        tree = state.tf
        with self.server.atomic():
            for link, handle in self.links.items():
                pose = poses.get(link)
                if pose is None:
                    continue
                handle.position, handle.wxyz = pose[0], xyzw_to_wxyz(pose[1])
                handle.visible = True
            for leg, handle in self.legs.items():
                pose = tree.pose(leg, fixed)
                if pose is not None:
                    handle.position, handle.wxyz = pose[0], xyzw_to_wxyz(pose[1])
                    handle.visible = True
            for frame, _, s in self.surfaces.values():
                pose = poses.get(s.frame) or tree.pose(s.frame, fixed)
                if pose is not None:
                    frame.position, frame.wxyz = pose[0], xyzw_to_wxyz(pose[1])
                    frame.visible = True
            for handle, tcp in ((self.reference, state.reference), (self.achieved, state.achieved)):
                pose = self._in_fixed(tcp.frame, tcp.xyz, tcp.quat_xyzw, poses, tree, fixed) if tcp else None
                if pose is not None:
                    handle.position, handle.wxyz = pose[0], xyzw_to_wxyz(pose[1])
                    handle.visible = True
            self._update_wrench(state, poses, tree, fixed)
            self._update_level(state)

    def _in_fixed(self, frame, xyz, quat, poses, tree, fixed):
        base = poses.get(frame.lstrip('/')) or (tree.pose(frame.lstrip('/'), fixed) if frame else None)
        if base is None:
            return None
        return base[0] + quat_rotate(base[1], xyz), _quat_mul(base[1], quat)

    def _update_wrench(self, state, poses, tree, fixed) -> None:
        w = state.wrench
        if w is None:
            return
        at = poses.get(self.sensor_frame) or tree.pose(self.sensor_frame, fixed)
        axes = poses.get(w.frame.lstrip('/')) or tree.pose(w.frame.lstrip('/'), fixed)
        if at is None or axes is None or not np.all(np.isfinite(w.force)):
            return
        force = quat_rotate(axes[1], w.force) * self.wrench_scale
        self.wrench.points = np.array([[at[0], at[0] + force]], dtype=np.float32)
        self.wrench.visible = True

    def _update_level(self, state) -> None:
        ws, tcp = self.extras.workspace, state.achieved
        if ws is None or tcp is None:
            return
        self.workspace_level = float(ws.soft.level_point(np.asarray(tcp.xyz, float) - np.asarray(ws.soft.centre, float)))
        outside = self.workspace_level > 1.0
        if outside != self._soft_tinted and 'soft_limit' in self.surfaces:
            self._soft_tinted = outside
            self.surfaces['soft_limit'][1].color = (240, 150, 20) if outside else self.surfaces['soft_limit'][2].rgb


def _quat_mul(a, b) -> np.ndarray:
    from hil_core.maths.tf_frames import quat_mul
    return np.asarray(quat_mul(a, b), float)
