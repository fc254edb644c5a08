"""Real-time figures read back from a recorded `hil run` bag (used by bench/realtime.py).

The recorder stamps every message with its node clock at arrival: in real time that is the wall
clock, so arrival minus header stamp is the wall-clock latency of a stage. The nodes' own
counters come from their last /diagnostics status of each kind.
"""
from __future__ import annotations

import numpy as np
from rosbags.rosbag2 import Reader
from rosbags.typesys import Stores, get_typestore

from hil_core.supervision.status_names import status_node

_STAMPED = ('/ft_sensor/wrench', '/admittance/reference', '/planner/safe_reference',
            '/hexapod_controller/joint_trajectory', '/joint_states', '/kinematics/tcp_pose')


def _store():
    return get_typestore(getattr(Stores, 'ROS2_KILTED', Stores.LATEST))


def read(bag) -> dict:
    """{'arrivals': {topic: ns array}, 'stamps': {topic: ns array}, 'diag': {status name: values}}"""
    ts = _store()
    arrivals, stamps, diag = {}, {}, {}
    with Reader(bag) as reader:
        for con, t, raw in reader.messages():
            arrivals.setdefault(con.topic, []).append(t)
            if con.topic in _STAMPED:
                msg = ts.deserialize_cdr(raw, con.msgtype)
                stamps.setdefault(con.topic, []).append(msg.header.stamp.sec * 1_000_000_000 + msg.header.stamp.nanosec)
            elif con.topic == '/diagnostics':
                msg = ts.deserialize_cdr(raw, con.msgtype)
                for st in msg.status:
                    values = diag.setdefault(st.name, {})     # "<node>: <task>"
                    values.update({kv.key: kv.value for kv in st.values})
                    values['_message'] = st.message
    return {'arrivals': {k: np.asarray(v, dtype=np.int64) for k, v in arrivals.items()},
            'stamps': {k: np.asarray(v, dtype=np.int64) for k, v in stamps.items()}, 'diag': diag}


def rates(data: dict, window: tuple[int, int] | None = None) -> dict[str, float]:
    """Messages per second of every topic (within the window of arrival times, ns)."""
    out = {}
    for topic, t in data['arrivals'].items():
        if window is not None:
            t = t[(t >= window[0]) & (t <= window[1])]
        span = (window[1] - window[0]) if window is not None else (t[-1] - t[0] if t.size > 1 else 0)
        out[topic] = t.size / (span * 1e-9) if span > 0 else 0.0
    return out


def stage_latency_ms(data: dict, topic: str) -> np.ndarray:
    """Wall-clock arrival minus header stamp of each message of a stamped topic (ms)."""
    t, s = data['arrivals'].get(topic), data['stamps'].get(topic)
    if t is None or s is None or t.size != s.size:
        return np.array([])
    return (t - s) * 1e-6


def node_value(data: dict, node: str, key: str, default=None):
    """A key of the last status of ``node`` (status names are "<node>: <task>") that has it."""
    for name, values in data['diag'].items():
        if status_node(name) == node and key in values:
            return values[key]
    return default
