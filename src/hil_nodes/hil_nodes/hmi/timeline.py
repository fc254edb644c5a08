"""A recorded run as the HMI replays it (``hil hmi BAG``): every message the view and the panel
need, read once from the bag into arrays by time, and the state at any slider time (the newest
sample at or before it: what the live view would have shown then). Seed 004's animation reads
joint coordinates from a file the same way.

Time axis: a message's header stamp when it has one (the sample's time: simulation time in
lockstep), else its bag time (the recorder's clock, the same axis); /diagnostics always by bag
time (some statuses are stamped with the wall clock). The slider runs from the first to the
last message, ``t0`` is its origin.
"""
from __future__ import annotations

import bisect
import pathlib
from dataclasses import dataclass, field

import numpy as np

# a bag is read with its topics named as at the root (hil_nodes.recorder.bag.read_messages)
from hil_nodes.topics import ROOT as topics, at_root
from hil_nodes.hmi.panel_model import PanelModel, is_duplicate_planner_event, level_int
from hil_nodes.hmi.tf_tree import TfTree
from hil_nodes.hmi.view_state import ACHIEVED_TOPICS, REFERENCE_TOPICS, WRENCH_TOPICS, Pose, ViewState, Wrench
from hil_nodes.recorder.bag import read_messages
from hil_nodes.report.bagdata import numeric_series

REFERENCE_TOPICS, ACHIEVED_TOPICS, WRENCH_TOPICS = (tuple(at_root(t) for t in names) for names in (
    REFERENCE_TOPICS, ACHIEVED_TOPICS, WRENCH_TOPICS))
VIEW_TOPICS = (topics.JOINT_STATES, topics.TF, topics.TF_STATIC, topics.ROBOT_DESCRIPTION, topics.HIL_MODE,
               topics.HIL_EVENTS, topics.PLANNER_EVENTS, topics.DIAGNOSTICS,
               *REFERENCE_TOPICS, *ACHIEVED_TOPICS, *WRENCH_TOPICS)


def _stamp_ns(msg, bag_ns: int) -> int:
    header = getattr(msg, 'header', None)
    if header is not None:
        ns = header.stamp.sec * 1_000_000_000 + header.stamp.nanosec
        if ns > 0:
            return ns
    return bag_ns


@dataclass
class _Samples:
    """Time-sorted samples of one stream: ``t`` (s) and one row of ``values`` each."""
    t: np.ndarray
    values: np.ndarray
    frame: str = ''

    def index_at(self, t: float) -> int:
        """Index of the newest sample at or before ``t`` (-1: none yet)."""
        return int(np.searchsorted(self.t, t, side='right')) - 1


def _samples(rows: list, frame: str = '') -> _Samples | None:
    if not rows:
        return None
    rows.sort(key=lambda r: r[0])
    return _Samples(np.array([r[0] for r in rows]), np.array([r[1] for r in rows], float), frame)


@dataclass
class Timeline:
    path: pathlib.Path
    t0: float
    duration: float
    joint_names: list[str]
    joints: _Samples | None
    tf: dict[str, tuple[str, _Samples]]                 # child -> (parent, samples of xyz + quat)
    tf_static: list[tuple]
    robot_description: str
    reference: _Samples | None
    achieved: _Samples | None
    wrench: _Samples | None
    records: list[tuple] = field(default_factory=list)  # (t, kind, ...) for the panel, time-sorted
    _panel: PanelModel | None = None
    _fed: int = 0
    _panel_t: float = -np.inf
    _times: list | None = None

    @property
    def modes(self) -> list[tuple[float, str]]:
        return [(r[0], r[2]) for r in self.records if r[1] == 'mode']

    @property
    def events(self) -> list[tuple[float, str, str, str, int]]:
        return [(r[0], *r[2:]) for r in self.records if r[1] == 'event']

    def view_at(self, t: float) -> ViewState:
        """The view at slider time ``t`` (s from ``t0``)."""
        ta = self.t0 + t
        state = ViewState(stamp=ta)
        state.tf.update(self.tf_static)
        if self.joints is not None:
            i = self.joints.index_at(ta)
            if i >= 0:
                state.positions = dict(zip(self.joint_names, self.joints.values[i].tolist()))
                state.stamp = float(self.joints.t[i])
        for child, (parent, s) in self.tf.items():
            i = s.index_at(ta)
            if i >= 0:
                state.tf.set(parent, child, s.values[i, :3], s.values[i, 3:])
        for name, s in (('reference', self.reference), ('achieved', self.achieved)):
            if s is not None and (i := s.index_at(ta)) >= 0:
                setattr(state, name, Pose(s.frame, s.values[i, :3], s.values[i, 3:]))
        if self.wrench is not None and (i := self.wrench.index_at(ta)) >= 0:
            state.wrench = Wrench(self.wrench.frame, self.wrench.values[i, :3], self.wrench.values[i, 3:])
        return state

    def panel_at(self, t: float, span: float = 30.0) -> PanelModel:
        """The panel at slider time ``t``: every record up to it fed in order (incrementally
        while time moves forward; from the start after a jump back)."""
        if self._panel is None or t < self._panel_t:
            self._panel, self._fed = PanelModel(span=span), 0
        self._panel_t = t
        panel = self._panel
        if self._times is None:
            self._times = [r[0] for r in self.records]
        end = bisect.bisect_right(self._times, t)
        for r in self.records[self._fed:end]:
            if r[1] == 'mode':
                panel.on_mode(r[0], r[2])
            elif r[1] == 'status':
                panel.on_status(r[0], r[2], r[3])
            else:
                panel.on_event(r[0], *r[2:])
        self._fed = max(self._fed, end)
        return panel

    def series(self, node_task: str, key: str) -> tuple[np.ndarray, np.ndarray]:
        """(t from t0, values) of one key of one status, for the whole run (the replay's charts)."""
        return numeric_series((r[0], r[3].get(key)) for r in self.records
                              if r[1] == 'status' and r[2] == node_task)



