"""The joy_wrench node's parameters: its Param table (the only place they are declared) and the
mapping they give (``hil_core.ft.joy_mapping.JoyMapping``). Names follow teleop_twist_joy's
(an axis per component, a scale per component, an enable button); a plain rclpy node like the
HMI: a bad value stops it at start with the parameter's name."""
from __future__ import annotations

from types import SimpleNamespace

from hil_core.ft.joy_mapping import NONE, JoyMapping
from hil_nodes.framework.param_table import Param, ParameterError
from hil_nodes.framework.plain_params import declare_plain

_D = JoyMapping()
_AXIS = dict(length=3, range=(NONE, 63))

PARAMS = (
    Param('force_axes', 'int[]', list(_D.force_axes), f'Joy axis of the force x, y, z in joystick_frame ({NONE}: '
          'none)', **_AXIS),
    Param('torque_axes', 'int[]', list(_D.torque_axes), f'Joy axis of the torque x, y, z ({NONE}: none)', **_AXIS),
    Param('force_scale', 'float[]', list(_D.force_scale), 'force asked at full deflection of each axis (N; a '
          'negative scale turns the axis over); ft_sensor limits what it applies (joystick_force_max, '
          'joystick_force_rate)', length=3, range=(-1e4, 1e4)),
    Param('torque_scale', 'float[]', list(_D.torque_scale), 'torque asked at full deflection (N m); ft_sensor '
          'limits it (joystick_torque_max, joystick_torque_rate)', length=3, range=(-1e3, 1e3)),
    Param('deadzone', float, _D.deadzone, '|axis| below this asks for nothing (the output starts from 0 at its '
          'edge)', range=(0.0, 0.95)),
    Param('enable_button', int, _D.enable_button, f'Joy button held to push ({NONE}: always enabled); released, '
          'the node asks for zero', range=(NONE, 63)),
    Param('joystick_frame', str, 'hexapod_base', "frame_id of the wrench (ft_sensor's base_frame_id: base axes; its "
          "frame_id: sensor axes)", check=lambda v: None if v else 'must not be empty'),
)


def mapping(values: SimpleNamespace) -> JoyMapping:
    return JoyMapping(tuple(values.force_axes), tuple(values.torque_axes), tuple(values.force_scale),
                      tuple(values.torque_scale), values.deadzone, values.enable_button)


def load_parameters(node) -> tuple[SimpleNamespace, JoyMapping]:
    """Declare and validate PARAMS on ``node``; raises ParameterError naming every bad one."""
    values, problems = declare_plain(node, PARAMS)
    if problems:
        raise ParameterError('; '.join(problems))
    p = SimpleNamespace(**values)
    m = mapping(p)
    problem = m.problem()
    if problem:
        raise ParameterError(problem)
    return p, m
