"""The mock hardware node of a system, built as ``hil run`` builds it: for tests and benches that
run the drives in their own process next to the node under test."""
from __future__ import annotations

from rclpy.parameter import Parameter

from hil_nodes.bringup.system import load_system
from hil_sim.mock_hardware.node import MockHardwareNode


def system_mock(system: str, overrides: dict | None = None, **node_kwargs) -> MockHardwareNode:
    """The mock hardware node of a system as ``hil run`` builds it (its name, parameter files and
    parameters from config/systems/<system>.yaml), with ``overrides`` on top (tests, benches)."""
    spec = next(n for n in load_system(system).nodes if (n.package, n.executable) == ('hil_sim', 'mock_hardware'))
    values = {**spec.parameters, **(overrides or {})}    # file paths: relative to the data tree
    files = [arg for path in spec.params for arg in ('--params-file', str(path))]
    return MockHardwareNode(node_name=spec.name, cli_args=['--ros-args', *files],
                            parameter_overrides=[Parameter(k, value=v) for k, v in values.items()], **node_kwargs)
