"""`hil bench realtime`: the real-time budget measured on whole runs (docs/realtime.md, "Measured").

For Hexafloat in real time (impulse_3hz, recorder on) in one process (with and without
intra-process delivery, and with the web HMI attached), isolated, and with the drives and the
recorder apart (LAYOUTS), and the
lockstep speed in one process, it runs `hil run` and prints:
* CPU-s per sim-s in total (every process, the `hil` command included) and per process;
* per node: callback CPU-s per sim-s and cycle overruns (the nodes' "<node>: cycle" statuses);
* messages per second per topic (the bag);
* wall-clock latency, F/T sample -> safe reference at the time base (p50/p99), and the time
  base's reference -> servo setpoint delay (designed 10 ms, min/max);
* time-base factor within +-2 steps, W-R at default, late commands, sim_per_wall;
* `hil report`'s transparency figures on the bag (delay, gain, phase RMSE, coherence).
Then space-iiwa and hybrid5 in real time with their CPU per sim-s.

Arguments: layouts and parts to run (default all), e.g. `hil bench realtime one_process lockstep`.
Environment: HIL_BENCH_DURATION (s, default 60), HIL_BENCH_RT=1 adds --rt (SCHED_FIFO in one
process, SCHED_RR with priorities by role with one process per node).
It prints the machine's calibration (bench/_calibration.py) first. Nothing here is asserted: these
are the figures of docs/realtime.md, "Measured".
"""
from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).parent))
import _calibration  # noqa: E402
import _realtime_bag as rb  # noqa: E402
from hil_core.supervision.status_names import is_cycle_status, status_node  # noqa: E402

DURATION = float(os.environ.get('HIL_BENCH_DURATION', '60'))
RT = ['--rt'] if os.environ.get('HIL_BENCH_RT') == '1' else []
DOMAIN = str(200 + os.getpid() % 30)


def _run(args: list[str], timeout: float, env: dict | None = None) -> tuple[int, dict[str, str], str]:
    cmd = [sys.executable, '-m', 'hil_nodes.cli.main', 'run', *args, '--domain-id', DOMAIN, '--quiet']
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env={**os.environ, **(env or {})})
    summary = dict(line.split(': ', 1) for line in res.stdout.splitlines() if ': ' in line)
    return res.returncode, summary, res.stderr


def _print(name: str, value, unit: str = '') -> None:
    print(f'{name}: {value}{" " + unit if unit else ""}', flush=True)


def _summary_figures(prefix: str, rc: int, s: dict[str, str]) -> None:
    _print(f'{prefix}.exit_code', rc)
    for key in ('outcome', 'faults', 'sim_per_wall', 'cpu_s_per_sim_s', 'late_commands', 'frames',
                'cpu_window_sim_s', 'max_leg_error_um', 'max_table_error_urad'):    # (hybrid5's tracking)
        if key in s:
            _print(f'{prefix}.{key}', s[key].replace(' ', '_') or '-')
    for part in s.get('cpu_s_per_sim_s_by_process', '').split(', '):
        if ' ' in part:
            name, value = part.rsplit(' ', 1)
            _print(f'{prefix}.cpu_s_per_sim_s.{name}', value)
    if s.get('fault_reason'):
        _print(f'{prefix}.fault_reason', s['fault_reason'].replace(' ', '_')[:120])


def _bag_figures(prefix: str, bag: str, frames: int) -> None:
    data = rb.read(bag)
    for topic, rate in sorted(rb.rates(data).items()):
        if rate >= 1.0:
            _print(f'{prefix}.rate{topic}', f'{rate:.1f}', 'msg/s')
    lat = rb.stage_latency_ms(data, '/planner/safe_reference')
    if lat.size:
        _print(f'{prefix}.ft_sample_to_safe_reference_p50', f'{np.percentile(lat, 50):.2f}', 'ms')
        _print(f'{prefix}.ft_sample_to_safe_reference_p99', f'{np.percentile(lat, 99):.2f}', 'ms')
    for key in ('delay_min_ms', 'delay_max_ms'):
        v = rb.node_value(data, 'timebase', key)
        if v is not None:
            _print(f'{prefix}.timebase_reference_to_setpoint_{key[6:]}', f'{float(v):.3f}', 'ms')
    cycles = float(rb.node_value(data, 'timebase', 'servo_cycles', 0) or 0)
    if cycles:
        off = float(rb.node_value(data, 'timebase', 'factor_off_cycles', 0))
        _print(f'{prefix}.timebase_factor_within_2_steps', f'{100 * (1 - off / cycles):.2f}', '%')
        tb_frames = float(rb.node_value(data, 'timebase', 'frames', 1))
        d_off = float(rb.node_value(data, 'timebase', 'distance_off_frames', 0))
        _print(f'{prefix}.wr_at_default', f'{100 * (1 - d_off / tb_frames):.2f}', '%')
        _print(f'{prefix}.timebase_skipped_frames', rb.node_value(data, 'timebase', 'skipped_frames', '0'))
    if frames:
        late = float(rb.node_value(data, 'mock_hexapod', 'late_commands', 0) or 0)
        _print(f'{prefix}.late_commands_share', f'{100 * late / frames:.3f}', '%')
        _print(f'{prefix}.mock_realtime_overruns', rb.node_value(data, 'mock_hexapod', 'realtime_overruns', '0'))
    for name, values in sorted(data['diag'].items()):
        if is_cycle_status(name):
            node = status_node(name)
            for key in ('cpu_s', 'overruns', 'deadline_misses', 'skipped', 'exec_p50_us', 'exec_p99_us'):
                if key in values:
                    _print(f'{prefix}.node.{node}.{key}', values[key])