def _pose_row(msg) -> list[float]:
    p, q = msg.pose.position, msg.pose.orientation
    return [p.x, p.y, p.z, q.x, q.y, q.z, q.w]


def load_timeline(path: str | pathlib.Path) -> Timeline:
    """Read the view's topics of the bag at ``path`` (a rosbag2 directory)."""
    path = pathlib.Path(path)
    joints, names = [], []
    tf_rows: dict[str, tuple[str, list]] = {}
    static: dict[str, tuple] = {}
    poses = {'reference': ([], ''), 'achieved': ([], '')}
    chosen = {'reference': None, 'achieved': None}
    wrench_rows, wrench_frame = [], ''
    records, description, times = [], '', []
    for topic, bag_ns, msg in read_messages(path, list(VIEW_TOPICS)):
        # statuses are stamped on the wall clock by some nodes: the recorder's clock is the run's axis
        t = (bag_ns if topic == topics.DIAGNOSTICS else _stamp_ns(msg, bag_ns)) * 1e-9
        if topic != topics.TF_STATIC and topic != topics.ROBOT_DESCRIPTION:
            times.append(t)
        if topic == topics.JOINT_STATES:
            if not names:
                names = list(msg.name)
            if list(msg.name) == names and len(msg.position) == len(names):
                joints.append((t, np.asarray(msg.position, float)))
        elif topic in (topics.TF, topics.TF_STATIC):
            for tr in msg.transforms:
                child = tr.child_frame_id.lstrip('/')
                tt, rr = tr.transform.translation, tr.transform.rotation
                row = [tt.x, tt.y, tt.z, rr.x, rr.y, rr.z, rr.w]
                if topic == topics.TF_STATIC:
                    static[child] = (tr.header.frame_id, child, row[:3], row[3:])
                else:
                    ts = _stamp_ns(tr, bag_ns) * 1e-9
                    tf_rows.setdefault(child, (tr.header.frame_id.lstrip('/'), []))[1].append((ts, row))
        elif topic == topics.ROBOT_DESCRIPTION:
            description = msg.data
        elif topic == topics.HIL_MODE:
            records.append((t, 'mode', msg.data))
        elif topic in (topics.HIL_EVENTS, topics.PLANNER_EVENTS):
            for st in msg.status:
                if topic == topics.PLANNER_EVENTS and is_duplicate_planner_event(st.name):
                    continue          # the planner sends its HIL events on both topics: once is enough
                level = level_int(st.level)
                who = st.hardware_id or topic.strip('/').split('/')[0]
                records.append((t, 'event', who, st.name, st.message, level))
        elif topic == topics.DIAGNOSTICS:
            for st in msg.status:
                records.append((t, 'status', st.name, {kv.key: kv.value for kv in st.values}))
        else:
            for kind, candidates in (('reference', REFERENCE_TOPICS), ('achieved', ACHIEVED_TOPICS)):
                if topic in candidates and chosen[kind] in (None, topic):
                    chosen[kind] = topic
                    poses[kind] = (poses[kind][0], msg.header.frame_id)
                    poses[kind][0].append((t, _pose_row(msg)))
            if topic in WRENCH_TOPICS:
                w = msg.wrench
                wrench_frame = msg.header.frame_id
                wrench_rows.append((t, [w.force.x, w.force.y, w.force.z, w.torque.x, w.torque.y, w.torque.z]))
    if not times:
        raise ValueError(f'{path}: no message of the view\'s topics ({", ".join(VIEW_TOPICS[:3])}, ...)')
    t0, t1 = min(times), max(times)
    records.sort(key=lambda r: r[0])
    records = [(r[0] - t0, *r[1:]) for r in records]
    return Timeline(
        path=path, t0=t0, duration=t1 - t0, joint_names=names,
        joints=_samples(joints), tf={c: (p, _samples(rows)) for c, (p, rows) in tf_rows.items()},
        tf_static=list(static.values()), robot_description=description,
        reference=_samples(*poses['reference']), achieved=_samples(*poses['achieved']),
        wrench=_samples(wrench_rows, wrench_frame), records=records)

