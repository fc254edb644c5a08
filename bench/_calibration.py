"""The machine calibration printed next to every figure of `hil bench`.

Machines of one kind differ by 2-3x in speed (and one machine drifts by ~10 % from hour to hour),
so a figure means little without the speed of the machine it was measured on. Two numbers, taken
in the same run as the figures:

* ``calibration.python_loop_5M``: a pure-Python loop of 5 million ``s += i*i`` (seconds, median
  of three). The nodes' cost is mostly interpreter work around compiled kernels, so this is the
  number to scale their figures by. 0.40-0.42 s on this project's CI machine on 2026-11-27; the
  slow machine of the real-time targets took 0.668 s.
* ``calibration.kernel_ik_1000``: the compiled Hexaslide inverse kinematics of a fixed batch of
  1000 poses (microseconds, median of 200 calls after a warm-up): the speed of the numba
  kernels, which scale differently (cache, vector units).

``calibration.load_1min`` is the load average when it was taken: a figure measured next to other
work is a figure of that load. A slower machine can be emulated by pinning the run and a CPU hog
to one core (``taskset``) until ``python_loop_5M`` reads at least 0.65 s under the same
conditions (docs/realtime.md, "Measured").

Run alone, it prints its lines: ``python bench/_calibration.py``.
"""
from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time

from hil_nodes.cli.calibration import LOOP_5M

POSES = 1000


# The loop runs as `python -c` runs it (module-level names, a fresh interpreter), which is how the
# figures it is compared with were taken: the same loop over a function's local names runs 2.5x
# faster, and inside a process that imported numpy and rclpy it reads slower. One home for it:
# `hil run --realtime` measures the same loop (hil_nodes.cli.calibration).
_LOOP = LOOP_5M


def python_loop_s(repeats: int = 3) -> float:
    """Median wall seconds of the pure-Python reference loop, each in a fresh interpreter."""
    return statistics.median(float(subprocess.run([sys.executable, '-c', _LOOP], capture_output=True, text=True,
                                                  check=True).stdout) for _ in range(repeats))


def kernel_ik_us(calls: int = 200) -> float:
    """Median microseconds of one compiled IK call over a fixed batch of poses (seeded)."""
    import numpy as np

    from hil_core import hexaslide as hx

    hx.warm_up()
    geom = hx.load_geometry('hexaslide_scaled')
    poses = hx.random_poses(geom, POSES, rng=0)
    hx.inverse_kinematics(geom, poses)
    times = np.empty(calls)
    for k in range(calls):
        t0 = time.perf_counter()
        hx.inverse_kinematics(geom, poses)
        times[k] = time.perf_counter() - t0
    return float(np.median(times) * 1e6)


def lines() -> list[str]:
    """The calibration as `name: value unit` lines."""
    return [f'calibration.python_loop_5M: {python_loop_s():.3f} s',
            f'calibration.kernel_ik_{POSES}: {kernel_ik_us():.1f} us',
            f'calibration.load_1min: {os.getloadavg()[0]:.2f}']


if __name__ == '__main__':
    for line in lines():
        print(line, flush=True)
