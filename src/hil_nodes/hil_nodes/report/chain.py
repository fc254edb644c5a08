"""The Hexafloat chain of a recorded run as stage series (bag -> ``hil_core.transparency``).

Stages and topics (``hil_core.transparency.design.STAGES`` in signal order):
raw force ``/ft_sensor/wrench_raw`` (or the mock's ``/mock_ft/wrench``), filtered force
``/ft_sensor/wrench``, admittance reference ``/admittance/reference``, safe reference
``/planner/safe_reference``, servo setpoints ``/hexapod_controller/joint_trajectory``, joint
states ``/joint_states``, TCP pose ``/kinematics/tcp_pose``.

Joint-space stages are compared in TCP space: the setpoints and the joint states are turned
into TCP poses by the report's own forward kinematics (``hil_core.hexaslide``, warm-started
along the series), so every stage is one displacement on the analysed DOF and the joint
states -> TCP pose stage checks the kinematics node against an independent computation. The
setpoints are the trajectory points at header.stamp + time_from_start (de-duplicated, newest
message wins), interpolated in joint space at the frame grid where no point is missing.

Each recorded stream's designed rate: ``hil_nodes.report.rates``.
"""
from __future__ import annotations

import numpy as np

from hil_core.transparency.series import find_gaps, uniform_grid, usable
from hil_core.transparency.stages import StageInput
# bags are read with their topics named as at the root (hil_nodes.recorder.bag)
from hil_nodes.topics import ROOT as topics
from hil_nodes.report.designed import node_values, recorded
from hil_nodes.report.rates import expected_rates

STAGE_TOPICS = {
    'raw_force': (topics.FT_WRENCH_RAW, topics.MOCK_FT_WRENCH),
    'filtered_force': (topics.FT_WRENCH,),
    'admittance_reference': (topics.ADMITTANCE_REFERENCE,),
    'safe_reference': (topics.PLANNER_SAFE_REFERENCE,),
    'servo_setpoints': (topics.HEXAPOD_JOINT_TRAJECTORY,),
    'joint_states': (topics.JOINT_STATES,),
    'tcp_pose': (topics.KINEMATICS_TCP_POSE,),
}
def _fk_poses(geom, names: list[str], q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """TCP poses of joint rows (warm-started Newton); (poses, converged)."""
    from hil_core import hexaslide as hx
    order = [names.index(n) for n in geom.joint_names]
    fk = hx.ForwardKinematics(geom)
    poses = np.full((q.shape[0], 7), np.nan)
    ok = np.zeros(q.shape[0], bool)
    for k, row in enumerate(q[:, order]):
        res = fk.solve(row)
        if res.converged:
            poses[k], ok[k] = res.pose, True
        else:
            fk.reset()
    return poses, ok


def _geometry(parameters: dict):
    """The hexaslide of the run: the kinematics node's robot, else the time base's."""
    from hil_core import hexaslide as hx
    robot = node_values(parameters, 'kinematics' if recorded(parameters, 'kinematics') is not None
                        else 'timebase').robot
    try:
        return hx.load_geometry(robot)
    except (ValueError, KeyError, OSError, FileNotFoundError):
        return None


def stage_inputs(run, start: float, end: float) -> tuple[list[StageInput], list[str]]:
    """The stages present in the run on [start, end] and notes on those that are not."""
    p = run.manifest.get('parameters') or {}
    rates = expected_rates(p)
    frame = 1.0 / rates.get(topics.HEXAPOD_JOINT_TRAJECTORY, 400.0)
    notes, out = [], []
    geom = None
    for key, names in STAGE_TOPICS.items():
        topic = next((t for t in names if run.get(t) is not None or t in run.trajectories), None)
        if topic is None:
            notes.append(f'stage {key}: no {names[0]} in the bag')
            continue
        period = 1.0 / rates[topic] if topic in rates else None
        if key in ('servo_setpoints', 'joint_states'):
            geom = geom or _geometry(p)
            if geom is None:
                notes.append(f'stage {key}: no hexaslide geometry for the forward kinematics')
                continue
        if key == 'servo_setpoints':
            traj = run.trajectories.get(topic)
            if traj is None or len(traj) < 3:
                continue
            servo = node_values(p, 'timebase').servo_period
            sel = (traj.t >= start - frame) & (traj.t <= end + frame)
            t, q = traj.t[sel], traj.values[sel]
            if t.size < 3:
                continue
            grid = uniform_grid(max(start, t[0]), min(end, t[-1]), frame)
            keep = usable(t, grid, find_gaps(t, servo))
            grid = grid[keep]
            qg = np.column_stack([np.interp(grid, t, q[:, j]) for j in range(q.shape[1])])
            poses, ok = _fk_poses(geom, traj.names, qg)
            out.append(StageInput(key, topic, grid[ok], poses[ok], frame))
        elif key == 'joint_states':
            js = run.get(topic)
            n = js.values.shape[1] // 2
            sel = (js.t >= start) & (js.t <= end)
            poses, ok = _fk_poses(geom, js.names, js.values[sel, :n])
            out.append(StageInput(key, topic, js.t[sel][ok], poses[ok], period))
        else:
            s = run.get(topic)
            sel = (s.t >= start) & (s.t <= end)
            out.append(StageInput(key, topic, s.t[sel], s.values[sel], period))
    return out, notes
