"""The view throttle's parameters: its Param table (the only place they are declared) and their
loading. A plain rclpy node like the HMI it feeds: a bad value stops it at start with the
parameter's name."""
from __future__ import annotations

from types import SimpleNamespace

from hil_nodes.framework.param_table import Param, ParameterError
from hil_nodes.framework.plain_params import declare_plain
from hil_nodes.hmi.params import PARAMS as HMI_PARAMS

# the HMI redraws its view this often: a faster copy would be thrown away, a slower one would
# show the view late
HMI_VIEW_RATE = next(p.default for p in HMI_PARAMS if p.name == 'view_rate')

PARAMS = (
    Param('rate', float, HMI_VIEW_RATE, "messages per wall s on each throttled topic at most (the newest of "
          "each stream since the last tick; default the HMI's view_rate)", range=(1.0, 100.0)),
)


def load_parameters(node) -> SimpleNamespace:
    """Declare and validate PARAMS on ``node``; raises ParameterError naming every bad one."""
    values, problems = declare_plain(node, PARAMS)
    if problems:
        raise ParameterError('; '.join(problems))
    return SimpleNamespace(**values)
