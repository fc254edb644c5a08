"""Recorded load histories for the replay source: CSV (t, Fx, Fy, Fz, Tx, Ty, Tz) or a rosbag2
WrenchStamped topic (read with ``rosbags``, so no ROS install is needed), resampled onto the
node's sample grid so a recorded wind-tunnel or joystick load drives a repeatable experiment.
"""
from __future__ import annotations

import pathlib

import numpy as np


def load_csv(path: str | pathlib.Path) -> tuple[np.ndarray, np.ndarray]:
    """(t (N,), wrench (N, 6)) from a CSV with 7 columns; a non-numeric first line is a header."""
    path = pathlib.Path(path)
    with path.open() as fh:
        first = fh.readline()
    try:
        [float(v) for v in first.replace(';', ',').split(',')]
        skip = 0
    except ValueError:
        skip = 1
    data = np.loadtxt(path, delimiter=',', skiprows=skip, ndmin=2)
    if data.shape[1] != 7:
        raise ValueError(f'{path}: replay CSV needs 7 columns (t, Fx, Fy, Fz, Tx, Ty, Tz), got {data.shape[1]}')
    return _checked(data[:, 0], data[:, 1:], str(path))


def load_bag(path: str | pathlib.Path, topic: str) -> tuple[np.ndarray, np.ndarray]:
    """(t, wrench) of a geometry_msgs/WrenchStamped topic in a rosbag2 (t = header stamps)."""
    from rosbags.highlevel import AnyReader
    from rosbags.typesys import Stores, get_typestore

    times, rows = [], []
    with AnyReader([pathlib.Path(path)], default_typestore=get_typestore(Stores.ROS2_KILTED)) as reader:
        conns = [c for c in reader.connections if c.topic == topic]
        if not conns:
            have = sorted({c.topic for c in reader.connections})
            raise ValueError(f'{path}: no topic {topic!r} in the bag (topics: {have})')
        if conns[0].msgtype != 'geometry_msgs/msg/WrenchStamped':
            raise ValueError(f'{path}: topic {topic!r} is {conns[0].msgtype}, not geometry_msgs/msg/WrenchStamped')
        for conn, _t, raw in reader.messages(connections=conns):
            msg = reader.deserialize(raw, conn.msgtype)
            times.append(msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9)
            f, m = msg.wrench.force, msg.wrench.torque
            rows.append([f.x, f.y, f.z, m.x, m.y, m.z])
    return _checked(np.asarray(times), np.asarray(rows).reshape(-1, 6), f'{path}:{topic}')


def _checked(t: np.ndarray, w: np.ndarray, what: str) -> tuple[np.ndarray, np.ndarray]:
    if t.size < 2:
        raise ValueError(f'{what}: replay needs at least 2 samples, got {t.size}')
    if not (np.all(np.isfinite(t)) and np.all(np.isfinite(w))):
        raise ValueError(f'{what}: replay data contains NaN or inf')
    if np.any(np.diff(t) <= 0):
        raise ValueError(f'{what}: replay times must be strictly increasing')
    return t - t[0], w


class ReplayProfile:
    """A load history as a function of time since the start of the replay (linear interpolation
    between recorded samples; zero-order hold of the last value past the end unless ``loop``)."""

    def __init__(self, t: np.ndarray, wrench: np.ndarray, loop: bool = False):
        self.t = np.asarray(t, dtype=float)
        self.w = np.asarray(wrench, dtype=float)
        self.duration = float(self.t[-1])
        self.loop = bool(loop)

    def finished(self, t_rel: float) -> bool:
        return not self.loop and t_rel > self.duration

    def sample(self, t_rel) -> np.ndarray:
        t_rel = np.atleast_1d(np.asarray(t_rel, dtype=float))
        if self.loop and self.duration > 0:
            t_rel = np.mod(t_rel, self.duration)
        return np.column_stack([np.interp(t_rel, self.t, self.w[:, i]) for i in range(6)])
