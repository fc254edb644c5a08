"""The machine's calibration, given with every real-time figure: machines of one kind differ 2-3x
in speed (and one machine drifts from hour to hour), so a figure means little without the speed
of the machine it was measured on (docs/realtime.md, "Measured").

The number is the seconds of a pure-Python loop of 5 million ``s += i*i``, run as ``python -c``
runs it (module-level names, a fresh interpreter): the nodes' cost is mostly interpreter work
around compiled kernels. `hil bench` prints it (bench/_calibration.py, the median of three), and
`hil run --realtime` measures it in a child process while the graph's processes start (on
the other core of a 2-core machine, so it costs the run no wall time) and prints it in its summary,
next to the CPU figure and the verdict it explains; and again while the graph stops
(``calibration_after``): this machine has read 0.56 s as a run started and 1.35 s in the next
minute, so one reading at the start can vouch for a speed the run did not get (docs/realtime.md,
"Measured").
"""
from __future__ import annotations

import subprocess
import sys

# the reference loop (the machine read 0.668 s; this project's CI machine 0.32-1.19 s)
LOOP_5M = ('import time\nt = time.perf_counter()\ns = 0\nfor i in range(5_000_000):\n    s += i * i\n'
           'print(time.perf_counter() - t)\n')


def start() -> subprocess.Popen:
    """The loop, started in a fresh interpreter; ``result`` reads it."""
    return subprocess.Popen([sys.executable, '-c', LOOP_5M], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            text=True)


def result(proc: subprocess.Popen, timeout: float = 30.0) -> float | None:
    """The loop's seconds, or None when it failed or took longer than ``timeout`` wall s (it is
    stopped then)."""
    try:
        out, _ = proc.communicate(timeout=timeout)
        return float(out) if proc.returncode == 0 else None
    except (subprocess.TimeoutExpired, ValueError):
        stop(proc)
        return None


def stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.kill()
        proc.wait()


def summary_line(seconds: float | None, when: str = 'started') -> str:
    """The summary's ``calibration`` value (``calibration_after``: ``when='stopped'``)."""
    if seconds is None:
        return 'not measured'
    return f'{seconds:.3f} s (python_loop_5M, measured as the run {when}; docs/realtime.md "Measured")'
