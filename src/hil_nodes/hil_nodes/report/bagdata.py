"""Read a run's bag into numpy arrays by topic (one pass, rosbags, no ROS needed).

Time axis: each message's header stamp when it has one (simulation time of the sample), else the
bag's record time (the recorder stamps with the node clock, i.e. simulation time too).
"""
from __future__ import annotations

import pathlib
from collections import defaultdict
from dataclasses import dataclass, field

import numpy as np
import yaml

from hil_nodes.bag import read_messages, recover_bag


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

    def get(self, *topics: str) -> Series | None:
        for topic in topics:
            s = self.series.get(topic)
            if s is not None and len(s):
                return s
        return None

    def diag_series(self, node: str, key: str) -> tuple[np.ndarray, np.ndarray]:
        rows = [(t, float(v[key])) for t, v in self.diagnostics.get(node, []) if _is_number(v.get(key))]
        if not rows:
            return np.zeros(0), np.zeros(0)
        a = np.asarray(rows)
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
    for topic, bag_ns, msg in read_messages(path):
        counts[topic] += 1
        kind = msg.__msgtype__
        if kind == 'std_msgs/msg/String' and topic.endswith('/mode'):
            modes.append((bag_ns * 1e-9, msg.data))
        elif kind == 'diagnostic_msgs/msg/DiagnosticArray':
            t = _stamp(msg, bag_ns)
            for st in msg.status:
                values = {kv.key: kv.value for kv in st.values}
                if topic.endswith('/events'):
                    events.append((t, st.hardware_id or topic.split('/')[1], st.name, st.message))
                else:
                    diagnostics[(st.hardware_id or st.name).strip('/')].append((t, values))
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
    return RunData(path=path, manifest=manifest or {}, series=series, modes=modes, events=events,
                   diagnostics=dict(diagnostics), counts=dict(counts), repaired=repaired)
