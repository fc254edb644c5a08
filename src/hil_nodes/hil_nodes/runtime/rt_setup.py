"""Real-time process settings asked for by ``hil run --rt`` and the launch file's ``rt`` argument:
SCHED_FIFO priority, CPU affinity and mlockall, applied by each node process to itself at start
(before rclpy creates its DDS threads, which then inherit the policy).

The request travels in environment variables, so one process layout or the other, ``hil run`` or
``ros2 launch``, gets the same settings:

* ``HIL_RT_PRIORITY``: real-time priority (1-99); unset or 0 = leave the scheduler alone. Each
  process asks for its own: the run's priority minus its node's ``rt_rank`` (:func:`ranked_env`);
* ``HIL_RT_POLICY``: ``fifo`` (default) or ``rr``. One process per node on few cores needs ``rr``:
  under SCHED_FIFO a busy process is never preempted by another of the same priority, so one
  node's long callback starves the others (their heartbeats stop: a false "node is dead");
* ``HIL_RT_CPUS``: CPU list for the affinity, e.g. ``1`` or ``0,1``; unset = leave it;
* ``HIL_RT_MLOCK``: ``1`` = lock all current and future pages in RAM (no page faults later).

Where something is not permitted (no CAP_SYS_NICE, an RLIMIT_MEMLOCK too small, a CPU that does
not exist) the process goes on without it and says so: :func:`apply_from_env` returns one line
per setting. :func:`inspect` reads back from outside what a process really has (for the run
summary): its scheduling policy and priority, its affinity and its locked memory.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import os

MCL_CURRENT, MCL_FUTURE = 1, 2


def parse_cpus(text: str) -> set[int]:
    """'0,2-3' -> {0, 2, 3}; ValueError on anything else."""
    cpus: set[int] = set()
    for part in filter(None, (p.strip() for p in text.split(','))):
        lo, _, hi = part.partition('-')
        a, b = int(lo), int(hi or lo)
        if a < 0 or b < a:
            raise ValueError(f'bad CPU range {part!r}')
        cpus.update(range(a, b + 1))
    if not cpus:
        raise ValueError('empty CPU list')
    return cpus


PR_SET_TIMERSLACK = 29
TIMER_SLACK_NS = 1


def fine_timer_slack(ns: int = TIMER_SLACK_NS) -> bool:
    """Timer slack of this thread and of the threads it creates later (DDS, the executor's
    timers), in ns. Linux lets a normal thread's timed waits end up to 50 us late (to group
    wake-ups); a real-time policy has none. With 50 us an idle executor turn took 76 us of wall
    time instead of 18, and a lockstep process lost 1 ms in every 6 serving its timers; grid
    timers fired up to 50 us late. Needs no privilege. False where the call failed."""
    libc = ctypes.CDLL(ctypes.util.find_library('c'), use_errno=True)
    return libc.prctl(PR_SET_TIMERSLACK, ctypes.c_ulong(ns), 0, 0, 0) == 0


def requested_priority(env) -> int:
    """The real-time priority an environment asks for (0: none)."""
    return int(env.get('HIL_RT_PRIORITY', '0') or 0)


def apply_from_env(env=os.environ) -> list[str]:
    """Apply the settings the environment asks for to this process; one line each on the outcome."""
    lines = []
    prio = requested_priority(env)
    if prio:
        name = 'SCHED_RR' if env.get('HIL_RT_POLICY', 'fifo') == 'rr' else 'SCHED_FIFO'
        try:
            os.sched_setscheduler(0, getattr(os, name), os.sched_param(prio))
            lines.append(f'{name} priority {prio}: applied')
        except (PermissionError, OSError, ValueError) as exc:
            lines.append(f'{name} priority {prio}: NOT applied ({exc})')
    cpus = env.get('HIL_RT_CPUS', '')
    if cpus:
        try:
            os.sched_setaffinity(0, parse_cpus(cpus))
            lines.append(f'CPU affinity {cpus}: applied')
        except (PermissionError, OSError, ValueError) as exc:
            lines.append(f'CPU affinity {cpus}: NOT applied ({exc})')
    if env.get('HIL_RT_MLOCK', '') == '1':
        libc = ctypes.CDLL(ctypes.util.find_library('c'), use_errno=True)
        if libc.mlockall(MCL_CURRENT | MCL_FUTURE) == 0:
            lines.append('mlockall: applied')
        else:
            lines.append(f'mlockall: NOT applied ({os.strerror(ctypes.get_errno())})')
    return lines


def inspect(pid: int) -> dict[str, str]:
    """What a process really runs with: policy/priority, affinity, locked memory (kB)."""
    out = {}
    try:
        policy = os.sched_getscheduler(pid)
        prio = os.sched_getparam(pid).sched_priority
        out['sched'] = {os.SCHED_FIFO: f'FIFO {prio}', os.SCHED_RR: f'RR {prio}'}.get(policy, 'OTHER')
        out['cpus'] = ','.join(map(str, sorted(os.sched_getaffinity(pid))))
        with open(f'/proc/{pid}/status') as f:
            for line in f:
                if line.startswith('VmLck:'):
                    out['locked_kb'] = line.split()[1]
    except (OSError, ProcessLookupError):
        out['sched'] = 'gone'
    return out


def request_env(priority: int, cpus: str, mlock: bool, policy: str = 'fifo') -> dict[str, str]:
    """The environment that asks the node processes for these settings."""
    if policy not in ('fifo', 'rr'):
        raise ValueError(f"policy must be 'fifo' or 'rr', got {policy!r}")
    env = {'HIL_RT_PRIORITY': str(int(priority)), 'HIL_RT_POLICY': policy}
    if cpus:
        parse_cpus(cpus)          # refuse a malformed list before starting anything
        env['HIL_RT_CPUS'] = cpus
    if mlock:
        env['HIL_RT_MLOCK'] = '1'
    return env


def ranked_env(env: dict[str, str], rank: int | None) -> dict[str, str]:
    """A node's request: the run's priority minus its rank (at least 1), so the drives preempt
    the chain, the chain the kinematics and the supervisor; rank None asks for no real-time
    priority (affinity and mlockall still apply)."""
    out = dict(env)
    prio = requested_priority(env)
    if rank is None:
        out.pop('HIL_RT_PRIORITY', None)
        out.pop('HIL_RT_POLICY', None)
    elif prio:
        out['HIL_RT_PRIORITY'] = str(max(1, prio - int(rank)))
    return out


def highest_env(envs: list[dict[str, str]]) -> dict[str, str]:
    """One process hosting several nodes runs at the highest priority any of them asks for
    (affinity and mlockall are the same for every node of a run)."""
    out: dict[str, str] = {}
    for env in envs:
        out.update(env)
    ranked = [e for e in envs if requested_priority(e)]
    if ranked:
        top = max(ranked, key=requested_priority)
        out.update(HIL_RT_PRIORITY=top['HIL_RT_PRIORITY'], HIL_RT_POLICY=top['HIL_RT_POLICY'])
    return out
