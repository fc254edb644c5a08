"""Each recorded stream's designed rate from the run's parameters (read as
``hil_nodes.report.designed`` reads them), and the node that counts what was published on it:
the report's accounting and the run summary (``hil_core.accounting``) use them. A module of its
own, light to import: `hil run` reads it at the end of every run, and the report's analysis
(scipy, matplotlib) is not needed there."""
from __future__ import annotations

# bags are read with their topics named as at the root (hil_nodes.recorder.bag)
from hil_nodes.topics import ROOT as topics
from hil_nodes.report.designed import node_values, recorded

# the node whose diagnostics count what was published on a topic
PRODUCERS = {topics.FT_WRENCH_RAW: 'ft_sensor', topics.FT_WRENCH: 'ft_sensor',
             topics.ADMITTANCE_REFERENCE: 'admittance', topics.PLANNER_SAFE_REFERENCE: 'planner',
             topics.PLANNER_SAFE_TWIST: 'planner', topics.HEXAPOD_JOINT_TRAJECTORY: 'timebase',
             topics.JOINT_STATES: 'mock_hexapod', topics.KINEMATICS_TCP_POSE: 'kinematics',
             topics.MOCK_FT_WRENCH: 'mock_ft'}


def expected_rates(parameters: dict | None) -> dict[str, float]:
    """Designed rate (Hz) of every stream of the Hexafloat graph whose rate the run's nodes fix
    (a node's recorded values over its defaults; a node not in the run fixes nothing)."""
    p = parameters or {}
    rates = {}
    if recorded(p, 'ft_sensor') is not None:
        ft = node_values(p, 'ft_sensor')
        rates[topics.FT_WRENCH] = ft.publish_rate
        rates[topics.FT_WRENCH_RAW] = ft.sample_rate if ft.publish_raw_all else ft.publish_rate
    if recorded(p, 'mock_ft') is not None:
        rates[topics.MOCK_FT_WRENCH] = node_values(p, 'mock_ft').sample_rate
    if recorded(p, 'admittance') is not None:
        rates[topics.ADMITTANCE_REFERENCE] = 1.0 / node_values(p, 'admittance').period
    if recorded(p, 'planner') is not None:
        rates[topics.PLANNER_SAFE_REFERENCE] = rates[topics.PLANNER_SAFE_TWIST] = 1.0 / node_values(p, 'planner').period
    if recorded(p, 'timebase') is not None:
        rates[topics.HEXAPOD_JOINT_TRAJECTORY] = 1.0 / node_values(p, 'timebase').move_time
    if recorded(p, 'mock_hexapod') is not None:
        rate = 1.0 / node_values(p, 'mock_hexapod').frame_period
        rates[topics.JOINT_STATES] = rate
        if recorded(p, 'kinematics') is not None:
            rates[topics.KINEMATICS_TCP_POSE] = rate
    return rates
