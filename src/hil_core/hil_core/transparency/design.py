"""The designed figures of the Hexafloat HIL chain, from a run's effective parameters.

Seed 000 designs the chain as "the modelled dynamics shifted by a constant delay": unity gain,
and a delay made of

* the F/T Butterworth filter: its analytic group delay averaged over 0-7 Hz
  (``SignalChain.delay_estimate``: about 5.7 ms at 40 Hz, 2nd order, 1.6 kHz);
* the time base's reference buffer: ``TimeBaseConfig.default_delay`` = default_distance * T
  + 1.5 T + h (10 ms at T = 2.5 ms, h = 1.25 ms, distance 2);
* nothing else: the admittance stamps its output with the force sample's stamp (the ideal
  motion of the report uses the same convention), the planner passes the reference through
  inside the limits, the servo follows its setpoints (feed-forward), the forward kinematics
  stamps the pose with the joint states' stamp.

``parameters`` is ``{node: {parameter: value}}`` as in ``hil_run.yaml``; a missing node or
parameter takes the node's default (the same defaults as the core configurations).
"""
from __future__ import annotations

from dataclasses import dataclass

from hil_core.ft.signal_chain import ChainConfig, SignalChain
from hil_core.timebase.engine_numpy import TimeBaseConfig

FORCE, MOTION = 'force', 'motion'

# The chain in signal order: key, label, kind, what the transition into it is
STAGES = (
    ('raw_force', 'raw force', FORCE, ''),
    ('filtered_force', 'filtered force', FORCE, 'F/T filter'),
    ('admittance_reference', 'admittance reference', MOTION, 'admittance model'),
    ('safe_reference', 'safe reference', MOTION, 'planner'),
    ('servo_setpoints', 'servo setpoints', MOTION, 'time base buffer'),
    ('joint_states', 'joint states', MOTION, 'servo'),
    ('tcp_pose', 'TCP pose', MOTION, 'forward kinematics'),
)
STAGE_KEYS = tuple(s[0] for s in STAGES)
LABELS = {s[0]: s[1] for s in STAGES}
KINDS = {s[0]: s[2] for s in STAGES}
CONTRIBUTION = {s[0]: s[3] for s in STAGES}


@dataclass(frozen=True)
class ChainDesign:
    filter_delay_s: float
    buffer_delay_s: float
    frame_period_s: float

    def delay_into(self, key: str) -> float:
        """Designed delay of the transition into stage ``key`` (0 for the raw force)."""
        return {'filtered_force': self.filter_delay_s, 'servo_setpoints': self.buffer_delay_s}.get(key, 0.0)

    def delay_between(self, a: str, b: str) -> float:
        """Designed delay from stage a to a later stage b (stages in between included)."""
        i, j = STAGE_KEYS.index(a), STAGE_KEYS.index(b)
        return sum(self.delay_into(k) for k in STAGE_KEYS[i + 1:j + 1])

    @property
    def total_delay_s(self) -> float:
        return self.filter_delay_s + self.buffer_delay_s

    def as_dict(self) -> dict:
        return {'filter_delay_ms': self.filter_delay_s * 1e3, 'buffer_delay_ms': self.buffer_delay_s * 1e3,
                'total_delay_ms': self.total_delay_s * 1e3, 'gain_db': 0.0,
                'frame_period_ms': self.frame_period_s * 1e3}


def _get(params: dict, node: str, name: str, default):
    value = (params.get(node) or {}).get(name)
    return default if value is None else value


def design_from_parameters(parameters: dict | None) -> ChainDesign:
    """The designed delays of a run from its effective node parameters (defaults if absent)."""
    p = parameters or {}
    cc = ChainConfig()
    chain = ChainConfig(sample_rate=float(_get(p, 'ft_sensor', 'sample_rate', cc.sample_rate)),
                        publish_rate=float(_get(p, 'ft_sensor', 'publish_rate', cc.publish_rate)),
                        cutoff_hz=float(_get(p, 'ft_sensor', 'filter_cutoff_hz', cc.cutoff_hz)),
                        order=int(_get(p, 'ft_sensor', 'filter_order', cc.order)),
                        notch_hz=float(_get(p, 'ft_sensor', 'notch_hz', cc.notch_hz)),
                        notch_q=float(_get(p, 'ft_sensor', 'notch_q', cc.notch_q)))
    tc = TimeBaseConfig()
    tb = TimeBaseConfig(move_time=float(_get(p, 'timebase', 'move_time', tc.move_time)),
                        segmentation_time=float(_get(p, 'timebase', 'segmentation_time', tc.segmentation_time)),
                        servo_period=float(_get(p, 'timebase', 'servo_period', tc.servo_period)),
                        buffer_size=int(_get(p, 'timebase', 'buffer_size', tc.buffer_size)),
                        default_distance=int(_get(p, 'timebase', 'default_distance', tc.default_distance)),
                        max_gap_fill=max(int(_get(p, 'timebase', 'max_gap_fill', tc.max_gap_fill)),
                                         int(_get(p, 'timebase', 'default_distance', tc.default_distance))))
    return ChainDesign(filter_delay_s=SignalChain(chain).delay_estimate(7.0), buffer_delay_s=tb.default_delay,
                       frame_period_s=tb.move_time)
