"""Hexaslide: kinematics of the 6-PUS Hexafloat robot (seed 001 eq. 1-2, tables 1-3; seed 000 FK).

Public API (import from ``hil_core.hexaslide``):

* :class:`HexaslideGeometry`, :func:`load_geometry` ('hexaslide_scaled' | 'hexaslide_full'),
  :func:`home_pose`, ``JOINT_NAMES`` (``slider_1..6``);
* :func:`inverse_kinematics` -> :class:`IKResult` (vectorised; reason codes ``OK``,
  ``NO_REAL_SOLUTION``, ``SLIDER_STROKE``, ``PASSIVE_JOINT_RANGE``, ``INVALID_INPUT``);
  compiled (numba), with its plain-numpy oracle :func:`inverse_kinematics_numpy`;
  :func:`hexaslide_ik`: the same IK as the time base's callable ``(N, 7) -> (q, ok)``;
* :func:`inverse_jacobian` (``qdot = Jinv @ [v; w]``), :func:`kinetostatic_index`;
* :class:`ForwardKinematics` (``method='newton' | 'jfmd'``) -> :class:`FKResult`; compiled,
  with its plain-Python oracle :class:`ForwardKinematicsNumpy`;
* :func:`warm_up`: compile or load the kernels now (seconds on a first run, then milliseconds
  from the on-disk cache) instead of in the first real-time call;
* :func:`chain_points` (slider and platform joint centres, for drawing the legs);
* pose sets over the table-3 nominal box: :func:`box_corners`, :func:`random_poses`,
  :func:`sinusoid_trajectory`, :func:`poses_from_offsets`.
"""
from .forward import ForwardKinematics
from .forward_numpy import FKResult, ForwardKinematicsNumpy
from .geometry import (JOINT_NAMES, ROBOTS, HexaslideGeometry, build_geometry, home_pose,
                       load_geometry)
from .inverse import (INVALID_INPUT, NO_REAL_SOLUTION, OK, PASSIVE_JOINT_RANGE, REASON_TEXT,
                      SLIDER_STROKE, IKResult, chain_points, hexaslide_ik, inverse_jacobian,
                      inverse_kinematics, inverse_kinematics_numpy, kinetostatic_index)
from .workspace import box_corners, poses_from_offsets, random_poses, sinusoid_trajectory

__all__ = ['FKResult', 'ForwardKinematics', 'ForwardKinematicsNumpy', 'inverse_kinematics_numpy', 'warm_up',
           'JOINT_NAMES', 'ROBOTS', 'HexaslideGeometry',
           'build_geometry', 'home_pose', 'load_geometry', 'INVALID_INPUT', 'NO_REAL_SOLUTION',
           'OK', 'PASSIVE_JOINT_RANGE', 'REASON_TEXT', 'SLIDER_STROKE', 'IKResult', 'chain_points',
           'hexaslide_ik', 'inverse_jacobian', 'inverse_kinematics', 'kinetostatic_index', 'box_corners',
           'poses_from_offsets', 'random_poses', 'sinusoid_trajectory']


def warm_up() -> float:
    """Compile or load the IK and FK kernels; seconds taken (0 when already done)."""
    from . import forward, inverse
    return inverse.warm_up() + forward.warm_up()
