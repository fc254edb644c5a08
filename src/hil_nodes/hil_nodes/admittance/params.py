"""The admittance node's parameters: its Param table (the only place they are declared; the
generated page docs/parameters/admittance.md and the config files are checked against it) and the
one function that builds the model from the validated values (the node at configure, the report
from a run's recorded values)."""
from __future__ import annotations

import numpy as np
import yaml

from hil_core.admittance import CumminsFloater, LtiAdmittanceModel, matrices_from_frequency
from hil_core.admittance.lti_model import (SEED_DAMPING_RATIO, SEED_FREQUENCY_HZ, SEED_STIFFNESS,
                                           matrices_from_mass)
from hil_core.admittance.pose_offset import check_home_pose
from hil_nodes.framework.param_table import Param

_M0, _D0, _K0 = matrices_from_frequency(SEED_FREQUENCY_HZ, SEED_DAMPING_RATIO, SEED_STIFFNESS)
# Parameters that change the model's matrices only: applied bumplessly (state kept) while active.
MODEL_PARAMS = frozenset({'natural_frequency', 'damping_ratio', 'stiffness', 'mass', 'damping',
                          'mass_matrix', 'damping_matrix', 'stiffness_matrix', 'force_scale',
                          'equilibrium_offset'})


def _f6(values):
    return [float(v) for v in values]


PARAMS = (
    Param('model', str, 'frequency', 'how the model is given: per-axis natural frequency/damping ratio/'
          'stiffness, per-axis mass/damping/stiffness, full 6x6 matrices, or a Cummins floater file',
          choices=('frequency', 'mass', 'matrix', 'floater')),
    Param('period', float, 0.0025, 'model step = F/T sample period (s); seed 000: 2.5 ms (0.4 kHz)',
          range=(1e-4, 1.0)),
    Param('publish_twist_accel', bool, True, 'also publish the reference twist and acceleration '
          '(the planner takes the pose only; two more 400 Hz streams cost CPU in real time)'),
    Param('natural_frequency', 'float[]', [SEED_FREQUENCY_HZ] * 6, 'per-DOF natural frequency (Hz), '
          'model=frequency', range=(1e-3, 1e3), length=6, dynamic=True),
    Param('damping_ratio', 'float[]', [SEED_DAMPING_RATIO] * 6, 'per-DOF damping ratio, model=frequency',
          range=(0.0, 100.0), length=6, dynamic=True),
    Param('stiffness', 'float[]', list(SEED_STIFFNESS), 'per-DOF stiffness (N/m, N m/rad), '
          'model=frequency|mass', range=(0.0, 1e9), length=6, dynamic=True),
    Param('mass', 'float[]', _f6(np.diag(_M0)), 'per-DOF mass / inertia (kg, kg m^2), model=mass',
          range=(1e-9, 1e9), length=6, dynamic=True),
    Param('damping', 'float[]', _f6(np.diag(_D0)), 'per-DOF damping (N s/m, N m s/rad), model=mass',
          range=(0.0, 1e9), length=6, dynamic=True),
    Param('mass_matrix', 'float[]', _f6(_M0.ravel()), '6x6 mass matrix row-major, model=matrix',
          length=36, dynamic=True),
    Param('damping_matrix', 'float[]', _f6(_D0.ravel()), '6x6 damping matrix row-major, model=matrix',
          length=36, dynamic=True),
    Param('stiffness_matrix', 'float[]', _f6(_K0.ravel()), '6x6 stiffness matrix row-major, model=matrix',
          length=36, dynamic=True),
    Param('floater_file', str, '', 'Cummins floater YAML (see config/floater_example.yaml), model=floater'),
    Param('force_scale', 'float[]', [1.0] * 6, 'per-axis scaling of the wrench (e.g. Froude scale)',
          length=6, dynamic=True),
    Param('enabled_axes', 'bool[]', [True] * 6, 'per-DOF enable mask; disabled DOFs are held at home',
          length=6, check=lambda v: None if any(v) else 'at least one DOF must be enabled'),
    Param('home_pose', 'float[]', [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0],
          "home pose [x, y, z, qx, qy, qz, qw] of the model's reference point in the control frame "
          '(= the TCP home when tcp_offset is the identity)', length=7, check=check_home_pose),
    Param('equilibrium_offset', 'float[]', [0.0] * 6, "spring rest point about home (m, rotation "
          "vector); -K^-1 w0 cancels a static preload w0", length=6, dynamic=True),
    Param('control_frame', str, 'hexapod_base', 'frame of the model and of every output (frame_id)',
          check=lambda v: None if v else 'must not be empty'),
    Param('wrench_frame', str, 'control', "'control': wrench at the TCP in control-frame axes; "
          "'body': in the moving TCP's axes (rotated by the current pose)",
          choices=('control', 'body')),
    Param('tcp_offset', 'float[]', [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0],
          "TCP pose [x, y, z, qx, qy, qz, qw] in the model's body frame (e.g. the TCP 0.3 m above a "
          'floater CoG: [0, 0, 0.3, 0, 0, 0, 1]); the wrench acts there and the reference is the TCP',
          length=7, check=check_home_pose),
    Param('stale_timeout', float, 0.05, 'no valid wrench for this long (s, node clock) = stale: hold',
          range=(1e-3, 10.0)),
    Param('stamp_tolerance', float, 0.25, 'stamp jitter tolerated around a whole number of periods '
          '(fraction of the period) before a diagnostic', range=(0.0, 0.49)),
)


def model_matrices(p):
    """(M, D, K) of the model the values ``p`` give (every model but the floater)."""
    if p.model == 'frequency':
        return matrices_from_frequency(p.natural_frequency, p.damping_ratio, p.stiffness)
    if p.model == 'mass':
        return matrices_from_mass(p.mass, p.damping, p.stiffness)
    return p.mass_matrix, p.damping_matrix, p.stiffness_matrix


def build_model(p) -> LtiAdmittanceModel:
    """The model the validated parameters ``p`` describe (ValueError naming what is wrong)."""
    common = dict(home=p.home_pose, enabled=p.enabled_axes, force_scale=p.force_scale,
                  equilibrium=p.equilibrium_offset, wrench_frame=p.wrench_frame,
                  tcp_offset=p.tcp_offset)
    if p.model == 'floater':
        if not p.floater_file:
            raise ValueError("parameter 'floater_file' is required with model=floater")
        try:
            return CumminsFloater.from_yaml(p.floater_file, p.period, **common)
        except (OSError, yaml.YAMLError) as exc:
            raise ValueError(f"parameter 'floater_file': cannot read {p.floater_file}: {exc}") from None
    M, D, K = model_matrices(p)
    return LtiAdmittanceModel(M, D, K, p.period, **common)
