"""What the 3D view shows at one instant, whatever its source (the live graph or a bag): joint
positions, the transform tree, the F/T wrench at its sensor frame, the reference and the
achieved TCP pose. Plain data, filled by ``live.LiveView`` or ``timeline.Timeline``."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from hil_nodes.hmi.tf_tree import TfTree

# which topic gives which TCP, per system (the first one heard wins): a topic name from
# hil_nodes.topics, never written out here
from hil_nodes import topics

REFERENCE_TOPICS = (topics.PLANNER_SAFE_REFERENCE, topics.SPACE_EE_SETPOINT)
ACHIEVED_TOPICS = (topics.KINEMATICS_TCP_POSE, topics.SPACE_EE_POSE)
WRENCH_TOPICS = (topics.FT_WRENCH,)


@dataclass
class Pose:
    frame: str
    xyz: np.ndarray
    quat_xyzw: np.ndarray


@dataclass
class Wrench:
    frame: str
    force: np.ndarray
    torque: np.ndarray


@dataclass
class ViewState:
    positions: dict = field(default_factory=dict)      # joint name -> position
    tf: TfTree = field(default_factory=TfTree)
    wrench: Wrench | None = None
    reference: Pose | None = None
    achieved: Pose | None = None
    stamp: float = 0.0                                 # s, of the newest joint state shown
