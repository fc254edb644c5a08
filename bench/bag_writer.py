"""`hil bench bag_writer`: the recorder's bag writer (``hil_nodes.recorder.bag.CheckpointWriter``)
at the rate of the 400 Hz Hexafloat graph, without the graph: what its writes and checkpoints
cost the process that records (in one process, the real-time chain's).

A frame is the nine messages Hexafloat records at 400 Hz (3600 a second), serialized by rclpy
once: JointState (6 joints), TFMessage (one transform), JointTrajectory (6 joints, one point),
two WrenchStamped, three PoseStamped and a 200-byte status (std_msgs/String). The writer records
SIM_S simulated seconds of them as fast as it can, with a checkpoint (flush + metadata.yaml) after
every simulated second, as the recorder's default ``checkpoint_period`` of 1 s does. Prints:
* ``write_p50`` / ``write_p99``: wall microseconds of one ``write`` call;
* ``write_max``: the longest ``write`` (the writer closing a chunk inside it, or a GC pause);
* ``flush_p50`` / ``flush_max``: the checkpoint's first step (the pending chunk closed and the
  file flushed to the OS), ``metadata_p50`` its second (metadata.yaml rewritten), microseconds;
  ``checkpoint_max``: the longest checkpoint, both steps, milliseconds;
* ``cpu_per_sim_s``: thread CPU milliseconds per simulated second, writes and checkpoints (the
  writer's share of the recorder's CPU per sim-s of `hil bench realtime`);
  ``process_cpu_per_sim_s``: the same in the process's CPU, which would also count work a writer
  handed to threads of its own (foxglove-sdk's MCAP writer works on the calling thread);
* ``chunk_close_p50`` / ``chunk_close_max`` / ``chunk_closes_per_sim_s``: the writes in which
  the writer closed a chunk (separate runs: a stat of the file after each write finds them);
* ``file_bytes_per_sim_s``.
Each figure is the median of RUNS runs. ``--against FILE|REV`` runs another bag.py too (a file,
or a git revision of src/hil_nodes/hil_nodes/recorder/bag.py), interleaved run by run with this
one, and prints its figures under ``bag_writer.against.``: the two writers measured on the same
machine in the same minutes. The machine's calibration (bench/_calibration.py) is printed first.
"""
from __future__ import annotations

import argparse
import gc
import importlib.util
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, str(pathlib.Path(__file__).parent))
import _calibration  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[1]
BAG_PY = 'src/hil_nodes/hil_nodes/recorder/bag.py'
RATE_HZ = 400
SIM_S = 20
RUNS = 5


def frame() -> list[tuple[str, str, bytes]]:
    """(topic, type, CDR bytes) of one frame of the recorded Hexafloat graph."""
    from builtin_interfaces.msg import Duration
    from geometry_msgs.msg import PoseStamped, TransformStamped, WrenchStamped
    from rclpy.serialization import serialize_message
    from sensor_msgs.msg import JointState
    from std_msgs.msg import String
    from tf2_msgs.msg import TFMessage
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

    joints = [f'leg_{k}_joint' for k in range(1, 7)]
    values = [0.1234567 * k for k in range(6)]
    js = JointState(name=joints, position=values, velocity=values, effort=values)
    js.header.frame_id = 'base_link'
    tf = TFMessage(transforms=[TransformStamped(child_frame_id='platform')])
    tf.transforms[0].header.frame_id = 'world'
    point = JointTrajectoryPoint(positions=values, time_from_start=Duration(nanosec=10_000_000))
    traj = JointTrajectory(joint_names=joints, points=[point])
    wrench, pose = WrenchStamped(), PoseStamped()
    wrench.header.frame_id, pose.header.frame_id = 'ft_sensor', 'world'
    status = String(data='x' * 192)                   # 200 bytes of CDR
    msgs = [('/joint_states', 'sensor_msgs/msg/JointState', js), ('/tf', 'tf2_msgs/msg/TFMessage', tf),
            ('/hexapod_controller/joint_trajectory', 'trajectory_msgs/msg/JointTrajectory', traj),
            ('/ft_sensor/wrench_raw', 'geometry_msgs/msg/WrenchStamped', wrench),
            ('/ft_sensor/wrench', 'geometry_msgs/msg/WrenchStamped', wrench),
            ('/admittance/reference', 'geometry_msgs/msg/PoseStamped', pose),
            ('/planner/safe_reference', 'geometry_msgs/msg/PoseStamped', pose),
            ('/kinematics/tcp_pose', 'geometry_msgs/msg/PoseStamped', pose),
            ('/hil/status', 'std_msgs/msg/String', status)]
    return [(topic, kind, serialize_message(msg)) for topic, kind, msg in msgs]


