"""Two emulated hosts on this machine (docs/lab.md, "Two or three hosts"; docs/testing.md):
two network namespaces joined by a veth pair, each process started in one of them with a
private /dev/shm (``unshare -m`` and a tmpfs), so Fast DDS can neither use shared memory nor
loopback between the "hosts": every message crosses the veth link by UDP. Traffic stays inside
the namespaces made here; they are always deleted, with any process left in them.

Needs root (CAP_SYS_ADMIN, CAP_NET_ADMIN) and iproute2's ``ip``, ``unshare`` and ``mount``; the
tests that use it are skipped with the reason otherwise.
"""
from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time
import uuid

SUBNET = '10.217.{}.{}'


def unavailable() -> str:
    """Why two hosts cannot be emulated here ('' when they can)."""
    if os.geteuid() != 0:
        return 'network namespaces need root'
    missing = [t for t in ('ip', 'unshare', 'mount') if shutil.which(t) is None]
    if missing:
        return f'missing tools: {missing}'
    probe = f'hilprobe{uuid.uuid4().hex[:6]}'
    made = subprocess.run(['ip', 'netns', 'add', probe], capture_output=True, text=True)
    subprocess.run(['ip', 'netns', 'del', probe], capture_output=True)
    return '' if made.returncode == 0 else f'ip netns add failed: {made.stderr.strip()}'


def _ip(*args: str) -> None:
    subprocess.run(['ip', *args], check=True, capture_output=True, text=True)


class EmulatedHosts:
    """What every set of emulated hosts does: start a process on a host, stop them all and delete
    the namespaces. ``ns`` maps a host to its namespace; ``extra_namespaces`` are the others
    (a bridge's)."""

    ns: dict[str, str]
    extra_namespaces: tuple[str, ...] = ()
    procs: list[subprocess.Popen]

    def popen(self, host: str, argv: list[str], env: dict[str, str], out, err) -> subprocess.Popen:
        """``argv`` on ``host``, in a mount namespace of its own with a private /dev/shm."""
        inner = 'mount -t tmpfs -o size=512m hilshm /dev/shm && exec "$@"'
        cmd = ['ip', 'netns', 'exec', self.ns[host], 'unshare', '--mount', '--propagation', 'private',
               'sh', '-c', inner, 'sh', *argv]
        proc = subprocess.Popen(cmd, env=env, stdout=out, stderr=err, start_new_session=True)
        self.procs.append(proc)
        return proc

    def close(self) -> None:
        """Stop what runs in the namespaces (ours), then delete them (and the links with them)."""
        for proc in self.procs:
            if proc.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGINT)
        end = time.monotonic() + 15.0
        for proc in self.procs:
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(max(0.1, end - time.monotonic()))
        for ns in [*self.ns.values(), *self.extra_namespaces]:
            pids = subprocess.run(['ip', 'netns', 'pids', ns], capture_output=True, text=True).stdout.split()
            for pid in pids:           # started by this fixture only: nothing else runs in its namespaces
                with contextlib.suppress(ProcessLookupError):
                    os.kill(int(pid), signal.SIGKILL)
            subprocess.run(['ip', 'netns', 'del', ns], capture_output=True)


class TwoHosts(EmulatedHosts):
    """Hosts ``a`` and ``b`` with addresses ``addr['a']``, ``addr['b']`` on one /24."""

    def __init__(self, multicast: bool = False):
        tag = uuid.uuid4().hex[:6]
        self.ns = {'a': f'hil{tag}a', 'b': f'hil{tag}b'}
        self.addr = {'a': SUBNET.format(int(tag[:2], 16), 1), 'b': SUBNET.format(int(tag[:2], 16), 2)}
        self.procs: list[subprocess.Popen] = []
        veth = {'a': f'hv{tag}a', 'b': f'hv{tag}b'}
        try:
            for host in 'ab':
                _ip('netns', 'add', self.ns[host])
            _ip('link', 'add', veth['a'], 'type', 'veth', 'peer', 'name', veth['b'])
            for host in 'ab':
                ns = self.ns[host]
                _ip('link', 'set', veth[host], 'netns', ns)
                _ip('-n', ns, 'addr', 'add', f'{self.addr[host]}/24', 'dev', veth[host])
                _ip('-n', ns, 'link', 'set', veth[host], 'up')
                _ip('-n', ns, 'link', 'set', 'lo', 'up')
                if multicast:   # discovery on the subnet: its multicast group is reached over the link
                    _ip('-n', ns, 'route', 'add', '224.0.0.0/4', 'dev', veth[host])
        except BaseException:
            self.close()
            raise


def hil_argv(*args: str) -> list[str]:
    return [sys.executable, '-m', 'hil_nodes.cli.main', 'run', *args]


def summary_of(text: str) -> dict[str, str]:
    out = {}
    for line in text.splitlines():
        key, sep, value = line.partition(': ')
        if sep and not key.startswith(('[', ' ')) and ' ' not in key.strip():
            out[key.strip()] = value.strip()
    return out
