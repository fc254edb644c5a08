"""Remove the Fast DDS shared-memory files of dead processes, never those of live ones.

What Fast DDS 3.x leaves in ``/dev/shm`` (2.x wrote the same names with ``fastrtps_``):

* a participant's data **segment** ``fastdds_<16 hex>`` with its lock file ``..._el``;
* a **port** (a ring of buffer descriptors) ``fastdds_port<N>``, its named mutex
  ``sem.fastdds_port<N>_mutex`` and the lock of its listener: ``..._el`` (opened
  ReadExclusive) or ``..._sl`` (ReadShared). A port opened only for writing, to reach a
  listener that is gone, has no lock file at all.

No name carries the owner's PID. Fast DDS tells a live owner by a lock: the owner holds
``flock`` on the ``_el`` (exclusive) or ``_sl`` (shared) file for as long as it lives, and
the kernel drops the lock when the process dies, even by SIGKILL. So (as ``fastdds shm
clean`` does, for both prefixes):

1. a unit (a segment or a port with its files) that has a lock file is alive while any of its
   lock files is locked; we test that with a non-blocking exclusive ``flock`` and keep the
   lock while we unlink, so nobody can take the unit over in between;
2. a unit without any lock file (a write-only port, an orphan mutex) is alive while a live
   Fast DDS process (one that holds a lock in the directory, from ``/proc/locks``) maps or
   holds open one of its files (``/proc/<pid>/maps`` and ``fd``); if such a process cannot
   be inspected (another user's), the unit is kept;
3. a unit younger than ``min_age`` seconds is kept: a process creates the file before it
   takes the lock (age = that of its lock files, which are never written; the mtime of a
   data file moves with every write).

Files that are not Fast DDS's are never touched.
"""
from __future__ import annotations

import errno
import fcntl
import os
import re
import time
from dataclasses import dataclass, field

SHM_DIR = '/dev/shm'
# <prefix>_<16 hex> segments, <prefix>_port<N> ports; optional lock suffix; sem.<port>_mutex
_UNIT = re.compile(r'^(?:sem\.)?(?P<base>(?:fastdds|fastrtps)_(?:[0-9a-f]{16}|port\d{1,5}))'
                   r'(?P<suffix>_el|_sl|_mutex)?$')
LOCK_SUFFIXES = ('_el', '_sl')


@dataclass
class CleanReport:
    removed: list[str] = field(default_factory=list)     # file names unlinked
    alive: list[str] = field(default_factory=list)       # unit base names kept: owner alive
    young: list[str] = field(default_factory=list)       # kept: younger than min_age
    unknown: list[str] = field(default_factory=list)     # kept: no lock and a process not inspectable


def units(names) -> dict[str, list[str]]:
    """Group Fast DDS file names by unit (segment or port base name); others are ignored."""
    out: dict[str, list[str]] = {}
    for name in names:
        m = _UNIT.match(name)
        if m is None:
            continue
        if name.startswith('sem.') != (m.group('suffix') == '_mutex'):
            continue                       # only sem.<port>_mutex is a Fast DDS mutex
        out.setdefault(m.group('base'), []).append(name)
    return out


def held_locks(shm_dir: str = SHM_DIR, locks_file: str = '/proc/locks') -> list[tuple[int, str]]:
    """(PID, lock file name) of every flock held on a Fast DDS lock file in ``shm_dir``."""
    ids = {}
    for name in os.listdir(shm_dir):
        if name.endswith(LOCK_SUFFIXES) and _UNIT.match(name):
            try:
                st = os.stat(os.path.join(shm_dir, name))
            except FileNotFoundError:
                continue
            ids[(os.major(st.st_dev), os.minor(st.st_dev), st.st_ino)] = name
    out = []
    with open(locks_file) as fh:
        for line in fh:
            # "1: FLOCK  ADVISORY  WRITE 12804 00:1b:3726 0 EOF" (a waiter has "->" after the id)
            parts = line.replace('->', ' ').split()
            if len(parts) < 6 or parts[1] != 'FLOCK':
                continue
            try:
                major, minor, ino = parts[5].split(':')
                key = (int(major, 16), int(minor, 16), int(ino))
                pid = int(parts[4])
            except ValueError:
                continue
            if key in ids:
                out.append((pid, ids[key]))
    return out


def lock_holders(shm_dir: str = SHM_DIR, locks_file: str = '/proc/locks') -> set[int]:
    """PIDs holding a flock on a lock file in ``shm_dir``: the live Fast DDS participants (each
    holds the ``_el`` lock of its own data segment for as long as it lives)."""
    return {pid for pid, _ in held_locks(shm_dir, locks_file)}


def owned_units(pids, shm_dir: str = SHM_DIR, locks_file: str = '/proc/locks') -> set[str]:
    """Base names of the units that the processes ``pids`` own (hold the lock of): their data
    segments and the ports they listen on, not the ports of others they write to."""
    pids = set(pids)
    return {_UNIT.match(name).group('base') for pid, name in held_locks(shm_dir, locks_file) if pid in pids}


