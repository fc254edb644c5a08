"""Fast DDS shared-memory clean-up with real processes (one of the fault hardening's findings): after a kill -9 the
dead process's ``fastdds_*`` files go, a live process's files stay and it keeps working."""
import os
import signal
import time

from hil_core.shm_cleanup import SHM_DIR, units
from hil_nodes.cli.processes import clean_dead_shm

LOCKS = ('_el', '_sl')


def held_units(pid: int) -> set[str]:
    """Units (segment/port base names) whose lock file the process holds open: the ones it owns."""
    out = set()
    for fd in os.listdir(f'/proc/{pid}/fd'):
        try:
            target = os.readlink(f'/proc/{pid}/fd/{fd}')
        except OSError:
            continue
        name = os.path.basename(target)
        if target.startswith(SHM_DIR + '/') and name.endswith(LOCKS):
            out |= set(units([name]))
    return out


def youngest_lock_age(pid: int) -> float:
    """Age (s) of the youngest lock file the process holds."""
    ages = []
    for n in (n for b in held_units(pid) for n in present(b) if n.endswith(LOCKS)):
        try:
            ages.append(time.time() - os.stat(f'{SHM_DIR}/{n}').st_mtime)
        except FileNotFoundError:
            pass
    return min(ages) if ages else 0.0


def present(base: str) -> dict[str, int]:
    """The unit's files now, by name with their inode: a port number freed by a dead process
    may be taken by a process of another test at once, in a new file (a new inode)."""
    out = {}
    for n in os.listdir(SHM_DIR):
        if base in units([n]):
            try:
                out[n] = os.stat(os.path.join(SHM_DIR, n)).st_ino
            except FileNotFoundError:
                pass
    return out


def report_of(files: dict[str, int]) -> str:
    lines = []
    for n in files:
        try:
            st = os.stat(os.path.join(SHM_DIR, n))
            lines.append(f'{n}: ino {st.st_ino} age {time.time() - st.st_mtime:.2f} s')
        except FileNotFoundError:
            lines.append(f'{n}: gone')
    return '; '.join(lines) + '\n' + open('/proc/locks').read()


def same_files(before: dict[str, int]) -> set[str]:
    now = {}
    for b in units(before):
        now.update(present(b))
    return {n for n, ino in before.items() if now.get(n) == ino}


def test_killed_process_files_removed_live_process_files_kept(ros):
    dead = ros.spawn('hil_nodes.kinematics.node', ['-r', '__node:=shm_victim'])
    live = ros.spawn('hil_nodes.kinematics.node', ['-r', '__node:=shm_survivor'])
    for name in ('shm_victim', 'shm_survivor'):
        ros.spin_until(lambda: f'/{name}/get_state' in dict(ros.node.get_service_names_and_types()),
                       timeout=40, what=f'{name} process')
        assert ros.get_state(name) == 'unconfigured'
    # the clean-up spares units younger than 1 s (a process creates a file, then locks it)
    ros.spin_until(lambda: youngest_lock_age(dead.proc.pid) > 1.2, timeout=10, what='victim files older than 1 s')
    own_dead, own_live, own_self = held_units(dead.proc.pid), held_units(live.proc.pid), held_units(os.getpid())
    # Fast DDS 3.x names (the old clean-up looked for fastrtps_* only); a segment and ports each
    assert own_dead and all(b.startswith('fastdds_') for b in own_dead | own_live)
    assert any('_port' not in b for b in own_dead) and any('_port' in b for b in own_dead)
    files_dead = {n: ino for b in own_dead for n, ino in present(b).items()}
    files_live = {n: ino for b in own_live | own_self for n, ino in present(b).items()}
    assert any(f.startswith('sem.fastdds_port') for f in files_dead)          # the port mutexes

    os.killpg(dead.proc.pid, signal.SIGKILL)
    dead.proc.wait(10)
    clean_dead_shm()      # (the harness of a parallel test may clean some of them first)

    assert not same_files(files_dead), 'left behind: ' + report_of(files_dead)
    assert same_files(files_live) == set(files_live), 'files of a live process removed'
    assert ros.get_state('shm_survivor') == 'unconfigured'                    # still reachable
    assert ros.change_state('shm_survivor', 'configure')
    live.stop()
