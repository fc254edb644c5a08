"""ft_sensor: the F/T sensor driver node (seed 000, sections 3 and 5).

Sources (``source``): ``netft`` (ATI Net F/T RDT over UDP), ``mock`` (hil_sim.mock_ft.node topic),
``replay`` (rosbag2 WrenchStamped topic or CSV). Every sample goes through
``hil_core.ft.signal_chain`` (validity, payload gravity compensation, bias, Butterworth
low-pass, optional notch, decimation) and the node publishes, with stamp = sample time:

* ``topics.FT_WRENCH_RAW``: compensated, biased, unfiltered valid samples (on the publish grid,
  or every valid sample with ``publish_raw_all``);
* ``topics.FT_WRENCH``: the filtered wrench at ``publish_rate``.

Contract for downstream nodes (the admittance node relies on it): a rejected sample (NaN/inf,
saturated, status error, 10x spike, out of order, wrong packet length) is never published; it
is replaced by the last valid one in the filter input and reported as an ERROR diagnostic.
Once no valid sample has arrived for ``stale_timeout`` (sample time) the node publishes nothing
on either topic until valid data returns: downstream must hold on silence.
In lockstep the node is purely reactive: the filtered wrench for frame t_k is published as
soon as the input sample stamped t_k has been processed.

Force joystick (``topics.JOYSTICK_WRENCH``, geometry_msgs/WrenchStamped from the HMI or a lab
joystick node): the operator's wrench, limited in magnitude and rate and released when it goes
silent (``hil_core.ft.joystick``), is added to every sample of the sensor's load before the
signal chain, exactly where a push on a joystick mounted on the sensor would appear. It acts on
simulated and recorded loads; on a real sensor (``netft``) only with ``joystick_in_hardware``.
A refused input (NaN/inf, an unknown frame) is a WARN status ``ft_sensor: joystick``.
"""
from __future__ import annotations

import threading
import time

import numpy as np
from geometry_msgs.msg import PoseStamped, WrenchStamped
from rclpy.clock import Clock, ClockType
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from std_srvs.srv import Trigger

from hil_core.ft.joystick import JoystickLoad
from hil_core.ft.signal_chain import REASONS, VALID, SignalChain, published, rotate_wrench
from hil_core.maths.rotations import quat_to_matrix
from hil_nodes import topics
from hil_nodes.framework.base import ERROR, OK, WARN, HilLifecycleNode
from hil_nodes.msgs.convert import pose_to_array, wrench_to_array
from hil_nodes.ft_sensor import params
from hil_nodes.ft_sensor.sources import SOURCES
from hil_nodes.runtime.chain_port import wrench_port
from hil_nodes.runtime.runner import main_for

# input errors, every kind under one throttle, are told at most once per this many wall s: the
# contract of docs/ft_sensor.md (a 7 kHz stream of NaN is one ERROR per 0.2 s), tighter than the
# common default because a sensor fault is what the operator must see first
INPUT_ERROR_INTERVAL = 0.2

# the joystick is read best effort: a best-effort or reliable publisher (the HMI, a lab node) both
# match, and a lost message is replaced by the next one (joysticks repeat at 10-50 Hz)
JOYSTICK_QOS = QoSProfile(depth=10, history=HistoryPolicy.KEEP_LAST, reliability=ReliabilityPolicy.BEST_EFFORT,
                          durability=DurabilityPolicy.VOLATILE)
JOYSTICK_TASK = 'joystick'