def _report_figures(prefix: str, bag: str) -> None:
    res = subprocess.run([sys.executable, '-m', 'hil_nodes.cli.main', 'report', bag], capture_output=True,
                         text=True, timeout=600)
    path = pathlib.Path(bag) / 'report' / 'report.json'
    if res.returncode != 0 or not path.exists():
        _print(f'{prefix}.report', 'failed')
        return
    report = json.loads(path.read_text())
    numbers = report.get('numbers', {})
    for key, value in sorted(numbers.items()):
        if isinstance(value, (int, float)):
            _print(f'{prefix}.report.{key}', f'{value:.4g}')
    for note in report.get('notes', [])[:3]:
        _print(f'{prefix}.report.note', note.replace(' ', '_')[:160])
    verdict = report.get('verdict')
    if verdict:
        _print(f'{prefix}.report.verdict', str(verdict).replace(' ', '_')[:160])


# layout -> (hil run options, environment)
LAYOUTS = {
    'one_process': ([], {}),
    # the same without intra-process delivery (every message through DDS, as before it)
    'one_process_dds': ([], {'HIL_INTRA_PROCESS': '0'}),
    'isolated': (['--isolated'], {}),
    # the lab's split: the drives (hardware there) and the recorder (ros2 bag record there) in
    # processes of their own, the algorithm chain in one, on this machine's two cores
    'drives_apart': (['--own-process', 'mock_hexapod', '--own-process', 'recorder'], {}),
    # one process with the operator's web HMI attached (no browser): the graph's CPU-s per sim-s
    # next to the HMI's own (cpu_s_per_sim_s.hmi), which the total leaves out
    'one_process_hmi': (['--hmi', '--hmi-port', '0'], {}),
}


def hexafloat_realtime(layout: str) -> None:
    out = tempfile.mkdtemp(prefix='hil_bench_rt_')
    extra, env = LAYOUTS[layout]
    rc, s, err = _run(['hexafloat', '--realtime', '--scenario', 'impulse_3hz', '--duration', str(DURATION),
                       '--record', out, *extra, *RT], timeout=DURATION * 4 + 300, env=env)
    prefix = f'hexafloat.realtime.{layout}'
    _summary_figures(prefix, rc, s)
    if s.get('rt'):
        _print(f'{prefix}.rt', s['rt'].replace(' ', '_')[:200])
    bag = s.get('bag', '')
    if bag and pathlib.Path(bag).exists():
        _bag_figures(prefix, bag, int(s.get('frames', '0') or 0))
        _report_figures(prefix, bag)


def hexafloat_lockstep() -> None:
    for name, env in (('one_process', {}), ('one_process_dds', {'HIL_INTRA_PROCESS': '0'})):
        rc, s, _ = _run(['hexafloat', '--duration', '10'], timeout=1800, env=env)
        _summary_figures(f'hexafloat.lockstep.{name}', rc, s)


def _peak_slider_acceleration(bag: str) -> float:
    """Largest |slider acceleration| (m/s^2) in the bag: /joint_states velocities differenced
    frame to frame at their stamps, over the whole run (the stop included)."""
    from rosbags.rosbag2 import Reader
    store = rb._store()
    t, v = [], []
    with Reader(bag) as reader:
        cons = [c for c in reader.connections if c.topic == '/joint_states']
        for con, _, raw in reader.messages(connections=cons):
            msg = store.deserialize_cdr(raw, con.msgtype)
            t.append(msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9)
            v.append(np.asarray(msg.velocity, dtype=float))
    if len(t) < 2:
        return float('nan')
    t, v = np.asarray(t), np.asarray(v)
    keep = np.diff(t) > 0
    return float(np.max(np.abs(np.diff(v, axis=0)[keep]) / np.diff(t)[keep][:, None]))


def hexafloat_next_to_a_cpu_hog() -> None:
    """Real time next to two CPU hogs (both cores busy, no --rt): the run must stop safely with a
    FAULT that says real time was not held, never finish with exit 0 and a wrong emulation."""
    hog = 'import time\nend = time.monotonic() + {s}\nwhile time.monotonic() < end: pass\n'
    hogs = [subprocess.Popen([sys.executable, '-c', hog.format(s=DURATION + 60)]) for _ in range(2)]
    out = tempfile.mkdtemp(prefix='hil_bench_hog_')
    try:
        rc, s, _ = _run(['hexafloat', '--realtime', '--scenario', 'impulse_3hz', '--duration', str(DURATION),
                         '--record', out], timeout=DURATION * 4 + 300)
    finally:
        for h in hogs:
            h.kill()
    prefix = 'hexafloat.realtime.cpu_hog'
    _summary_figures(prefix, rc, s)
    bag = s.get('bag', '')
    if bag and pathlib.Path(bag).exists():
        _print(f'{prefix}.peak_slider_acceleration', f'{_peak_slider_acceleration(bag):.2f}', 'm/s^2')


def other_systems() -> None:
    for system, duration in (('space-iiwa', 30.0), ('hybrid5', 30.0)):
        rc, s, _ = _run([system, '--realtime', '--duration', str(min(duration, DURATION)), *RT],
                        timeout=duration * 4 + 300)
        _summary_figures(f'{system}.realtime', rc, s)


if __name__ == '__main__':
    which = sys.argv[1:] or [*LAYOUTS, 'lockstep', 'others', 'hog']
    for line in _calibration.lines():      # the machine's speed, with the figures it goes with
        print(line, flush=True)
    for layout in LAYOUTS:
        if layout in which:
            hexafloat_realtime(layout)
    if 'lockstep' in which:
        hexafloat_lockstep()
    if 'others' in which:
        other_systems()
    if 'hog' in which:
        hexafloat_next_to_a_cpu_hog()
