"""How the mock drives judge a command message (hil_sim.mock_hardware.node), as the emulated
controller (hil_core.drives.plants.controllers) would.

A JointTrajectory of the common kind (positions, velocities or none, one value per joint in
every point: what the time base sends) is decided on arrays, read once from the message
(``plain_trajectory_from_msg``, the controller's ``accept_plain``); any other, and every
refusal, goes through the full check, which names the reason. A Float64MultiArray (a forward
command controller's) is judged on its data and has no stamp.
"""
from __future__ import annotations

from hil_core.drives.plants.plain_trajectory import trajectory_of_plain
from hil_nodes.msgs.convert import plain_trajectory_from_msg, trajectory_from_msg


def judge(controller, msg, trajectory: bool, now_ns: int):
    """(stamp ns, verdict) of the command message ``msg`` at the controller's time ``now_ns``
    (``trajectory``: a JointTrajectory, else a Float64MultiArray, stamp 0)."""
    if not trajectory:
        return 0, controller.accept(msg.data, now_ns)
    plain = plain_trajectory_from_msg(msg)
    if plain is not None:
        return judge_plain(controller, plain, now_ns)
    traj = trajectory_from_msg(msg)
    return traj.stamp_ns, controller.accept(traj, now_ns)


def judge_plain(controller, plain, now_ns: int):
    """(stamp ns, verdict) of a plain trajectory (a chain port's payload, or read from a
    message): decided on its arrays, the full check naming the reason for anything else."""
    verdict = controller.accept_plain(plain, now_ns)
    if verdict is None:
        verdict = controller.accept(trajectory_of_plain(plain), now_ns)
    return plain.stamp_ns, verdict


def judge_forward(controller, values, now_ns: int):
    """(0, verdict) of a forward command's values (a chain port's payload)."""
    return 0, controller.accept(values, now_ns)
