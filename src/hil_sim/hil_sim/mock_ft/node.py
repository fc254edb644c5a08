"""Mock F/T sensor: publishes a load profile (hil_core.ft.load_profiles) as WrenchStamped on
``topics.MOCK_FT_WRENCH`` at ``sample_rate``, stamped with the simulated sample time.

Lockstep (``lockstep: true``, ``use_sim_time``): purely driven by ``/clock``. On each tick t_k
it publishes every sample k * T_s in (t_{k-1}, t_k] (integer nanoseconds, so a 2.5 ms frame
carries exactly 4 samples at 1.6 kHz, the last stamped t_k, and nothing drifts). The first
tick after activation publishes only its own sample; a repeated tick publishes nothing.
Real time: a timer at ``timer_period`` publishes the samples that fell due since the last
call, on the same grid, with profile time counted from activation. ``sensor_dropout: [a, b]`` (s, b > a) suppresses every sample with
a <= t <= b: a sensor that goes silent, for fault scenarios.

The profile comes from ``scenario_file`` (YAML: ``seed``, ``components`` list as documented
in hil_core.ft.load_profiles, optional ``sensor_dropout``) or from the ``profile`` parameters.
"""
from __future__ import annotations

from geometry_msgs.msg import WrenchStamped
from rclpy.qos import QoSProfile, ReliabilityPolicy
from rosgraph_msgs.msg import Clock as ClockMsg

from hil_core.ft.load_profiles import LoadProfile, dropout_mask, sample_stamps_between
from hil_nodes import topics
from hil_nodes.framework.base import OK, HilLifecycleNode
from hil_nodes.msgs.convert import fill_wrench_stamped, stamp_to_ns
from hil_nodes.runtime.runner import main_for
from hil_sim.mock_ft import params


class MockFtNode(HilLifecycleNode, name='mock_ft', task='load profile', params=params.PARAMS):
    """Statuses "mock_ft: load profile": the simulated load profile it streams."""

    def hardware_id(self) -> str:
        return 'simulated F/T load profile (hil_sim)'

    def __init__(self, node_name: str | None = None, **kwargs):
        super().__init__(node_name, **kwargs)
        self.profile: LoadProfile | None = None
        self.pub = None
        self._prev_ns: int | None = None
        self._origin_ns = 0
        self._sub = None
        self._timer = None
        self.published = 0

    # --- configuration -----------------------------------------------------------------------
    def configure_node(self) -> None:
        self.profile, self.dropout = params.load_profile(self.p)
        self.period_ns = int(round(1e9 / self.p.sample_rate))
        self.pub = self.create_lifecycle_publisher(WrenchStamped, topics.MOCK_FT_WRENCH, self.stream_qos())
        if self.p.lockstep:
            # best effort matches reliable and best-effort clock publishers; a lost tick only
            # merges two ticks' samples into one batch, the samples themselves are unchanged
            self._sub = self.create_subscription(ClockMsg, topics.CLOCK, self._on_clock,
                                                 QoSProfile(depth=100, reliability=ReliabilityPolicy.BEST_EFFORT))
        else:
            self._timer = self.create_timer(self.p.timer_period, self._on_timer)

    def activate_node(self) -> None:
        self._prev_ns = None
        # profile time: sim time as is; in real time, seconds since activation (grid-aligned)
        if self.get_parameter('use_sim_time').value:
            self._origin_ns = 0
        else:
            self._origin_ns = self.now_ns() // self.period_ns * self.period_ns
        self.status(OK, 'streaming load profile', samples=self.published)

    def deactivate_node(self) -> None:
        self._prev_ns = None

    def cleanup_node(self) -> None:
        self.release(self._sub, self._timer, self.pub)
        self._sub = self._timer = self.pub = None

    # --- publishing ------------------------------------------------------------------------------
    def _on_clock(self, msg: ClockMsg) -> None:
        self.publish_until(stamp_to_ns(msg.clock))

    def _on_timer(self) -> None:
        self.publish_until(self.now_ns())

    def publish_until(self, now_ns: int) -> int:
        """Publish the samples in (previous call, now_ns]; return how many."""
        if not self.active or self.pub is None:
            return 0
        if self._prev_ns is not None and now_ns <= self._prev_ns:
            return 0
        stamps = sample_stamps_between(self._prev_ns, now_ns, self.period_ns)
        self._prev_ns = now_ns
        stamps = stamps[dropout_mask(stamps, self._origin_ns, self.dropout)]
        if stamps.size == 0:
            return 0
        wrenches = self.profile.sample((stamps - self._origin_ns) * 1e-9)
        for ns, w in zip(stamps.tolist(), wrenches):
            msg = WrenchStamped()        # a new message per sample: it belongs to its subscribers
            fill_wrench_stamped(msg, ns, self.p.frame_id, w)
            self.pub.publish(msg)
        self.published += int(stamps.size)
        return int(stamps.size)


main = main_for(MockFtNode)

if __name__ == '__main__':
    main()
