"""QoS profiles used across hil_suite.

* ``latched()``: transient-local, reliable, depth 1 (mode, robot description), like a latched topic.
* ``stream(reliable)``: high-rate streams. Real time: sensor-data QoS (best effort, keep last).
  Lockstep: reliable keep-last and transient-local, because a lockstep run must not lose a
  frame to stay deterministic: reliable so no frame is dropped in flight, transient-local so a
  subscriber that matches late (DDS discovery takes 0.25-2.3 s) still gets the first frame (t_0),
  which is published only once and without which the chain would never start. Such a publisher
  also serves volatile and best-effort subscribers (rviz, ros2 topic echo); a lockstep stream
  *subscriber* needs a transient-local publisher, i.e. one that uses this profile too.
* ``command(depth, lockstep)``: reliable keep-last, the default of ros2_control controllers'
  command topics; in lockstep transient-local too, for the same reason as the streams: the
  mock hardware does not advance before the first command, so a first command published before
  the mock matched the producer would stall the run forever. A transient-local command
  publisher still serves a real (volatile) joint_trajectory_controller.
* ``joint_states(lockstep)``: every *subscription* to /joint_states. It must receive from
  joint_state_broadcaster (rclcpp SystemDefaults: reliable, and volatile or transient-local
  depending on the RMW) as well as from the mock, so it requests volatile durability (a
  transient-local request gets 0 messages from a volatile publisher): reliable in lockstep (no
  frame lost), best effort in real time (matches any publisher). A late lockstep subscriber
  still gets t_0 because the mock re-publishes t_0 until its first command.
  ``joint_state_broadcaster()`` is that publisher's QoS as measured on a lab (reliable, volatile).
* ``driver_output(lockstep)``: the publisher of a driver output a lab watches (F/T wrench, TCP
  pose): reliable in real time too, so reliable and best-effort subscribers both match.
* ``tf()`` / ``tf_static()``: tf2_ros's broadcaster QoS, so rviz and tf2 listeners match.
"""
from rclpy.qos import (DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy,
                       qos_profile_sensor_data)


def latched(depth: int = 1) -> QoSProfile:
    return QoSProfile(depth=depth, history=HistoryPolicy.KEEP_LAST,
                      reliability=ReliabilityPolicy.RELIABLE,
                      durability=DurabilityPolicy.TRANSIENT_LOCAL)


# Lockstep history: a reader may lag a producer that runs outside the lockstep loop for a while
# (the F/T chain during HOMING, when the planner needs no model reference; a process still
# starting up; the recorder joining after the first frames). Keep-last drops what a reader has
# not acknowledged beyond this depth, so it must cover that lag: 2000 messages = 1.25 s of
# 1.6 kHz F/T samples, 5 s of 400 Hz frames.
LOCKSTEP_DEPTH = 2000


def stream(reliable: bool, depth: int = LOCKSTEP_DEPTH) -> QoSProfile:
    if not reliable:
        return qos_profile_sensor_data
    return QoSProfile(depth=depth, history=HistoryPolicy.KEEP_LAST,
                      reliability=ReliabilityPolicy.RELIABLE,
                      durability=DurabilityPolicy.TRANSIENT_LOCAL)


def command(depth: int = 10, lockstep: bool = False) -> QoSProfile:
    return QoSProfile(depth=depth, history=HistoryPolicy.KEEP_LAST,
                      reliability=ReliabilityPolicy.RELIABLE,
                      durability=DurabilityPolicy.TRANSIENT_LOCAL if lockstep else DurabilityPolicy.VOLATILE)


def joint_states(lockstep: bool, depth: int = LOCKSTEP_DEPTH) -> QoSProfile:
    """Subscription to /joint_states (see module doc): never transient-local, so lockstep QoS
    does not leak into hardware mode and a joint_state_broadcaster is always heard."""
    if not lockstep:
        return QoSProfile(depth=10, history=HistoryPolicy.KEEP_LAST,
                          reliability=ReliabilityPolicy.BEST_EFFORT, durability=DurabilityPolicy.VOLATILE)
    return QoSProfile(depth=depth, history=HistoryPolicy.KEEP_LAST,
                      reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.VOLATILE)


def driver_output(lockstep: bool, depth: int = 10) -> QoSProfile:
    """The publisher of a driver's output that a lab watches (F/T wrench, TCP pose; the mock's
    joint states use ``joint_state_broadcaster``, /tf ``tf``): in real time reliable, volatile,
    keep last ``depth``, as joint_state_broadcaster publishes, so that a reliable subscriber
    (rviz2, ``ros2 topic echo``, a lab logger) matches as well as a best-effort one (REP-2003:
    sensor drivers publish with the system default). The suite's own subscriptions stay best
    effort (``stream(False)``) and match any publisher. Lockstep: ``stream(True)``."""
    return stream(True) if lockstep else joint_state_broadcaster(depth)


def joint_state_broadcaster(depth: int = 10) -> QoSProfile:
    """The publisher QoS of ros2_controllers' joint_state_broadcaster on a lab machine (tests)."""
    return QoSProfile(depth=depth, history=HistoryPolicy.KEEP_LAST,
                      reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.VOLATILE)


def tf() -> QoSProfile:
    """/tf publisher: tf2_ros DynamicBroadcasterQoS (reliable, volatile, keep last 100)."""
    return QoSProfile(depth=100, history=HistoryPolicy.KEEP_LAST,
                      reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.VOLATILE)


def tf_static() -> QoSProfile:
    """/tf_static publisher: tf2_ros StaticBroadcasterQoS (reliable, transient local, keep last 1):
    every static transform of a node goes out in one message."""
    return latched(1)
