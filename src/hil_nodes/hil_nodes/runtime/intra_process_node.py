"""The node side of the intra-process bus (``hil_nodes.runtime.intra_process``): a mixin that makes a
node's publishers and subscriptions bus ones when the bus is enabled, and counts its executor
callbacks (``hil_nodes.runtime.served``)."""
from __future__ import annotations

import inspect

from rclpy.clock import Clock, ClockType
from rclpy.qos import QoSProfile

from hil_nodes.runtime.frame_loop import LOOP, runs_on_loop, slack_for
from hil_nodes.runtime.intra_process import BUS, NODE_DESTROYED, eligible, is_latched
from hil_nodes.runtime.intra_publisher import IntraPublisher
from hil_nodes.runtime.intra_subscription import IntraSubscription
from hil_nodes.runtime.process_clock import PROCESS_CLOCKS
from hil_nodes.runtime.served import counted


def _as_qos(qos_profile) -> QoSProfile:
    return QoSProfile(depth=qos_profile) if isinstance(qos_profile, int) else qos_profile


class IntraProcessNode:
    """Mixin (before rclpy's Node / LifecycleNode in the bases): publishers and subscriptions go
    through ``BUS`` when it is enabled (``eligible``: not the shared topics, not rclpy's own);
    everything else is plain rclpy. A node on simulated time takes the process's one clock, right
    after rclpy built it and before it makes any timer (``runtime.process_clock``)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        PROCESS_CLOCKS.adopt(self)

    def create_publisher(self, msg_type, topic, qos_profile, **kwargs):
        inner = super().create_publisher(msg_type, topic, qos_profile, **kwargs)
        if not eligible(inner.topic_name, self.get_namespace()) or kwargs.get('publisher_class'):
            return inner
        qos = _as_qos(qos_profile)
        return IntraPublisher(self, inner, lifecycle=False, latched=is_latched(qos), depth=qos.depth)

    def create_lifecycle_publisher(self, msg_type, topic, qos_profile, **kwargs):
        inner = super().create_lifecycle_publisher(msg_type, topic, qos_profile, **kwargs)
        if not eligible(inner.topic_name, self.get_namespace()):
            return inner
        qos = _as_qos(qos_profile)
        return IntraPublisher(self, inner, lifecycle=True, latched=is_latched(qos), depth=qos.depth)

    def destroy_publisher(self, publisher) -> bool:
        if isinstance(publisher, IntraPublisher):
            BUS.remove_publisher(publisher)
            publisher = publisher.inner
        return super().destroy_publisher(publisher)

    def destroy_lifecycle_publisher(self, publisher) -> bool:
        if isinstance(publisher, IntraPublisher):
            BUS.remove_publisher(publisher)
            publisher = publisher.inner
        return super().destroy_lifecycle_publisher(publisher)

    def create_subscription(self, msg_type, topic, callback, qos_profile, *, raw: bool = False, chain_input=None,
                            **kwargs):
        """rclpy's, and ``chain_input``: what takes a chain port's payload instead of a message when
        the topic's producer is a chain port in this process (hil_nodes.runtime.chain_port); the
        message ``callback`` must turn a message into that payload and hand it to ``chain_input``,
        so both ways run the same code."""
        qos = _as_qos(qos_profile)
        resolved = self.resolve_topic_name(topic)
        if not eligible(resolved, self.get_namespace()) or kwargs.get('content_filter_options') is not None:
            return super().create_subscription(msg_type, topic, counted(callback, self), qos_profile, raw=raw,
                                               **kwargs)
        return IntraSubscription(self, msg_type, resolved, callback, qos, raw, kwargs, chain_input=chain_input)

    # executor callbacks are counted (hil_nodes.runtime.served: the spin loop's idle-turn test), and
    # one that raises stops its node in place, not the process (served.counted, liveness.fail_in_place)
    def create_timer(self, timer_period_sec, callback, *args, **kwargs):
        """rclpy's timer; in a process whose spin loop runs deadlines (``frame_loop``), a timer on
        a clock that is not simulated time (a status, a watch, the frame gate's tick) is one of
        them instead, lazy when its period allows (``frame_loop.slack_for``): it runs in a frame's
        wake-up rather than waking the process itself. Callbacks that take rclpy's TimerInfo,
        and timers with a callback group or autostart, stay rclpy timers."""
        wrapped = counted(callback, self)
        if not args and set(kwargs) <= {'clock'} and runs_on_loop(self, kwargs.get('clock')) and \
                not inspect.signature(callback).parameters:
            return self._own_loop_timer(timer_period_sec, wrapped, slack_for(timer_period_sec))
        return super().create_timer(timer_period_sec, wrapped, *args, **kwargs)

    def _own_loop_timer(self, period_s: float, wrapped, slack_s: float = 0.0):
        timer = LOOP.add(period_s, wrapped, slack_s=slack_s)
        # ended with the node, as rclpy ends a node's timers (a cancelled one may be reset: kept
        # until destroyed)
        self.__dict__.setdefault('_loop_timers', []).append(timer)
        return timer

    def create_shared_timer(self, timer_period_sec, callback, clock=None):
        """A timer this node hosts for callbacks of other nodes too (a shared frame grid): counted,
        but not stopped when this node stops in place (each callback is judged by its own node)."""
        return super().create_timer(timer_period_sec, counted(callback), clock=clock)

    def create_loop_timer(self, timer_period_sec, callback):
        """A periodic callback on the steady clock: a deadline of the process's spin loop when it
        runs them (runtime.frame_loop), else an rclpy timer; counted and stopped in place alike."""
        steady = Clock(clock_type=ClockType.STEADY_TIME)
        if LOOP.driven:
            return self._own_loop_timer(timer_period_sec, counted(callback, self))
        return super().create_timer(timer_period_sec, counted(callback, self), clock=steady)

    def create_group_timer(self, timer_period_sec, callback, clock=None):
        """A periodic check (heartbeat, status, watch): in the process's group for its period and
        clock when several nodes share the process, else a timer of its own (runtime.timer_group)."""
        from hil_nodes.runtime.timer_group import group_timer
        return group_timer(self, timer_period_sec, callback, clock=clock)

    def create_service(self, srv_type, srv_name, callback, **kwargs):
        return super().create_service(srv_type, srv_name, counted(callback, self), **kwargs)

    def destroy_node(self):
        for hook in NODE_DESTROYED:     # registries keyed by node (grid_timer's shared grids)
            hook(self)
        for timer in self.__dict__.pop('_loop_timers', ()):     # as rclpy destroys a node's timers
            timer.cancel()
        return super().destroy_node()

    def destroy_timer(self, timer) -> bool:
        leave = getattr(timer, 'leave_grid', None)       # a callback on a shared grid (grid_timer)
        if leave is not None:
            leave()
            mine = self.__dict__.get('_loop_timers', [])
            if timer in mine:                              # (a loop timer of this node's)
                mine.remove(timer)
            return True
        return super().destroy_timer(timer)

    def destroy_subscription(self, subscription) -> bool:
        if isinstance(subscription, IntraSubscription):
            subscription.destroy()
            return True
        return super().destroy_subscription(subscription)

    # the plain rclpy entities behind an IntraSubscription (which calls these two)
    def plain_create_subscription(self, msg_type, topic, callback, qos, **kwargs):
        return super().create_subscription(msg_type, topic, counted(callback, self), qos, **kwargs)

    def plain_destroy_subscription(self, subscription) -> bool:
        return super().destroy_subscription(subscription)
