"""What a robot's URDF cannot carry and the view draws all the same, found by the URDF's robot
name: the Hexaslide's six legs (a closed chain: the kinematics node publishes a ``leg_i`` frame
at each slider joint, z towards the platform joint, and the leg is a rod of the link length
along it) and the workspace soft and hard limits (seed 001's modified ellipsoids of
config/workspace_<robot>.yaml, in the planner's frame)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hil_core.data_paths import checkout_root

LEG_FRAMES = tuple(f'leg_{i}' for i in range(1, 7))


@dataclass
class Surface:
    name: str                 # soft_limit | hard_limit
    frame: str
    vertices: np.ndarray      # (n, 3)
    faces: np.ndarray         # (m, 3) int
    rgb: tuple
    opacity: float


@dataclass
class RobotExtras:
    leg_length: float | None = None
    leg_radius: float = 0.004
    surfaces: tuple = ()
    workspace: object = None          # hil_core.planner.config.Workspace (its soft.level_point)
    workspace_frame: str = ''


def surface_mesh(ws, expansion: float, n_phi: int = 24, n_theta: int = 32) -> tuple[np.ndarray, np.ndarray]:
    """Vertices and triangles of the limit surface h = ``expansion`` on a (phi, theta) grid of
    seed 001's spherical coordinates (as the planner's rviz markers)."""
    phi = np.linspace(-np.pi / 2, np.pi / 2, n_phi + 1)
    theta = np.linspace(-np.pi / 2, 1.5 * np.pi, n_theta + 1)
    pp, tt = np.meshgrid(phi, theta, indexing='ij')
    pts = np.asarray(ws.soft.surface_points(pp, tt, expansion), float).reshape(-1, 3)
    idx = np.arange((n_phi + 1) * (n_theta + 1)).reshape(n_phi + 1, n_theta + 1)
    a, b, c, d = idx[:-1, :-1], idx[1:, :-1], idx[1:, 1:], idx[:-1, 1:]
    faces = np.concatenate([np.stack([a, b, c], -1).reshape(-1, 3), np.stack([a, c, d], -1).reshape(-1, 3)])
    return pts, faces.astype(np.uint32)


def robot_extras(robot_name: str, root_link: str) -> RobotExtras:
    """The extras of the robot named ``robot_name`` (none for a robot the suite has no
    geometry or workspace file for)."""
    out = RobotExtras()
    try:
        from hil_core.hexaslide.geometry import load_geometry
        geom = load_geometry(robot_name)
    except (OSError, KeyError, ValueError):
        return out
    out.leg_length = float(geom.link_length)
    out.leg_radius = 0.02 * float(geom.platform_radius) + 0.002
    path = checkout_root() / 'config' / f'workspace_{robot_name}.yaml' if checkout_root() else None
    if path is not None and path.exists():
        from hil_core.planner.config import Workspace
        ws = Workspace.load(str(path))
        surfaces = []
        for name, expansion, rgb, opacity in (('soft_limit', 1.0, (40, 200, 60), 0.22),
                                              ('hard_limit', ws.hard_expansion, (230, 40, 30), 0.12)):
            v, f = surface_mesh(ws, expansion)
            surfaces.append(Surface(name, root_link, v, f, rgb, opacity))
        out.surfaces, out.workspace, out.workspace_frame = tuple(surfaces), ws, root_link
    return out
