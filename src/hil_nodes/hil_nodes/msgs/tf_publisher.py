"""/tf and /tf_static of the kinematics and space_plant nodes (docs/lab_ros2_control.md, TF).

Frame math is in :mod:`hil_core.maths.tf_frames`; this module only stamps and publishes it.

Rate budget: the pose a parallel robot or a floating base needs from us (the hexapod platform
from forward kinematics, the satellite from its integration) goes out with every joint
sample, stamped with the joint-state stamp, so a bag or tf2 has it exactly at the sample times
(400 Hz on the Hexafloat, 1 kHz on the iiwa). The joint frames (what robot_state_publisher
would publish from /joint_states) and the Hexaslide leg frames are for display: they go out at
``tf_frames_rate`` (default 50 Hz, in joint-sample time), each message carrying all of them.
Static frames (F/T sensor, fixed URDF joints, the arm mount) go out once, in one message on
/tf_static (transient local, like tf2_ros' StaticTransformBroadcaster).
"""
from __future__ import annotations

import numpy as np
from tf2_msgs.msg import TFMessage

from hil_core.maths import tf_frames
from hil_nodes import qos, topics
from hil_nodes.msgs import convert
from hil_nodes.runtime.chain_port import tf_port


class TfOutput:
    """The two publishers and the rate limit of the display frames. /tf goes through a chain
    port (hil_nodes.runtime.chain_port.tf_port): in one process the recorder gets bytes written
    from the arrays, and a message is built only for a reader."""

    def __init__(self, node):
        self.node = node
        self.pub = node.create_publisher(TFMessage, topics.TF, qos.tf())
        self._port = tf_port(self.pub)
        # made with the first static frames: a robot without any (hybrid5: no fixed joint, no
        # sensor frame) offers no /tf_static, so a recorder or a replay does not expect one
        self.static_pub = None
        self._last_frames_ns = None
        self.published = 0

    def static(self, transforms) -> None:
        if transforms:
            if self.static_pub is None:
                self.static_pub = self.node.create_publisher(TFMessage, topics.TF_STATIC, qos.tf_static())
            self.static_pub.publish(convert.tf_message(self.node.get_clock().now().to_msg(), transforms))

    def send(self, stamp_ns: int, transforms) -> None:
        """``transforms`` (parent, child, xyz, quat xyzw), all stamped ``stamp_ns``."""
        if not transforms:
            return
        self._port.send((stamp_ns, transforms))
        self.published += 1

    def frames_due(self, stamp_ns: int, rate: float) -> bool:
        """Display frames at most ``rate`` Hz of sample time (0 = never); whole nanoseconds, so
        50 Hz of 400 Hz samples is exactly every 8th sample."""
        if rate <= 0.0:
            return False
        if self._last_frames_ns is not None and stamp_ns - self._last_frames_ns < round(1e9 / rate):
            return False
        self._last_frames_ns = stamp_ns
        return True

    def reset(self) -> None:
        self._last_frames_ns = None

    def destroy(self) -> None:
        self.node.release(self.pub, self.static_pub)


class RobotTf:
    """Kinematics node: ``frame -> <child of the URDF's floating joint>`` = the FK pose at every
    sample; URDF joint frames (``joint_frames``) and Hexaslide legs at ``frames_rate``; static:
    the URDF's fixed joints and ``ft_sensor_frame`` on the platform (Hexaslide only)."""

    def __init__(self, node, urdf_text: str, joint_names, frame: str, geom=None, frames_rate: float = 50.0,
                 joint_frames: bool = True, ft_sensor_frame: str = ''):
        self.out = TfOutput(node)
        self.joints = tf_frames.urdf_joints(urdf_text)
        floating = tf_frames.floating_joint(self.joints)
        self.platform = None if floating is None else floating.child
        self.frame, self.geom, self.names = frame, geom, list(joint_names)
        self.rate, self.joint_frames = float(frames_rate), bool(joint_frames)
        static = tf_frames.fixed_transforms(self.joints) if joint_frames else []
        if ft_sensor_frame and geom is not None and self.platform:
            static.append((self.platform, ft_sensor_frame, np.zeros(3), np.array([0.0, 0.0, 0.0, 1.0])))
        self.out.static(static)

    def on_sample(self, stamp_ns: int, pose, q) -> None:
        moving = []
        if self.platform is not None:
            moving.append((self.frame, self.platform, np.asarray(pose[:3], float), np.asarray(pose[3:7], float)))
        if self.out.frames_due(stamp_ns, self.rate):
            if self.joint_frames:
                moving += tf_frames.moving_transforms(self.joints, dict(zip(self.names, q)))
            if self.geom is not None:
                from hil_core.hexaslide import chain_points
                sliders, pj = chain_points(self.geom, pose, q)
                moving += tf_frames.hexapod_leg_frames(self.frame, sliders, pj)
        self.out.send(stamp_ns, moving)

    def destroy(self) -> None:
        self.out.destroy()


class SpaceTf:
    """space_plant: ``world -> satellite`` (integrated pose) at every sample; static
    ``satellite -> <arm base>`` (the mount parameters) and, with ``joint_frames`` (false where
    robot_state_publisher runs), the arm URDF's fixed joints and its joint frames at
    ``frames_rate``."""

    def __init__(self, node, urdf_path, joint_names, world: str, satellite: str, mount_xyz, mount_rpy,
                 frames_rate: float = 50.0, joint_frames: bool = True):
        self.out = TfOutput(node)
        with open(urdf_path, encoding='utf-8') as fh:
            self.joints = tf_frames.urdf_joints(fh.read())
        children = {j.child for j in self.joints}
        arm_base = next(j.parent for j in self.joints if j.parent not in children)
        self.world, self.satellite, self.names = world, satellite, list(joint_names)
        self.rate = float(frames_rate) if joint_frames else 0.0
        mount = (satellite, arm_base, np.asarray(mount_xyz, float), tf_frames.rpy_to_quat(mount_rpy))
        self.out.static([mount, *(tf_frames.fixed_transforms(self.joints) if joint_frames else [])])

    def on_sample(self, stamp_ns: int, sat_pose, q) -> None:
        moving = [(self.world, self.satellite, np.asarray(sat_pose[:3], float), np.asarray(sat_pose[3:7], float))]
        if self.out.frames_due(stamp_ns, self.rate):
            moving += tf_frames.moving_transforms(self.joints, dict(zip(self.names, q)))
        self.out.send(stamp_ns, moving)

    def destroy(self) -> None:
        self.out.destroy()
