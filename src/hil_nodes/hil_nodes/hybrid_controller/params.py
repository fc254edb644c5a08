"""The hybrid_controller node's parameters: its Param table (the only place they are declared;
the generated page docs/parameters/hybrid_controller.md and the config files are checked against
it) and the files its values name: the robot and controller parameters (``hil_core.hybrid5``'s
configuration, read from ``params_file``) and the G-code program."""
from __future__ import annotations

import pathlib

from hil_core.data_paths import data_root
from hil_core.hybrid5 import JOINT_NAMES
from hil_core.hybrid5.leg_travel import Stroke
from hil_core.hybrid5.params import Hybrid5Params, load_params
from hil_nodes.framework.param_table import Param

JOINTS = list(JOINT_NAMES)
DEFAULT_PARAMS_FILE = 'config/hybrid5.yaml'
DEFAULT_GCODE_FILE = 'config/gcode/agh.nc'
DEFAULT_URDF = 'urdf/hybrid5.urdf'

PARAMS = (
    Param('params_file', str, '', f"robot + controller parameters ('' = {DEFAULT_PARAMS_FILE})"),
    Param('gcode_file', str, '', f"path program ('' = {DEFAULT_GCODE_FILE}); a new one is taken while the "
          "node is inactive, or active in IDLE (the robot holds; the next run homes to its start), checked as "
          "at configure (parser, path) and refused with the reason otherwise (ros2 param set, the HMI's "
          "'Load program')", dynamic=True),
    Param('jog', str, '', "the operator's jog: one straight move as a G-code line relative to where the robot "
          "holds (mm, deg; G1 needs F), e.g. 'X2 Y-1 F600'; taken while active in IDLE at rest, checked by the "
          "program parser, refused with the reason otherwise; each set is one jog ('' = none)", dynamic=True),
    Param('robot_description', str, DEFAULT_URDF, "the robot's URDF (a path, relative: in the data tree): the "
          "legs' travel, its <limit lower upper> of the three leg joints, that a program, the homing move and a "
          'jog are checked against (refused with the leg, the length and where)'),
    Param('joint_names', 'str[]', JOINTS, 'joints: 3 legs then tilt, rotary', length=5,
          check=lambda v: None if len(set(v)) == 5 else 'joint names must be unique'),
    Param('home', 'float[]', [0.0, 0.0, 0.85, 0.0, 0.0], 'home: platform x, y, z (m), tilt, rotary (rad)',
          length=5, range=(-3.2, 3.2)),
    Param('homing_feed', float, 2.0, 'feed of homing / return moves (m/min)', range=(1e-3, 60.0)),
    Param('sync_time', float, 0.02, 'hold at the path start before RUNNING (s)', range=(1e-4, 10.0)),
    Param('fault_deceleration', 'float[]', [1.0, 1.0, 1.0, 5.0, 5.0],
          'braking deceleration per joint on FAULT / stop (m/s^2 legs, rad/s^2 table)', length=5,
          range=(1e-3, 1e4)),
    Param('force_max', float, 4000.0, 'leg force saturation (N)', range=(1.0, 1e6)),
    Param('torque_max', float, 400.0, 'table torque saturation (N m)', range=(0.1, 1e5)),
    Param('max_tracking_error', float, 1e-3, 'leg error (m) or table error (rad) that raises a fault',
          range=(1e-7, 1.0)),
    Param('float32', bool, False, 'run the tracking algorithm in float32 (as the seed\'s DSP/FPGA)'),
    Param('servo_link', bool, True, 'real time: offer the law to mock drives in this process, which then run '
          'it at every plant step (hil_nodes.runtime.servo_link); false: always the message loop'),
    # status_period (common, base): the summary status period; bad-input statuses are throttled to it
)


def _resolve(path: str, default: str) -> pathlib.Path:
    p = pathlib.Path(path or default)
    return p if p.is_absolute() or p.exists() else data_root() / p   # relative: in the data tree


def robot_params(p) -> Hybrid5Params:
    """The robot and controller configuration the values ``p`` name (``params_file``)."""
    return load_params(_resolve(p.params_file, DEFAULT_PARAMS_FILE))


def stroke(p) -> Stroke:
    """The legs' travel from the URDF the values ``p`` name (``robot_description``, ``joint_names``)."""
    return Stroke.from_urdf(_resolve(p.robot_description, DEFAULT_URDF).read_text(), p.joint_names[:3])


def gcode_path(p) -> pathlib.Path:
    """The path program the values ``p`` name (``gcode_file``)."""
    return _resolve(p.gcode_file, DEFAULT_GCODE_FILE)
