"""Chain ports: a chain stage hands its arrays to the next stage in the same process, and its
topic serves only the outside (ros2_control's chained controllers, for the one-process graph).

ros2_control's controller manager (controller_manager.cpp, ``ControllerManager::update``) walks
its ordered controllers once per cycle; a chainable controller in chained mode
(chainable_controller_interface.cpp, ``ChainableControllerInterface::update``) does not read its
subscribers (``update_reference_from_subscribers`` runs only when *not* in chained mode): the
preceding controller writes its reference interfaces, plain doubles, and the topics are for the
outside. Here the same node classes run in one process (the real-time layout on a small PC) and
in one process each (``--isolated``, another host, the lab's ``ros2 launch``), so a stage's
output is a ``ChainPort``:

* in one process (the intra-process bus on), ``send(payload)`` queues the payload (a stamp and
  numpy arrays) for every subscription of the topic in the process that declared a
  ``chain_input`` (``create_subscription(..., chain_input=...)``: the chained mode, set when the
  subscription is served in-process, as ``set_chained_mode``); a subscription without one gets a
  message built once; the recorder gets the CDR bytes written from the arrays
  (hil_nodes.msgs.cdr_arrays); DDS gets a message only when a reader outside the process has
  matched (``IntraPublisher.send``). No message object is built per hop, none is converted back;
* alone in its process, or when a publisher outside the process shares the topic (the bus's
  ``fall_back_to_dds``), ``send`` fills a message and publishes it, and the consumer's message
  callback turns it into the same payload for the same ``chain_input``: one code path for both.

Deliveries stay those of the bus (deferred, in publish order, a callback never re-entered), so a
lockstep run's bag is the same message for message. A payload belongs to its receivers once
sent, like a published message: a stage sends arrays it does not change afterwards.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from hil_nodes.msgs import convert
from hil_nodes.msgs.cdr_arrays import (Float64ArrayBytes, JointStateBytes, JointTrajectoryBytes, StampedDoubles,
                                      TfBytes)
from hil_nodes.msgs.message_ring import MessageRing
from hil_nodes.runtime.intra_publisher import IntraPublisher


class ChainPort:
    """One output stream of a chain stage (module docstring). ``message(payload)`` builds the
    message (a ring's, refilled), ``encode(payload)`` its CDR bytes (None: from the message)."""

    __slots__ = ('publisher', 'message', 'encode', '_send')

    def __init__(self, publisher, message: Callable[[Any], Any], encode: Callable[[Any], bytes] | None = None):
        self.publisher = publisher
        self.message = message
        self.encode = encode
        self._send = publisher.send if isinstance(publisher, IntraPublisher) else None

    def send(self, payload) -> None:
        if self._send is not None:
            self._send(self, payload)
        else:
            self.publisher.publish(self.message(payload))


def _frame_getter(frame_id) -> Callable[[], str]:
    """A frame id given as text, or read at each send (a node's parameter that may change while
    it is inactive)."""
    return frame_id if callable(frame_id) else (lambda: frame_id)


class _StampedBytes:
    """``StampedDoubles`` encoders by frame id."""

    def __init__(self, count: int):
        self.count = count
        self._by_frame: dict[str, StampedDoubles] = {}

    def encode(self, frame_id: str, stamp_ns: int, values) -> bytes:
        enc = self._by_frame.get(frame_id)
        if enc is None:
            enc = self._by_frame[frame_id] = StampedDoubles(frame_id, self.count)
        return enc.encode(stamp_ns, values)


def _stamped_port(publisher, msg_type, fill, count: int, frame_id) -> ChainPort:
    ring, cdr, frame = MessageRing(msg_type), _StampedBytes(count), _frame_getter(frame_id)

    def message(payload):
        msg = ring.next()
        fill(msg, payload[0], frame(), payload[1])
        return msg
    return ChainPort(publisher, message, lambda payload: cdr.encode(frame(), payload[0], payload[1]))


def wrench_port(publisher, frame_id) -> ChainPort:
    """geometry_msgs/WrenchStamped; payload ``(stamp_ns, w)``, w the 6 values (force, torque);
    ``frame_id`` text or a function that reads it."""
    from geometry_msgs.msg import WrenchStamped
    return _stamped_port(publisher, WrenchStamped, convert.fill_wrench_stamped, 6, frame_id)


def pose_port(publisher, frame_id) -> ChainPort:
    """geometry_msgs/PoseStamped; payload ``(stamp_ns, pose)``, pose the 7 values (position,
    quaternion x y z w); ``frame_id`` text or a function that reads it."""
    from geometry_msgs.msg import PoseStamped
    return _stamped_port(publisher, PoseStamped, convert.fill_pose_stamped, 7, frame_id)


def pose_from_message(msg) -> tuple[int, Any]:
    """The payload of ``pose_port`` from a PoseStamped (a consumer's message callback)."""
    return convert.stamp_to_ns(msg.header.stamp), convert.pose_to_array(msg.pose)


def wrench_from_message(msg) -> tuple[int, Any]:
    """The payload of ``wrench_port`` from a WrenchStamped."""
    return convert.stamp_to_ns(msg.header.stamp), convert.wrench_to_array(msg.wrench)


def joint_state_port(publisher, names) -> ChainPort:
    """sensor_msgs/JointState of fixed joints; payload ``(stamp_ns, names, position, velocity,
    effort)``, ``names`` the tuple given here (effort None: none). A new message each time (its
    sequences are lists)."""
    from sensor_msgs.msg import JointState
    names = tuple(names)
    cdr = JointStateBytes(names)

    def message(payload):
        stamp_ns, _, position, velocity, effort = payload
        js = JointState(name=list(names))
        js.header.stamp = convert.ns_to_stamp(stamp_ns)
        js.position = position.tolist()
        js.velocity = velocity.tolist()
        js.effort = effort.tolist() if effort is not None else []
        return js
    return ChainPort(publisher, message, lambda p: cdr.encode(p[0], p[2], p[3], p[4]))


def joint_state_from_message(msg) -> tuple:
    """The payload of ``joint_state_port`` from a JointState (its names as they come)."""
    return (convert.stamp_to_ns(msg.header.stamp), tuple(msg.name), msg.position, msg.velocity,
            msg.effort if len(msg.effort) else None)


def trajectory_port(publisher, messages: convert.TrajectoryMessages) -> ChainPort:
    """trajectory_msgs/JointTrajectory; payload a ``PlainTrajectory`` (hil_core.drives.plants.
    plain_trajectory) whose points lie at whole multiples of the messages' period."""
    cdr = JointTrajectoryBytes(messages.names)
    period_ns = round(messages.period * 1e9)

    def message(plain):
        return messages.fill(plain.stamp_ns, plain.positions, plain.velocities,
                             first_index=int(round(int(plain.times_ns[0]) / period_ns)))

    def encode(plain):
        return cdr.encode(plain.stamp_ns, plain.times_ns, plain.positions, plain.velocities)
    return ChainPort(publisher, message, encode)


def vector_port(publisher) -> ChainPort:
    """std_msgs/Float64MultiArray without a layout (a forward command controller's command, a
    vector of figures); payload the values (an array)."""
    from std_msgs.msg import Float64MultiArray
    cdr = Float64ArrayBytes()

    def message(values):
        return Float64MultiArray(data=convert.float_sequence(values))
    return ChainPort(publisher, message, cdr.encode)


def odometry_port(publisher, frame_id: str, child_frame_id: str) -> ChainPort:
    """nav_msgs/Odometry, covariances zero (unknown); payload ``(stamp_ns, pose, twist)``."""
    from nav_msgs.msg import Odometry
    cdr = StampedDoubles(frame_id, 85, strings=(child_frame_id,))
    zeros = np.zeros(36)

    def message(payload):
        stamp_ns, pose, twist = payload
        odom = Odometry()
        odom.header.stamp, odom.header.frame_id = convert.ns_to_stamp(stamp_ns), frame_id
        odom.child_frame_id = child_frame_id
        odom.pose.pose = convert.array_to_pose(pose)
        odom.twist.twist = convert.array_to_twist(twist)
        return odom

    def encode(payload):
        stamp_ns, pose, twist = payload
        return cdr.encode(stamp_ns, np.concatenate((pose, zeros, twist, zeros)))
    return ChainPort(publisher, message, encode)


def tf_port(publisher) -> ChainPort:
    """tf2_msgs/TFMessage; payload ``(stamp_ns, transforms)``, each transform (parent, child,
    xyz, quat xyzw), all with that stamp. Nobody in the graph reads /tf: the recorder gets the
    bytes, a message is built only for a reader (rviz, tf2 in another process). Its
    TransformStamped objects are kept per frame pair and refilled (building them was most of
    a /tf message's cost); a message goes out at once, to DDS or the recorder."""
    from tf2_msgs.msg import TFMessage
    kept: dict = {}
    cdr = TfBytes()

    def message(payload):
        stamp_ns, transforms = payload
        stamp = convert.ns_to_stamp(stamp_ns)
        out = []
        for parent, child, xyz, quat in transforms:
            t = kept.get((parent, child))
            if t is None:
                t = kept[(parent, child)] = convert.transform_stamped(stamp, parent, child, xyz, quat)
            else:
                convert.update_transform(t, stamp, xyz, quat)
            out.append(t)
        return TFMessage(transforms=out)
    return ChainPort(publisher, message, lambda payload: cdr.encode(*payload))
