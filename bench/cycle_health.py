"""What cycle-health monitoring costs a node per cycle (hil_core.supervision.timing.CycleHealth;
the real-time design allows about 1-2 us, docs/realtime.md), and what a report costs
(percentiles over the 1024-sample ring, twice a second per node).

Prints ``name: value unit`` lines: begin + end per cycle in lockstep (CPU-time judge), in real
time without stamps, and with wall-clock stamps (latency ring), as p50 over batches of an
empty cycle, wall and thread CPU (less sensitive to a loaded machine); the bare clock reads
for comparison; one snapshot.
"""
from __future__ import annotations

import os
import time

from hil_core.supervision.timing import CycleHealth

BATCH, BATCHES = 2000, 50


def per_cycle_us(health: CycleHealth, stamped: bool) -> tuple[float, float]:
    """(wall p50, thread-CPU p50) microseconds per begin + end, over batches."""
    wall, cpu = [], []
    for _ in range(BATCHES):
        stamp = time.time_ns() if stamped else None
        t, c = time.perf_counter(), time.thread_time()
        for _ in range(BATCH):
            t0 = health.begin(stamp)
            health.end(t0)
        cpu.append((time.thread_time() - c) / BATCH * 1e6)
        wall.append((time.perf_counter() - t) / BATCH * 1e6)
    return sorted(wall)[BATCHES // 2], sorted(cpu)[BATCHES // 2]


def clock_us(fn) -> float:
    t = time.perf_counter()
    for _ in range(BATCH * 10):
        fn()
    return (time.perf_counter() - t) / (BATCH * 10) * 1e6


def main() -> None:
    print(f'load_average_1min: {os.getloadavg()[0]:.2f}')
    for name, health, stamped in (('lockstep', CycleHealth(0.0025, lockstep=True), False),
                                  ('realtime', CycleHealth(0.0025), False),
                                  ('wall_stamps', CycleHealth(0.0025, wall_stamps=True), True)):
        wall, cpu = per_cycle_us(health, stamped)
        print(f'cycle_health_{name}_p50: {wall:.2f} us')
        print(f'cycle_health_{name}_cpu_p50: {cpu:.2f} us')
    print(f'perf_counter_read: {clock_us(time.perf_counter):.3f} us')
    print(f'thread_time_read: {clock_us(time.thread_time):.3f} us')
    h = CycleHealth(0.0025, wall_stamps=True)
    per_cycle_us(h, True)
    t = time.perf_counter()
    for _ in range(100):
        h.snapshot()
    print(f'cycle_health_snapshot: {(time.perf_counter() - t) / 100 * 1e6:.1f} us')


if __name__ == '__main__':
    main()
