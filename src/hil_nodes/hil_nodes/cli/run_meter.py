"""What `hil run` measures of the processes it started: CPU seconds per simulated second over the
run (from the first frame to the return to IDLE, so start-up imports and compilation are not
counted), per process and in total with the `hil` command itself, and the real-time settings each
process really runs with (``--rt``)."""
from __future__ import annotations

import os
import time

from hil_nodes import rt_setup


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
    """Call :meth:`start` when the run's first frame is seen and :meth:`stop` at its end."""

    def __init__(self, pids: dict[str, int]):
        self.pids = dict(pids)
        self.t0: dict[str, float] = {}
        self.t1: dict[str, float] = {}
        self.sim0 = self.sim1 = 0.0
        self.wall0 = self.wall1 = 0.0
        self.started = self.stopped = False

    def _sample(self) -> dict[str, float]:
        out = {name: _cpu_of(pid) for name, pid in self.pids.items()}
        out = {name: v for name, v in out.items() if v is not None}
        out['hil'] = _self_cpu()
        return out

    def start(self, sim_time: float, frames: int) -> None:
        if not self.started:
            self.started, self.sim0, self.wall0, self.t0 = True, sim_time, time.monotonic(), self._sample()
            self.frames0 = frames

    def stop(self, sim_time: float, frames: int) -> None:
        if self.started and not self.stopped:
            self.stopped, self.sim1, self.wall1, self.t1 = True, sim_time, time.monotonic(), self._sample()
            self.frames1 = frames

    def figures(self, frame_period: float) -> dict[str, str]:
        """Summary lines: cpu_s_per_sim_s (total) and per process, the measured window, and
        sim_per_wall as the hardware's frames over the window's wall time (in real time the
        node clocks are the wall clock, so only the frames the mock really integrated tell)."""
        if not (self.started and self.stopped) or self.sim1 <= self.sim0:
            return {'cpu_s_per_sim_s': 'not measured (the run did not start and end)'}
        sim = self.sim1 - self.sim0
        per = {name: (self.t1[name] - self.t0[name]) / sim for name in self.t1 if name in self.t0}
        out = {'cpu_s_per_sim_s': f'{sum(per.values()):.3f}',
               'cpu_s_per_sim_s_by_process': ', '.join(f'{n} {v:.3f}' for n, v in sorted(per.items())),
               'cpu_window_sim_s': f'{sim:.2f}',
               'cpu_window_wall_s': f'{self.wall1 - self.wall0:.2f}'}
        if self.frames1 > self.frames0 and self.wall1 > self.wall0:
            out['sim_per_wall'] = f'{(self.frames1 - self.frames0) * frame_period / (self.wall1 - self.wall0):.3f}'
        return out


def rt_applied(pids: dict[str, int]) -> str:
    """One line: what each process runs with (scheduler, CPUs, locked memory)."""
    parts = []
    for name, pid in sorted(pids.items()):
        info = rt_setup.inspect(pid)
        locked = info.get('locked_kb', '0')
        parts.append(f"{name}: {info.get('sched', '?')}, cpus {info.get('cpus', '?')}, "
                     f"mlock {'yes' if locked not in ('0', '') else 'no'}")
    return '; '.join(parts)
