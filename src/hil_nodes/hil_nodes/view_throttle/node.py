"""``view_throttle``: the streams the operator's HMI draws, at the rate it draws them (docs/hmi.md,
"What the HMI reads"), as topic_tools' ``throttle`` composed into a component container.

Why: the HMI keeps only the newest message of each 400 Hz stream 30 times a second, but a DDS
reader of its own on a stream makes the one-process container serialise and write every message
of that stream (``runtime.intra_process``: DDS carries a message only for a reader outside the
process). This node runs inside the container, takes the view streams from the intra-process bus
(a Python call per message, no DDS), and publishes at ``rate`` the newest message of each stream
heard since its last tick on its copy (``topics.VIEW_STREAMS``: ``hmi/joint_states``, ``hmi/tf``,
...; the same message types). /tf is merged, not thinned: each message carries some frames only
(the platform at every sample, the legs and joint frames at 50 Hz), so a tick sends one
TFMessage with the newest transform of every child frame heard since the last one.

In the container a stream from a chain port (``runtime.chain_port``) reaches it as the port's
payload where a message would have to be built for it (the joint states, /tf: built only at a
tick); a wrench or a pose as the message the port builds (a ring's, refilled in place: held
only until the next tick). Alone in its process (``--isolated``, a test) it reads the streams
as the HMI did, through ``PolledReaders`` drained at each tick (no message wakes it) and
forwards the newest CDR bytes as they came; /tf's are read to merge them.

A plain rclpy node outside the managed graph (like the HMI it feeds): not managed, no heartbeat,
no lifecycle; its ticks are on the steady clock whatever the graph's time.
"""
from __future__ import annotations

import copy
import sys

from geometry_msgs.msg import PoseStamped, WrenchStamped
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from rclpy.serialization import deserialize_message
from sensor_msgs.msg import JointState
from std_msgs.msg import Header
from tf2_msgs.msg import TFMessage

from hil_nodes import qos, topics
from hil_nodes.framework.param_table import ParameterError
from hil_nodes.framework.plain_params import run_plain
from hil_nodes.msgs import convert
from hil_nodes.recorder.polled_readers import PolledReaders
from hil_nodes.runtime.intra_process import BUS
from hil_nodes.runtime.intra_process_node import IntraProcessNode
from hil_nodes.view_throttle.params import PARAMS, load_parameters

__all__ = ['PARAMS', 'ViewThrottleNode', 'main']

# every full-rate stream of topics.VIEW_STREAMS, by its message type
STREAM_TYPES = {topics.JOINT_STATES: JointState, topics.TF: TFMessage, topics.FT_WRENCH: WrenchStamped,
                topics.PLANNER_SAFE_REFERENCE: PoseStamped, topics.KINEMATICS_TCP_POSE: PoseStamped,
                topics.SPACE_EE_POSE: PoseStamped}
assert set(STREAM_TYPES) == set(topics.VIEW_STREAMS)


def _best_effort(depth: int) -> QoSProfile:
    """A reader that matches any writer of a stream (lockstep's reliable transient-local ones too)."""
    return QoSProfile(depth=depth, history=HistoryPolicy.KEEP_LAST, reliability=ReliabilityPolicy.BEST_EFFORT,
                      durability=DurabilityPolicy.VOLATILE)


