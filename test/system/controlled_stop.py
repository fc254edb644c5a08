"""The slider motion of a recorded run around its FAULT, for the tests that end a run in FAULT
and check the controlled stop (test_slow_node_fault.py, test_stage_exception_fault.py)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hil_nodes.recorder.bag import read_messages

T = 0.0025            # s, frame


@dataclass
class StopFigures:
    velocity: np.ndarray     # (N, 6) slider velocities of the frames, in stamp order
    stamps: np.ndarray       # (N,) their sim times (s)
    at_fault: int            # the first frame recorded at or after /hil/mode went FAULT

    @property
    def accel(self) -> np.ndarray:
        return np.abs(np.diff(self.velocity, axis=0)) / T

    @property
    def speed_at_fault(self) -> float:
        return float(np.max(np.abs(self.velocity[self.at_fault])))


def stop_figures(bag) -> StopFigures:
    """/joint_states velocities (t_0 re-published before the first command taken once) and the
    frame of the first FAULT on /hil/mode; AssertionError if the run has no FAULT."""
    frames, fault_wall = [], None
    for topic, wall, msg in read_messages(bag, ['/joint_states', '/hil/mode']):
        if topic == '/hil/mode':
            if msg.data == 'FAULT' and fault_wall is None:
                fault_wall = wall
            continue
        stamp = msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9
        if frames and stamp <= frames[-1][0]:
            continue
        frames.append((stamp, wall, np.array(msg.velocity)))
    assert fault_wall is not None, 'no FAULT on /hil/mode'
    at_fault = next(i for i, (_, wall, _) in enumerate(frames) if wall >= fault_wall)
    return StopFigures(np.array([v for _, _, v in frames]), np.array([s for s, _, _ in frames]), at_fault)