def files_in_use(shm_dir: str = SHM_DIR, proc: str = '/proc') -> tuple[set[str], bool]:
    """Names of files in ``shm_dir`` that a live Fast DDS process maps or holds open, and
    whether every such process could be inspected. Only lock holders are looked at: a process
    without a segment lock is no Fast DDS participant (here PID 1 of a container cannot be
    read at all, even by root)."""
    return files_of(lock_holders(shm_dir), shm_dir, proc)


def files_of(pids, shm_dir: str = SHM_DIR, proc: str = '/proc') -> tuple[set[str], bool]:
    """Names of files in ``shm_dir`` that the processes ``pids`` map or hold open (a process
    that has exited meanwhile has none), and whether every one of them could be inspected."""
    prefix = os.path.realpath(shm_dir).rstrip('/') + '/'
    used: set[str] = set()
    complete = True
    for pid in sorted(pids):
        try:
            with open(f'{proc}/{pid}/maps') as fh:
                for line in fh:
                    i = line.find(prefix)
                    if i >= 0:
                        used.add(line[i + len(prefix):].rstrip('\n').removesuffix(' (deleted)'))
            for fd in os.listdir(f'{proc}/{pid}/fd'):
                try:
                    target = os.readlink(f'{proc}/{pid}/fd/{fd}')
                except OSError:
                    continue
                if target.startswith(prefix):
                    used.add(target[len(prefix):].removesuffix(' (deleted)'))
        except FileNotFoundError:
            continue                       # exited meanwhile
        except PermissionError:
            complete = False
    return used, complete


def _try_lock(path: str) -> int | None:
    """An fd holding an exclusive flock on ``path``, or None if someone else holds a lock."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None                        # gone or not ours to open: treat as alive
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        os.close(fd)
        if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
            raise
        return None
    return fd


def _unlink(shm_dir: str, names, report: CleanReport) -> None:
    # data and mutex first, lock files last: a lock file without its data is still a unit
    for name in sorted(names, key=lambda n: n.endswith(LOCK_SUFFIXES)):
        try:
            os.unlink(os.path.join(shm_dir, name))
            report.removed.append(name)
        except FileNotFoundError:
            pass


def clean_dead_shm(shm_dir: str = SHM_DIR, min_age: float = 1.0, now: float | None = None) -> CleanReport:
    """Remove the Fast DDS units of dead processes in ``shm_dir`` (rules in the module doc)."""
    report = CleanReport()
    try:
        names = os.listdir(shm_dir)
    except FileNotFoundError:
        return report
    now = time.time() if now is None else now
    in_use: set[str] | None = None
    complete = True
    for base, files in sorted(units(names).items()):
        locks = [f for f in files if f.endswith(LOCK_SUFFIXES)]
        try:
            # the age of a unit: its lock files' (empty, never written, so their mtime is their
            # birth); a data file's mtime moves with every write into it
            born = max(os.stat(os.path.join(shm_dir, f)).st_mtime for f in (locks or files))
        except FileNotFoundError:
            continue                       # removed meanwhile by its owner
        if now - born < min_age:
            report.young.append(base)
            continue
        if locks:
            held = []
            try:
                for lock in locks:
                    fd = _try_lock(os.path.join(shm_dir, lock))
                    if fd is None:
                        break
                    held.append(fd)
                else:
                    _unlink(shm_dir, files, report)
                    continue
                report.alive.append(base)
            finally:
                for fd in held:
                    os.close(fd)
            continue
        if in_use is None:
            in_use, complete = files_in_use(shm_dir)
        if any(f in in_use for f in files):
            report.alive.append(base)
        elif not complete:
            report.unknown.append(base)
        else:
            _unlink(shm_dir, files, report)
    return report


def clean_own_shm(own: set[str], timeout: float = 2.0, shm_dir: str = SHM_DIR, min_age: float = 1.0,
                  sleep=time.sleep, clock=time.monotonic) -> CleanReport:
    """``clean_dead_shm`` after every process of a run has ended, repeated until none of the
    units ``own`` (their base names: ``owned_units`` while the run's processes lived) is left,
    or ``timeout`` s. A unit of
    a run that is over can still look alive or young for a moment: a Fast DDS process starting
    elsewhere on the machine probes every unit's lock (its zombie check), another clean-up holds
    it while it decides, a port re-created at the end is younger than ``min_age``. Units of
    other live processes are never waited for, and never removed."""
    mine = set(own)
    report = clean_dead_shm(shm_dir, min_age)
    end = clock() + timeout
    while clock() < end:
        kept = mine & set(report.alive + report.young + report.unknown)
        if not kept:
            break
        sleep(0.1)
        again = clean_dead_shm(shm_dir, min_age)
        report = CleanReport(report.removed + again.removed, again.alive, again.young, again.unknown)
    return report
