"""Start and stop the processes of a run; nothing may outlive `hil run` (no orphans)."""
from __future__ import annotations

import contextlib
import ctypes
import os
import pathlib
import re
import signal
import subprocess
import time

from hil_core import shm_cleanup
from hil_nodes.runtime import participant_ready

_PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:
    """In the child, before exec: get SIGTERM when the `hil` process dies, even by SIGKILL, so
    no node outlives the run (Linux prctl; rclpy turns SIGTERM into a clean shutdown)."""
    try:
        ctypes.CDLL('libc.so.6', use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
    except OSError:
        pass


class ProcessGroup:
    """Child processes, each in its own session so a stop reaches its whole tree."""

    def __init__(self, log_dir: pathlib.Path, env: dict[str, str]):
        self.log_dir = log_dir
        self.env = env
        self.procs: dict[str, subprocess.Popen] = {}
        self._logs = []
        log_dir.mkdir(parents=True, exist_ok=True)

    def start(self, name: str, cmd: list[str], extra_env: dict[str, str] | None = None) -> subprocess.Popen:
        log = (self.log_dir / f'{name}.log').open('w')
        self._logs.append(log)
        env = {**self.env, **(extra_env or {}), participant_ready.ENV: '1'}     # it says when it joined DDS
        proc = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT,
                                start_new_session=True, preexec_fn=_die_with_parent)
        self.procs[name] = proc
        return proc

    def shm_units(self) -> set[str]:
        """The Fast DDS units (segments, listening ports) that the group's live processes and
        this one own now: what must be gone once the run is over."""
        pids = [p.pid for p in self.procs.values() if p.poll() is None] + [os.getpid()]
        return shm_cleanup.owned_units(pids)

    def wait_for_line(self, name: str, pattern: str, timeout: float) -> tuple[str, str]:
        """(first match of ``pattern``'s group 1 in process ``name``'s output, '') or ('', why not):
        the process ended first (its last line says why) or said nothing matching in ``timeout``
        wall s. Reads its log file: no thread is started in this process (see `hil run`)."""
        proc, path = self.procs[name], self.log_dir / f'{name}.log'
        regex = re.compile(pattern, re.MULTILINE)
        end = time.monotonic() + timeout
        while True:
            ended = proc.poll() is not None        # before reading: a line written before it ended counts
            text = path.read_text(errors='replace') if path.exists() else ''
            found = regex.search(text)
            if found:
                return found.group(1), ''
            if ended:
                last = next((line for line in reversed(text.splitlines()) if line.strip()), '')
                return '', f'its process ended ({proc.returncode}){": " + last.strip() if last else ""}'
            if time.monotonic() > end:
                return '', f'nothing said within {timeout:g} s'
            time.sleep(0.05)

    def wait_participants(self, timeout: float = 60.0) -> list[str]:
        """Wait until every process wrote that its DDS participant exists
        (``runtime.participant_ready``), ended, or ``timeout`` wall s passed in all; the names of
        those that did not say so (ended, or still starting)."""
        end = time.monotonic() + timeout
        missing = []
        for name in self.procs:
            found, _ = self.wait_for_line(name, f'^({re.escape(participant_ready.LINE)})$',
                                          max(0.0, end - time.monotonic()))
            if not found:
                missing.append(name)
        return missing

    def dead(self) -> dict[str, int]:
        return {n: p.returncode for n, p in self.procs.items() if p.poll() is not None}

    def stop(self, timeout: float = 10.0) -> list[str]:
        """SIGINT all, wait, SIGKILL what is left; return the names that had to be killed."""
        for proc in self.procs.values():
            if proc.poll() is None:
                try:
                    os.killpg(proc.pid, signal.SIGINT)
                except ProcessLookupError:
                    pass
        deadline = time.monotonic() + timeout
        for proc in self.procs.values():
            try:
                proc.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                pass
        killed = []
        for name, proc in self.procs.items():
            if proc.poll() is None:
                killed.append(name)
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                proc.wait(5)
        for log in self._logs:
            log.close()
        # always: a child killed from outside (kill -9 in the fault matrix) leaves its files too,
        # and the clean-up only ever takes the files of dead processes
        clean_dead_shm(self.log_dir / 'shm_cleanup.log')
        return killed


def interrupt(proc: subprocess.Popen, timeout: float = 60.0) -> None:
    """Stop a process started in a session of its own (``start_new_session``) as Ctrl-C does:
    SIGINT to its group, then SIGKILL if it has not ended within ``timeout`` s."""
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGINT)
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def clean_dead_shm(log: pathlib.Path | None = None, own: set[str] | None = None) -> int:
    """Remove the Fast DDS shared-memory files (``fastdds_*``, ``fastrtps_*``) of dead
    processes, never those of live ones (rules in ``hil_core.shm_cleanup``); the number of
    files removed. ``own``: the units of a run whose processes have all ended, waited for
    (``shm_cleanup.clean_own_shm``). ``log``: a line appended there says what was removed and
    what was kept, and why (a file left in /dev/shm after a run can be traced to its rule)."""
    t0 = time.monotonic()
    report = shm_cleanup.clean_dead_shm() if own is None else shm_cleanup.clean_own_shm(own)
    if log is not None:
        with log.open('a') as fh:
            fh.write(f'{time.time():.3f} ({time.monotonic() - t0:.2f} s) removed {sorted(report.removed)}; '
                     f'kept: owner alive {sorted(report.alive)}, younger than 1 s {sorted(report.young)}, '
                     f'not inspectable {sorted(report.unknown)}\n')
    return len(report.removed)