class ViewThrottleNode(IntraProcessNode, Node):
    """See the module docstring."""

    PARAMS = PARAMS

    def __init__(self, node_name: str = 'view_throttle', **kwargs):
        super().__init__(node_name, **kwargs)
        self.p = load_parameters(self)
        self.ticks = 0
        self.sent = {topic: 0 for topic in STREAM_TYPES}      # messages out per full-rate stream
        self._newest: dict[str, tuple[str, object]] = {}     # stream -> ('msg' | 'payload' | 'raw', what)
        self._frames: dict[str, tuple[str, object]] = {}     # /tf: child frame -> the same
        self._last_out: dict[str, object] = {}               # the message object each copy sent last
        self._pubs = {topic: self.create_publisher(kind, topics.VIEW_STREAMS[topic],
                                                   qos.tf() if topic == topics.TF else qos.joint_state_broadcaster())
                      for topic, kind in STREAM_TYPES.items()}
        self._readers = None
        if BUS.enabled:            # in the container: from the bus (a subscription per stream)
            self._subs = [self._subscribe(topic, kind) for topic, kind in STREAM_TYPES.items()]
        else:                      # alone: raw DDS readers no message wakes, drained at each tick
            self._readers = PolledReaders(self.context, node_name)
            for topic, kind in STREAM_TYPES.items():
                deliver = self._raw_tf if topic == topics.TF else (lambda raw, _, t=topic: self._keep(t, 'raw', raw))
                # a tick's worth of every stream (400 Hz at 1 Hz, the lowest rate, is 400)
                self._readers.add(kind, topic, _best_effort(500 if topic == topics.TF else 1), deliver)
        self.create_loop_timer(1.0 / self.p.rate, self.tick)

    # --- input ------------------------------------------------------------------------------
    def _subscribe(self, topic: str, kind):
        if topic == topics.TF:
            return self.create_subscription(kind, topic, self._on_tf, _best_effort(100), chain_input=self._tf_payload)
        if topic == topics.JOINT_STATES:     # a JointState is built anew per message: taken as a payload
            return self.create_subscription(kind, topic, lambda m: self._keep(topic, 'msg', m), _best_effort(10),
                                            chain_input=lambda p: self._keep(topic, 'payload', p))
        # a pose or wrench port fills a ring's message in place (cheap), then hands it to every reader
        return self.create_subscription(kind, topic, lambda m, t=topic: self._keep(t, 'msg', m), _best_effort(10))

    def _keep(self, topic: str, how: str, what) -> None:
        self._newest[topic] = (how, what)

    def _on_tf(self, msg: TFMessage) -> None:
        for t in msg.transforms:
            self._frames[t.child_frame_id] = ('msg', t)

    def _tf_payload(self, payload) -> None:
        stamp_ns, transforms = payload
        for parent, child, xyz, quat in transforms:
            self._frames[child] = ('payload', (stamp_ns, parent, child, xyz, quat))

    def _raw_tf(self, raw: bytes, _received_ns: int) -> None:
        self._on_tf(deserialize_message(raw, TFMessage))

    # --- output -----------------------------------------------------------------------------
    def tick(self) -> None:
        """The timer's callback: the newest message of every stream heard since the last tick out."""
        self.ticks += 1
        if self._readers is not None:
            self._readers.drain()
        newest, self._newest = self._newest, {}
        for topic, (how, what) in newest.items():
            self._send(topic, what if how == 'raw' else self._message(topic, how, what))
        if self._frames:
            frames, self._frames = self._frames, {}
            self._send(topics.TF, TFMessage(transforms=[t if how == 'msg' else _transform(t)
                                                        for how, t in frames.values()]))

    def _message(self, topic: str, how: str, what):
        if how == 'payload':                                  # a joint state port's payload
            stamp_ns, names, position, velocity, effort = what
            return JointState(header=Header(stamp=convert.ns_to_stamp(stamp_ns)), name=list(names),
                              position=_floats(position), velocity=_floats(velocity),
                              effort=[] if effort is None else _floats(effort))
        if what is self._last_out.get(topic):
            # a ring's message, refilled with a newer sample since the last tick: the bus refuses
            # one object published twice in a row on a topic
            what = copy.deepcopy(what)
        return what

    def _send(self, topic: str, msg) -> None:
        self._pubs[topic].publish(msg)
        self._last_out[topic] = msg
        self.sent[topic] += 1

    def destroy_node(self) -> None:
        if self._readers is not None:
            self._readers.destroy()
        super().destroy_node()


def _floats(values) -> list[float]:
    return [float(v) for v in values]


def _transform(entry):
    stamp_ns, parent, child, xyz, quat = entry
    return convert.transform_stamped(convert.ns_to_stamp(stamp_ns), parent, child, xyz, quat)


def main(args: list[str] | None = None) -> int:
    """Alone in its process (python -m hil_nodes.view_throttle.node, the isolated layout)."""
    return run_plain(lambda: ViewThrottleNode(), 'view_throttle', args, refused=(ParameterError,))


main.node_class = ViewThrottleNode  # the one-process container builds nodes from it

if __name__ == '__main__':
    sys.exit(main())
