"""Compile (or load from numba's cache) every compiled kernel of hil_core, so no node process
ever compiles in the middle of a run: `python -m hil_core.warmup` (the Makefile runs it before
the tests and `make demo`; a lab runs it once after `colcon build`). Prints the seconds per
group; a first call on a fresh checkout takes about a minute, later ones a few seconds."""
from __future__ import annotations

import importlib
import sys
import time

# module that has a warm_up() -> compiles every kernel of its group
GROUPS = ('hil_core.hexaslide', 'hil_core.timebase', 'hil_core.admittance.lti_model_kernel', 'hil_core.ft.signal_chain_kernel',
          'hil_core.space.plant_kernel', 'hil_core.hybrid5.tracking_kernel', 'hil_core.hybrid5.dynamics_kernel',
          'hil_core.drives.servo',
          'hil_core.drives.plants.plain_trajectory')


def warm_up_all(out=sys.stdout) -> dict[str, float]:
    seconds = {}
    for name in GROUPS:
        module = importlib.import_module(name)
        warm = getattr(module, 'warm_up', None)
        if warm is None:
            continue
        t0 = time.perf_counter()
        if name == 'hil_core.ft.signal_chain_kernel':
            from hil_core.ft.signal_chain import ChainConfig, SignalChain
            warm(SignalChain(ChainConfig()))
        else:
            warm()
        seconds[name] = time.perf_counter() - t0
        print(f'{name}: {seconds[name]:.2f} s', file=out, flush=True)
    return seconds


if __name__ == '__main__':
    warm_up_all()
