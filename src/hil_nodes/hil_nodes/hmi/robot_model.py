"""What the view draws of a robot, from its URDF: each link's visuals (box, cylinder, sphere;
meshes are listed but not drawn: the suite's URDFs use primitives only) and the joints whose
positions move them. Link poses come from a ``TfTree`` that holds /tf, /tf_static and the
URDF joints at the joint positions of /joint_states, like rviz's RobotModel display (the
floating joint of a parallel robot or a satellite has no joint state: its child's pose comes
from /tf, published by the kinematics or space_plant node)."""
from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass, field

import numpy as np

from hil_core.maths.tf_frames import UrdfJoint, joint_transform, rpy_to_quat, urdf_joints
from hil_nodes.hmi.tf_tree import TfTree

DEFAULT_RGBA = (0.7, 0.7, 0.72, 1.0)
MOVING = ('revolute', 'continuous', 'prismatic')


@dataclass(frozen=True)
class Visual:
    link: str
    kind: str                      # box | cylinder | sphere | mesh
    size: tuple                    # box (x, y, z); cylinder (radius, length); sphere (radius,); mesh ()
    xyz: np.ndarray
    quat_xyzw: np.ndarray
    rgba: tuple


@dataclass
class RobotModel:
    name: str
    links: list[str]
    joints: list[UrdfJoint]
    visuals: list[Visual] = field(default_factory=list)

    @property
    def root(self) -> str:
        children = {j.child for j in self.joints}
        return next(link for link in self.links if link not in children)

    @property
    def joint_names(self) -> list[str]:
        return [j.name for j in self.joints if j.type in MOVING]

    def joint_edges(self, positions: dict[str, float]) -> list[tuple]:
        """parent -> child of every joint but the floating ones, at ``positions`` (0 where a
        moving joint has none yet)."""
        return [joint_transform(j, float(positions.get(j.name, 0.0))) for j in self.joints if j.type != 'floating']

    def link_poses(self, positions: dict[str, float], tf: TfTree) -> tuple[str, dict]:
        """(fixed frame, link -> (xyz, quat xyzw)) with the URDF joints at ``positions`` over
        the edges of ``tf``; links that do not hang below the fixed frame yet are left out."""
        tree = tf.copy()
        tree.update(self.joint_edges(positions))
        fixed = tree.root_of(self.root)
        poses = {}
        for link in self.links:
            pose = tree.pose(link, fixed)
            if pose is not None:
                poses[link] = pose
        return fixed, poses


def _floats(text: str | None, default: str) -> np.ndarray:
    return np.array([float(v) for v in (text or default).split()])


def load_model(urdf_text: str) -> RobotModel:
    root = ET.fromstring(urdf_text)
    materials = {}
    for m in root.findall('material'):
        color = m.find('color')
        if color is not None:
            materials[m.get('name')] = tuple(_floats(color.get('rgba'), '0.7 0.7 0.7 1'))
    links, visuals = [], []
    for link in root.findall('link'):
        name = link.get('name')
        links.append(name)
        for vis in link.findall('visual'):
            origin = vis.find('origin')
            xyz = _floats(origin.get('xyz') if origin is not None else None, '0 0 0')
            rpy = _floats(origin.get('rpy') if origin is not None else None, '0 0 0')
            rgba = DEFAULT_RGBA
            mat = vis.find('material')
            if mat is not None:
                color = mat.find('color')
                rgba = tuple(_floats(color.get('rgba'), '0.7 0.7 0.7 1')) if color is not None \
                    else materials.get(mat.get('name'), DEFAULT_RGBA)
            geom = vis.find('geometry')
            shape = next(iter(geom), None) if geom is not None else None
            if shape is None:
                continue
            if shape.tag == 'box':
                size = tuple(_floats(shape.get('size'), '0.1 0.1 0.1'))
            elif shape.tag == 'cylinder':
                size = (float(shape.get('radius')), float(shape.get('length')))
            elif shape.tag == 'sphere':
                size = (float(shape.get('radius')),)
            else:
                size = ()
            visuals.append(Visual(name, shape.tag, size, xyz, np.asarray(rpy_to_quat(rpy), float), rgba))
    return RobotModel(root.get('name', ''), links, urdf_joints(urdf_text), visuals)
