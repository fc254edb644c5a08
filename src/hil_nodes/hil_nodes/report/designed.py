"""The designed values of a recorded run, from the parameters it recorded (``hil_run.yaml``:
``{node: {parameter: value}}``, as the nodes received them).

A node's values are its Param table's defaults overlaid by what the run recorded, and every
figure comes from the function the node itself uses: the F/T signal chain's and the time base's
configurations (``ft_sensor.params.chain_config``, ``timebase.params.timebase_config``), the
designed W-R distance (``timebase.params.designed_distance``: one pose less in real time, where
the reader clock runs a frame ahead), the admittance model (``admittance.params.build_model``).
Parameter names are the tables' (attributes of the values), never literals of the report.
"""
from __future__ import annotations

from types import SimpleNamespace

from hil_core.transparency.design import ChainDesign, design_from_configs
from hil_nodes.admittance import params as admittance_params
from hil_nodes.framework.param_docs import node_params
from hil_nodes.framework.param_table import values_with_defaults
from hil_nodes.ft_sensor import params as ft_params
from hil_nodes.timebase import params as timebase_params

# the nodes of the Hexafloat chain whose parameters the report reads, by their names in the
# system file (config/systems/hexafloat.yaml) -> their node (executable)
CHAIN_NODES = {'ft_sensor': 'ft_sensor', 'mock_ft': 'mock_ft', 'admittance': 'admittance', 'planner': 'planner',
               'timebase': 'timebase', 'kinematics': 'kinematics', 'mock_hexapod': 'mock_hardware'}


def recorded(parameters: dict | None, name: str) -> dict | None:
    """What the run recorded for node ``name`` (None: the node was not in the run)."""
    values = (parameters or {}).get(name)
    if values is None:
        return None
    return values.get('ros__parameters', values) or {}


def node_values(parameters: dict | None, name: str) -> SimpleNamespace:
    """The values node ``name`` of the run had: the recorded ones over its table's defaults."""
    return values_with_defaults(node_params(CHAIN_NODES[name]).values(), recorded(parameters, name))


def chain_design(parameters: dict | None) -> tuple[ChainDesign, list[str]]:
    """The run's designed figures and notes; a configuration the nodes would have refused (a run
    that never ran its chain) gives the defaults' figures, with a note saying why."""
    notes = []
    ft, tb = node_values(parameters, 'ft_sensor'), node_values(parameters, 'timebase')
    try:
        chain = ft_params.chain_config(ft)
    except ValueError as exc:
        notes.append(f'designed filter delay from the ft_sensor defaults: the run\'s values are refused ({exc})')
        chain = ft_params.chain_config(node_values(None, 'ft_sensor'))
    try:
        timebase = timebase_params.timebase_config(tb)
    except ValueError as exc:
        notes.append(f'designed buffer delay from the timebase defaults: the run\'s values are refused ({exc})')
        tb = node_values(None, 'timebase')
        timebase = timebase_params.timebase_config(tb)
    return design_from_configs(chain, timebase, timebase_params.designed_distance(tb)), notes


def wr_distance(parameters: dict | None) -> int:
    """The W-R distance the run's time base holds at the designed delay."""
    return timebase_params.designed_distance(node_values(parameters, 'timebase'))


def admittance_model(parameters: dict | None):
    """The model the run's admittance node used (None: no admittance node in the run)."""
    if recorded(parameters, 'admittance') is None:
        return None
    return admittance_params.build_model(node_values(parameters, 'admittance'))