def load(source: str | None):
    """The bag module of the working tree, or another bag.py (a file or a git revision)."""
    if source is None:
        from hil_nodes.recorder import bag
        return bag
    path = pathlib.Path(source)
    if not path.is_file():
        text = subprocess.run(['git', '-C', str(ROOT), 'show', f'{source}:{BAG_PY}'], capture_output=True,
                              text=True, check=True).stdout
        path = pathlib.Path(tempfile.mkdtemp()) / 'bag_against.py'
        path.write_text(text)
    spec = importlib.util.spec_from_file_location('bag_against', path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run(bag, msgs, directory: pathlib.Path, closes: bool = False) -> dict[str, float]:
    """One recording of SIM_S simulated seconds; its figures. ``closes``: instead, the writes in
    which the writer closed a chunk (the file grew: a closed chunk is larger than the file's
    buffer, so it goes to the OS at once), found by a stat of the file after each write."""
    writer = bag.CheckpointWriter(directory / 'bag')
    mcap = directory / 'bag' / 'bag.mcap'
    size, closing = mcap.stat().st_size, []
    for topic, kind, _ in msgs:
        writer.add_topic(topic, kind)
    clock, cpu, process_cpu = time.perf_counter_ns, time.thread_time_ns, time.process_time_ns
    writes, checkpoints = [], []
    t = 1_795_000_000_000_000_000
    period = 1_000_000_000 // RATE_HZ
    write = writer.write
    p0, c0 = process_cpu(), cpu()
    for _ in range(SIM_S):
        for _ in range(RATE_HZ):
            t += period
            for j, (topic, _, data) in enumerate(msgs):
                w0 = clock()
                write(topic, t + 10_000 * j, data)
                writes.append(clock() - w0)
                if closes and mcap.stat().st_size > size + 16384:
                    closing.append(writes[-1])
                if closes:
                    size = mcap.stat().st_size
        w0 = clock()
        writer.flush()                     # the checkpoint's two steps (the recorder may take
        w1 = clock()                       # them apart: record_checkpoint_after)
        writer.rewrite_metadata()
        checkpoints.append((w1 - w0, clock() - w1))
    cpu_ns, process_ns = cpu() - c0, process_cpu() - p0
    writer.close()
    if closes:
        return {'chunk_close_p50': statistics.median(closing) / 1e3, 'chunk_close_max': max(closing) / 1e3,
                'chunk_closes_per_sim_s': len(closing) / SIM_S}
    size = mcap.stat().st_size
    writes.sort()
    return {'write_p50': writes[len(writes) // 2] / 1e3, 'write_p99': writes[int(len(writes) * 0.99)] / 1e3,
            'write_max': writes[-1] / 1e3, 'flush_p50': statistics.median(f for f, _ in checkpoints) / 1e3,
            'flush_max': max(f for f, _ in checkpoints) / 1e3,
            'metadata_p50': statistics.median(m for _, m in checkpoints) / 1e3,
            'checkpoint_max': max(f + m for f, m in checkpoints) / 1e6, 'cpu_per_sim_s': cpu_ns / SIM_S / 1e6,
            'process_cpu_per_sim_s': process_ns / SIM_S / 1e6,
            'file_bytes_per_sim_s': size / SIM_S}


UNITS = {'write_p50': ('us', 2), 'write_p99': ('us', 2), 'write_max': ('us', 0), 'flush_p50': ('us', 0),
         'flush_max': ('us', 0), 'metadata_p50': ('us', 0), 'checkpoint_max': ('ms', 3), 'cpu_per_sim_s': ('ms', 2),
         'process_cpu_per_sim_s': ('ms', 2), 'file_bytes_per_sim_s': ('B', 0),
         'chunk_close_p50': ('us', 0), 'chunk_close_max': ('us', 0), 'chunk_closes_per_sim_s': ('closes', 1)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--against', help='another bag.py to measure side by side: a file or a git revision')
    args = parser.parse_args()
    for line in _calibration.lines():      # the machine's speed, with the figures it goes with
        print(line, flush=True)
    msgs = frame()
    print(f'bag_writer.messages_per_s: {RATE_HZ * len(msgs)} msg')
    print(f'bag_writer.frame_bytes: {sum(len(d) for _, _, d in msgs)} B')
    writers = {'bag_writer': load(None)}
    if args.against:
        writers['bag_writer.against'] = load(args.against)
    results: dict[str, list[dict]] = {name: [] for name in writers}
    with tempfile.TemporaryDirectory() as tmp:
        for k in range(RUNS):
            for name, bag in writers.items():
                gc.collect()
                figures = run(bag, msgs, pathlib.Path(tmp) / f'{name}_{k}')
                gc.collect()
                figures.update(run(bag, msgs, pathlib.Path(tmp) / f'{name}_{k}_closes', closes=True))
                results[name].append(figures)
    for name, runs in results.items():
        for key, (unit, digits) in UNITS.items():
            print(f'{name}.{key}: {statistics.median(r[key] for r in runs):.{digits}f} {unit}', flush=True)
    print(f'load_1min_after: {__import__("os").getloadavg()[0]:.2f}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
