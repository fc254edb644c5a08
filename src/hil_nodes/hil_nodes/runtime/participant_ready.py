"""The line a node process writes once its DDS participant exists (right after ``rclpy.init``,
in ``runtime.runner.run`` and ``framework.plain_params.run_plain``).

`hil run` makes its own client participant (``cli.run_client.RunClient``) only once every process
it started wrote it (``cli.processes.ProcessGroup.wait_participants``). Made first, while the node
processes were still importing, the client missed being discovered by them now and then on two
emulated hosts: it never heard the drives' statuses of its own host, or, on both hosts, anything
of the other host (the nodes heard each other; `bench/two_hosts.sh` showed `clocks: not measured
(no answer)` and frames 0 every time, and a 1.5 s pause before the client hid it). A client that
joins after the nodes' participants announces itself to participants that exist.

Only a process `hil run` started says it (``ENV`` in its environment, set by ``ProcessGroup``):
started by hand, by ros2 launch or as `hil hmi`, whose first line is its address, it says nothing.
"""
from __future__ import annotations

import os
import sys

LINE = 'hil: DDS participant up'
ENV = 'HIL_SAY_PARTICIPANT_UP'


def announce() -> None:
    if os.environ.get(ENV) == '1':
        print(LINE, file=sys.stderr, flush=True)
