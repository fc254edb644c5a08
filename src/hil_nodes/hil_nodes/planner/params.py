"""The planner node's parameters: its Param table (the only place they are declared; the
generated page docs/parameters/planner.md and the config files are checked against it) and the
one mapping from the validated values to ``PlannerConfig``."""
from __future__ import annotations

from hil_core.planner.config import PlannerConfig, Workspace
from hil_core.supervision.timing import HIGH_LEVEL_PERIOD
from hil_nodes.bringup.system import repo_root
from hil_nodes.framework.param_table import ConfigFields, Param

_SIX = dict(length=6, range=(1e-6, 1e6))

PARAMS = (
    Param('robot', str, 'hexaslide_scaled', 'robot whose workspace file is used',
          choices=('hexaslide_scaled', 'hexaslide_full')),
    Param('workspace_file', str, '', 'workspace limits YAML (default config/workspace_<robot>.yaml)'),
    Param('period', float, HIGH_LEVEL_PERIOD, 'high-level period T = one frame (s)', range=(1e-4, 0.1)),
    Param('acceleration_limiter', str, 'asc', 'asc (seed 000 4.1.3) or ruckig (jerk-limited)',
          choices=('asc', 'ruckig')),
    Param('a_max', 'float[]', [6.0, 6.0, 6.0, 20.0, 20.0, 20.0], 'per-DOF acceleration limit (m/s^2, rad/s^2)', **_SIX),
    Param('v_max', 'float[]', [0.15, 0.1, 0.1, 1.0, 1.0, 1.0], 'per-DOF velocity limit (m/s, rad/s)', **_SIX),
    Param('j_max', 'float[]', [500.0, 500.0, 500.0, 2000.0, 2000.0, 2000.0], 'jerk limit of ruckig', **_SIX),
    Param('asc_bandwidth_hz', float, 1.5, 'ASC position loop bandwidth (Hz)', range=(0.01, 50.0)),
    Param('sync_duration', float, 1.0, 'synchronization ramp duration (s)', range=(1e-3, 60.0)),
    Param('ramp_shape', str, 'quintic', 'shape of sync/homing/return ramps', choices=('cubic', 'quintic', 'cosine')),
    Param('homing_min_duration', float, 1.0, 'shortest homing ramp (s)', range=(1e-3, 600.0)),
    Param('return_min_duration', float, 0.5, 'shortest return-home blend (s)', range=(1e-3, 600.0)),
    Param('k_n', float, 400.0, 'recovery: normal stiffness per unit mass (1/s^2)', range=(1e-3, 1e6)),
    Param('c_n', float, 40.0, 'recovery: normal damping per unit mass (1/s)', range=(0.0, 1e5)),
    Param('c_t', float, 10.0, 'recovery: tangential damping per unit mass (1/s)', range=(0.0, 1e5)),
    Param('recovery_inset', float, 0.03, 'recovery spring rest, fraction of r_e inside the soft limit',
          range=(1e-4, 0.49)),
    Param('brake_margin', float, 1.5, 'safety factor on the braking distance to the hard limit', range=(1.0, 10.0)),
    Param('stop_fraction', float, 0.5, 'controlled stop (FAULT, dropout, IDLE while moving) at this fraction of '
          'a_max, all DOFs together, where it stays inside the hard limit; at a_max where it would not',
          range=(0.01, 1.0)),
    Param('max_recovery_duration', float, 30.0, 'recovery longer than this is a fault (s)', range=(0.1, 600.0)),
    Param('reference_timeout_frames', int, 40, 'frames without reference before a stale warning',
          range=(1, 100000)),
    Param('reference_wait', float, 0.5, 'lockstep: wall s to wait for the reference of a frame', range=(0.01, 60.0)),
    Param('frame_id', str, 'hexapod_base', 'frame of the published poses'),
    Param('publish_twist', bool, True, 'also publish the safe twist (rviz, diagnosis; not needed by the time base)'),
    Param('realtime_fallback_frames', int, 8, 'real time: frames (wall) without a reference arriving before the planner '
          'steps on its own timer', range=(1, 1000)),
)


def _workspace(p) -> Workspace:
    path = p.workspace_file or str(repo_root() / 'config' / f'workspace_{p.robot}.yaml')
    try:
        return Workspace.load(path)
    except OSError as exc:
        raise ValueError(f"parameter 'workspace_file': cannot read {path}: {exc}") from exc


PLANNER_CONFIG = ConfigFields(
    PlannerConfig, renamed={'dt': 'period', 'limiter': 'acceleration_limiter'},
    derived={'workspace': _workspace},
    # input validation bounds of hil_core.planner.inputs: properties of the planner, not settings
    fixed=frozenset({'position_bound', 'quaternion_tolerance', 'reference_max_age', 'reference_max_lead',
                     'extra'}))


def planner_config(p) -> PlannerConfig:
    """The planner's configuration for the validated values ``p``, checked (ValueError if refused)."""
    return PLANNER_CONFIG.build(p).validate()
