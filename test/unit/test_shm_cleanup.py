"""hil_core.shm_cleanup on a scratch directory laid out like /dev/shm under Fast DDS 3.x (and
2.x's fastrtps_ names): units whose lock a live process holds, or that a live process maps,
stay; units of a killed process go; other files are never touched."""
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from hil_core.shm_cleanup import clean_dead_shm, clean_own_shm, owned_units, units

# A stand-in for a Fast DDS process: flock(LOCK_EX or LOCK_SH) some files, mmap others, wait.
HOLDER = textwrap.dedent('''
    import fcntl, mmap, os, sys
    keep = []
    for arg in sys.argv[1:]:
        kind, path = arg.split('=', 1)
        fd = os.open(path, os.O_RDWR)
        if kind == 'map':
            keep.append(mmap.mmap(fd, 0))
        else:
            fcntl.flock(fd, fcntl.LOCK_EX if kind == 'ex' else fcntl.LOCK_SH)
        keep.append(fd)
    print('ready', flush=True)
    sys.stdin.read()
''')


class Holder:
    def __init__(self, *claims):
        self.proc = subprocess.Popen([sys.executable, '-c', HOLDER, *claims], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True)
        assert self.proc.stdout.readline() == 'ready\n'

    def kill(self):
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(10)

    def close(self):
        if self.proc.poll() is None:
            self.proc.stdin.close()
            self.proc.wait(10)


def touch(d, name, size=0, age=10.0):
    path = os.path.join(d, name)
    with open(path, 'wb') as fh:
        fh.write(b'\0' * size)
    t = time.time() - age
    os.utime(path, (t, t))
    return path


SEG_A, SEG_B = 'fastdds_0123456789abcdef', 'fastdds_fedcba9876543210'


def segment(d, base, age=10.0):
    return touch(d, base, 4096, age), touch(d, base + '_el', 0, age)


def port(d, base, lock='_el', age=10.0):
    files = [touch(d, base, 4096, age), touch(d, f'sem.{base}_mutex', 32, age)]
    if lock:
        files.append(touch(d, base + lock, 0, age))
    return files


def test_units_group_fast_dds_names_only():
    names = [SEG_A, SEG_A + '_el', 'fastdds_port7411', 'fastdds_port7411_el', 'sem.fastdds_port7411_mutex',
             'fastrtps_port12', 'fastrtps_port12_sl', 'lttng-ust-wait-6', 'fastdds_port7411_mutex',
             'sem.fastdds_port7411', 'fastdds_xyz', 'myapp_fastdds_port1']
    assert units(names) == {SEG_A: [SEG_A, SEG_A + '_el'],
                            'fastdds_port7411': ['fastdds_port7411', 'fastdds_port7411_el',
                                                 'sem.fastdds_port7411_mutex'],
                            'fastrtps_port12': ['fastrtps_port12', 'fastrtps_port12_sl']}


def test_live_units_stay_dead_units_go(tmp_path):
    d = str(tmp_path)
    seg_live, seg_live_lock = segment(d, SEG_A)
    segment(d, SEG_B)                                            # owner gone: lock free
    port_live = port(d, 'fastdds_port7411')
    port(d, 'fastdds_port7413')                                  # listener gone
    shared = port(d, 'fastdds_port7000', lock='_sl')             # ReadShared listeners
    writer_only = port(d, 'fastdds_port7415', lock=None)         # opened for writing, mapped
    port(d, 'fastdds_port7417', lock=None)                       # nobody maps it
    segment(d, 'fastrtps_00000000deadbeef')                      # Fast DDS 2.x name, dead
    touch(d, 'fastrtps_port9_el')                                # a lock alone, dead
    touch(d, 'sem.fastdds_port7419_mutex', 32)                   # an orphan mutex
    foreign = [touch(d, 'lttng-ust-wait-6', 4096), touch(d, 'other_app_segment', 16)]
    owner = Holder(f'ex={seg_live_lock}', f'ex={port_live[2]}', f'map={writer_only[0]}')
    readers = [Holder(f'sh={shared[2]}') for _ in range(2)]
    try:
        report = clean_dead_shm(d)
        left = set(os.listdir(d))
        assert sorted(report.alive) == ['fastdds_0123456789abcdef', 'fastdds_port7000', 'fastdds_port7411',
                                        'fastdds_port7415']
        assert left == {os.path.basename(p) for p in (seg_live, seg_live_lock, *port_live, *shared, *writer_only,
                                                      *foreign)}
        assert sorted(report.removed) == sorted(
            [SEG_B, SEG_B + '_el', 'fastdds_port7413', 'fastdds_port7413_el', 'sem.fastdds_port7413_mutex',
             'fastdds_port7417', 'sem.fastdds_port7417_mutex', 'fastrtps_00000000deadbeef',
             'fastrtps_00000000deadbeef_el', 'fastrtps_port9_el', 'sem.fastdds_port7419_mutex'])
        # one shared reader dies: the other still holds the port
        readers[0].kill()
        assert clean_dead_shm(d).removed == [] and os.path.exists(shared[0])
        # the owner is killed (-9): the kernel drops its locks and mappings, its units go
        owner.kill()
        report = clean_dead_shm(d)
        assert sorted(report.removed) == sorted(
            [SEG_A, SEG_A + '_el', 'fastdds_port7411', 'fastdds_port7411_el', 'sem.fastdds_port7411_mutex',
             'fastdds_port7415', 'sem.fastdds_port7415_mutex'])
        assert set(os.listdir(d)) == {os.path.basename(p) for p in (*shared, *foreign)}
    finally:
        for h in (owner, *readers):
            h.close()


