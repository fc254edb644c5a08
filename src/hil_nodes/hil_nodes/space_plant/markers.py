"""rviz markers of the space plant: satellite body (1 m cube), EE position and set-point."""
from __future__ import annotations

from geometry_msgs.msg import Point
from visualization_msgs.msg import Marker, MarkerArray

from hil_nodes.msgs.convert import array_to_pose


def satellite_markers(stamp, frame_id: str, out, r_des, size: float = 1.0) -> MarkerArray:
    arr = MarkerArray()
    sat = Marker(type=Marker.CUBE, action=Marker.ADD, ns='space_plant', id=0)
    sat.header.stamp, sat.header.frame_id = stamp, frame_id
    sat.pose = array_to_pose(out.sat_pose)
    sat.scale.x = sat.scale.y = sat.scale.z = size
    sat.color.r, sat.color.g, sat.color.b, sat.color.a = 0.83, 0.69, 0.22, 0.6
    arr.markers.append(sat)
    for i, (xyz, rgb) in enumerate(((out.ee_pose[:3], (1.0, 0.42, 0.04)), (r_des, (0.1, 0.8, 0.1))), start=1):
        m = Marker(type=Marker.SPHERE, action=Marker.ADD, ns='space_plant', id=i)
        m.header.stamp, m.header.frame_id = stamp, frame_id
        m.pose.position = Point(x=float(xyz[0]), y=float(xyz[1]), z=float(xyz[2]))
        m.pose.orientation.w = 1.0
        m.scale.x = m.scale.y = m.scale.z = 0.05
        m.color.r, m.color.g, m.color.b, m.color.a = (*rgb, 1.0)
        arr.markers.append(m)
    return arr


satellite_markers.msg_type = MarkerArray
