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
from geometry_msgs.msg import AccelStamped, PoseStamped, TwistStamped, WrenchStamped
from std_msgs.msg import String
from std_srvs.srv import Trigger

from hil_core.admittance import LtiAdmittanceModel
from hil_core.supervision.modes import HilMode
from hil_nodes import qos, topics
from hil_nodes.admittance import params
from hil_nodes.admittance.params import MODEL_PARAMS
from hil_nodes.msgs import convert
from hil_nodes.framework.base import OK, STALE, WARN, HilLifecycleNode
from hil_nodes.runtime.chain_port import pose_port, wrench_from_message
from hil_nodes.runtime.runner import main_for


class AdmittanceNode(HilLifecycleNode, name='admittance', task='model', params=params.PARAMS):
    """Admittance model node (see module docstring). Statuses "admittance: model": the
    admittance model (its state, input wrench and resets)."""

    def __init__(self, node_name: str | None = None, **kwargs):
        super().__init__(node_name, **kwargs)
        self.model: LtiAdmittanceModel | None = None
        self._io = []
        self._mode = None
        self.counters = dict.fromkeys(('steps', 'gap_steps', 'held_steps', 'rejected_stamps', 'nonfinite',
                                       'jitter', 'stale_events', 'ignored_fault', 'resets'), 0)
        self._forget_input()

    # the model from the values: params.build_model (the report builds a run's model with it too)
    _build_model = staticmethod(params.build_model)

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
            M, D, K = params.model_matrices(self.p)
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
        self._pose_port = pose_port(self._pose_pub, lambda: self.p.control_frame)
        self._twist_pub = self.create_lifecycle_publisher(TwistStamped, topics.ADMITTANCE_TWIST, stream)
        self._accel_pub = self.create_lifecycle_publisher(AccelStamped, topics.ADMITTANCE_ACCEL, stream)
        self._io = [
            self._pose_pub, self._twist_pub, self._accel_pub,
            self.create_subscription(WrenchStamped, topics.FT_WRENCH, self._on_wrench, stream,
                                     chain_input=self._on_wrench_payload),
            self.create_subscription(String, topics.HIL_MODE, self._on_mode, qos.latched()),
            self.create_service(Trigger, topics.ADMITTANCE_RESET, self._on_reset),
            # stale detection on the node clock (sim time in simulation)
            self.create_group_timer(self.p.stale_timeout / 2.0, self._check_stale),
        ]
        self._forget_input()

    def activate_node(self) -> None:
        # The state is held across deactivate/activate; only the stamp history restarts.
        self._last_stamp = None
        self._last_rx = self.now_ns()
        self._stale = False

    def cleanup_node(self) -> None:
        self.release(*self._io)
        self._io = []
        self.model = None
        self._mode = None

    # --- input ----------------------------------------------------------------------------------
    def _forget_input(self) -> None:
        self._last_stamp = None
        self._last_wrench = None
        self._last_rx = None
        self._stale = False

    def _on_wrench(self, msg: WrenchStamped) -> None:
        self._on_wrench_payload(wrench_from_message(msg))

    def _on_wrench_payload(self, payload) -> None:
        """A wrench (stamp ns, 6 values): from the F/T node's chain port in one process, else
        read from the message (hil_nodes.runtime.chain_port)."""
        if not self.active or self.model is None:
            return
        with self._cycle(payload[0]):
            self._take_wrench(*payload)

    def _take_wrench(self, stamp: int, w) -> None:
        if self._mode == HilMode.FAULT:
            self.counters['ignored_fault'] += 1
            return
        if not np.isfinite(w).all():
            self.counters['nonfinite'] += 1
            self.report_problem('nonfinite', WARN, 'non-finite wrench ignored (state held)', log=True,
                                figures=self.counters.copy, stamp_ns=stamp, wrench=w.tolist())
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
                self.report_problem('stamp', WARN, why, log=True, figures=self.counters.copy, stamp_ns=stamp,
                                    last_stamp_ns=self._last_stamp)
                return
            if abs(dt - n * T) > self.p.stamp_tolerance * T:
                self.counters['jitter'] += 1
                self.report_problem('jitter', WARN, 'wrench stamp off the period grid', log=True,
                                    figures=self.counters.copy, stamp_ns=stamp, dt_ns=dt)
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
        self.report_problem('gap', WARN, f'wrench gap of {missing} period(s): {integrate} integrated with the '
                            f'last wrench, {missing - integrate} held', log=True, figures=self.counters.copy,
                            missing=missing)

    def _publish(self, stamp_ns: int) -> None:
        pose, twist, accel = self.model.outputs()       # (new arrays at every call)
        self._pose_port.send((stamp_ns, pose))
        self.count_published(topics.ADMITTANCE_REFERENCE)
        if not self.p.publish_twist_accel:
            return
        frame = self.p.control_frame
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
        if msg.data == HilMode.IDLE and previous is not None and previous != HilMode.IDLE:
            self.reset_to_home(f'mode {previous} -> IDLE')


main = main_for(AdmittanceNode)

if __name__ == '__main__':
    main()
