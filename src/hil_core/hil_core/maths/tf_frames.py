"""Frames for /tf and /tf_static, as plain data (docs/lab_ros2_control.md, TF).

* :func:`urdf_joints` / :func:`moving_transforms` / :func:`fixed_transforms`: what
  robot_state_publisher publishes for a URDF: parent -> child of every revolute, continuous
  and prismatic joint from the joint positions (``origin * motion(axis, q)``), and of every
  fixed joint once (static). Floating joints are skipped, as robot_state_publisher skips them
  ("Floating joint. Not adding segment"): their pose is published by whoever knows it (the
  forward kinematics of a parallel robot, the satellite's integrated pose).
* :func:`hexapod_leg_frames`: the six Hexaslide legs (closed chain, no URDF joints): frame
  ``leg_i`` at the slider's joint centre, z axis towards the platform joint.

A transform is ``(parent, child, xyz (3,), quaternion xyzw (4,))``. No rclpy here.
"""
from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from dataclasses import dataclass

import numpy as np

Transform = tuple  # (parent: str, child: str, xyz: np.ndarray, quat_xyzw: np.ndarray)


@dataclass(frozen=True)
class UrdfJoint:
    name: str
    type: str
    parent: str
    child: str
    xyz: np.ndarray
    rpy: np.ndarray
    axis: np.ndarray
    q0: np.ndarray = None          # origin rotation as xyzw (from rpy)
    slide: np.ndarray = None       # prismatic: unit axis in the parent frame (origin rotation applied)


def _vec(elem, attr: str, default: str) -> np.ndarray:
    return np.array((elem.get(attr, default) if elem is not None else default).split(), dtype=float)


def urdf_joints(urdf_text: str) -> list[UrdfJoint]:
    robot = ET.fromstring(urdf_text)
    out = []
    for j in robot.findall('joint'):
        origin, axis = j.find('origin'), j.find('axis')
        xyz, rpy, u = _vec(origin, 'xyz', '0 0 0'), _vec(origin, 'rpy', '0 0 0'), _vec(axis, 'xyz', '1 0 0')
        u = u / np.linalg.norm(u)
        q0 = rpy_to_quat(rpy)
        out.append(UrdfJoint(j.get('name'), j.get('type'), j.find('parent').get('link'), j.find('child').get('link'),
                             xyz, rpy, u, q0, quat_rotate(q0, u)))
    return out


def quat_mul(a, b) -> np.ndarray:
    """Hamilton product of xyzw quaternions."""
    ax, ay, az, aw = a
    bx, by, bz, bw = b
    return np.array([aw * bx + ax * bw + ay * bz - az * by, aw * by - ax * bz + ay * bw + az * bx,
                     aw * bz + ax * by - ay * bx + az * bw, aw * bw - ax * bx - ay * by - az * bz])


def quat_rotate(q, v) -> np.ndarray:
    qv = np.array([*v, 0.0])
    conj = np.array([-q[0], -q[1], -q[2], q[3]])
    return quat_mul(quat_mul(q, qv), conj)[:3]


def rpy_to_quat(rpy) -> np.ndarray:
    """URDF rpy (fixed-axis roll about x, then pitch about y, then yaw about z) as xyzw."""
    r, p, y = (0.5 * float(a) for a in rpy)
    qx = np.array([math.sin(r), 0.0, 0.0, math.cos(r)])
    qy = np.array([0.0, math.sin(p), 0.0, math.cos(p)])
    qz = np.array([0.0, 0.0, math.sin(y), math.cos(y)])
    return quat_mul(qz, quat_mul(qy, qx))


def axis_angle_quat(axis, angle: float) -> np.ndarray:
    u = np.asarray(axis, dtype=float)
    u = u / np.linalg.norm(u)
    s = math.sin(0.5 * angle)
    return np.array([u[0] * s, u[1] * s, u[2] * s, math.cos(0.5 * angle)])


