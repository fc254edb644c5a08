"""The mock hardware node's parameters: its Param table (the only place they are declared, with
the watchdog's table, ``hil_sim.mock_hardware.watchdog.PARAMS``, and every plant's gains as
``hil_core.drives.plants`` declares them); the generated page docs/parameters/mock_hardware.md
and the config files are checked against it. ``hil_sim.mock_hardware.setup`` builds the robot,
the controller and the plant from the validated values."""
from __future__ import annotations

from hil_core.drives.plants import DEFAULT_PLANT, PLANT_PARAM, PLANTS, plant_gains
from hil_core.supervision.timing import HIGH_LEVEL_PERIOD
from hil_nodes.framework.param_table import Param
from hil_sim.mock_hardware.watchdog import PARAMS as WATCHDOG_PARAMS


def _gain_params() -> tuple:
    """Every plant's gains as parameters (flat names; the plant reads its own)."""
    out, seen = [], set()
    for name in PLANTS:
        for g in plant_gains(name):
            if g.name not in seen:
                seen.add(g.name)
                out.append(Param(g.name, g.type, g.default, g.description, range=g.range, length=g.length))
    return tuple(out)


PARAMS = (
    # the robot (fixed for the node's life: a change needs a new node)
    Param('robot_description', str, '', 'URDF with a <ros2_control> block: a file (relative to the data tree) '
          'or the URDF text', read_only=True),
    Param('ros2_control', str, '', "name of the <ros2_control> block ('' = the only one)", read_only=True),
    Param('controller', str, '', 'the emulated controller: its name in controllers_file (its type decides JTC '
          'or forward_command_controller, its name the command topic)', read_only=True),
    Param('controllers_file', str, '', "controllers YAML ('' = config/controllers.yaml of the data tree)",
          read_only=True),
    Param('plant', str, '', f"plant model ('' = the hardware <param name=\"{PLANT_PARAM}\">, else "
          f'{DEFAULT_PLANT})', choices=('', *PLANTS), read_only=True),
    Param('initial_positions', 'float[]', [], 'initial joint positions (empty = the URDF initial_value)'),
    # pacing
    Param('frame_period', float, HIGH_LEVEL_PERIOD, 'frame T (s): one lockstep frame, a whole multiple of the '
          "plant's setpoint period", range=(1e-5, 1.0)),
    Param('lockstep_timeout', float, 0.5, 'wall s to wait for the command of a frame before it counts as late',
          range=(1e-3, 60.0), dynamic=True),
    Param('lockstep_late', str, 'brake', 'what a lockstep frame whose command is late does: brake (the watchdog\'s '
          'controlled stop, for good) or hold (stop following dead and go on: diagnosis only)',
          choices=('brake', 'hold')),
    Param('time_scale', float, 1.0, 'sim s per wall s; in lockstep an upper bound (0 = as fast as possible), '
          'in real time the pace (must be > 0)', range=(0.0, 1000.0), dynamic=True),
    Param('start_time', float, 0.0, 'sim time t_0 of the first frame (s)', range=(0.0, 1e6)),
    Param('servo_link', bool, True, 'real time, forward command controller: run a control law that a node of '
          'this process offers on the command topic at every plant step (hil_nodes.runtime.servo_link)'),
    # faults
    Param('disable_commands', bool, False, 'frozen feedback (GenericSystem disable_commands): commands are taken '
          'but never reach the plant, whose state stays', dynamic=True),
    *WATCHDOG_PARAMS,
    *_gain_params(),
)
# changes that need no new plant (pacing, frozen feedback): the simulation goes on through them
REBUILD_EXEMPT = {'time_scale', 'lockstep_timeout', 'disable_commands'}
