"""One simulated clock for all the nodes of a process (the one-process
container), as rclcpp components in one container can share a clock.

Why: rclpy gives every node its own ROS clock, attached to its own ``TimeSource`` with its own
``/clock`` subscription, and every clock a timer uses gets its own clock manager in the
EventsExecutor, with a thread of its own (rclpy ``events_executor/timers_manager.cpp``,
``ClockManager``: a ``DelayedEventThread`` per clock). On simulated time (lockstep, and real time
at another pace) each ``/clock`` tick then set seven clocks, each clock change queued a jump event
for the executor, and each woke its clock manager's thread: seven threads woke once per frame
(800 times a second each at twice the pace, 12 400 context switches a second in the process).
Shared, a tick sets one clock, queues one jump event and wakes one thread. Every node reads the
same time as before: all of them were set from the same ``/clock`` message, delivered to the
``TimeSource`` subscriptions (made when the nodes are built) before any node's own ``/clock``
subscription (made at configure).

``PROCESS_CLOCKS.enable`` is called by the runner before it builds the nodes, when the process
hosts several (the intra-process bus is on); ``HIL_SHARED_CLOCK=0`` keeps a clock per node (to
compare). The first node built with ``use_sim_time`` lends its clock and ``TimeSource``; the
others give up their own (``adopt``, at the start of their constructor, before any timer is made).
Nodes of a process live as long as it does, so the lender outlives its borrowers. The lender's
``/clock`` subscription keeps the time it sets as an integer too (``sim_ns``): ``now_ns`` of a node
on the shared clock reads it instead of building an rclpy ``Time`` (10 reads a frame).
"""
from __future__ import annotations

import os

from rclpy.clock import ClockType
from rclpy.qos import QoSProfile, ReliabilityPolicy
from rclpy.time import Time
from rosgraph_msgs.msg import Clock as ClockMsg

from hil_nodes.topics import CLOCK


class ProcessClocks:
    def __init__(self):
        self.enabled = False
        self.sim = None          # the shared ROS clock on simulated time (the lender's)
        self.sim_ns = 0          # its time (ns), what its now() reads, without building a Time
        self.tickers: list = []  # called with sim_ns at every /clock (runtime.timer_group's sim groups)

    def enable(self, on: bool = True) -> None:
        self.enabled = bool(on) and os.environ.get('HIL_SHARED_CLOCK', '1') != '0'
        self.sim = None
        self.sim_ns = 0
        self.tickers = []

    def adopt(self, node) -> None:
        """Give ``node`` the process's simulated clock (module docstring); nothing when sharing
        is off or the node is on the wall clock (the clock owner, which publishes ``/clock``)."""
        if not self.enabled or not node.get_parameter('use_sim_time').value:
            return
        if self.sim is None:
            # the lender's /clock subscription sets the clock and keeps its time for now_ns (as
            # rclpy's TimeSource does, with its QoS, made where the TimeSource made its own)
            self.sim = node.get_clock()
            node._time_source.detach_node()
            node.create_subscription(ClockMsg, CLOCK, self._on_clock,
                                     QoSProfile(depth=1, reliability=ReliabilityPolicy.BEST_EFFORT))
            return
        node._time_source.detach_node()        # its /clock subscription goes with it
        node._clock = self.sim                 # rclpy's Node keeps its clock there (get_clock, timers)

    def _on_clock(self, msg: ClockMsg) -> None:
        self.sim_ns = msg.clock.sec * 1_000_000_000 + msg.clock.nanosec
        self.sim.set_ros_time_override(Time(nanoseconds=self.sim_ns, clock_type=ClockType.ROS_TIME))
        for ticker in self.tickers:
            ticker(self.sim_ns)


PROCESS_CLOCKS = ProcessClocks()
