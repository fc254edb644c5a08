"""The scripted reference source's parameters: its Param table (the only place they are
declared; the generated page docs/parameters/reference_source.md and the config files are checked
against it) and the one mapping from the validated values to the script's ``ScriptConfig``."""
from __future__ import annotations

from hil_core.drives.scripted_motion import ScriptConfig
from hil_core.supervision.timing import HIGH_LEVEL_PERIOD, SERVO_PERIOD
from hil_nodes.framework.param_table import ConfigFields, Param

JOINTS = [f'slider_{i}' for i in range(1, 7)]

PARAMS = (
    Param('joint_names', 'str[]', JOINTS, 'commanded joints, in command order',
          check=lambda v: None if v and len(set(v)) == len(v) else 'needs unique joint names'),
    Param('amplitudes', 'float[]', [0.01] * 6, 'sine amplitude per joint (m)', range=(0.0, 1.0)),
    Param('frequencies', 'float[]', [0.3, 0.4, 0.5, 0.6, 0.7, 0.8], 'sine frequency per joint (Hz)',
          range=(0.0, 50.0)),
    Param('seed', int, 0, 'seed of the random sine phases (same seed = same run)', range=(0, 2**31 - 1)),
    Param('velocity_max', 'float[]', [0.2] * 6, 'velocity limit of homing/return moves (m/s)',
          range=(1e-6, 100.0)),
    Param('acceleration_max', 'float[]', [2.0] * 6, 'acceleration limit of homing/return moves (m/s^2)',
          range=(1e-6, 1e4)),
    Param('fault_deceleration', 'float[]', [2.0] * 6, 'braking deceleration on FAULT (m/s^2)',
          range=(1e-6, 1e4)),
    Param('sync_duration', float, 2.0, 'duration of the synchronization ramp (s)', range=(1e-3, 600.0)),
    Param('homing_min_duration', float, 1.0, 'shortest homing / return-home move (s)', range=(1e-3, 600.0)),
    Param('frame_period', float, HIGH_LEVEL_PERIOD, 'frame T (s)', range=(1e-4, 1.0)),
    Param('servo_period', float, SERVO_PERIOD, 'spacing of the command points (s)', range=(1e-5, 0.1)),
    Param('robot_description', str, 'urdf/hexafloat_scaled.urdf', "URDF whose <ros2_control> position "
          "limits are the joints' travel, the workspace of the via points (a file of the data tree)",
          check=lambda v: None if v else 'must not be empty'),
    Param('via_points', 'float[]', [], "the operator's motion command, taken in RUNNING only: points of "
          '1 + one value per joint (time_from_start s, positions m), the path from the current setpoint through '
          "them is checked against the travel and the script's velocity/acceleration limits and refused with "
          "the reason otherwise (ros2 param set, the HMI's 'Via points')", dynamic=True),
)

# the script starts from home = every joint at 0
SCRIPT_CONFIG = ConfigFields(ScriptConfig, derived={'home': lambda p: (0.0,) * len(p.joint_names)})


def script_config(p) -> ScriptConfig:
    """The script's configuration for the validated values ``p``."""
    return SCRIPT_CONFIG.build(p)
