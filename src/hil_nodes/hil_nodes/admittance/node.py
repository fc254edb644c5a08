"""``admittance`` lifecycle node: measured wrench -> 6-DOF model -> reference TCP pose (PBAC).

Seed 000 sections 3 and 5.1: each high-level cycle the dynamic model is integrated with the
measured loads and gives the reference pose of the TCP. The node is *reactive*: one exact
model step per incoming wrench, outputs stamped with the wrench's sample time, so a lockstep run
is deterministic (the output depends only on message content). See docs/admittance.md.

Input contract (F/T node): a wrench per period T, stamped with its sample time; a sensor in
trouble stops publishing after its stale time. Here:
* stamp not advanced by at least half a period (duplicate / out of order): rejected, diagnostic;
* NaN/inf component: ignored, diagnostic (the next valid sample sees a gap);
* gap of n periods: the n-1 missing steps are integrated with the last valid wrench held, but
  only up to ``stale_timeout``; beyond it the state is frozen (held), then the new sample is applied;
* no wrench for ``stale_timeout`` (node-clock timer): STALE diagnostic, state held;
* /hil/mode FAULT: wrenches ignored (state held) until the mode leaves FAULT;
* /hil/mode becoming IDLE after a run, or the reset service: back to home at rest.
"""
from __future__ import annotations


import numpy as np
import yaml
from geometry_msgs.msg import AccelStamped, PoseStamped, TwistStamped, WrenchStamped
from std_msgs.msg import String
from std_srvs.srv import Trigger

from hil_core.admittance import CumminsFloater, LtiAdmittanceModel, matrices_from_frequency
from hil_core.admittance.lti_model import (SEED_DAMPING_RATIO, SEED_FREQUENCY_HZ, SEED_STIFFNESS,
                                           matrices_from_mass)
from hil_core.admittance.pose_offset import check_home_pose
from hil_nodes import qos, topics
from hil_nodes.msgs import convert
from hil_nodes.framework.base import OK, STALE, WARN, HilLifecycleNode, Param
from hil_nodes.msgs.message_ring import MessageRing, fill_pose_stamped
from hil_nodes.runtime.runner import main_for

_M0, _D0, _K0 = matrices_from_frequency(SEED_FREQUENCY_HZ, SEED_DAMPING_RATIO, SEED_STIFFNESS)
# Parameters that change the model's matrices only: applied bumplessly (state kept) while active.
MODEL_PARAMS = frozenset({'natural_frequency', 'damping_ratio', 'stiffness', 'mass', 'damping',
                          'mass_matrix', 'damping_matrix', 'stiffness_matrix', 'force_scale',
                          'equilibrium_offset'})
_WARN_INTERVAL = 0.5  # s wall: one diagnostic per kind of bad input per interval (no flooding at 400 Hz)


def _f6(values):
    return [float(v) for v in values]


