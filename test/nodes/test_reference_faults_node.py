"""The fault relay over DDS delivers exactly what the seeded injector decides, frame by frame."""
import numpy as np
from geometry_msgs.msg import PoseStamped

from hil_core.fault_injection import ReferenceFaultInjector, ReferenceFaults
from hil_nodes.msgs.convert import array_to_pose, ns_to_stamp, pose_to_array, stamp_to_ns
from hil_sim.reference_faults.node import ReferenceFaultsNode
from rig import start
from rosutil import PUB_RELIABLE, SUB_RELIABLE

POSE = np.array([0.0, 0.0, 0.1543, 0.0, 0.0, 0.0, 1.0])
FAULTS = dict(drop_prob=0.1, duplicate_prob=0.1, spike_prob=0.1, spike_magnitude=0.005, late_prob=0.1,
              late_frames=2)


def test_relay_matches_the_injector_and_refuses_bad_parameters(ros):
    node = start(ros, ReferenceFaultsNode, lockstep=True, seed=5, **FAULTS)
    ros.bring_up('reference_faults')
    got = ros.collect(PoseStamped, '/admittance/reference', SUB_RELIABLE)
    pub = ros.node.create_publisher(PoseStamped, '/admittance/reference_model', PUB_RELIABLE)
    ros.wait_for_subscribers('/admittance/reference_model')
    ros.wait_for_publishers('/admittance/reference')
    ros.spin_until(lambda: ros.node.count_subscribers('/admittance/reference_model') >= 1, 10)
    expected = []
    reference = ReferenceFaultInjector(ReferenceFaults(**FAULTS), seed=5)
    for k in range(1, 201):
        msg = PoseStamped(pose=array_to_pose(POSE))
        msg.header.stamp = ns_to_stamp(k * 2_500_000)
        pub.publish(msg)
        expected += [(f, p) for f, p, _, _ in reference.step(k, POSE)]
        ros.spin_for(0.002)
    ros.spin_until(lambda: len(got) >= len(expected), 20, 'all relayed references')
    frames = [round(stamp_to_ns(m.header.stamp) / 2_500_000) for m in got]
    assert frames == [f for f, _ in expected]
    for m, (_, p) in zip(got, expected):
        np.testing.assert_allclose(pose_to_array(m.pose), p, atol=1e-15)
    assert node.injector.counts == reference.counts
    bad = start(ros, ReferenceFaultsNode, 'bad_faults', drop_prob=0.7, late_prob=0.7)
    assert not ros.change_state('bad_faults', 'configure')
    assert bad.injector is None
