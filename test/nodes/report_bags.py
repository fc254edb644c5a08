"""Synthetic Hexafloat bags with known answers for the `hil report` tests.

``write_bag`` records the seven stages of the chain as the real graph would (same topics, types,
stamps, lockstep 2.5 ms frames), built from closed-form operations whose figures are known:

* raw force: half-sine impulses on x (40 N, 30 ms);
* filtered force: a Butterworth low-pass (the run's ft_sensor parameters, applied at 400 Hz);
* admittance reference: the model's exact response to the filtered force (``ideal_response``);
* safe reference: the reference scaled by ``planner_gain`` about home (1 = inside the limits);
* servo setpoints: the safe reference delayed by ``buffer_delay`` (the time base), inverse
  kinematics, 4 points per frame at stamp + 0.625 .. 2.5 ms (8 with ``points_per_message=8``:
  the previous frame's 4 again, as the real-time time base sends them);
* joint states / TCP pose: the setpoints delayed by ``servo_delay`` more (a band-limited
  fractional delay: a phase ramp on the whole record, which starts and ends at rest);
  ``tracking=False`` replaces them by a slow motion unrelated to the force.

``drop`` removes recorded messages of a topic inside a time window (keep one in ``keep``), as a
real-time run that skipped cycles would record.
"""
from __future__ import annotations

import pathlib

import numpy as np
import yaml
from scipy.signal import sosfilt

from hil_core import hexaslide as hx
from hil_core.admittance.ideal_response import ideal_response
from hil_core.ft.filters import design_sos
from hil_nodes.recorder.bag import CheckpointWriter, typestore
from hil_nodes.report.analysis import admittance_model

T = 0.0025
SERVO = 0.000625
HOME = [0.0, 0.0, 0.1543, 0.0, 0.0, 0.0, 1.0]
JOINTS = [f'slider_{i}' for i in range(1, 7)]
FT = {'sample_rate': 400.0, 'publish_rate': 400.0, 'filter_cutoff_hz': 40.0, 'filter_order': 2,
      'notch_hz': 0.0, 'publish_raw_all': False}
ADMITTANCE = {'model': 'frequency', 'period': T, 'natural_frequency': [3.0] * 6, 'damping_ratio': [0.2] * 6,
              'stiffness': [5000.0] * 3 + [200.0] * 3, 'home_pose': HOME}
TIMEBASE = {'move_time': T, 'segmentation_time': 0.00125, 'servo_period': SERVO, 'buffer_size': 6,
            'default_distance': 2, 'robot': 'hexaslide_scaled'}


def parameters() -> dict:
    return {'ft_sensor': dict(FT), 'admittance': dict(ADMITTANCE), 'planner': {'period': T},
            'timebase': dict(TIMEBASE), 'mock_hexapod': {'frame_period': T},
            'kinematics': {'robot': 'hexaslide_scaled'}}


def fractional_delay(x: np.ndarray, samples: float) -> np.ndarray:
    """x delayed by a (fractional) number of samples: a phase ramp (exact, band-limited)."""
    n = x.size
    pad = 1 << int(np.ceil(np.log2(2 * n)))
    spec = np.fft.rfft(x, pad) * np.exp(-2j * np.pi * np.fft.rfftfreq(pad) * samples)
    return np.fft.irfft(spec, pad)[:n]


def impulses(t: np.ndarray, onsets, amplitude=40.0, width=0.03) -> np.ndarray:
    f = np.zeros(t.size)
    for t0 in onsets:
        inside = (t >= t0) & (t < t0 + width)
        f[inside] = amplitude * np.sin(np.pi * (t[inside] - t0) / width)
    return f


def chain_signals(duration=16.0, onsets=(1.0, 6.0, 11.0), planner_gain=1.0, buffer_delay=0.010,
                  servo_delay=0.0003, tracking=True) -> dict:
    """x displacement (about home) of every stage at the frame stamps, and the forces."""
    t = np.arange(int(round(duration / T)) + 1) * T
    raw = impulses(t, onsets)
    sos = design_sos(FT['filter_order'], FT['filter_cutoff_hz'], FT['sample_rate'])
    filtered = sosfilt(sos, raw)
    model = admittance_model({'parameters': parameters()})
    wrench = np.zeros((t.size, 6))
    wrench[:, 0] = filtered
    reference = ideal_response(model, t, wrench).poses[:, 0] - HOME[0]
    safe = planner_gain * reference
    setpoint = fractional_delay(safe, buffer_delay / T)
    achieved = fractional_delay(safe, (buffer_delay + servo_delay) / T)
    if not tracking:
        achieved = 2e-4 * np.sin(2 * np.pi * 0.37 * t) * np.minimum(t, 1.0)
    return {'t': t, 'raw': raw, 'filtered': filtered, 'reference': reference, 'safe': safe,
            'setpoint': setpoint, 'achieved': achieved, 'sos': sos}


