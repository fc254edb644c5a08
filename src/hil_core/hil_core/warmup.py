"""Compile (or load from numba's cache) every compiled kernel of hil_core, so no node process
ever compiles in the middle of a run: `python -m hil_core.warmup` (the Makefile runs it before
the tests and `make demo`; a lab runs it once after `colcon build`). Prints the seconds per
group; a first call on a fresh checkout takes about a minute, later ones a few seconds."""
from __future__ import annotations

import importlib
import sys
import time

# the public module of each compiled part: its warm_up() compiles or loads the kernels it runs
GROUPS = ('hil_core.hexaslide.inverse', 'hil_core.hexaslide.forward', 'hil_core.timebase.engine',
          'hil_core.admittance.lti_model', 'hil_core.ft.signal_chain', 'hil_core.ft.load_profiles', 'hil_core.space.plant',
          'hil_core.hybrid5.tracking', 'hil_core.hybrid5.dynamics', 'hil_core.drives.servo',
          'hil_core.drives.plants.plain_trajectory', 'hil_core.drives.joint_friction',
          'hil_core.planner.quiet_frame', 'hil_core.hybrid5.law_frame', 'hil_core.space.command_stream')


def warm_up_all(out=sys.stdout) -> dict[str, float]:
    seconds = {}
    for name in GROUPS:
        warm = importlib.import_module(name).warm_up
        t0 = time.perf_counter()
        warm()
        seconds[name] = time.perf_counter() - t0
        print(f'{name}: {seconds[name]:.2f} s', file=out, flush=True)
    return seconds


if __name__ == '__main__':
    warm_up_all()
