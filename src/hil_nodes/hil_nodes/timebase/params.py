"""The timebase node's parameters: its Param table (the only place they are declared; the
generated page docs/parameters/timebase.md and the config files are checked against it), the one
mapping from the validated values to ``TimeBaseConfig``, and the rule for the designed W-R
distance that the node's health counters and the report both use."""
from __future__ import annotations

from hil_core.hexaslide import JOINT_NAMES
from hil_core.supervision.timing import HIGH_LEVEL_PERIOD, SEGMENTATION_PERIOD, SERVO_PERIOD
from hil_core.timebase import PREFILTERS, TimeBaseConfig
from hil_nodes.framework.param_table import ConfigFields, Param

PARAMS = (
    Param('robot', str, 'hexaslide_scaled', 'geometry for the inverse kinematics (or a yaml path)'),
    Param('joint_names', 'str[]', list(JOINT_NAMES), 'joint names of the command, IK order', length=6),
    Param('move_time', float, HIGH_LEVEL_PERIOD, 'T: high-level period = one move (s)', range=(1e-4, 1.0)),
    Param('segmentation_time', float, SEGMENTATION_PERIOD, 'h: segmentation move time (s), T/h integer',
          range=(1e-5, 1.0)),
    Param('servo_period', float, SERVO_PERIOD, 'Ts: servo period (s), h/Ts integer', range=(1e-5, 1.0)),
    Param('buffer_size', int, 6, 'ring buffer slots (poses)', range=(3, 64)),
    Param('default_distance', int, 2, 'default W-R index distance (poses)', range=(1, 32)),
    Param('time_base_control', bool, True, 'adapt the interpolation time per servo cycle'),
    Param('time_base_step', float, 0.01, 'time-base step, fraction of the servo period (1/step integer)',
          range=(0.001, 0.1)),
    Param('gentle_steps', int, 2, 'time-base steps allowed before escalating', range=(1, 50)),
    Param('max_steps', int, 10, 'bound of the time-base distortion in steps', range=(1, 50)),
    Param('patience', int, 4, 'servo cycles outside the default before escalating', range=(1, 1000)),
    Param('prefilter', str, 'exact', "B-spline control points: 'exact' (cubics exact) or 'none'",
          choices=PREFILTERS),
    Param('max_gap_fill', int, 2, 'missing references filled by interpolation', range=(1, 16)),
    Param('extrapolate_moves', int, 1, 'underrun: moves continued at constant velocity before holding',
          range=(0, 4)),
    Param('lead_frames', int, 1, 'real time: frames the reader clock runs ahead of the wall clock '
          '(each message then also repeats the previous frame: 8 points)', range=(0, 1)),
    Param('frame_wait', float, 1.0, 'real time: how long a frame waits past its time for its own '
          'reference, as a fraction of the lead (the message still reaches the drives in time)',
          range=(0.0, 1.0)),
    Param('max_catchup', int, 10, 'real time: late frames produced at once before the oldest are skipped '
          '(10: a stall of 25 ms at 400 Hz, as the mock drives make up; hil_sim.mock_hardware.pacing)',
          range=(1, 100)),
    # status_period (common, base): wall s between metric statuses
    Param('warn_interval', float, 1.0, 'wall s between repeated warnings of one kind', range=(0.0, 60.0)),
)

# the engine's 'step' is the time-base step: the parameter's name says which step it is
TIMEBASE_CONFIG = ConfigFields(TimeBaseConfig, renamed={'step': 'time_base_step'})


def timebase_config(p) -> TimeBaseConfig:
    """The time base's configuration for the validated values ``p`` (ValueError if refused)."""
    return TIMEBASE_CONFIG.build(p)


def designed_distance(p) -> int:
    """The W-R index distance at the designed delay: ``default_distance`` in lockstep; in real
    time the reader clock runs ``lead_frames`` ahead of the wall clock and reads that many poses
    further on (the delay, reader clock - reproduced stamp, stays the same), so the distance is
    that much smaller: 1 with the defaults."""
    return p.default_distance - (0 if p.lockstep else p.lead_frames)
