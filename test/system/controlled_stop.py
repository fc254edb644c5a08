"""The slider motion of a recorded run around its FAULT and the controlled-stop checks, for the
tests that end a run in FAULT (test_slow_node_fault.py, test_stage_exception_fault.py)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hil_nodes.recorder.bag import read_messages

T = 0.0025            # s, frame
A_MAX = 6.0           # m/s^2, config/planner.yaml a_max (translation): the fault matrix's bound


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


def assert_controlled_stop(bag, min_frames: int, moving: str, label: str, reason: str) -> StopFigures:
    """The run's FAULT came while the sliders moved (``moving``: what was moving) and stopped
    them in a controlled way: at least ``min_frames`` frames, every slider acceleration within
    A_MAX, at rest at the end (no jump). Prints the figures under ``label``."""
    stop = stop_figures(bag)
    assert len(stop.velocity) > min_frames
    assert stop.speed_at_fault > 1e-3, f'{moving} when the FAULT came'
    assert np.max(stop.accel) <= A_MAX, f'peak slider acceleration {np.max(stop.accel):.2f} m/s^2'
    assert np.max(np.abs(stop.velocity[-1])) < 1e-4                 # at rest at the end, no jump
    print(f"{label}: {reason}; speed at FAULT {stop.speed_at_fault * 1e3:.1f} mm/s, "
          f"peak acceleration {np.max(stop.accel):.2f} m/s^2, FAULT at sim {stop.stamps[stop.at_fault]:.3f} s")
    return stop
