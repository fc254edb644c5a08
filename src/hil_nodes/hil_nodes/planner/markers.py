"""rviz markers of the planner's workspace limits: soft and hard modified ellipsoids as
translucent triangle meshes (visualization_msgs/MarkerArray), in the planner's frame."""
from __future__ import annotations

import numpy as np
from geometry_msgs.msg import Point
from std_msgs.msg import ColorRGBA
from visualization_msgs.msg import Marker, MarkerArray


def _mesh(ws, expansion: float, n_phi: int = 24, n_theta: int = 24):
    """Triangles of the surface on a (phi, theta) grid of seed 001's spherical coordinates."""
    phi = np.linspace(-np.pi / 2, np.pi / 2, n_phi + 1)
    theta = np.linspace(-np.pi / 2, 1.5 * np.pi, n_theta + 1)
    pp, tt = np.meshgrid(phi, theta, indexing='ij')
    pts = ws.soft.surface_points(pp, tt, expansion)
    tris = []
    for i in range(n_phi):
        for j in range(n_theta):
            a, b, c, d = pts[i, j], pts[i + 1, j], pts[i + 1, j + 1], pts[i, j + 1]
            tris += [a, b, c, a, c, d]
    return [Point(x=float(p[0]), y=float(p[1]), z=float(p[2])) for p in tris]


def workspace_markers(ws, frame_id: str) -> MarkerArray:
    out = MarkerArray()
    for i, (name, expansion, color) in enumerate((('soft_limit', 1.0, (0.1, 0.8, 0.1, 0.25)),
                                                  ('hard_limit', ws.hard_expansion, (0.9, 0.1, 0.1, 0.12)))):
        m = Marker(type=Marker.TRIANGLE_LIST, action=Marker.ADD, ns=name, id=i)
        m.header.frame_id = frame_id
        m.pose.orientation.w = 1.0
        m.scale.x = m.scale.y = m.scale.z = 1.0
        m.color = ColorRGBA(r=color[0], g=color[1], b=color[2], a=color[3])
        m.points = _mesh(ws, expansion)
        out.markers.append(m)
    return out