class AdmittanceNode(HilLifecycleNode):
    """Admittance model node (see module docstring)."""

    # statuses "admittance: model": the admittance model (its state, input wrench and resets)
    STATUS_TASK = 'model'
    PARAMS = (
        Param('model', str, 'frequency', 'how the model is given: per-axis natural frequency/damping ratio/'
              'stiffness, per-axis mass/damping/stiffness, full 6x6 matrices, or a Cummins floater file',
              choices=('frequency', 'mass', 'matrix', 'floater')),
        Param('period', float, 0.0025, 'model step = F/T sample period (s); seed 000: 2.5 ms (0.4 kHz)',
              range=(1e-4, 1.0)),
        Param('publish_twist_accel', bool, True, 'also publish the reference twist and acceleration '
              '(the planner takes the pose only; two more 400 Hz streams cost CPU in real time)'),
        Param('natural_frequency', 'float[]', [SEED_FREQUENCY_HZ] * 6, 'per-DOF natural frequency (Hz), '
              'model=frequency', range=(1e-3, 1e3), length=6, dynamic=True),
        Param('damping_ratio', 'float[]', [SEED_DAMPING_RATIO] * 6, 'per-DOF damping ratio, model=frequency',
              range=(0.0, 100.0), length=6, dynamic=True),
        Param('stiffness', 'float[]', list(SEED_STIFFNESS), 'per-DOF stiffness (N/m, N m/rad), '
              'model=frequency|mass', range=(0.0, 1e9), length=6, dynamic=True),
        Param('mass', 'float[]', _f6(np.diag(_M0)), 'per-DOF mass / inertia (kg, kg m^2), model=mass',
              range=(1e-9, 1e9), length=6, dynamic=True),
        Param('damping', 'float[]', _f6(np.diag(_D0)), 'per-DOF damping (N s/m, N m s/rad), model=mass',
              range=(0.0, 1e9), length=6, dynamic=True),
        Param('mass_matrix', 'float[]', _f6(_M0.ravel()), '6x6 mass matrix row-major, model=matrix',
              length=36, dynamic=True),
        Param('damping_matrix', 'float[]', _f6(_D0.ravel()), '6x6 damping matrix row-major, model=matrix',
              length=36, dynamic=True),
        Param('stiffness_matrix', 'float[]', _f6(_K0.ravel()), '6x6 stiffness matrix row-major, model=matrix',
              length=36, dynamic=True),
        Param('floater_file', str, '', 'Cummins floater YAML (see config/floater_example.yaml), model=floater'),
        Param('force_scale', 'float[]', [1.0] * 6, 'per-axis scaling of the wrench (e.g. Froude scale)',
              length=6, dynamic=True),
        Param('enabled_axes', 'bool[]', [True] * 6, 'per-DOF enable mask; disabled DOFs are held at home',
              length=6, check=lambda v: None if any(v) else 'at least one DOF must be enabled'),
        Param('home_pose', 'float[]', [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0],
              "home pose [x, y, z, qx, qy, qz, qw] of the model's reference point in the control frame "
              '(= the TCP home when tcp_offset is the identity)', length=7, check=check_home_pose),
        Param('equilibrium_offset', 'float[]', [0.0] * 6, "spring rest point about home (m, rotation "
              "vector); -K^-1 w0 cancels a static preload w0", length=6, dynamic=True),
        Param('control_frame', str, 'hexapod_base', 'frame of the model and of every output (frame_id)',
              check=lambda v: None if v else 'must not be empty'),
        Param('wrench_frame', str, 'control', "'control': wrench at the TCP in control-frame axes; "
              "'body': in the moving TCP's axes (rotated by the current pose)",
              choices=('control', 'body')),
        Param('tcp_offset', 'float[]', [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0],
              "TCP pose [x, y, z, qx, qy, qz, qw] in the model's body frame (e.g. the TCP 0.3 m above a "
              'floater CoG: [0, 0, 0.3, 0, 0, 0, 1]); the wrench acts there and the reference is the TCP',
              length=7, check=check_home_pose),
        Param('stale_timeout', float, 0.05, 'no valid wrench for this long (s, node clock) = stale: hold',
              range=(1e-3, 10.0)),
        Param('stamp_tolerance', float, 0.25, 'stamp jitter tolerated around a whole number of periods '
              '(fraction of the period) before a diagnostic', range=(0.0, 0.49)),
    )

    def __init__(self, node_name: str = 'admittance', **kwargs):
        super().__init__(node_name, **kwargs)
        self.model: LtiAdmittanceModel | None = None
        self._io = []
        self._mode = None
        self.counters = dict.fromkeys(('steps', 'gap_steps', 'held_steps', 'rejected_stamps', 'nonfinite',
                                       'jitter', 'stale_events', 'ignored_fault', 'resets'), 0)
        self._forget_input()

    # --- model ----------------------------------------------------------------------------------
    @staticmethod
    def _matrices(p):
        if p.model == 'frequency':
            return matrices_from_frequency(p.natural_frequency, p.damping_ratio, p.stiffness)
        if p.model == 'mass':
            return matrices_from_mass(p.mass, p.damping, p.stiffness)
        return p.mass_matrix, p.damping_matrix, p.stiffness_matrix

    @classmethod
    def _build_model(cls, p) -> LtiAdmittanceModel:
        """The model the validated parameters ``p`` describe (ValueError naming what is wrong)."""
        common = dict(home=p.home_pose, enabled=p.enabled_axes, force_scale=p.force_scale,
                      equilibrium=p.equilibrium_offset, wrench_frame=p.wrench_frame,
                      tcp_offset=p.tcp_offset)
        if p.model == 'floater':
            if not p.floater_file:
                raise ValueError("parameter 'floater_file' is required with model=floater")
            try:
                return CumminsFloater.from_yaml(p.floater_file, p.period, **common)
            except (OSError, yaml.YAMLError) as exc:
                raise ValueError(f"parameter 'floater_file': cannot read {p.floater_file}: {exc}") from None
        M, D, K = cls._matrices(p)
        return LtiAdmittanceModel(M, D, K, p.period, **common)

    def check_parameters(self, p) -> str | None:
        try:
            self._build_model(p)
        except ValueError as exc:
            return f'model ({p.model}): {exc}'
        return None

    def apply_parameters(self, changed: set[str]) -> None:
        if self.model is None:
            return
        if changed <= MODEL_PARAMS and self.p.model != 'floater':
            # Bumpless: new matrices, same physical state (pose offset and twist).
            M, D, K = self._matrices(self.p)
            self.model.set_matrices(M, D, K, self.p.force_scale, self.p.equilibrium_offset)
        elif changed <= MODEL_PARAMS:
            self.model.set_matrices(self.model.M, self.model.D, self.model.K, self.p.force_scale,
                                    self.p.equilibrium_offset)
        else:
            # Structural change (only accepted while inactive): a new model, at home.
            self.model = self._build_model(self.p)
            self._period_ns = round(self.p.period * 1e9)
            self._forget_input()
        self.status(OK, 'parameters applied' + (' bumplessly' if self.active else ''),
                    changed=','.join(sorted(changed)))

    # --- lifecycle ------------------------------------------------------------------------------
    def configure_node(self) -> None:
        self.model = self._build_model(self.p)
        self._period_ns = round(self.p.period * 1e9)
        stream = self.stream_qos()
        self._cycle = self.cycle_monitor('step', self.p.period)
        self._pose_pub = self.create_lifecycle_publisher(PoseStamped, topics.ADMITTANCE_REFERENCE, stream)
        self._pose_ring = MessageRing(PoseStamped)
        self._twist_pub = self.create_lifecycle_publisher(TwistStamped, topics.ADMITTANCE_TWIST, stream)
        self._accel_pub = self.create_lifecycle_publisher(AccelStamped, topics.ADMITTANCE_ACCEL, stream)
        self._io = [
            (self.destroy_lifecycle_publisher, self._pose_pub),
            (self.destroy_lifecycle_publisher, self._twist_pub),
            (self.destroy_lifecycle_publisher, self._accel_pub),
            (self.destroy_subscription,
             self.create_subscription(WrenchStamped, topics.FT_WRENCH, self._on_wrench, stream)),
            (self.destroy_subscription,
             self.create_subscription(String, topics.HIL_MODE, self._on_mode, qos.latched())),
            (self.destroy_service, self.create_service(Trigger, topics.ADMITTANCE_RESET, self._on_reset)),
            # stale detection on the node clock (sim time in simulation)
            (self.destroy_timer, self.create_timer(self.p.stale_timeout / 2.0, self._check_stale)),
        ]
        self._forget_input()

    def activate_node(self) -> None:
        # The state is held across deactivate/activate; only the stamp history restarts.
        self._last_stamp = None
        self._last_rx = self.now_ns()
        self._stale = False

    def cleanup_node(self) -> None:
        for destroy, entity in self._io:
            destroy(entity)
        self._io = []
        self.model = None
        self._mode = None

    # --- input ----------------------------------------------------------------------------------
    def _forget_input(self) -> None:
        self._last_stamp = None
        self._last_wrench = None
        self._last_rx = None
        self._stale = False

    def _warn(self, kind: str, level: int, message: str, **values) -> None:
        if self.due(kind, _WARN_INTERVAL):
            self.get_logger().warning(message)
            self.status(level, message, **values, **self.counters)

    def _on_wrench(self, msg: WrenchStamped) -> None:
        if not self.active or self.model is None:
            return
        t0 = self._cycle.begin(convert.stamp_to_ns(msg.header.stamp))
        try:
            self._take_wrench(msg)
        finally:
            self._cycle.end(t0)

    def _take_wrench(self, msg: WrenchStamped) -> None:
        if self._mode == 'FAULT':
            self.counters['ignored_fault'] += 1
            return
        w = convert.wrench_to_array(msg.wrench)
        stamp = convert.stamp_to_ns(msg.header.stamp)
        if not np.all(np.isfinite(w)):
            self.counters['nonfinite'] += 1
            self._warn('nonfinite', WARN, 'non-finite wrench ignored (state held)', stamp_ns=stamp,
                       wrench=w.tolist())
            return
        T = self._period_ns
        if self._last_stamp is not None:
            dt = stamp - self._last_stamp
            n = round(dt / T)
            if n < 1:
                self.counters['rejected_stamps'] += 1
                why = ('duplicate or out-of-order wrench stamp rejected' if dt <= 0 else
                       'wrench stamp advanced by less than half a period: rejected (is the F/T '
                       "publish_rate faster than 1/'period'?)")
                self._warn('stamp', WARN, why, stamp_ns=stamp, last_stamp_ns=self._last_stamp)
                return
            if abs(dt - n * T) > self.p.stamp_tolerance * T:
                self.counters['jitter'] += 1
                self._warn('jitter', WARN, 'wrench stamp off the period grid', stamp_ns=stamp, dt_ns=dt)
            if n > 1:
                self._fill_gap(n - 1)
        self.model.step(w)
        self.counters['steps'] += 1
        self._publish(stamp)
        self._last_stamp = stamp
        self._last_wrench = w
        self._last_rx = self.now_ns()
        if self._stale:
            self._stale = False
            self.status(OK, 'wrench back: model running', **self.counters)

    def _fill_gap(self, missing: int) -> None:
        """Integrate missing periods with the last valid wrench, up to stale_timeout; hold beyond."""
        limit = int(self.p.stale_timeout / self.p.period + 1e-9)
        integrate = min(missing, limit)
        for i in range(1, integrate + 1):
            self.model.step(self._last_wrench)
            self._publish(self._last_stamp + i * self._period_ns)
        self.counters['gap_steps'] += integrate
        self.counters['held_steps'] += missing - integrate
        self._warn('gap', WARN, f'wrench gap of {missing} period(s): {integrate} integrated with the last '
                   f'wrench, {missing - integrate} held', missing=missing)

    def _publish(self, stamp_ns: int) -> None:
        pose, twist, accel = self.model.outputs()
        frame = self.p.control_frame
        msg = self._pose_ring.next()
        fill_pose_stamped(msg, stamp_ns, frame, pose)
        self._pose_pub.publish(msg)
        self.count_published(topics.ADMITTANCE_REFERENCE)
        if not self.p.publish_twist_accel:
            return
        stamp = convert.ns_to_stamp(stamp_ns)
        tmsg = TwistStamped(twist=convert.array_to_twist(twist))
        tmsg.header.stamp, tmsg.header.frame_id = stamp, frame
        self._twist_pub.publish(tmsg)
        amsg = AccelStamped(accel=convert.array_to_accel(accel))
        amsg.header.stamp, amsg.header.frame_id = stamp, frame
        self._accel_pub.publish(amsg)

    def _check_stale(self) -> None:
        if not self.active or self._stale or self._last_rx is None:
            return
        age = (self.now_ns() - self._last_rx) * 1e-9
        if age > self.p.stale_timeout:
            self._stale = True
            self.counters['stale_events'] += 1
            self.get_logger().warning(f'wrench stale for {age:.3f} s: holding the model state')
            self.status(STALE, 'wrench stale: model state held', age_s=age, **self.counters)

    # --- reset ----------------------------------------------------------------------------------
    def reset_to_home(self, why: str) -> None:
        if self.model is None:
            return
        self.model.reset()
        self._last_stamp = None
        self._last_wrench = None
        self.counters['resets'] += 1
        self.status(OK, f'reset to home ({why})', **self.counters)

    def _on_reset(self, request, response):
        if self.model is None:
            response.success, response.message = False, 'not configured'
        else:
            self.reset_to_home('reset service')
            response.success, response.message = True, 'model reset to home at rest'
        return response

    def _on_mode(self, msg: String) -> None:
        previous, self._mode = self._mode, msg.data
        if msg.data == 'IDLE' and previous is not None and previous != 'IDLE':
            self.reset_to_home(f'mode {previous} -> IDLE')


main = main_for(AdmittanceNode)

if __name__ == '__main__':
    main()
