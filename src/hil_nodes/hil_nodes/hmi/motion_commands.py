"""Motion commands the HMI sends where a system takes them, and which node checks them
(the node's own check, so the HMI never accepts what the node would refuse):

* ``hexafloat_scripted``: via points to reference_source through its standard SetParameters
  service (dynamic parameter ``via_points``): the node checks the command against the running
  script (RUNNING only, the URDF's travel, the script's velocity and acceleration limits) and
  answers with its reason (hil_core.drives.scripted_motion.via_path);
* ``space_iiwa``: an end-effector target on topics.SPACE_EE_SETPOINT (geometry_msgs/PoseStamped),
  checked first by the space_plant Param table's own validation of ``setpoint_position`` and
  ``setpoint_euler_zyx_deg`` (the scripted set-point's parameters), then for reachability from
  the measured state with the running node's parameters (hil_nodes.hmi.space_target); space_plant's
  status about the set-point it received is its answer;
* ``hybrid5``: a G-code program checked as hybrid_controller checks its ``gcode_file`` at
  configure (the parser and the S-curve path of hil_core.hybrid5), then handed to the node as
  that parameter through SetParameters: the node checks it again and answers (it takes a new
  program in IDLE only, the robot holding; the next run homes to its start); or a jog, one
  G-code line relative to where the robot holds (parameter ``jog``, the same parser), taken in
  IDLE at rest.

Everything here is plain Python: parsing the operator's text, the checks, the messages' values."""
from __future__ import annotations

import math

import numpy as np

# the node whose presence on the graph tells which system runs, and what it takes
SYSTEM_NODES = (('reference_source', 'hexafloat_scripted'), ('space_plant', 'space_iiwa'),
                ('hybrid_controller', 'hybrid5'))


def running_system(node_names) -> str | None:
    names = set(node_names)
    return next((system for node, system in SYSTEM_NODES if node in names), None)


def parse_via_text(text: str) -> list[float]:
    """'t q1 .. q6; t q1 .. q6' (commas or spaces, one point per line or ';') -> the flat list of
    reference_source's ``via_points``; ValueError if a value is not a number (the node checks the rest)."""
    values = []
    for token in text.replace(';', ' ').replace(',', ' ').split():
        try:
            values.append(float(token))
        except ValueError:
            raise ValueError(f'via points: {token!r} is not a number') from None
    if not values:
        raise ValueError('via points: nothing given (t q1 .. q6 per point)')
    return values


def check_ee_target(position, euler_zyx_deg) -> str | None:
    """space_plant's own validation of its set-point parameters (its Param table), or None."""
    from hil_nodes.framework.param_table import ParameterError
    from hil_nodes.space_plant.params import PARAMS
    table = {p.name: p for p in PARAMS}
    try:
        table['setpoint_position'].validate([float(v) for v in position])
        table['setpoint_euler_zyx_deg'].validate([float(v) for v in euler_zyx_deg])
    except (ParameterError, TypeError, ValueError) as exc:
        return str(exc)
    return None


def euler_zyx_deg_to_quat_xyzw(euler_zyx_deg) -> np.ndarray:
    """[z, y, x] angles (deg) as space_plant reads them (R = Rz Ry Rx) -> quaternion x, y, z, w."""
    from scipy.spatial.transform import Rotation
    return Rotation.from_euler('ZYX', np.radians(np.asarray(euler_zyx_deg, float))).as_quat()


def check_gcode(path: str, params_file: str = '') -> str | None:
    """hybrid_controller's configure-time check of a program (parse, then the path it builds), or None."""
    from types import SimpleNamespace

    from hil_core.hybrid5.gcode import parse_file
    from hil_core.hybrid5.trajectory import PathTrajectory
    from hil_nodes.hybrid_controller import params
    try:
        prm = params.robot_params(SimpleNamespace(params_file=params_file))
        t = prm.trajectory
        segs = parse_file(path, t.rapid_feed)
        PathTrajectory(segs, prm.Ts, t.a_max, t.j_max, math.radians(t.angular_feed) / 60, prm.work_origin)
    except (OSError, ValueError) as exc:
        return f"gcode_file '{path}': {exc}"
    return None


def check_jog(text: str, params_file: str = '') -> str | None:
    """hybrid_controller's parse of a jog (the program parser, hil_core.hybrid5.gcode.parse_jog), or None."""
    from types import SimpleNamespace

    from hil_core.hybrid5.gcode import parse_jog
    from hil_nodes.hybrid_controller import params
    try:
        parse_jog(str(text), params.robot_params(SimpleNamespace(params_file=params_file)).trajectory.rapid_feed)
    except (OSError, ValueError) as exc:
        return str(exc)
    return None
