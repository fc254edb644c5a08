"""Hexaslide (6-PUS Hexafloat) geometry: seed 001 tables 1-3 as a frozen dataclass.

The paper's tables lost their signs and the placement of the guides in the text layout; the
reconstruction used here (documented again in ``config/hexafloat_*.yaml``) is:

* three guide pairs, pair k on the axis at ``alpha_k`` = 0, 120, 240 deg; both guides of a
  pair point along ``u_k`` = (cos alpha_k, sin alpha_k, 0) (table 1: (1,0,0) x2,
  (-1/2, +sqrt(3)/2, 0) x2, (-1/2, -sqrt(3)/2, 0) x2), i.e. outward;
* guide i is the line through ``c_i = side_i * s * n_k`` (``n_k = z x u_k``, ``side`` =
  -1 for sliders 1, 3, 5 and +1 for 2, 4, 6), ``s`` = half-distance between base joints;
* platform joint i at ``b_i = R_p (cos(alpha_k + side_i theta_p), sin(...), 0)`` in the TCP
  frame (joint plane = TCP plane), ``theta_p`` measured from the pair axis;
* eq. 2 with the + root: the slider sits outboard of its platform joint (links do not cross
  the centre). The alternatives the layout leaves open (theta_p split in two halves, joint
  pairs between the guide pairs, the - root) either miss corners of the table-3 box, are badly
  conditioned there, or cross all links under the platform (comparison in the yaml files).

Slider joint values (``slider_1..6``) are displacements from home (CONTRACTS.md); the absolute
guide coordinate is ``q_abs = q_home + q``.
"""
from __future__ import annotations

import math
import pathlib
from dataclasses import dataclass

import numpy as np
import yaml

from hil_core.data_paths import DataNotFound, config_file, data_root

JOINT_NAMES = tuple(f'slider_{i}' for i in range(1, 7))
ROBOTS = ('hexaslide_scaled', 'hexaslide_full')
CONFIG_FILES = {'hexaslide_scaled': 'hexafloat_scaled.yaml', 'hexaslide_full': 'hexafloat_full.yaml'}


def _config_dir() -> pathlib.Path | None:
    try:
        return data_root() / 'config'
    except DataNotFound:
        return None


# config/ of the data tree (source checkout or share/hil_core of an install; None if neither)
CONFIG_DIR = _config_dir()


@dataclass(frozen=True, eq=False)
class HexaslideGeometry:
    """All geometric data of one Hexaslide (SI units; arrays are read-only)."""
    name: str
    home_height: float                 # z of the TCP at home above the base joint plane (table 2)
    half_distance: float               # s: half-distance between the base joint centres of a pair
    link_length: float                 # l
    platform_radius: float             # R_p
    platform_angle: float              # theta_p [rad]
    guide_directions: np.ndarray       # (6, 3) u_i (table 1)
    guide_origins: np.ndarray          # (6, 3) c_i: point of guide i where q_abs = 0
    platform_joints: np.ndarray        # (6, 3) b_i in the TCP frame
    q_home: np.ndarray                 # (6,) absolute guide coordinate of each slider at home
    stroke_min: np.ndarray             # (6,) slider limits, displacement from home [m]
    stroke_max: np.ndarray
    universal_limit: float             # max link deflection in the slider's universal joint [rad]
    spherical_limit: float             # max link deflection in the platform's spherical joint [rad]
    link_home: np.ndarray              # (6, 3) unit link directions at home (passive joint zero)
    workspace_half_range: np.ndarray   # (6,) table 3: surge, sway, heave [m], roll, pitch, yaw [rad]
    joint_names: tuple = JOINT_NAMES

    @property
    def home_position(self) -> np.ndarray:
        return np.array([0.0, 0.0, self.home_height])


def _readonly(a) -> np.ndarray:
    a = np.array(a, dtype=float)
    a.setflags(write=False)
    return a