def joint_transform(j: UrdfJoint, q: float = 0.0) -> Transform:
    """parent -> child of one joint at position q: the origin, then the joint's motion.
    (Scalar arithmetic: this runs for every joint frame published.)"""
    if j.type in ('revolute', 'continuous'):
        sn, c = math.sin(0.5 * q), math.cos(0.5 * q)
        return j.parent, j.child, j.xyz.copy(), quat_mul(j.q0, (j.axis[0] * sn, j.axis[1] * sn, j.axis[2] * sn, c))
    if j.type == 'prismatic':
        return j.parent, j.child, j.xyz + j.slide * q, j.q0.copy()
    return j.parent, j.child, j.xyz.copy(), j.q0.copy()


def moving_transforms(joints: list[UrdfJoint], positions: dict) -> list[Transform]:
    """robot_state_publisher's /tf for the joints named in ``positions`` (name -> value)."""
    return [joint_transform(j, float(positions[j.name])) for j in joints
            if j.type in ('revolute', 'continuous', 'prismatic') and j.name in positions]


def fixed_transforms(joints: list[UrdfJoint]) -> list[Transform]:
    """robot_state_publisher's /tf_static: every fixed joint."""
    return [joint_transform(j) for j in joints if j.type == 'fixed']


def floating_joint(joints: list[UrdfJoint]) -> UrdfJoint | None:
    """The (first) floating joint: its child's pose must come from elsewhere."""
    return next((j for j in joints if j.type == 'floating'), None)


def quat_from_z(direction) -> np.ndarray:
    """Shortest rotation taking +z onto ``direction`` (xyzw): the half-way quaternion
    (z x d, 1 + z.d) normalised; the antiparallel case turns about x."""
    dx, dy, dz = (float(v) for v in direction)
    n = math.sqrt(dx * dx + dy * dy + dz * dz)
    dx, dy, dz = dx / n, dy / n, dz / n
    w = 1.0 + dz
    if w < 1e-12:
        return np.array([1.0, 0.0, 0.0, 0.0])
    m = math.sqrt(dx * dx + dy * dy + w * w)
    return np.array([-dy / m, dx / m, 0.0, w / m])


def quats_from_z(directions) -> np.ndarray:
    """``quat_from_z`` of each row of ``directions`` (N, 3), the same arithmetic on columns: one
    numpy pass instead of N calls (the kinematics node's six legs, at 50 Hz in its frame)."""
    d = np.asarray(directions, dtype=float)
    dx, dy, dz = d[:, 0], d[:, 1], d[:, 2]
    n = np.sqrt(dx * dx + dy * dy + dz * dz)
    dx, dy, dz = dx / n, dy / n, dz / n
    w = 1.0 + dz
    m = np.sqrt(dx * dx + dy * dy + w * w)
    with np.errstate(invalid='ignore', divide='ignore'):     # (0/0 only in rows replaced below)
        out = np.column_stack((-dy / m, dx / m, np.zeros_like(w), w / m))
    out[w < 1e-12] = (1.0, 0.0, 0.0, 0.0)           # antiparallel: turn about x
    return out


_LEGS = tuple(f'leg_{i + 1}' for i in range(6))


def hexapod_leg_frames(base: str, sliders: np.ndarray, joints: np.ndarray) -> list[Transform]:
    """``leg_1..6``: origin at the slider's joint centre, z towards the platform joint (the
    points of ``hil_core.hexaslide.chain_points``)."""
    sliders = np.array(sliders, dtype=float)          # (a copy: the rows belong to the frames)
    quats = quats_from_z(np.asarray(joints, dtype=float) - sliders)
    return [(base, _LEGS[i], sliders[i], quats[i]) for i in range(len(sliders))]


def compose(a: Transform, b: Transform) -> Transform:
    """a (p -> m) then b (m -> c) = p -> c."""
    return a[0], b[1], a[2] + quat_rotate(a[3], b[2]), quat_mul(a[3], b[3])