def test_a_lock_held_in_this_process_counts_as_alive(tmp_path):
    import fcntl
    d = str(tmp_path)
    _, lock = segment(d, SEG_A)
    fd = os.open(lock, os.O_RDONLY)
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        assert clean_dead_shm(d).alive == [SEG_A] and len(os.listdir(d)) == 2
    finally:
        os.close(fd)
    assert len(clean_dead_shm(d).removed) == 2


@pytest.mark.parametrize('age, kept', [(0.2, True), (5.0, False)])
def test_a_unit_being_created_is_left_alone(tmp_path, age, kept):
    """A process creates the segment before it takes the lock: an unlocked unit younger than
    min_age may be one being born."""
    d = str(tmp_path)
    segment(d, SEG_A, age=age)
    report = clean_dead_shm(d, min_age=1.0)
    assert (report.young == [SEG_A]) == kept and bool(os.listdir(d)) == kept


def test_missing_directory_is_not_an_error(tmp_path):
    assert clean_dead_shm(str(tmp_path / 'absent')).removed == []


def test_owned_units_are_those_whose_lock_a_process_holds(tmp_path):
    """A process owns its segment and its listening port (it holds their locks), not the port of
    a peer it writes to (it only maps that)."""
    d = str(tmp_path)
    _, seg_lock = segment(d, SEG_A)
    peer_port = touch(d, 'fastdds_port7411', 64)
    touch(d, 'fastdds_port7411_el')
    owner = Holder(f'ex={seg_lock}', f'map={peer_port}')
    try:
        assert owned_units([owner.proc.pid], d) == {SEG_A}
        assert owned_units([os.getpid()], d) == set()
    finally:
        owner.close()


class FakeClock:
    def __init__(self):
        self.t, self.sleeps = 0.0, 0

    def sleep(self, s):
        self.t += s
        self.sleeps += 1

    def __call__(self):
        return self.t


def test_clean_own_shm_waits_for_a_lock_held_for_a_moment(tmp_path):
    """A unit of the run still locked for a moment after its owner ended (another process
    probing it) goes once the lock is free; a unit of another live process is not waited for."""
    import threading
    d = str(tmp_path)
    _, mine = segment(d, SEG_A)
    _, theirs = segment(d, SEG_B)
    prober, other = Holder(f'ex={mine}'), Holder(f'ex={theirs}')
    try:
        threading.Timer(0.3, prober.close).start()
        report = clean_own_shm({SEG_A}, timeout=10.0, shm_dir=d)
        assert sorted(report.removed) == [SEG_A, SEG_A + '_el'] and report.alive == [SEG_B]
        clock = FakeClock()
        assert clean_own_shm(set(), shm_dir=d, sleep=clock.sleep, clock=clock).alive == [SEG_B]
        assert clock.sleeps == 0
    finally:
        prober.close()
        other.close()


def test_clean_own_shm_gives_up_after_its_timeout(tmp_path):
    """A unit of the run whose lock stays held (a process the run did not know) is kept: never
    removed while locked, and the wait is bounded."""
    d = str(tmp_path)
    _, lock = segment(d, SEG_A)
    holder = Holder(f'ex={lock}')
    try:
        clock = FakeClock()
        report = clean_own_shm({SEG_A}, timeout=2.0, shm_dir=d, sleep=clock.sleep, clock=clock)
        assert report.alive == [SEG_A] and report.removed == [] and 19 <= clock.sleeps <= 21
        assert len(os.listdir(d)) == 2
    finally:
        holder.close()
