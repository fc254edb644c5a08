"""What the planner gives out each frame (``trajectory_planner``, ``quiet_frame``): the pose and
twist of the frame, and events with a level."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from hil_core.supervision.modes import Event, HilMode

INFO, WARN, ERROR = 0, 1, 2


@dataclass
class PlannerEvent:
    name: str            # an hil_core.supervision.modes.Event value, or a planner-only notice
    message: str
    level: int = INFO
    values: dict = field(default_factory=dict)

    @property
    def is_hil_event(self) -> bool:
        return self.name in {e.value for e in Event}


@dataclass
class StepResult:
    pose: np.ndarray | None      # safe reference (7), None until the planner knows the robot pose
    twist: np.ndarray | None     # [v, w] (6), w = angular velocity in the base frame
    events: list
    phase: HilMode
