"""The HMI node's parameters: its Param table (the only place they are declared) and their
loading. The HMI is a plain rclpy node outside the managed graph (like the supervisor, nobody
drives its lifecycle): a bad value stops it at start with the parameter's name."""
from __future__ import annotations

import ipaddress
from types import SimpleNamespace

from hil_nodes.framework.param_table import Param, ParameterError
from hil_nodes.framework.plain_params import declare_plain

LOOPBACK = ('localhost', '127.0.0.1', '::1')

PARAMS = (
    Param('host', str, '127.0.0.1', 'address the web server binds to (beyond localhost the controls '
          'need control_token)', check=lambda v: None if v else 'must not be empty'),
    Param('port', int, 8080, 'TCP port of the web page (0: any free port; the first line printed says which)',
          range=(0, 65535)),
    Param('view_rate', float, 30.0, 'rate of the 3D view (Hz): the view readers are drained and the scene '
          'redrawn this often, never per message', range=(1.0, 60.0)),
    Param('panel_rate', float, 10.0, 'rate of the HIL panel (Hz): statuses, modes and events drained, '
          'strip charts redrawn', range=(0.5, 30.0)),
    Param('chart_span', float, 60.0, 'strip charts show the last this many seconds', range=(1.0, 3600.0)),
    Param('urdf', str, '', "robot description file drawn in the view ('' = the graph's /robot_description)"),
    Param('wrench_scale', float, 0.002, 'length of the F/T force arrow per newton (m/N)', range=(1e-6, 1.0)),
    Param('sensor_frame', str, 'ft_sensor', 'frame at which the F/T force arrow starts'),
    Param('control_token', str, '', 'token the page asks for before start/stop/reset/estop; required when '
          'host is not a loopback address'),
    Param('service_timeout', float, 5.0, 'wall s to wait for the supervisor\'s answer to a request',
          range=(0.1, 120.0)),
    Param('joystick_gain', float, 500.0, 'force joystick: N asked per m the drag handle is pulled (the F/T '
          'node limits what it applies)', range=(0.0, 1e6)),
    Param('joystick_torque_gain', float, 10.0, 'force joystick: N m asked per rad the drag handle is turned',
          range=(0.0, 1e5)),
    Param('joystick_rate', float, 20.0, 'force joystick: messages per wall s while pushing (the F/T node '
          'releases a push silent for its joystick_timeout)', range=(1.0, 200.0)),
    Param('joystick_frame', str, 'hexapod_base', "frame_id of the joystick wrench (the F/T node's base_frame_id: "
          "base axes; its frame_id: sensor axes)", check=lambda v: None if v else 'must not be empty'),
)


def is_loopback(host: str) -> bool:
    if host in LOOPBACK:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_values(values: SimpleNamespace) -> list[str]:
    """Problems between parameters (one line each)."""
    if not is_loopback(values.host) and not values.control_token:
        return [f"parameter 'control_token': required when 'host' ({values.host}) is not a loopback address "
                '(anyone on the network could stop the rig)']
    return []


def load_parameters(node) -> SimpleNamespace:
    """Declare and validate PARAMS on ``node``; raises ParameterError naming every bad one."""
    values, problems = declare_plain(node, PARAMS)
    if not problems:
        problems = check_values(SimpleNamespace(**values))
    if problems:
        raise ParameterError('; '.join(problems))
    return SimpleNamespace(**values)
