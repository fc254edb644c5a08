"""The Param table of a plain (not lifecycle) node declared and validated in one place: the
supervisor's and the operator HMI's. A lifecycle node gets the same from ``HilLifecycleNode``.

Each parameter is declared with its descriptor (description, constraints, the native range of a
scalar: ``Param.descriptor``); a wrong type in any source (the parameter files or the command
line) is found and taken out before declaring (``param_sources.check_sources``), and a value
``Param.validate`` refuses is reported. Either way the parameter keeps its default and the
problem is returned, one line each naming it: the node decides whether it runs with the defaults
(the supervisor reports them and refuses to start the rig) or refuses to start (the HMI).
"""
from __future__ import annotations

from rclpy.exceptions import (InvalidParameterTypeException, InvalidParameterValueException,
                              ParameterUninitializedException)

from hil_nodes.framework.param_sources import check_sources
from hil_nodes.framework.param_table import _PARAM_TYPES, ParameterError


def declare_plain(node, params, read_only: bool | None = None) -> tuple[dict, list[str]]:
    """Declare ``params`` (a Param table) on ``node``: ``(values by name, problems)``.
    ``read_only`` overrides every descriptor's (the supervisor's are all read-only)."""
    found = check_sources(node, {p.name: p for p in params})
    problems = [text for _, text in found]
    bad_types = {name for name, _ in found}
    values = {}
    for p in params:
        descriptor = p.descriptor()
        if read_only is not None:
            descriptor.read_only = read_only
        try:
            if isinstance(p.type, str):       # an array: declare its type (an empty default has none)
                node.declare_parameter(p.name, _PARAM_TYPES[p.type], descriptor)
            else:
                node.declare_parameter(p.name, p.default, descriptor)
            if p.name in bad_types:
                values[p.name] = p.default
                continue
            try:
                raw = node.get_parameter(p.name).value
            except ParameterUninitializedException:
                raw = p.default
            values[p.name] = p.validate(raw)
        except ParameterError as exc:
            problems.append(str(exc))
            values[p.name] = p.default
        except (InvalidParameterTypeException, InvalidParameterValueException) as exc:
            problems.append(f"parameter '{p.name}': {exc}")
            values[p.name] = p.default
    return values, problems


def run_plain(make, label: str, args=None, refused: tuple = (ParameterError,), started=None) -> int:
    """Run one plain node in its own process (``python -m``, ``ros2 run``): rclpy up, ``make()``,
    spin until Ctrl-C or SIGTERM, down. An exception of ``refused`` (a bad value, a busy port) is
    said in one line, ``<label>: not started: ...``, without a trace: exit 2; else 0.
    ``started(node)`` runs once the node is made (the HMI prints its address)."""
    import sys
    import rclpy
    from rclpy.executors import ExternalShutdownException
    from hil_nodes.runtime import crash_report, participant_ready
    crash_report.enable()                  # a native crash names its thread and call
    rclpy.init(args=sys.argv if args is None else args)
    participant_ready.announce()
    node = None
    try:
        node = make()
        if started is not None:
            started(node)
        rclpy.spin(node)
    except (KeyboardInterrupt, ExternalShutdownException):   # Ctrl-C, or SIGTERM: the run that started it ended
        pass
    except refused as exc:
        print(f'{label}: not started: {exc}', file=sys.stderr, flush=True)
        return 2
    finally:
        if node is not None:
            node.destroy_node()
        if rclpy.ok():
            rclpy.shutdown()
    return 0
