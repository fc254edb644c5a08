"""The recorder node's parameters: its Param table (the only place they are declared; the
generated page docs/parameters/recorder.md is generated from it). ``hil run`` and the launch
file set ``bag_path``, ``topics`` and ``checkpoint_after`` from the system file."""
from __future__ import annotations

from hil_nodes.framework.param_table import REQUIRED, Param

PARAMS = (
    Param('bag_path', str, REQUIRED, 'directory of the rosbag2 to create (must not exist)',
          check=lambda v: None if v else 'must not be empty'),
    Param('topics', 'str[]', ['joint_states', 'hil/mode'], 'topics to record, resolved in the node\'s namespace '
          '(relative names move with it; the bag holds the resolved names)',
          check=lambda v: None if v and all(t and t.strip('/') and ' ' not in t for t in v)
          else 'topic names, at least one'),
    Param('checkpoint_period', float, 1.0, 'wall seconds between checkpoints (flush + metadata)',
          range=(0.05, 60.0)),
    Param('discovery_period', float, 0.2, 'wall seconds between graph checks for new topics',
          range=(0.01, 10.0)),
    Param('poll_period', float, 0.02, 'wall s between drains of the raw readers when the recorder runs in a '
          'process of its own in real time (hil_nodes.recorder.polled_readers: no wake-up per message, receipt '
          'times kept); 0 = every message served by the executor', range=(0.0, 1.0)),
    Param('checkpoint_after', str, '', "a recorded topic: a due checkpoint is taken in steps of about "
          "1 ms, one right after each message of it (in one process in real time, the last message "
          "of a frame's chain: the steps fall in the frame's idle time); steps still due at the next "
          "checkpoint time are taken then. '' = the whole checkpoint on the timer"),
)
