"""Timebase: medium and low levels of the Hexafloat motion planner (seed 000 sections 4.2-4.3).

* :class:`RingBuffer`: six six-component poses, write index W, read index R;
* :class:`TimeBaseControl`: per-servo-cycle interpolation time in 1 % steps of the servo period;
* :mod:`.blending`: merged triangular-velocity moves; :mod:`.bspline`: cubic B-spline to servo rate;
* :class:`TimeBaseEngine` / :class:`TimeBaseConfig`: the streaming pipeline with inverse
  kinematics of each segment point, compiled (numba; :func:`warm_up` compiles or loads it);
  :class:`TimeBaseEngineNumpy` is its plain-numpy twin and test oracle;
* :mod:`.faults`: seeded writer faults and a pure real-time simulation of writer + engine;
* :func:`hexaslide_ik`: the engine's IK callable for the Hexaslide (it lives with the robot's
  kinematics, ``hil_core.hexaslide.inverse``, and is offered here where the engine is built).
"""
from hil_core.hexaslide import hexaslide_ik

from .blending import blend, blend_history, triangle_profile
from .bspline import PREFILTERS, control_points, evaluate
from .buffer import RingBuffer, pose6_to_pose7, pose7_to_pose6
from .control import TimeBaseControl
from .engine import TimeBaseEngine, warm_up
from .engine_numpy import FrameOutput, TimeBaseEngineNumpy, TimeBaseConfig
from .faults import FaultSpec, WriterEvents, simulate, writer_events

__all__ = ['blend', 'blend_history', 'triangle_profile', 'PREFILTERS', 'control_points', 'evaluate',
           'RingBuffer', 'pose6_to_pose7', 'pose7_to_pose6', 'TimeBaseControl', 'FrameOutput',
           'TimeBaseConfig', 'TimeBaseEngine', 'TimeBaseEngineNumpy', 'warm_up', 'FaultSpec', 'WriterEvents',
           'hexaslide_ik',
           'simulate', 'writer_events']
