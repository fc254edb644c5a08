"""Nodes on a clean intra-process bus, for the tests of the bus and of chain ports
(test_intra_process.py, test_chain_port.py): the ``bus`` fixture enables a fresh registry and
returns a factory of nodes (``Plain`` or ``Managed``) added to the test's harness."""
from __future__ import annotations

import pytest
from rclpy.lifecycle import LifecycleNode
from rclpy.node import Node

from hil_nodes.runtime.intra_process import BUS, IntraProcessBus
from hil_nodes.runtime.intra_process_node import IntraProcessNode


class Plain(IntraProcessNode, Node):
    pass


class Managed(IntraProcessNode, LifecycleNode):
    pass


@pytest.fixture
def bus(ros):
    IntraProcessBus.__init__(BUS)          # a clean registry for this test
    BUS.enable()
    made = []

    def node(cls=Plain, name='n'):
        n = cls(f'{name}_{len(made)}', context=ros.context)
        ros.add_node(n)
        made.append(n)
        return n
    yield node
    BUS.enable(False)
    BUS.clear()
