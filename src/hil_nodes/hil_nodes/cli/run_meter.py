"""What `hil run` measures of the processes it started: CPU seconds per simulated second over the
run (from its start to the return to IDLE, so start-up imports and compilation are not counted),
per process and in total with the `hil` command itself (the graph's total: a process kept apart,
the operator's HMI, is listed by process but not added in, so a run with and without it give the
same total), the simulated time per wall second, and
the real-time settings each process really runs with (``--rt``)."""
from __future__ import annotations

import os
import time

from hil_nodes.runtime import rt_setup


def _cpu_of(pid: int) -> float | None:
    """user + system CPU seconds of a process and its threads (None once it is gone)."""
    try:
        with open(f'/proc/{pid}/stat') as f:
            fields = f.read().rsplit(')', 1)[1].split()
        tick = os.sysconf('SC_CLK_TCK')
        return (int(fields[11]) + int(fields[12])) / tick     # utime, stime (fields 14, 15)
    except (OSError, IndexError, ValueError):
        return None


def _self_cpu() -> float:
    t = os.times()
    return t.user + t.system


class RunMeter:
    """CPU, progress and wall time sampled together, at the turn of the `hil` loop in which a
    fresh progress status came in (the mock hardware's ``frames``, or the supervisor's
    ``run_time`` without a mock): the window runs from the first such sample of the run to the
    last one before its end. A figure from a stale progress value (statuses come at 2 Hz) against
    the CPU and wall time of now was off by up to half a second of wall time: 20 % of a 10 s
    lockstep run. ``observe`` every turn, ``stop`` at the run's end, then ``figures``."""

    def __init__(self, pids: dict[str, int], apart: tuple[str, ...] = ()):
        self.pids = dict(pids)
        self.apart = set(apart)
        self.first: tuple[float, dict[str, float], float] | None = None   # (wall, CPU by process, sim s)
        self.last: tuple[float, dict[str, float], float] | None = None
        self.stopped = False
        self._updates: int | None = None          # progress statuses counted at the last sample

    def _sample(self) -> dict[str, float]:
        out = {name: _cpu_of(pid) for name, pid in self.pids.items()}
        out = {name: v for name, v in out.items() if v is not None}
        out['hil'] = _self_cpu()
        return out

    def observe(self, running: bool, progress: tuple[int, float] | None) -> None:
        """``running``: the run has started and not ended; ``progress``: (how many progress
        statuses came in so far, the sim seconds the latest one says)."""
        if self.stopped or not running or progress is None:
            return
        updates, sim = progress
        if updates == self._updates:
            return                                  # nothing new since the last turn
        self._updates = updates
        sample = (time.monotonic(), self._sample(), sim)
        if self.first is None:
            self.first = sample
        else:
            self.last = sample

    def stop(self) -> None:
        self.stopped = True

    def figures(self, run_sim_s: float) -> dict[str, str]:
        """Summary lines: cpu_s_per_sim_s (total, the ``apart`` processes left out) and per process
        (every one that lived through the window), the measured window, and
        sim_per_wall as the simulated time integrated over the window's wall time (in real time
        the node clocks are the wall clock, so only the frames the mock really integrated tell).
        A window that covers less than half of the run (``run_sim_s``) is not a figure of it."""
        if self.first is None or self.last is None or self.last[2] <= self.first[2]:
            return {'cpu_s_per_sim_s': 'not measured (no two progress statuses during the run)'}
        (wall0, cpu0, sim0), (wall1, cpu1, sim1) = self.first, self.last
        sim, wall = sim1 - sim0, wall1 - wall0
        if sim < 0.5 * run_sim_s:
            # a short run (statuses come twice a wall second) or a client that matched late
            why = (f'not measured (the progress statuses heard during the run span {sim:.2f} of its '
                   f'{run_sim_s:.2f} sim s)')
            return {'cpu_s_per_sim_s': why, 'sim_per_wall': why}
        per = {name: (cpu1[name] - cpu0[name]) / sim for name in cpu1 if name in cpu0}
        return {'cpu_s_per_sim_s': f'{sum(v for n, v in per.items() if n not in self.apart):.3f}',
                'cpu_s_per_sim_s_by_process': ', '.join(f'{n} {v:.3f}' for n, v in sorted(per.items())),
                'cpu_window_sim_s': f'{sim:.2f}',
                'cpu_window_wall_s': f'{wall:.2f}',
                'sim_per_wall': f'{sim / wall:.3f}'}


def rt_applied(pids: dict[str, int]) -> str:
    """One line: what each process runs with (scheduler, CPUs, locked memory)."""
    parts = []
    for name, pid in sorted(pids.items()):
        info = rt_setup.inspect(pid)
        locked = info.get('locked_kb', '0')
        parts.append(f"{name}: {info.get('sched', '?')}, cpus {info.get('cpus', '?')}, "
                     f"mlock {'yes' if locked not in ('0', '') else 'no'}")
    return '; '.join(parts)
