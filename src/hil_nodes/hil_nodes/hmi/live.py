"""The live view's state, fed from the graph's messages (rclpy's or rosbags' classes alike: the
same field names): the newest joint positions, /tf and /tf_static edges, wrench and TCP poses.
The ROS shell hands over what it drained at the view rate; nothing here runs per message
received by DDS."""
from __future__ import annotations

import numpy as np

from hil_nodes.hmi.view_state import Pose, ViewState, Wrench


def apply_joint_state(state: ViewState, msg) -> None:
    if len(msg.position) == len(msg.name):
        state.positions.update(zip(msg.name, (float(v) for v in msg.position)))
        state.stamp = msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9


def apply_tf(state: ViewState, msg) -> None:
    for tr in msg.transforms:
        t, r = tr.transform.translation, tr.transform.rotation
        state.tf.set(tr.header.frame_id, tr.child_frame_id, (t.x, t.y, t.z), (r.x, r.y, r.z, r.w))


def pose_of(msg) -> Pose:
    p, q = msg.pose.position, msg.pose.orientation
    return Pose(msg.header.frame_id, np.array([p.x, p.y, p.z]), np.array([q.x, q.y, q.z, q.w]))


def wrench_of(msg) -> Wrench:
    f, m = msg.wrench.force, msg.wrench.torque
    return Wrench(msg.header.frame_id, np.array([f.x, f.y, f.z]), np.array([m.x, m.y, m.z]))
