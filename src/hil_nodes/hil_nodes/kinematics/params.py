"""The kinematics node's parameters: its Param table (the only place they are declared; the
generated page docs/parameters/kinematics.md and the config files are checked against it) and
the frame its poses are in. The robot model itself is built from the values by
``hil_nodes.kinematics.robots.robot_adapter``."""
from __future__ import annotations

from hil_nodes.framework.param_table import Param

ROBOTS = ('hexaslide_scaled', 'hexaslide_full', 'iiwa14', 'hybrid5')
DEFAULT_FRAME = {'hexaslide_scaled': 'hexapod_base', 'hexaslide_full': 'hexapod_base', 'iiwa14': 'iiwa_link_0',
                 'hybrid5': 'hybrid5_base'}

PARAMS = (
    Param('robot', str, 'hexaslide_scaled', 'which robot', choices=ROBOTS),
    Param('geometry_file', str, '', 'hexaslide geometry yaml overriding config/hexafloat_<scale>.yaml'),
    Param('urdf_file', str, '', 'URDF published on /robot_description (default urdf/<robot>.urdf)'),
    Param('publish_description', bool, True, 'publish the URDF on /robot_description (latched), the stand-in '
          'for robot_state_publisher (false where one runs: one description owner)'),
    Param('frame_id', str, '', 'frame of poses (default hexapod_base, iiwa_link_0 for iiwa14)'),
    Param('fk_method', str, 'newton', "hexaslide FK: 'newton' (analytic Jacobian) or 'jfmd' (seed 000)",
          choices=('newton', 'jfmd')),
    Param('fk_tolerance', float, 1e-9, 'FK convergence tolerance (m, rad)', range=(1e-14, 1e-3)),
    Param('fk_max_iterations', int, 50, 'FK iteration limit per sample', range=(1, 1000)),
    Param('fk_predict', bool, True, 'warm start from a constant-velocity extrapolation of the two last '
          'estimates (periodic joint states) instead of the last estimate'),
    # the time base's name for the same throttle: one name for one meaning in every node
    Param('warn_interval', float, 0.5, 'at most one diagnostic per kind of bad input per interval '
          '(s wall; no flooding at 1 kHz), every occurrence is counted', range=(0.0, 60.0)),
    Param('stale_timeout', float, 1.0, 'no joint state for this long (wall s) while active: STALE '
          'diagnostic (no pose is published without joint states)', range=(0.01, 600.0)),
    Param('marker_rate', float, 30.0, 'MarkerArray rate limit in joint-sample time (Hz, 0 = off)',
          range=(0.0, 1000.0)),
    Param('tf_frames_rate', float, 50.0, 'rate of the joint and leg frames on /tf in joint-sample time '
          '(Hz, 0 = off); the platform frame goes with every joint sample', range=(0.0, 1000.0)),
    Param('tf_joint_frames', bool, True, 'publish the URDF joint frames as robot_state_publisher would '
          '(false where one runs)'),
    Param('ft_sensor_frame', str, 'ft_sensor', "F/T sensor frame at the Hexaslide TCP on /tf_static ('' = none)"),
)


def pose_frame(p) -> str:
    """The frame of the published poses: ``frame_id``, or the robot's base frame when it is ''."""
    return p.frame_id or DEFAULT_FRAME[p.robot]
