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

from hil_core.ft.load_profiles import LoadProfile, check_dropout, dropout_mask, load_scenario_file, sample_stamps_between
from hil_nodes import topics
from hil_nodes.framework.base import OK, HilLifecycleNode, Param
from hil_nodes.msgs.convert import array_to_wrench, ns_to_stamp, stamp_to_ns
from hil_nodes.runtime.runner import main_for

PROFILES = ('none', 'constant', 'impulses', 'steps', 'chirp', 'pushes')




class MockFtNode(HilLifecycleNode):
    # statuses "mock_ft: load profile": the simulated load profile it streams
    STATUS_TASK = 'load profile'
    PARAMS = (
        Param('sample_rate', float, 1600.0, 'samples per second of sim time (servo rate, seed 000)',
              range=(1.0, 10000.0)),
        Param('frame_id', str, 'ft_sensor', 'frame_id of the published wrenches'),
        Param('scenario_file', str, '', 'YAML load scenario (seed, components, sensor_dropout); overrides profile'),
        Param('profile', str, 'impulses', 'main load component', choices=PROFILES),
        Param('axis', int, 0, 'wrench axis of the main component (0..5 = fx..tz)', range=(0, 5)),
        Param('amplitude', float, 20.0, 'amplitude of the main component (N or N m)', range=(-1e4, 1e4)),
        Param('start', float, 1.0, 'first impulse/step/chirp time (s)', range=(0.0, 1e6)),
        Param('period', float, 2.0, 'time between impulses/steps (s)', range=(1e-3, 1e6)),
        Param('count', int, 4, 'number of impulses/steps', range=(0, 1_000_000)),
        Param('width', float, 0.02, 'impulse duration (s, half-sine)', range=(1e-4, 10.0)),
        Param('chirp_f0', float, 0.1, 'chirp start frequency (Hz)', range=(0.0, 1000.0)),
        Param('chirp_f1', float, 10.0, 'chirp end frequency (Hz)', range=(0.0, 1000.0)),
        Param('chirp_duration', float, 10.0, 'chirp duration (s)', range=(1e-3, 1e6)),
        Param('push_rate', float, 1.0, 'random pushes per second (joystick-like)', range=(1e-3, 100.0)),
        Param('push_torque', float, 1.0, 'peak torque of random pushes (N m)', range=(0.0, 1e3)),
        Param('horizon', float, 600.0, 'time span over which random pushes are drawn (s)', range=(1.0, 1e6)),
        Param('offset', 'float[]', [0.0] * 6, 'constant wrench added to everything', length=6),
        Param('noise_std', float, 0.05, 'white sensor noise std (N; torques get a tenth)', range=(0.0, 1e3)),
        Param('mains_amplitude', float, 0.2, 'drive mains noise amplitude (N), seed 000', range=(0.0, 1e3)),
        Param('mains_hz', float, 50.0, 'mains frequency (Hz)', range=(1.0, 1000.0)),
        Param('mains_harmonics', int, 3, 'number of mains harmonics (amplitude 1/h)', range=(0, 50)),
        Param('seed', int, 0, 'seed of noise and random pushes (same seed, same samples)'),
        Param('sensor_dropout', 'float[]', [0.0, 0.0], 'no samples in [a, b] s of sim time', check=check_dropout),
        Param('timer_period', float, 0.0025, 'real time: publishing period (s)', range=(1e-4, 1.0)),
    )

    def hardware_id(self) -> str:
        return 'simulated F/T load profile (hil_sim)'

    def __init__(self, node_name: str = 'mock_ft', **kwargs):
        super().__init__(node_name, **kwargs)
        self.profile: LoadProfile | None = None
        self.pub = None
        self._prev_ns: int | None = None
        self._origin_ns = 0
        self._sub = None
        self._timer = None
        self.published = 0

    # --- configuration -----------------------------------------------------------------------
    def _components_from_params(self) -> list[dict]:
        p = self.p
        main = {'type': p.profile, 'axis': p.axis, 'amplitude': p.amplitude, 'start': p.start,
                'period': p.period, 'count': p.count, 'width': p.width}
        if p.profile == 'chirp':
            main.update(f0=p.chirp_f0, f1=p.chirp_f1, duration=p.chirp_duration)
        elif p.profile == 'pushes':
            main = {'type': 'pushes', 'rate': p.push_rate, 'force': abs(p.amplitude), 'torque': p.push_torque,
                    'horizon': p.horizon, 'start': p.start}
        elif p.profile == 'constant':
            w = [0.0] * 6
            w[p.axis] = p.amplitude
            main = {'type': 'constant', 'wrench': w}
        comps = [] if p.profile == 'none' else [main]
        comps.append({'type': 'constant', 'wrench': list(p.offset)})
        if p.noise_std > 0:
            s = p.noise_std
            comps.append({'type': 'noise', 'std': [s, s, s, s / 10, s / 10, s / 10], 'rate': p.sample_rate})
        if p.mains_amplitude > 0 and p.mains_harmonics > 0:
            comps.append({'type': 'mains', 'axes': [0, 1, 2], 'amplitude': p.mains_amplitude,
                          'frequency': p.mains_hz, 'harmonics': p.mains_harmonics})
        return comps

    def configure_node(self) -> None:
        self.dropout = tuple(self.p.sensor_dropout)
        if self.p.scenario_file:
            self.profile, dropout = load_scenario_file(self.p.scenario_file, self.p.seed)
            if dropout[1] > dropout[0]:
                self.dropout = dropout
        else:
            self.profile = LoadProfile(self._components_from_params(), seed=self.p.seed)
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
        if self._sub is not None:
            self.destroy_subscription(self._sub)
        if self._timer is not None:
            self.destroy_timer(self._timer)
        if self.pub is not None:
            self.destroy_lifecycle_publisher(self.pub)
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
            msg = WrenchStamped()
            msg.header.stamp = ns_to_stamp(ns)
            msg.header.frame_id = self.p.frame_id
            msg.wrench = array_to_wrench(w)
            self.pub.publish(msg)
        self.published += int(stamps.size)
        return int(stamps.size)


main = main_for(MockFtNode)

if __name__ == '__main__':
    main()
