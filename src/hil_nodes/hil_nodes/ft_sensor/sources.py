"""The three interchangeable inputs of the ft_sensor node (parameter ``source``).

Each source calls ``node.ingest(stamps_ns, wrench_si, flagged)`` with samples in stamp order:

* ``SimSource``: the simulated sensor in-process (a load scenario sampled at ``sample_rate``);
* ``MockSource``: subscribes ``topics.MOCK_FT_WRENCH`` (hil_sim.mock_ft.node); one message = one sample.
* ``ReplaySource``: a recorded history (rosbag2 WrenchStamped topic or CSV) resampled onto the
  ``sample_rate`` grid; driven by ``/clock`` in lockstep (samples in (t_{k-1}, t_k]) or by a
  timer in real time, exactly like the mock sensor.
* ``NetFTSource`` (``hil_nodes.ft_sensor.netft_source``): the ATI Net F/T RDT client in a thread.
"""
from __future__ import annotations

import abc

import numpy as np
from geometry_msgs.msg import WrenchStamped
from rclpy.qos import QoSProfile, ReliabilityPolicy
from rosgraph_msgs.msg import Clock as ClockMsg

from hil_core.ft.replay import ReplayProfile, load_bag, load_csv
from hil_core.ft.load_profiles import GridSampler, dropout_mask, load_scenario_file, sample_stamps_between
from hil_nodes import qos, topics
from hil_nodes.framework.base import WARN
from hil_nodes.msgs.convert import stamp_to_ns, wrench_to_array
from hil_nodes.runtime.frame_loop import LOOP
from hil_nodes.runtime.grid_timer import create_grid_timer
from hil_nodes.ft_sensor.netft_source import NetFTSource


class MockSource:
    def __init__(self, node):
        self.node = node
        self.sub = node.create_subscription(WrenchStamped, topics.MOCK_FT_WRENCH, self._on_msg, node.stream_qos())

    def _on_msg(self, msg: WrenchStamped) -> None:
        if self.node.active:
            self.node.ingest(np.array([stamp_to_ns(msg.header.stamp)]), wrench_to_array(msg.wrench)[None, :])

    def activate(self) -> None:
        pass

    def deactivate(self) -> None:
        pass

    def close(self) -> None:
        self.node.release(self.sub)


