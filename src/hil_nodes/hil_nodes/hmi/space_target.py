"""The reachability check of an operator's end-effector target for space_iiwa, with the running
space_plant's own parameters (read from the node through its GetParameters service, so the
model is the one the node runs: satellite, mount, gains, limits, URDF) and the measured state
the HMI already holds (the joints of /joint_states by the node's ``joint_names``, the satellite
pose of /tf ``world_frame`` -> ``satellite_frame``): hil_core.space.reachability runs the
node's loop on an ideal arm from there. Plain Python: the ROS shell fetches the values and
runs ``check`` away from its executor (a check takes up to 0.14 s here, 0.3 s under load)."""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from hil_core.space.model import FreeFloatingModel, euler_zyx_to_matrix
from hil_core.space.plant_numpy import SpacePlantNumpy
from hil_core.space.reachability import Reach, reach

# the parameters the model and the state need, all in space_plant's Param table
NAMES = ('urdf', 'joint_names', 'satellite_mass', 'satellite_inertia', 'mount_xyz', 'mount_rpy', 'kv', 'kw',
         'ki_v', 'ki_w', 'kd', 'integral_limit', 'orientation_error', 'sigma_threshold', 'lambda_max',
         'velocity_scale', 'acceleration_max', 'position_margin', 'velocity_cutoff_hz', 'world_frame',
         'satellite_frame')


def node_values(values: dict) -> SimpleNamespace:
    """space_plant's values: its Param table's defaults, replaced by what the node answered
    (``values``: name -> Python value, for the names it has set)."""
    from hil_nodes.space_plant.params import PARAMS
    table = {p.name: p.default for p in PARAMS}
    table.update({k: v for k, v in values.items() if k in table})
    return SimpleNamespace(**table)


def state_of(p: SimpleNamespace, positions: dict, tf) -> tuple[np.ndarray, np.ndarray] | str:
    """(joints, satellite pose [x y z qx qy qz qw]) measured, or why they are not known yet."""
    missing = [n for n in p.joint_names if n not in positions]
    if missing:
        return f'no joint state heard yet for {", ".join(missing)}'
    pose = tf.pose(p.satellite_frame, p.world_frame)
    if pose is None:
        return f'no satellite pose heard yet (/tf {p.world_frame} -> {p.satellite_frame})'
    q = np.array([positions[n] for n in p.joint_names], float)
    return q, np.concatenate([pose[0], pose[1]])


def check(p: SimpleNamespace, q, sat_pose, position, euler_zyx_deg) -> Reach:
    """Would the node's law take the arm to the target from (q, sat_pose)? (hil_core.space.reachability)"""
    from hil_nodes.space_plant.params import plant_config
    sat, gains = plant_config(p)
    model = FreeFloatingModel(sat, p.urdf or None)
    v_max = np.asarray(model.model.velocityLimit[6:]) * p.velocity_scale
    plant = SpacePlantNumpy(model, gains, v_max, p.acceleration_max, p.velocity_cutoff_hz, p.position_margin)
    R = euler_zyx_to_matrix(np.radians(np.asarray(euler_zyx_deg, float)))
    return reach(plant, q, sat_pose, np.asarray(position, float), R, joint_names=p.joint_names)
