"""Read a run's bag into numpy arrays by topic (one pass, rosbags, no ROS needed).

Time axis: each message's header stamp when it has one (simulation time of the sample), else the
bag's record time (the recorder stamps with the node clock, i.e. simulation time too).
Joint trajectories become one series of points at header.stamp + time_from_start (a message may
repeat the previous frame's points, as the real-time time base does: a point whose time was
already seen is replaced by the newest message's, as a trajectory controller would).
"""
from __future__ import annotations

import pathlib
from collections import defaultdict
from dataclasses import dataclass, field

import numpy as np
import yaml

from hil_core.supervision.status_names import status_node
from hil_nodes.recorder.bag import read_accounting, read_messages
from hil_nodes.recorder.bag_recovery import recover_bag


@dataclass
class Series:
    t: np.ndarray
    values: np.ndarray
    names: list[str] = field(default_factory=list)

    def __len__(self) -> int:
        return int(self.t.size)


@dataclass
class RunData:
    path: pathlib.Path
    manifest: dict
    series: dict[str, Series]                       # topic -> stamped arrays
    modes: list[tuple[float, str]]                  # (t, mode)
    events: list[tuple[float, str, str, str]]       # (t, source, event, message)
    diagnostics: dict[str, list[tuple[float, dict]]]  # node -> [(t, key/values)]
    counts: dict[str, int]
    repaired: bool
    record_times: dict[str, np.ndarray] = field(default_factory=dict)   # topic -> bag times (s)
    trajectories: dict[str, Series] = field(default_factory=dict)      # topic -> points (positions)
    accounting: dict = field(default_factory=dict)                     # the recorder's accounting.yaml

    def get(self, *topics: str) -> Series | None:
        for topic in topics:
            s = self.series.get(topic)
            if s is not None and len(s):
                return s
        return None

    def diag_series(self, node: str, key: str) -> tuple[np.ndarray, np.ndarray]:
        return numeric_series((t, v.get(key)) for t, v in self.diagnostics.get(node, []))


def numeric_series(rows) -> tuple[np.ndarray, np.ndarray]:
    """(times, values) of the (time, value) ``rows`` whose value reads as a number (a status
    value is text): the report's and the HMI replay's charts of a status key."""
    kept = [(t, float(v)) for t, v in rows if _is_number(v)]
    if not kept:
        return np.zeros(0), np.zeros(0)
    a = np.asarray(kept)
    return a[:, 0], a[:, 1]


def _is_number(value) -> bool:
    try:
        float(value)
        return True
    except (TypeError, ValueError):
        return False


def _stamp(msg, bag_ns: int) -> float:
    header = getattr(msg, 'header', None)
    if header is not None:
        s = header.stamp.sec + header.stamp.nanosec * 1e-9
        if s > 0 or bag_ns == 0:
            return s
    return bag_ns * 1e-9


def _vec(msg) -> list[float] | None:
    """Numeric payload of the stamped types the report plots."""
    kind = msg.__msgtype__
    if kind == 'geometry_msgs/msg/WrenchStamped':
        f, m = msg.wrench.force, msg.wrench.torque
        return [f.x, f.y, f.z, m.x, m.y, m.z]
    if kind == 'geometry_msgs/msg/PoseStamped':
        p, q = msg.pose.position, msg.pose.orientation
        return [p.x, p.y, p.z, q.x, q.y, q.z, q.w]
    if kind in ('geometry_msgs/msg/TwistStamped', 'geometry_msgs/msg/AccelStamped'):
        src = msg.twist if kind.endswith('TwistStamped') else msg.accel
        return [src.linear.x, src.linear.y, src.linear.z, src.angular.x, src.angular.y, src.angular.z]
    if kind == 'sensor_msgs/msg/JointState':
        return list(msg.position) + list(msg.velocity)
    return None


def load_run(path: str | pathlib.Path) -> RunData:
    """Load every topic the report uses; repairs a bag left by a killed recorder first."""
    path = pathlib.Path(path)
    if not path.is_dir():
        raise FileNotFoundError(f'{path} is not a bag directory')
    repaired = recover_bag(path)
    manifest_file = path / 'hil_run.yaml'
    manifest = yaml.safe_load(manifest_file.read_text()) if manifest_file.exists() else {}
    rows: dict[str, list] = defaultdict(list)
    names: dict[str, list[str]] = {}
    modes, events, counts = [], [], defaultdict(int)
    diagnostics: dict[str, list] = defaultdict(list)
    record_ns: dict[str, list] = defaultdict(list)
    points: dict[str, dict] = defaultdict(dict)
    for topic, bag_ns, msg in read_messages(path):
        counts[topic] += 1
        record_ns[topic].append(bag_ns)
        kind = msg.__msgtype__
        if kind == 'trajectory_msgs/msg/JointTrajectory':
            _add_points(points[topic], names, topic, msg, bag_ns)
        elif kind == 'std_msgs/msg/String' and topic.endswith('/mode'):
            modes.append((bag_ns * 1e-9, msg.data))
        elif kind == 'diagnostic_msgs/msg/DiagnosticArray':
            t = _stamp(msg, bag_ns)
            for st in msg.status:
                values = {kv.key: kv.value for kv in st.values}
                if topic.endswith('/events'):     # events: name = event, hardware_id = reporting node
                    events.append((t, st.hardware_id or topic.strip('/').split('/')[0], st.name, st.message))
                else:                             # statuses "<node>: <task>", keyed by node
                    diagnostics[status_node(st.name)].append((t, values))
        else:
            vec = _vec(msg)
            if vec is not None:
                if kind == 'sensor_msgs/msg/JointState':
                    names.setdefault(topic, list(msg.name))
                    if len(msg.velocity) != len(msg.position):
                        vec = list(msg.position) + [np.nan] * len(msg.position)
                rows[topic].append((_stamp(msg, bag_ns), vec))
    series = {}
    for topic, items in rows.items():
        width = max(len(v) for _, v in items)
        items = [(t, v) for t, v in items if len(v) == width]
        t = np.array([t for t, _ in items])
        order = np.argsort(t, kind='stable')
        series[topic] = Series(t[order], np.array([v for _, v in items])[order], names.get(topic, []))
    trajectories = {}
    for topic, by_time in points.items():
        keys = sorted(by_time)
        trajectories[topic] = Series(np.array(keys, float) * 1e-9, np.array([by_time[k] for k in keys]),
                                     names.get(topic, []))
    accounting = read_accounting(path)
    return RunData(path=path, manifest=manifest or {}, series=series, modes=modes, events=events,
                   diagnostics=dict(diagnostics), counts=dict(counts), repaired=repaired,
                   record_times={t: np.asarray(v, float) * 1e-9 for t, v in record_ns.items()},
                   trajectories=trajectories, accounting=accounting or {})


def _add_points(by_time: dict, names: dict, topic: str, msg, bag_ns: int) -> None:
    """Points of a JointTrajectory at stamp + time_from_start (ns); later messages win."""
    stamp = msg.header.stamp.sec * 10**9 + msg.header.stamp.nanosec
    if stamp == 0:                       # ros2_control convention: 0 = start now
        stamp = bag_ns
    joint_names = list(msg.joint_names)
    first = names.setdefault(topic, joint_names)
    order = [joint_names.index(n) for n in first] if set(first) == set(joint_names) else None
    if order is None:
        return
    for p in msg.points:
        if len(p.positions) != len(joint_names):
            continue
        t = stamp + p.time_from_start.sec * 10**9 + p.time_from_start.nanosec
        by_time[t] = [float(p.positions[i]) for i in order]
