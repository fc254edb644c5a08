"""The space plant's command stream to the iiwa's joint_trajectory_controller: one
trajectory_msgs/JointTrajectory per joint sample, the law's next positions followed by their own
braking tail (``hil_core.space.command_stream``; docs/space_iiwa.md, "Command path").

A chain port (hil_nodes.runtime.chain_port) whose payload is a ``PlainTrajectory``: the mock
drives of the same process take the arrays, the recorder the CDR bytes, DDS a message only for a
reader outside the process. The tail's point times are not one period apart, so the time base's
``trajectory_port`` (points at whole periods) does not fit; the message is built point by point.
"""
from __future__ import annotations

import numpy as np

from hil_core.drives.plants.plain_trajectory import PlainTrajectory
from hil_core.space import command_stream
from hil_core.space.command_stream import braking_tail
from hil_nodes.msgs import convert
from hil_nodes.msgs.cdr_arrays import JointTrajectoryBytes
from hil_nodes.runtime.chain_port import ChainPort

# the stock controller of the iiwa (config/controllers.yaml; lbr_fri_ros2_stack's name for it)
CONTROLLER = 'joint_trajectory_controller'


def command_port(publisher, names) -> ChainPort:
    """The stream's port on ``publisher`` (a JointTrajectory publisher) for the joints ``names``."""
    names = list(names)
    cdr = JointTrajectoryBytes(names)
    command_stream.warm_up()            # at configure, never in a frame (compiled kernel)

    def message(plain: PlainTrajectory):
        from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint
        msg = JointTrajectory(joint_names=names)
        convert.fill_stamp(msg.header.stamp, plain.stamp_ns)
        points = []
        for k, t in enumerate(plain.times_ns.tolist()):
            pt = JointTrajectoryPoint(positions=convert.float_sequence(plain.positions[k]),
                                      velocities=convert.float_sequence(plain.velocities[k]))
            pt.time_from_start.sec, pt.time_from_start.nanosec = divmod(int(t), 1_000_000_000)
            points.append(pt)
        msg.points = points
        return msg

    def encode(plain: PlainTrajectory) -> bytes:
        return cdr.encode(plain.stamp_ns, plain.times_ns, plain.positions, plain.velocities)
    return ChainPort(publisher, message, encode)


def command(names: tuple, stamp_ns: int, q_next, v, a_max, period_ns: int) -> PlainTrajectory:
    """The message of one sample stamped ``stamp_ns``: ``q_next`` reached with velocity ``v`` at
    ``stamp_ns + period_ns``, then the braking tail at ``a_max``."""
    times, pos, vel = braking_tail(q_next, v, a_max, period_ns)
    return PlainTrajectory(tuple(names), int(stamp_ns), times, np.ascontiguousarray(pos),
                           np.ascontiguousarray(vel))
