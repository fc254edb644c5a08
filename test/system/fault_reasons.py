"""Which reasons name the faulted node in the fault matrix (test_fault_matrix.py) beyond the one
said at once: the ones a Fast DDS shared-memory freeze leaves (docs/fault_matrix.md, "A frozen
process freezes its publishers"), each accepted only with the evidence that it is that case."""
from __future__ import annotations

import re


def killed_and_named(node: str, fault_reason: str, stderr: str) -> bool:
    """A killed node named dead: by the launcher's report of the exit at once, or, when that
    report reached the supervisor after its 3 s wall-time heartbeat limit (CI, two rows at once;
    the supervisor's checks ran on meanwhile), by its heartbeat, the launcher having said the exit."""
    by_exit = f'node {node} is dead: its process {node} was killed by SIGKILL' in fault_reason
    by_heartbeat = (fault_reason.startswith(f'node {node} is dead: last heartbeat ')
                    and f'hil run: process {node} was killed by SIGKILL' in stderr)
    return by_exit or by_heartbeat


OWN_STALL = re.compile(r'supervisor stalled: no liveness check for (\d+\.\d+) s of wall time')


def froze_with_it(node: str, said: str) -> bool:
    """The container (the supervisor's process) froze as long as the frozen node, so nothing
    in it could tell who stopped first. A frozen process freezes the processes that publish to it
    over Fast DDS shared memory for the port health check's 1 s, the GIL held (bench/frozen_peer.py:
    10-20 % of freezes here; docs/fault_matrix.md "A frozen process freezes its publishers"), and
    rmw_fastrtps always adds that transport under ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST. Accepted
    only for a node outside the container, with the supervisor's own stall of one or two health
    checks (what that bench measures). The drives, in the container, stood still with it: their
    lockstep wait restarts after their own pause (hil_core.supervision.lockstep.OwnPause), so the
    run either goes on, never clean (the stall is a safety event), or their watchdog stops it if
    the node stays silent longer; the stop itself is checked as for any row."""
    own = [float(g) for g in OWN_STALL.findall(said)]
    return node != 'supervisor' and any(0.9 <= g <= 2.3 for g in own)
