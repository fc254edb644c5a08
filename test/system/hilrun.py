"""Helpers for system tests: run the `hil` command as a user would and parse its summary."""
from __future__ import annotations

import os
import queue
import subprocess
import sys
import threading

from conftest import next_domain_id

from hil_nodes.cli.processes import interrupt


def hil_run(*args: str, timeout: float = 240.0, env: dict | None = None) -> tuple[int, dict[str, str], str]:
    """Run `hil run ...` on a fresh DDS domain (``env``: added to the environment); return
    (exit code, summary dict, stderr)."""
    cmd = [sys.executable, '-m', 'hil_nodes.cli.main', 'run', *args, '--domain-id', str(next_domain_id()), '--quiet']
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                          env=None if env is None else {**os.environ, **env})
    return proc.returncode, summary_of(proc.stdout.splitlines()), proc.stderr


def summary_of(lines) -> dict[str, str]:
    """The `key: value` lines of a run's summary (not its progress lines, `[hil] ...`, nor its
    messages, `hil run: ...`)."""
    summary = {}
    for line in lines:
        key, sep, value = line.partition(': ')
        if sep and not line.startswith(('[hil]', 'hil run:')):
            summary[key.strip()] = value.strip()
    return summary


class BackgroundRun:
    """`hil run ...` beside the test, as a user starts it: in a session of its own (``stop`` is a
    Ctrl-C to its group), stdout and stderr in one stream read line by line on a thread as they
    come. (A pipe that nobody reads stops the run once 64 KB are written into it; the lines are
    what a failed test shows of the run.)"""

    def __init__(self, *args: str, domain_id: int | None = None, quiet: bool = True):
        self.domain = next_domain_id() if domain_id is None else domain_id
        cmd = [sys.executable, '-m', 'hil_nodes.cli.main', 'run', *args, '--domain-id', str(self.domain),
               *(['--quiet'] if quiet else [])]
        env = dict(os.environ, ROS_DOMAIN_ID=str(self.domain), ROS_AUTOMATIC_DISCOVERY_RANGE='LOCALHOST',
                   PYTHONUNBUFFERED='1')
        self.proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                     start_new_session=True)
        self.lines: list[str] = []              # the lines taken by next_line, in order
        self._heard: list[str] = []             # every line the reader has seen (for output())
        self._queue: queue.SimpleQueue = queue.SimpleQueue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            self._heard.append(line.rstrip('\n'))
            self._queue.put(line.rstrip('\n'))
        self._queue.put(None)

    def output(self, last: int = 60) -> str:
        """The run's last ``last`` lines so far (for a failed assertion's message)."""
        return '\n'.join(self._heard[-last:])

    def next_line(self, timeout: float = 180.0) -> str | None:
        line = self._queue.get(timeout=timeout)
        if line is not None:
            self.lines.append(line)
        return line

    def until(self, predicate) -> str:
        """The first line from here on for which ``predicate`` holds."""
        while True:
            line = self.next_line()
            assert line is not None, 'the run ended first:\n' + '\n'.join(self.lines[-40:])
            if predicate(line):
                return line

    def finish(self) -> tuple[int, dict[str, str]]:
        """Wait for the run to end by itself: (exit code, its summary)."""
        while self.next_line() is not None:
            pass
        code = self.proc.wait(60)
        return code, summary_of(self.lines)

    def wait_for_mode(self, ros, modes: list, mode: str, timeout: float = 240.0) -> None:
        """Spin ``ros`` until the last of ``modes`` (the /hil/mode strings heard) is ``mode``; fail
        at once, with the modes heard and the run's output, if the run ends or FAULTs first."""
        def reached() -> bool:
            seen = [m.data for m in modes]
            if seen and seen[-1] == mode:
                return True
            if self.proc.poll() is not None or 'FAULT' in seen:
                raise AssertionError(f'the run never reached {mode} (modes heard: {seen}; exit code '
                                     f'{self.proc.poll()}); its output:\n{self.output()}')
            return False
        try:
            ros.spin_until(reached, timeout=timeout, what=mode)
        except TimeoutError as exc:
            raise AssertionError(f'{exc} (modes heard: {[m.data for m in modes]}); the run\'s output:\n'
                                 f'{self.output()}') from None

    def stop(self, timeout: float = 60.0) -> None:
        """Ctrl-C to the run's group (SIGKILL after ``timeout`` s); nothing if it has ended."""
        interrupt(self.proc, timeout)


def joint_state_payloads(bag) -> list[tuple]:
    """The /joint_states frames of a bag as comparable tuples (stamp, names, pos, vel), one per
    stamp. Before the first command the lockstep mock re-publishes t_0 every 0.1 s wall (so late
    subscribers can start): how many copies a bag holds depends on wall time, so repeats are
    checked to be exact copies and kept once."""
    from hil_nodes.recorder.bag import read_messages
    out = []
    for _, _, msg in read_messages(bag, ['/joint_states']):
        item = ((msg.header.stamp.sec, msg.header.stamp.nanosec), tuple(msg.name),
                tuple(msg.position.tolist()), tuple(msg.velocity.tolist()))
        if out and item[0] == out[-1][0]:
            assert item == out[-1], f'two different joint states with stamp {item[0]} in {bag}'
            continue
        out.append(item)
    return out


def run_end_stamp(bag) -> tuple[int, int]:
    """Stamp of the `home_reached` event: the end of the run. After it the graph holds at home
    until `hil run` shuts it down, for a number of frames that depends on wall time."""
    from hil_nodes.recorder.bag import read_messages
    for _, _, msg in read_messages(bag, ['/hil/events']):
        if any(st.name == 'home_reached' for st in msg.status):
            return (msg.header.stamp.sec, msg.header.stamp.nanosec)
    raise AssertionError(f'no home_reached event in {bag}')


def processes_on_domain(domain_id: int) -> list[int]:
    """PIDs of processes whose environment has ROS_DOMAIN_ID=domain_id (children of a run)."""
    import os
    pids = []
    for entry in os.listdir('/proc'):
        if not entry.isdigit():
            continue
        try:
            with open(f'/proc/{entry}/environ', 'rb') as fh:
                env = fh.read().split(b'\0')
        except OSError:
            continue
        if f'ROS_DOMAIN_ID={domain_id}'.encode() in env and int(entry) != os.getpid():
            pids.append(int(entry))
    return pids
