"""hil_nodes.convert message builders."""
def test_refilled_trajectory_messages_equal_freshly_built_ones():
    """convert.TrajectoryMessages refills one message per point count (the generated message
    classes are slow to construct); every refill equals a message built from scratch."""
    import numpy as np

    from hil_nodes.convert import TrajectoryMessages, joint_trajectory
    rng = np.random.default_rng(3)
    names = [f'slider_{i}' for i in range(1, 7)]
    writer = TrajectoryMessages(names, 0.000625)
    for k, n, first in ((0, 4, 5), (1, 8, 1), (2, 8, 1), (3, 4, 1)):
        pos, vel = rng.normal(size=(n, 6)), rng.normal(size=(n, 6))
        stamp = 1_700_000_000_123_456_789 + k * 2_500_000
        fresh = joint_trajectory(names, stamp, (np.arange(n) + first) * 0.000625, pos, vel)
        assert writer.fill(stamp, pos, vel, first_index=first) == fresh
