"""The subscription of the one-process container's intra-process delivery
(``hil_nodes.runtime.intra_process``, whose module docstring gives the rules): served by the bus
while its topic has a publisher in the process, else by its own DDS reader."""
from __future__ import annotations

from rclpy.qos import QoSProfile

from hil_nodes.runtime.intra_process import BUS, IntraProcessBus, is_latched


class IntraSubscription:
    """A subscription of this process: served by the bus while the topic has a publisher in the
    process, else by its own DDS reader."""

    def __init__(self, node, msg_type, topic: str, callback, qos: QoSProfile, raw: bool, kwargs: dict,
                 bus: IntraProcessBus = BUS, chain_input=None):
        self.node = node
        self.chain_input = chain_input         # takes a chain port's payload (hil_nodes.runtime.chain_port)
        self.msg_type = msg_type
        self.topic = topic
        self.callback = callback
        self.qos = qos
        self.latched = is_latched(qos)
        self.raw = raw
        self._kwargs = kwargs
        self.served = False
        self.inner = None                      # the DDS reader while not served by the bus
        self._bus = bus
        bus.add_subscription(self)

    def serve(self, by_bus: bool) -> None:
        self.served = by_bus
        if by_bus and self.inner is not None:
            self.node.plain_destroy_subscription(self.inner)
            self.inner = None
        elif not by_bus and self.inner is None:
            self.inner = self.node.plain_create_subscription(self.msg_type, self.topic, self.callback,
                                                             self.qos, raw=self.raw, **self._kwargs)

    def destroy(self) -> None:
        self._bus.remove_subscription(self)
        if self.inner is not None:
            self.node.plain_destroy_subscription(self.inner)
            self.inner = None

    @property
    def topic_name(self) -> str:
        return self.topic

    def __getattr__(self, name: str):
        if self.inner is None:
            raise AttributeError(f'{name}: the subscription of {self.topic} is served in-process')
        return getattr(self.inner, name)