def build_geometry(name: str, home_height: float, half_distance: float, link_length: float,
                   platform_radius: float, platform_angle_deg: float, guide_directions,
                   guide_side, stroke, universal_limit_deg: float, spherical_limit_deg: float,
                   workspace: dict) -> HexaslideGeometry:
    u = np.array(guide_directions, dtype=float)
    if u.shape != (6, 3) or not np.allclose(np.linalg.norm(u, axis=1), 1.0, atol=1e-9):
        raise ValueError('guide_directions must be six unit 3-vectors')
    if np.any(np.abs(u[:, 2]) > 1e-12):
        raise ValueError('guides must be horizontal (table 1: zero z components)')
    side = np.array(guide_side, dtype=float)
    if side.shape != (6,) or not np.all(np.abs(side) == 1.0):
        raise ValueError('guide_side must be six values of -1 or +1')
    for v in (home_height, half_distance, link_length, platform_radius):
        if not (math.isfinite(v) and v > 0):
            raise ValueError(f'lengths must be positive and finite, got {v}')
    n = np.stack([-u[:, 1], u[:, 0], np.zeros(6)], axis=1)          # z x u: lateral direction
    origins = side[:, None] * half_distance * n
    alpha = np.arctan2(u[:, 1], u[:, 0])
    ang = alpha + side * math.radians(platform_angle_deg)
    b = platform_radius * np.stack([np.cos(ang), np.sin(ang), np.zeros(6)], axis=1)
    d = np.array([0.0, 0.0, home_height]) + b - origins
    du = np.einsum('ij,ij->i', d, u)
    disc = du ** 2 - np.einsum('ij,ij->i', d, d) + link_length ** 2
    if np.any(disc <= 0):
        raise ValueError('home pose has no real inverse kinematics solution: check table 2 values')
    q_home = du + np.sqrt(disc)
    links = d - q_home[:, None] * u
    lo, hi = (float(x) for x in stroke)
    if not lo < 0.0 < hi:
        raise ValueError('slider stroke must contain the home position 0')
    ws = np.array([workspace['surge'], workspace['sway'], workspace['heave'],
                   math.radians(workspace['roll_deg']), math.radians(workspace['pitch_deg']),
                   math.radians(workspace['yaw_deg'])], dtype=float)
    return HexaslideGeometry(
        name=name, home_height=float(home_height), half_distance=float(half_distance),
        link_length=float(link_length), platform_radius=float(platform_radius),
        platform_angle=math.radians(platform_angle_deg), guide_directions=_readonly(u),
        guide_origins=_readonly(origins), platform_joints=_readonly(b), q_home=_readonly(q_home),
        stroke_min=_readonly(np.full(6, lo)), stroke_max=_readonly(np.full(6, hi)),
        universal_limit=math.radians(universal_limit_deg),
        spherical_limit=math.radians(spherical_limit_deg),
        link_home=_readonly(links / link_length), workspace_half_range=_readonly(ws))


def load_geometry(name: str, path=None) -> HexaslideGeometry:
    """Geometry 'hexaslide_scaled' or 'hexaslide_full' from config/hexafloat_{scaled,full}.yaml.

    ``path`` overrides the file (a lab's measured geometry); ``name`` may also be a yaml path.
    """
    if path is None:
        if name in CONFIG_FILES:
            path = config_file(CONFIG_FILES[name])
        elif str(name).endswith(('.yaml', '.yml')):
            path = pathlib.Path(name)
        else:
            raise ValueError(f'unknown hexaslide {name!r}: expected one of {list(ROBOTS)} or a yaml path')
    data = yaml.safe_load(pathlib.Path(path).read_text())
    try:
        return build_geometry(
            name=data.get('name', str(name)), home_height=data['home_height'],
            half_distance=data['half_distance'], link_length=data['link_length'],
            platform_radius=data['platform_radius'], platform_angle_deg=data['platform_angle_deg'],
            guide_directions=data['guide_directions'], guide_side=data['guide_side'],
            stroke=data['slider_stroke'], universal_limit_deg=data['universal_joint_limit_deg'],
            spherical_limit_deg=data['spherical_joint_limit_deg'],
            workspace=data['nominal_workspace'])
    except KeyError as exc:
        raise ValueError(f'{path}: missing key {exc}') from None


def home_pose(geom: HexaslideGeometry) -> np.ndarray:
    """TCP at home height, identity orientation: ``[0, 0, z_home, 0, 0, 0, 1]``."""
    return np.array([0.0, 0.0, geom.home_height, 0.0, 0.0, 0.0, 1.0])