class FtSensorNode(HilLifecycleNode, name='ft_sensor', task='signal chain', params=params.PARAMS):
    """Statuses "ft_sensor: signal chain", hardware_id the sensor read (hardware_id())."""

    def __init__(self, node_name: str | None = None, **kwargs):
        super().__init__(node_name, **kwargs)
        self.lock = threading.RLock()
        self.chain: SignalChain | None = None
        self.source = None
        self.pub = self.pub_raw = None
        self._srv = self._timer = self._pose_sub = self._joy_sub = None
        self.joystick: JoystickLoad | None = None
        self.joystick_on = False
        self.R = np.eye(3)
        self.published = 0
        self.bad_packets = 0
        self._rate_count = 0
        self._rate_t = time.monotonic()
        self._was_stale = True

    def check_parameters(self, p) -> str | None:
        if p.filter_cutoff_hz >= 0.5 * p.sample_rate:
            return f"parameter 'filter_cutoff_hz' = {p.filter_cutoff_hz} must be below half of sample_rate ({p.sample_rate})"
        if p.notch_hz >= 0.5 * p.sample_rate:
            return f"parameter 'notch_hz' = {p.notch_hz} must be below half of sample_rate ({p.sample_rate})"
        if p.publish_rate > p.sample_rate:
            return f"parameter 'publish_rate' = {p.publish_rate} exceeds sample_rate = {p.sample_rate}"
        if p.source == 'sim' and not p.sim_load_file:
            return "parameter 'sim_load_file' is required when source is 'sim'"
        if p.source == 'replay' and not p.replay_file:
            return "parameter 'replay_file' is required when source is 'replay'"
        return None

    # --- lifecycle --------------------------------------------------------------------------------
    def hardware_id(self) -> str:
        """The sensor the signal chain reads (its statuses are about that sensor)."""
        source = self._declared_or_default('source')
        if source == 'netft':
            return f"ATI Net F/T {self._declared_or_default('sensor_ip')}"
        if source == 'replay':
            return f"replayed F/T data {self._declared_or_default('replay_file') or '(no file)'}"
        return {'sim': 'simulated F/T sensor', 'mock': 'mock F/T sensor (hil_sim mock_ft)'}.get(source, source)

    def configure_node(self) -> None:
        p = self.p
        self.chain = SignalChain(params.chain_config(p))
        self._cycle = self.cycle_monitor('samples', 1.0 / p.publish_rate)
        self.pub = self.create_lifecycle_publisher(WrenchStamped, topics.FT_WRENCH, self.driver_output_qos())
        self.pub_raw = self.create_lifecycle_publisher(WrenchStamped, topics.FT_WRENCH_RAW, self.driver_output_qos())
        self._port, self._raw_port = wrench_port(self.pub, self._frame_id), wrench_port(self.pub_raw, self._frame_id)
        self._srv = self.create_service(Trigger, topics.FT_BIAS, self._on_bias)
        self._timer = self.create_timer(p.status_period, self._diagnose, clock=Clock(clock_type=ClockType.STEADY_TIME))
        if p.use_tcp_pose:
            self._pose_sub = self.create_subscription(PoseStamped, topics.KINEMATICS_TCP_POSE, self._on_pose,
                                                      self.stream_qos())
        self.joystick = JoystickLoad(params.joystick_limits(p))
        self.joystick_on = params.joystick_allowed(p)
        self._joy_sub = self.create_subscription(WrenchStamped, topics.JOYSTICK_WRENCH, self._on_joystick,
                                                 JOYSTICK_QOS)
        try:
            self.source = SOURCES[p.source](self)
        except (ValueError, OSError) as exc:
            self._release_configured()
            raise ValueError(f'source {p.source!r}: {exc}') from exc

    def activate_node(self) -> None:
        self._was_stale = True
        with self.lock:
            self.joystick.reset()
        self.source.activate()
        self.status(OK, f'active, source {self.p.source}', filter_delay_ms=1e3 * self.chain.delay_estimate())

    def deactivate_node(self) -> None:
        self.source.deactivate()

    def cleanup_node(self) -> None:
        self._release_configured()

    def error_node(self) -> None:
        # the source is the hardware side: closed (a Net F/T stops streaming), and with it what
        # configure created, as on_error leads to the unconfigured state without a cleanup
        self._release_configured()

    def process_exit(self) -> None:
        if self.source is not None and hasattr(self.source, 'client'):
            self.source.close()   # tell a real box to stop streaming

    def destroy_node(self):
        self._close_source()      # stop the receive thread before the handles go away
        return super().destroy_node()

    def _close_source(self) -> None:
        if self.source is not None:
            self.source.close()
            self.source = None

    def _release_configured(self) -> None:
        self._close_source()
        self.release(self._srv, self._timer, self._pose_sub, self._joy_sub, self.pub, self.pub_raw)
        self._srv = self._timer = self._pose_sub = self._joy_sub = self.pub = self.pub_raw = None

    # --- data path ----------------------------------------------------------------------------------
    def _on_pose(self, msg: PoseStamped) -> None:
        q = pose_to_array(msg.pose)[3:]
        if np.all(np.isfinite(q)) and np.linalg.norm(q) > 0.5:
            self.R = quat_to_matrix(q)

    def _on_joystick(self, msg: WrenchStamped) -> None:
        """The operator's wrench: in the sensor's axes (frame_id '' or ``frame_id``) or in the base's
        (``base_frame_id``: turned into the sensor's by the current orientation)."""
        if not self.active or self.joystick is None:
            return
        p = self.p
        if not self.joystick_on:
            self.report_problem('joystick ignored', WARN, f'joystick input ignored: source {p.source} is a real '
                                "sensor and 'joystick_in_hardware' is false", task=JOYSTICK_TASK)
            return
        frame = msg.header.frame_id
        w = wrench_to_array(msg.wrench)
        kind = 'joystick value'                  # one throttle per kind of refusal
        with self.lock:
            if frame in ('', p.frame_id):
                why = self.joystick.command(w, self.chain.last_stamp)
            elif frame == p.base_frame_id:          # base axes -> sensor axes (R: sensor -> base)
                why = self.joystick.command(rotate_wrench(self.R.T, w), self.chain.last_stamp)
            else:
                self.joystick.refused += 1
                kind = 'joystick frame'
                why = (f"joystick frame '{frame}' refused: give '{p.frame_id}' (sensor axes, '' too) or "
                       f"'{p.base_frame_id}' (base axes)")
        if why is not None:
            self.report_problem(kind, WARN, why, interval=INPUT_ERROR_INTERVAL, task=JOYSTICK_TASK,
                                figures=self._joystick_figures)

    def _joystick_figures(self) -> dict:
        j = self.joystick
        return dict(joystick_force=float(np.linalg.norm(j.applied[:3])),
                    joystick_torque=float(np.linalg.norm(j.applied[3:])),
                    joystick_applied=' '.join(f'{v:.4g}' for v in j.applied),
                    joystick_accepted=j.accepted, joystick_refused=j.refused, joystick_active=self.joystick_on)

    def ingest(self, stamps_ns, wrench_si, flagged=None) -> None:
        """Run samples through the chain and publish (called by the sources, any thread)."""
        with self.lock:
            if self.chain is None or not self.active:
                return
            if self.joystick_on:
                joy = self.joystick.sample_active(stamps_ns)     # None while nobody pushes
                if joy is not None:
                    wrench_si = np.asarray(wrench_si, dtype=float) + joy
            with self._cycle(int(stamps_ns[-1])):
                self._process(stamps_ns, wrench_si, flagged)

    def _process(self, stamps_ns, wrench_si, flagged) -> None:
        """One batch of samples through the chain; publish what falls on the publish grid."""
        out = self.chain.process(stamps_ns, wrench_si, R=self.R, flagged=flagged)
        self._rate_count += len(out.stamps)
        # only what is published (1 of 4), in the output frame: one compiled call
        pub = published(out, self.R, self.p.publish_raw_all, self.p.output_frame == 'base')
        for k, stamp in enumerate(pub.raw_stamps):
            self._raw_port.send((stamp, pub.raw[k]))
        for k, stamp in enumerate(pub.stamps):
            self._port.send((stamp, pub.filtered[k]))
            self.published += 1
            self.count_published(topics.FT_WRENCH)
        if pub.rejected:
            bad = out.reason[out.reason != VALID]
            self.report_input_error(f'rejected F/T sample(s): {", ".join(sorted({REASONS[r] for r in bad}))}; '
                                    'holding the last valid value', kind='rejected samples')
        stale = self.chain.is_stale(int(out.stamps[-1]))
        if stale and not self._was_stale and self.chain.last_valid_stamp is not None:
            self.status(ERROR, f'no valid F/T data for more than stale_timeout = {self.p.stale_timeout} s: '
                        'wrench output stopped, downstream must hold', **self._figures())
        self._was_stale = stale

    def _frame_id(self) -> str:
        return self.p.frame_id if self.p.output_frame == 'sensor' else self.p.base_frame_id

    def report_input_error(self, message: str, kind: str = 'input error') -> None:
        """An input fault (found here or by the source): an ERROR with the figures, at most once
        per INPUT_ERROR_INTERVAL for its ``kind``. Bad packets and rejected samples are kinds of
        their own: a sensor flagging every sample must not hide the packets it corrupts (with
        one throttle, the first report after each interval won, and a wrong-length packet was
        told in about one interval in twenty)."""
        self.report_problem(kind, ERROR, message, interval=INPUT_ERROR_INTERVAL, figures=self._figures)

    def report_bad_packets(self, n: int) -> None:
        self.bad_packets += n
        self.report_input_error(f'{n} RDT packet(s) of the wrong length (not 36 bytes) dropped', kind='bad packets')

    def report_silent(self, silent_for: float) -> None:
        p = self.p
        self.report_input_error(f'sensor silent: no RDT packet from {p.sensor_ip}:{p.sensor_port} for '
                                f'{silent_for:.2f} s. Only one client can stream from a Net F/T at a time: check '
                                'that no other program (another driver, the web page, a second node) is streaming '
                                'from it; re-requesting the stream')

    # --- bias service and diagnostics ---------------------------------------------------------------
    def _on_bias(self, request, response):
        if not self.active or self.chain is None:
            response.success, response.message = False, 'ft_sensor is not active'
            return response
        if self.p.hardware_bias and self.p.source == 'netft':
            self.source.hardware_bias()
            with self.lock:
                self.chain.clear_bias()
            response.success, response.message = True, f'hardware bias (0x0042) sent to {self.p.sensor_ip}'
            return response
        with self.lock:
            response.success, response.message = self.chain.tare()
        self.status(OK if response.success else WARN, response.message)
        return response

    def _figures(self) -> dict:
        c = self.chain
        figures = dict(source=self.p.source, published=self.published, nonfinite=c.counters['nonfinite'],
                       saturated=c.counters['saturated'], spikes=c.counters['spike'],
                       status_errors=c.counters['status'], out_of_order_stamps=c.counters['out_of_order'],
                       filter_delay_ms=1e3 * c.delay_estimate(), bad_packets=self.bad_packets)
        if hasattr(self.source, 'figures'):      # netft: packets, strays, resets, rate (netft_source)
            figures.update(self.source.figures())
        if self.joystick is not None:
            figures.update(self._joystick_figures())
        return figures

    def _diagnose(self) -> None:
        if not self.active or self.chain is None:
            return
        now = time.monotonic()
        with self.lock:
            rate = self._rate_count / max(now - self._rate_t, 1e-9)
            self._rate_count, self._rate_t = 0, now
            figures = self._figures()
            stale = self._was_stale
        if self.chain.last_valid_stamp is None:
            level, msg = WARN, 'waiting for the first valid F/T sample'
        elif stale:
            level, msg = ERROR, 'no valid F/T data: output stopped, downstream holds'
        elif rate == 0.0:
            # lockstep: the simulation may just be paused; real time: the input has stopped
            level = WARN if self.p.lockstep else ERROR
            msg = f'no F/T input sample in the last {self.p.status_period:g} s: output stopped'
        else:
            level, msg = OK, 'streaming'
        if getattr(self.source, 'fault', None):
            level, msg = ERROR, self.source.fault
        if getattr(self.source, 'silent', False):
            level, msg = ERROR, 'sensor silent (only one client can stream from a Net F/T at a time)'
        self.status(level, msg, rate_hz=rate, **figures)


main = main_for(FtSensorNode)

if __name__ == '__main__':
    main()
