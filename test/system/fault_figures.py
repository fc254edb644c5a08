"""What a fault did to the robot, from a run's bag (test_fault_matrix.py): slider accelerations of
the stop, workspace and stroke limits, and the Fast DDS files the run's processes left.

Slider acceleration from /joint_states at the frame rate (T = 2.5 ms), three figures:

* ``d2p``: positions differentiated twice, ``(p[k+1] - 2 p[k] + p[k-1]) / T^2``. The one the
  matrix judges: the planner bounds exactly this (the second difference of its 2.5 ms poses) by
  a_max, positions are what every drive reports, and it is a weighted mean of the true
  acceleration over two frames, so it never exceeds the true peak;
* ``dv``: the velocity difference over one frame, ``(v[k+1] - v[k]) / T``, the exact mean
  acceleration of the frame for the mock (its velocity is the integrated state), reported;
* ``effort``: the mock fills it with the applied acceleration of the frame's last 125 us substep
  (not a demand: the value after the drive's limits), one sample per 20 substeps; on real drives
  effort is a force. Reported, not judged: it shows what happens inside a frame (a servo loop
  holding a setpoint that stopped saturates at the drives' 20 m/s^2 for a few substeps).
"""
from __future__ import annotations

import os
import pathlib
import re

import numpy as np
from hil_core import data_paths
from hil_core.planner.config import Workspace
from hil_nodes.recorder.bag import read_messages

SHM_DIR = '/dev/shm'
_FASTDDS = re.compile(r'(?:sem\.)?(?:fastdds|fastrtps)_')


def joint_frames(bag) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(stamps s, positions, velocities, efforts) of /joint_states, one row per stamp (the
    lockstep mock re-publishes t_0 until the first command: copies kept once). Messages with
    non-finite positions are not the hardware's (bad input the matrix published) and left out."""
    t, p, v, e = [], [], [], []
    for _, _, msg in read_messages(bag, ['/joint_states']):
        s = msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9
        if (t and s <= t[-1]) or not np.all(np.isfinite(msg.position)):
            continue
        t.append(s)
        p.append(np.asarray(msg.position, float))
        v.append(np.asarray(msg.velocity, float))
        e.append(np.asarray(msg.effort, float) if len(msg.effort) else np.full(len(msg.position), np.nan))
    return np.asarray(t), np.asarray(p), np.asarray(v), np.asarray(e)


def accelerations(t, p, v, period: float):
    """Per frame k (stamp t[k]): mean acceleration over [t[k], t[k+1]] from velocities, and the
    second difference of positions centred on t[k]; NaN where a frame is missing (a gap in the
    stamps is not differentiated across)."""
    n = len(t)
    dv = np.full((n, p.shape[1]), np.nan)
    d2p = np.full((n, p.shape[1]), np.nan)
    if n < 3:
        return dv, d2p
    step = np.diff(t)
    regular = np.abs(step - period) < 1e-6
    dv[:-1][regular] = (np.diff(v, axis=0) / period)[regular]
    both = regular[:-1] & regular[1:]
    d2p[1:-1][both] = (np.diff(p, 2, axis=0) / period ** 2)[both]
    return dv, d2p


def _peak(a, mask) -> float:
    sel = a[mask]
    sel = sel[np.isfinite(sel)]
    return float(np.abs(sel).max()) if sel.size else 0.0


def stop_figures(bag, t_fault: float, period: float = 0.0025) -> dict:
    """Figures of the stop: from the frame of the fault to the end of the bag."""
    t, p, v, e = joint_frames(bag)
    dv, d2p = accelerations(t, p, v, period)
    after = t >= t_fault - 1e-9
    before = ~after
    return {
        'frames': int(len(t)), 'last_stamp': float(t[-1]) if len(t) else 0.0,
        'frames_after': int(after.sum()),
        'peak_acc_dv': _peak(dv, after), 'peak_acc_d2p': _peak(d2p, after), 'peak_effort': _peak(e, after),
        'peak_acc_before': max(_peak(dv, before), _peak(d2p, before)),
        'speed_at_fault': float(np.abs(v[after][0]).max()) if after.any() else 0.0,
        'speed_at_end': float(np.abs(v[-1]).max()) if len(v) else 0.0,
        'positions': p, 'stamps': t,
    }


def slider_stroke() -> tuple[np.ndarray, np.ndarray]:
    """The sliders' stroke, displacement from home (config/hexafloat_scaled.yaml)."""
    from hil_core import hexaslide as hx
    geom = hx.load_geometry('hexaslide_scaled')
    return np.asarray(geom.stroke_min), np.asarray(geom.stroke_max)


