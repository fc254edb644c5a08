"""The designed figures of the Hexafloat HIL chain, from the configurations of a run's nodes.

Seed 000 designs the chain as "the modelled dynamics shifted by a constant delay": unity gain,
and a delay made of

* the F/T Butterworth filter: its analytic group delay averaged over 0-7 Hz
  (``SignalChain.delay_estimate``: about 5.7 ms at 40 Hz, 2nd order, 1.6 kHz);
* the time base's reference buffer: ``TimeBaseConfig.default_delay`` = default_distance * T
  + 1.5 T + h (10 ms at T = 2.5 ms, h = 1.25 ms, distance 2; in real time too: the reader clock
  runs a frame ahead there and the W-R distance is one less, but the delay from a reference's
  stamp to its setpoint is the same);
* nothing else: the admittance stamps its output with the force sample's stamp (the ideal
  motion of the report uses the same convention), the planner passes the reference through
  inside the limits, the servo follows its setpoints (feed-forward), the forward kinematics
  stamps the pose with the joint states' stamp.

The figures come from the configurations the run's nodes built (the F/T node's ``ChainConfig``
and the time base's ``TimeBaseConfig``): the report builds them from the run's recorded
parameters with the nodes' own functions (``hil_nodes.report.designed``), so no parameter is
read back here under a name of its own.
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
    wr_distance: int        # the time base's W-R index distance at the designed delay

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
                'frame_period_ms': self.frame_period_s * 1e3, 'wr_distance': self.wr_distance}


def design_from_configs(chain: ChainConfig, timebase: TimeBaseConfig, wr_distance: int | None = None) -> ChainDesign:
    """The designed figures of a run whose F/T chain and time base had these configurations.
    ``wr_distance``: the W-R distance the time base holds at the designed delay, when it is not
    the configured default distance (in real time its reader clock runs ahead: the timebase
    node's ``designed_distance``)."""
    return ChainDesign(filter_delay_s=SignalChain(chain).delay_estimate(7.0), buffer_delay_s=timebase.default_delay,
                       frame_period_s=timebase.move_time,
                       wr_distance=timebase.default_distance if wr_distance is None else wr_distance)
