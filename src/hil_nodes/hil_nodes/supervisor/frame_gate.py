"""The supervisor's frame gate: /hil/frame, the run time and the run duration (seed 004:
lockstep; docs/supervisor.md "Frame gate").

One purpose apart from the mode machine and the liveness it serves: turn the time source into
frames. In lockstep a frame follows every /clock (reliable, so the planner and the hardware see
each one); in real time a steady timer ticks at ``frame_period`` while someone reads /hil/frame
and slowly otherwise, which still keeps the run time and the duration check. The supervisor
node owns it and hands over what it must not know itself: whether the gate is open (its
bring-up), the mode machine, the liveness check a /clock triggers and how to request STOP.
"""
from __future__ import annotations

from typing import Callable

from rosgraph_msgs.msg import Clock as ClockMsg
from std_msgs.msg import Header

from hil_core.supervision.modes import HilMode, ModeMachine
from hil_nodes import qos, topics
from hil_nodes.msgs.convert import stamp_to_ns
from hil_nodes.runtime.intra_publisher import reader_count

FRAME_WATCH_PERIOD = 0.02   # s: real-time frame tick while nobody reads /hil/frame
_STOPPABLE = frozenset({HilMode.HOMING, HilMode.SYNCHRONIZING, HilMode.RUNNING})


class FrameGate:
    """Publishes /hil/frame (stamp = frame time, ``frame_id`` = the mode) while ``is_open()``,
    counts ``frames`` and the run time ``run_time_ns`` from the first frame, and calls ``stop()``
    once when the run time reaches ``run_duration`` (s; 0: never) in a mode that can stop.
    ``before_frame()`` runs on every /clock before the gate looks (lockstep: the liveness check
    is frame-aligned). ``last_clock_ns`` is the newest /clock seen (None before one or in real
    time): the node clock may lag it."""

    def __init__(self, node, machine: ModeMachine, lockstep: bool, frame_period: float, run_duration: float,
                 steady_clock, is_open: Callable[[], bool], before_frame: Callable[[], None],
                 stop: Callable[[], None]):
        self._node, self._machine = node, machine
        self._lockstep, self._frame_period, self._steady = lockstep, frame_period, steady_clock
        self._is_open, self._before_frame, self._stop = is_open, before_frame, stop
        self._duration_ns = int(round(run_duration * 1e9))
        self._t0_ns: int | None = None
        self.run_time_ns = 0
        self.frames = 0
        self.run_duration_reached = False
        self.last_clock_ns: int | None = None
        self._fast_frames = False
        self._pub = node.create_publisher(Header, topics.HIL_FRAME, qos.stream(reliable=lockstep))
        if lockstep:
            node.create_subscription(ClockMsg, topics.CLOCK, self._on_clock, qos.stream(reliable=True))
        else:
            # real time: frames at the frame rate only while someone reads /hil/frame (Hexafloat's
            # planner does not); otherwise a slow tick keeps the run time and the duration check
            self._timer = node.create_timer(FRAME_WATCH_PERIOD, self._on_timer, clock=steady_clock)

    def _on_clock(self, msg: ClockMsg) -> None:
        t_ns = stamp_to_ns(msg.clock)
        self.last_clock_ns = t_ns
        self._before_frame()
        if self._is_open():
            self._frame(msg.clock, t_ns)

    def _on_timer(self) -> None:
        # readers inside the process count too (served by the intra-process bus: no DDS reader)
        readers = reader_count(self._pub) > 0
        if readers != self._fast_frames:
            self._fast_frames = readers
            self._node.destroy_timer(self._timer)
            self._timer = self._node.create_timer(self._frame_period if readers else FRAME_WATCH_PERIOD,
                                                  self._on_timer, clock=self._steady)
        if self._is_open():
            now = self._node.get_clock().now()
            self._frame(now.to_msg(), now.nanoseconds)

    def _frame(self, stamp, t_ns: int) -> None:
        # run time counts from the first frame: t = 0 in simulation, the wall time of the first
        # frame in real time (wall clock everywhere)
        if self._t0_ns is None:
            self._t0_ns = 0 if self._lockstep else t_ns
        self.run_time_ns = t_ns - self._t0_ns
        if self._duration_ns > 0 and not self.run_duration_reached and self.run_time_ns >= self._duration_ns:
            self.run_duration_reached = True
            if self._machine.mode in _STOPPABLE:
                self._stop()
            else:
                self._node.get_logger().info(
                    f'run_duration reached in mode {self._machine.mode.value}: nothing to stop')
        if self._lockstep or self._fast_frames:
            self._pub.publish(Header(stamp=stamp, frame_id=self._machine.mode.value))
        self.frames += 1