def workspace() -> Workspace:
    return Workspace.load(str(data_paths.data_root() / 'config' / 'workspace_hexaslide_scaled.yaml'))


def hard_limit_levels(positions, every: int = 1) -> np.ndarray:
    """Modified-ellipsoid level h(P) of the TCP (forward kinematics of the slider positions, the
    plain-numpy solver warm-started along the run) for every ``every``-th frame; the hard limit
    is h = hard_expansion (config/workspace_hexaslide_scaled.yaml, hil_core.planner)."""
    from hil_core import hexaslide as hx
    ws = workspace()
    fk = hx.ForwardKinematicsNumpy(hx.load_geometry('hexaslide_scaled'))
    levels = []
    for q in positions[::every]:
        res = fk.solve(q)
        assert res.converged, f'FK did not converge at q={q}: {res.reason}'
        levels.append(ws.soft.level(ws.soft.local(res.pose[:3])))
    return np.asarray(levels)


def shm_files_of(pids) -> set[str]:
    """Fast DDS files in /dev/shm that the processes ``pids`` map or hold open."""
    from hil_core.shm_cleanup import files_of
    return {n for n in files_of(pids, SHM_DIR)[0] if _FASTDDS.match(n)}


def shm_leftovers(names) -> list[str]:
    """Of ``names`` (files of a run's processes, all ended now), those still in /dev/shm that no
    live process maps or holds open: what a clean-up that missed them leaves behind (a killed
    process's segment and listening port stay with their lock files: 22 files per kill before).
    A port whose files carry no lock at all is left out: Fast DDS re-creates a listener's port
    file when a writer still sends to it after the listener is gone (so does ``fastdds shm clean``,
    which spares such a unit while it is younger than its age limit)."""
    from hil_core.shm_cleanup import files_in_use, units
    present = [n for n in names if pathlib.Path(SHM_DIR, n).exists()]
    if not present:
        return []
    in_use, _ = files_in_use()
    now = set(os.listdir(SHM_DIR))
    out = []
    for base, files in units(present).items():
        locked = any(f'{base}{suffix}' in now for suffix in ('_el', '_sl'))
        if '_port' in base and not locked:
            continue
        out += [f for f in files if f not in in_use]
    return sorted(out)


_LOG_LINE = re.compile(r'^\[(?P<level>[A-Z]+)\] \[(?P<t>\d+\.\d+)\] \[(?P<node>[^\]]+)\]: (?P<text>.*)$')
DETECTIONS = (('supervisor', '-> FAULT'), ('supervisor', ' stalled: '), ('mock_hexapod', 'watchdog: braking'),
              ('planner', 'no reference for frame'))


def first_log_detection(log_dir, after_epoch: float) -> tuple[float, str] | None:
    """(epoch, 'node: text') of the first detection logged by a run's processes after
    ``after_epoch`` (ROS log lines carry the wall clock): a FAULT, a stall, a watchdog stop, a
    planner dropout."""
    found = []
    for log in pathlib.Path(log_dir).glob('*.log'):
        for line in log.read_text(errors='replace').splitlines():
            m = _LOG_LINE.match(line)
            if m is None or float(m['t']) < after_epoch:
                continue
            if any(m['node'] == node and text in m['text'] for node, text in DETECTIONS):
                found.append((float(m['t']), f"{m['node']}: {m['text']}"))
    return min(found) if found else None


def first_bag_detection(bag, t_fault: float, node: str) -> tuple[float, str] | None:
    """(sim time, what) of the first sign of the fault in the bag: FAULT on /hil/mode, a fault
    event, or a WARN/ERROR status of ``node`` or of the supervisor (stalls) on /diagnostics."""
    start = int(round((t_fault - 1e-9) * 1e9))
    for topic, ts, msg in read_messages(bag, ['/hil/mode', '/hil/events', '/diagnostics'], start_ns=start):
        t = ts * 1e-9
        if t < t_fault - 1e-9:
            continue
        if topic == '/hil/mode' and msg.data == 'FAULT':
            return t, 'FAULT'
        for st in getattr(msg, 'status', []):
            level = st.level[0] if isinstance(st.level, bytes) else int(st.level)
            who = st.name.split(':')[0].strip('/')
            if topic == '/hil/events' and st.name == 'fault':
                return t, f'fault event {st.hardware_id}'
            if topic == '/diagnostics' and level >= 1 and who == node:
                return t, f'{who} {"WARN" if level == 1 else "ERROR"}'
            if topic == '/diagnostics' and who == 'supervisor' and any(
                    kv.key == 'stalls' and kv.value not in ('0', '') for kv in st.values):
                return t, 'supervisor stall'
    return None
