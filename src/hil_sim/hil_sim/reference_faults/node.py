"""Fault relay for the `faults` scenario: republishes a PoseStamped stream with seeded faults.

    admittance --(/admittance/reference_model)--> reference_faults --(/admittance/reference)--> planner

The scenario remaps the admittance output to ``input_topic`` and puts this node in between. Each
frame's fault depends only on (seed, frame index) (hil_core.fault_injection), so the faults hit
the same frames in every run and process layout. Counts go to /diagnostics.
"""
from __future__ import annotations

import numpy as np
from geometry_msgs.msg import PoseStamped

from hil_core.fault_injection import ReferenceFaultInjector
from hil_nodes.framework.base import OK, WARN, HilLifecycleNode
from hil_nodes.msgs.convert import array_to_pose, pose_to_array, stamp_to_ns
from hil_nodes.runtime.runner import main_for
from hil_sim.reference_faults import params


class ReferenceFaultsNode(HilLifecycleNode, name='reference_faults', task='fault injection', params=params.PARAMS):
    """Statuses "reference_faults: fault injection": the faults injected into the reference
    stream."""

    def __init__(self, node_name: str | None = None, **kwargs):
        super().__init__(node_name, **kwargs)
        self.injector = None
        self.pub = None
        self.sub = None

    def check_parameters(self, p) -> str | None:
        try:
            params.faults(p)
        except ValueError as exc:
            return f'fault parameters: {exc}'
        if p.input_topic == p.output_topic:
            return "parameters 'input_topic' and 'output_topic' must differ"
        return None

    def configure_node(self) -> None:
        self.injector = ReferenceFaultInjector(params.faults(self.p), seed=self.p.seed)
        self.pub = self.create_lifecycle_publisher(PoseStamped, self.p.output_topic, self.stream_qos())
        self.sub = self.create_subscription(PoseStamped, self.p.input_topic, self._on_pose, self.stream_qos())

    def _on_pose(self, msg: PoseStamped) -> None:
        if not self.active:
            return
        pose = pose_to_array(msg.pose)
        if not np.all(np.isfinite(pose)):
            self.pub.publish(msg)        # not ours to judge: the planner rejects it with a diagnostic
            return
        k = int(round(stamp_to_ns(msg.header.stamp) * 1e-9 / self.p.frame_period))
        for _, out_pose, header, kind in self.injector.step(k, pose, msg.header):
            out = PoseStamped(header=header, pose=array_to_pose(out_pose))
            self.pub.publish(out)
        if any(v for key, v in self.injector.counts.items() if key != 'ok') and k % 400 == 0:
            self.status(WARN, 'injecting reference faults', **self.injector.counts)

    def deactivate_node(self) -> None:
        if self.injector is not None:
            self.status(OK, 'fault injection stopped', **self.injector.counts)

    def cleanup_node(self) -> None:
        self.release(self.sub, self.pub)
        self.sub = self.pub = self.injector = None


main = main_for(ReferenceFaultsNode)

if __name__ == '__main__':
    main()