class _Msgs:
    def __init__(self):
        self.T = typestore()

    def _t(self, name):
        return self.T.types[name]

    def header(self, t: float, frame='hexapod_base'):
        ns = int(round(t * 1e9))
        stamp = self._t('builtin_interfaces/msg/Time')(sec=ns // 10**9, nanosec=ns % 10**9)
        return self._t('std_msgs/msg/Header')(stamp=stamp, frame_id=frame)

    def wrench(self, t, fx):
        V = self._t('geometry_msgs/msg/Vector3')
        W = self._t('geometry_msgs/msg/Wrench')(force=V(x=float(fx), y=0.0, z=0.0), torque=V(x=0.0, y=0.0, z=0.0))
        return self._t('geometry_msgs/msg/WrenchStamped')(header=self.header(t, 'hexapod_base'), wrench=W)

    def pose(self, t, p):
        P = self._t('geometry_msgs/msg/Point')(x=float(p[0]), y=float(p[1]), z=float(p[2]))
        Q = self._t('geometry_msgs/msg/Quaternion')(x=float(p[3]), y=float(p[4]), z=float(p[5]), w=float(p[6]))
        return self._t('geometry_msgs/msg/PoseStamped')(header=self.header(t), pose=self._t('geometry_msgs/msg/Pose')(
            position=P, orientation=Q))

    def joints(self, t, q):
        return self._t('sensor_msgs/msg/JointState')(header=self.header(t, ''), name=list(JOINTS),
                                                    position=np.asarray(q, float), velocity=np.zeros(6),
                                                    effort=np.zeros(0))

    def trajectory(self, t, times_from_start, qs):
        D = self._t('builtin_interfaces/msg/Duration')
        P = self._t('trajectory_msgs/msg/JointTrajectoryPoint')
        ns = [int(round(dt * 1e9)) for dt in times_from_start]      # negative: a previous frame's point
        pts = [P(positions=np.asarray(q, float), velocities=np.zeros(0), accelerations=np.zeros(0), effort=np.zeros(0),
                 time_from_start=D(sec=n // 10**9, nanosec=n % 10**9)) for n, q in zip(ns, qs)]
        return self._t('trajectory_msgs/msg/JointTrajectory')(header=self.header(t, ''), joint_names=list(JOINTS),
                                                             points=pts)

    def mode(self, name):
        return self._t('std_msgs/msg/String')(data=name)


def _poses(x: np.ndarray) -> np.ndarray:
    p = np.tile(np.asarray(HOME, float), (x.size, 1))
    p[:, 0] += x
    return p


def write_bag(path, drop: dict | None = None, points_per_message: int = 4, **signals) -> dict:
    """Write the bag and its hil_run.yaml; returns the signals (known answers)."""
    path = pathlib.Path(path)
    s = chain_signals(**signals)
    t = s['t']
    geom = hx.load_geometry('hexaslide_scaled')
    sub = np.arange(1, 5) * SERVO
    # setpoints at every servo time from t_0 - 2.5 ms on (the 8-point messages repeat the previous frame)
    ts = np.arange(-4, 4 * t.size + 4) * SERVO
    q_sp = hx.inverse_kinematics(geom, _poses(np.interp(ts, t, s['setpoint']))).q
    q_js = hx.inverse_kinematics(geom, _poses(s['achieved'])).q
    pose_tcp, pose_ref, pose_safe = _poses(s['achieved']), _poses(s['reference']), _poses(s['safe'])
    M = _Msgs()
    streams = {
        '/ft_sensor/wrench_raw': ('geometry_msgs/msg/WrenchStamped', lambda k: M.wrench(t[k], s['raw'][k])),
        '/ft_sensor/wrench': ('geometry_msgs/msg/WrenchStamped', lambda k: M.wrench(t[k], s['filtered'][k])),
        '/admittance/reference': ('geometry_msgs/msg/PoseStamped', lambda k: M.pose(t[k], pose_ref[k])),
        '/planner/safe_reference': ('geometry_msgs/msg/PoseStamped', lambda k: M.pose(t[k], pose_safe[k])),
        '/hexapod_controller/joint_trajectory': ('trajectory_msgs/msg/JointTrajectory', lambda k: M.trajectory(
            t[k], (np.r_[sub - T, sub] if points_per_message == 8 else sub),
            [q_sp[4 * k + 4 + j] for j in ((-3, -2, -1, 0, 1, 2, 3, 4) if points_per_message == 8 else (1, 2, 3, 4))])),
        '/joint_states': ('sensor_msgs/msg/JointState', lambda k: M.joints(t[k], q_js[k])),
        '/kinematics/tcp_pose': ('geometry_msgs/msg/PoseStamped', lambda k: M.pose(t[k], pose_tcp[k])),
    }
    drop = drop or {}
    w = CheckpointWriter(path)
    for topic, (kind, _) in streams.items():
        w.add_topic(topic, kind)
    w.add_topic('/hil/mode', 'std_msgs/msg/String')
    store = typestore()
    modes = {0: 'IDLE', int(round(0.5 / T)): 'RUNNING', t.size - 1: 'RETURNING_HOME'}
    for k in range(t.size):
        ns = int(round(t[k] * 1e9))
        if k in modes:
            w.write('/hil/mode', ns, store.serialize_cdr(M.mode(modes[k]), 'std_msgs/msg/String'))
        for topic, (kind, make) in streams.items():
            rule = drop.get(topic)
            if rule is not None and rule[0] <= t[k] < rule[1] and k % rule[2] != 0:
                continue
            w.write(topic, ns, store.serialize_cdr(make(k), kind))
    w.close()
    manifest = {'summary': {'system': 'hexafloat', 'scenario': 'synthetic', 'sim_time_s': f'{t[-1]:.4f}'},
                'parameters': parameters()}
    (path / 'hil_run.yaml').write_text(yaml.safe_dump(manifest, sort_keys=False))
    return s
