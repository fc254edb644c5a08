"""The space_plant node's parameters: its Param table (the only place they are declared; the
generated page docs/parameters/space_plant.md and the config files are checked against it) and
the one mapping from the validated values to the plant's ``SatelliteParams`` and ``ControlGains``."""
from __future__ import annotations

from hil_core.iiwa.kinematics import JOINT_NAMES
from hil_core.space.control import ControlGains
from hil_core.space.model import SatelliteParams
from hil_nodes.framework.param_table import ConfigFields, Param

EE_DES = [1.448, -0.236, 0.094]            # seed 002 desired EE + our mount offset (docs)
EE_DES_EULER_DEG = [-88.38, -37.27, -56.99]
G3 = dict(length=3)

PARAMS = (
    Param('urdf', str, '', "iiwa URDF ('' = urdf/iiwa14.urdf of the source tree)"),
    Param('joint_names', 'str[]', list(JOINT_NAMES), "the arm's joints in /joint_states and the position "
          "command's order (the URDF's joints 1-7 in order; lbr_fri_ros2_stack's lbr_A1 .. lbr_A7 in hardware mode)",
          length=7),
    Param('satellite_mass', float, 100.0, 'satellite mass (kg), seed 002: 100', range=(1e-3, 1e6)),
    Param('satellite_inertia', 'float[]', [2.83, 6.08, 7.42, 0.0, 0.0, 0.0],
          'Ixx Iyy Izz Ixy Ixz Iyz about the satellite CoM (kg m^2), seed 002', length=6, range=(-1e6, 1e6)),
    Param('mount_xyz', 'float[]', [0.5, 0.0, 0.0], 'r_q: arm base in satellite axes (m)', range=(-100.0, 100.0), **G3),
    Param('mount_rpy', 'float[]', [0.0, 1.5707963267948966, 0.0], 'arm base orientation R_q (rad)',
          range=(-7.0, 7.0), **G3),
    Param('kv', 'float[]', [1.0] * 3, 'K_v (1/s), eq. 10', range=(0.0, 100.0), **G3),
    Param('kw', 'float[]', [1.0] * 3, 'K_w (1/s), eq. 10', range=(0.0, 100.0), **G3),
    Param('ki_v', 'float[]', [0.5] * 3, 'integral gains, position (1/s^2); 0 = seed P law', range=(0.0, 100.0), **G3),
    Param('ki_w', 'float[]', [0.5] * 3, 'integral gains, orientation (1/s^2)', range=(0.0, 100.0), **G3),
    Param('kd', float, 0.0, 'derivative gain (s)', range=(0.0, 10.0)),
    Param('integral_limit', float, 0.5, 'anti-windup bound per axis', range=(0.0, 100.0)),
    Param('orientation_error', str, 'euler_zyx', 'eq. 10 Euler difference or rotation vector',
          choices=('euler_zyx', 'rotvec')),
    Param('sigma_threshold', float, 0.05, 'damping starts below this sigma_min of J_d', range=(0.0, 10.0)),
    Param('lambda_max', float, 0.05, 'maximum damping of the pseudo-inverse', range=(0.0, 10.0)),
    Param('velocity_scale', float, 0.5, 'fraction of the URDF joint velocity limits', range=(0.01, 1.0)),
    Param('acceleration_max', 'float[]', [5.0] * 7, 'joint acceleration limits (rad/s^2)', length=7,
          range=(0.01, 1000.0)),
    Param('position_margin', float, 0.05, 'joint limit margin (rad)', range=(0.0, 0.5)),
    Param('use_measured_velocity', bool, True, 'use JointState.velocity when present'),
    Param('velocity_cutoff_hz', float, 50.0, 'low-pass of the derivative when no velocity is measured',
          range=(0.1, 1000.0)),
    Param('setpoint_position', 'float[]', EE_DES, 'desired inertial EE position (m)', range=(-1e3, 1e3), **G3),
    Param('setpoint_euler_zyx_deg', 'float[]', EE_DES_EULER_DEG, 'desired EE attitude [z, y, x] (deg)',
          range=(-360.0, 360.0), **G3),
    Param('max_gap', float, 0.05, 'largest accepted stamp gap between joint states (s)', range=(1e-4, 10.0)),
    Param('stale_timeout', float, 0.5, 'wall s without joint states before a fault', range=(0.01, 60.0)),
    Param('jump_margin', float, 0.02, 'rad allowed beyond v_max * dt between samples', range=(0.0, 1.0)),
    Param('world_frame', str, 'world', 'inertial frame id'),
    Param('satellite_frame', str, 'satellite', 'satellite body frame id'),
    Param('marker_every', int, 50, 'publish markers every N frames', range=(1, 100000)),
    Param('tf_frames_rate', float, 50.0, 'rate of the arm joint frames on /tf in sample time (Hz, 0 = off; '
          'the satellite frame goes with every sample)', range=(0.0, 1000.0)),
    Param('tf_joint_frames', bool, True, "publish the arm's URDF joint frames and fixed joints as "
          'robot_state_publisher would (false where one runs)'),
    # status_period (common, base): wall s between summary statuses
)

# the satellite's fields are named within SatelliteParams; the node's names say whose they are
SATELLITE = ConfigFields(SatelliteParams, renamed={'mass': 'satellite_mass', 'inertia': 'satellite_inertia'})
# the derivative's low-pass stays at the law's own 20 Hz (its default): not a node parameter
GAINS = ConfigFields(ControlGains, fixed=frozenset({'derivative_cutoff_hz'}))


def plant_config(p) -> tuple[SatelliteParams, ControlGains]:
    """The satellite and the control law's gains for the validated values ``p``."""
    return SATELLITE.build(p), GAINS.build(p)
