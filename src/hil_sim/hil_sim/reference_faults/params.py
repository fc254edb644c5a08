"""The fault relay's parameters: its Param table (the only place they are declared; the
generated page docs/parameters/reference_faults.md and the scenario files are checked against it)
and the one mapping from the validated values to ``ReferenceFaults``."""
from __future__ import annotations

from hil_core.fault_injection import ReferenceFaults
from hil_nodes import topics
from hil_nodes.framework.param_table import ConfigFields, Param

_PROB = (0.0, 1.0)

PARAMS = (
    Param('input_topic', str, 'admittance/reference_model', 'clean reference stream (remapped model output)'),
    Param('output_topic', str, topics.ADMITTANCE_REFERENCE, 'faulty stream the planner reads'),
    Param('frame_period', float, 0.0025, 'reference period: frame index = stamp / period (s)', range=(1e-5, 1.0)),
    Param('drop_prob', float, 0.0, 'probability a frame is not delivered', range=_PROB),
    Param('duplicate_prob', float, 0.0, 'probability a frame is delivered twice', range=_PROB),
    Param('spike_prob', float, 0.0, 'probability of a position spike', range=_PROB),
    Param('spike_magnitude', float, 0.01, 'spike size (m)', range=(0.0, 1.0)),
    Param('late_prob', float, 0.0, 'probability a frame is delivered late (out of order)', range=_PROB),
    Param('late_frames', int, 2, 'how many frames late', range=(1, 100)),
    Param('start_time', float, 0.0, 'no faults before this stamp (s)', range=(0.0, 1e6)),
    Param('seed', int, 0, 'seed of the fault decisions', range=(0, 2**31 - 1)),
)

# the injector counts frames: the first faulty one is the frame of start_time
FAULTS = ConfigFields(ReferenceFaults,
                      derived={'start_frame': lambda p: int(round(p.start_time / p.frame_period))})


def faults(p) -> ReferenceFaults:
    """The faults to inject for the validated values ``p`` (ValueError if refused)."""
    return FAULTS.build(p)