class _GridSource(abc.ABC):
    """A source whose samples lie on the ``sample_rate`` grid and are taken as time passes:
    on simulated time (lockstep, or real time at another pace than 1), on each ``/clock`` tick the
    samples in (t_{k-1}, t_k] (exactly 4 per 2.5 ms frame, the last stamped t_k); on the wall
    clock, a timer at ``publish_rate`` on the frame grid takes the samples that fell due. Profile
    time: sim time as is; on the wall clock, seconds since activation (grid-aligned). Subclasses
    give ``samples(stamps_ns, t_rel)`` -> (stamps kept, wrenches).

    At another pace (``--time-scale 2``, the headroom check) simulated time moves only when the
    drives publish ``/clock``, once a frame: a timer on that clock fired at the same ticks, but as
    an executor event of its own, a second wake-up a frame after the drives' own; the ``/clock``
    delivery comes in the drives' wake-up (in one process, from the intra-process bus), as the
    wall-clock frame runs both from one shared grid timer (``grid_timer.SharedGrid``)."""

    def __init__(self, node):
        self.node = node
        p = node.p
        self.period_ns = int(round(1e9 / p.sample_rate))
        self._prev: int | None = None
        self._origin = 0
        self.sub = self.timer = None
        if p.lockstep or node.get_parameter('use_sim_time').value:
            # lockstep: the drives' /clock QoS (reliable, transient local), as the time base and the
            # supervisor take it: in a process of its own this subscription may match after the
            # first ticks (DDS discovery, 0.25-2.3 s of wall time, is seconds of lockstep sim time
            # while HOMING does not wait for the F/T chain); best effort, it lost them, and the
            # samples, the tare and every wrench after depended on when it matched (the same seed
            # gave other joint states in 1 of 6 isolated runs). With the history it takes every tick.
            clock_qos = (qos.stream(True) if p.lockstep
                         else QoSProfile(depth=100, reliability=ReliabilityPolicy.BEST_EFFORT))
            self.sub = node.create_subscription(ClockMsg, topics.CLOCK, lambda m: self._advance(stamp_to_ns(m.clock)),
                                                clock_qos)

    def activate(self) -> None:
        self._prev = None
        sim = self.node.get_parameter('use_sim_time').value
        self._origin = 0 if sim else self.node.now_ns() // self.period_ns * self.period_ns
        if not (self.node.p.lockstep or sim) and self.timer is None:
            self._start_aligned_timer()

    def _start_aligned_timer(self) -> None:
        """Real time: read the samples just after each publish-grid instant, as a streaming
        sensor delivers them (hil_nodes.runtime.grid_timer says why)."""
        node = self.node
        self.timer = create_grid_timer(node, 1.0 / node.p.publish_rate,
                                       lambda: self._advance(node.now_ns()))

    def deactivate(self) -> None:
        self._prev = None
        self.node.release(self.timer)
        self.timer = None

    def _advance(self, now_ns: int) -> None:
        if not self.node.active or (self._prev is not None and now_ns <= self._prev):
            return
        stamps = sample_stamps_between(self._prev, now_ns, self.period_ns)
        self._prev = now_ns
        stamps, wrenches = self.samples(stamps, (stamps - self._origin) * 1e-9)
        if stamps.size:
            self.node.ingest(stamps, wrenches)

    @abc.abstractmethod
    def samples(self, stamps, t_rel):
        """(stamps kept, their wrenches) of the grid samples ``stamps`` (profile time ``t_rel``)."""

    def close(self) -> None:
        self.node.release(self.sub, self.timer)


class SimSource(_GridSource):
    """The simulated sensor read in-process (what the Net F/T box is to the lab): samples of a
    load scenario (``sim_load_file``, the format of hil_sim.mock_ft.node's scenario files), so 1.6 kHz
    samples never cross DDS."""

    def __init__(self, node):
        self.profile, self.dropout = load_scenario_file(node.p.sim_load_file, node.p.seed)
        super().__init__(node)
        self.sampler = GridSampler(self.profile, self.period_ns)

    def samples(self, stamps, t_rel):
        if self.dropout[1] > self.dropout[0]:      # (no window: every sample, without a mask a frame)
            stamps = stamps[dropout_mask(stamps, self._origin, self.dropout)]
        # grid indices of profile time: stamps and origin are multiples of the sample period
        values = self.sampler.sample((stamps - self._origin) // self.period_ns)
        if self.sampler.prefetch_due():       # the next block after this frame, not in a later one
            LOOP.after_frame(self.node, self.sampler.prefetch)
        return stamps, values


class ReplaySource(_GridSource):
    """A recorded history (rosbag2 WrenchStamped topic or CSV) resampled onto the grid."""

    def __init__(self, node):
        p = node.p
        t, w = load_csv(p.replay_file) if p.replay_file.lower().endswith('.csv') else load_bag(p.replay_file,
                                                                                             p.replay_topic)
        self.profile = ReplayProfile(t, w, loop=p.replay_loop)
        self.finished = False
        super().__init__(node)

    def activate(self) -> None:
        super().activate()
        self.finished = False

    def samples(self, stamps, t_rel):
        keep = t_rel >= 0
        if not self.profile.loop:
            keep &= t_rel <= self.profile.duration
            if not self.finished and t_rel.size and t_rel[-1] > self.profile.duration:
                self.finished = True
                self.node.status(WARN, 'replay finished: no more samples (outputs go stale)',
                                 duration=self.profile.duration)
        return stamps[keep], self.profile.sample(t_rel[keep])


SOURCES = {'sim': SimSource, 'mock': MockSource, 'replay': ReplaySource, 'netft': NetFTSource}
