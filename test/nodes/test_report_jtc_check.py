"""`hil report`'s stock-JTC check of a bag: every recorded trajectory goes through the Kilted
acceptance rules (hil_core.drives.joint_trajectory) at its arrival time; the refusals are counted."""
import numpy as np

from hil_nodes.recorder.bag import CheckpointWriter
from hil_nodes.report.jtc_check import check_bag, controller_settings
from report_bags import JOINTS, SERVO, T, _Msgs, typestore

TOPIC, KIND = '/hexapod_controller/joint_trajectory', 'trajectory_msgs/msg/JointTrajectory'


def _write(path, messages):
    """messages: (stamp s, arrival s, joint names)."""
    m, store = _Msgs(), typestore()
    w = CheckpointWriter(path)
    w.add_topic(TOPIC, KIND)
    for stamp, arrival, names in messages:
        msg = m.trajectory(stamp, np.arange(1, 5) * SERVO, [np.zeros(6)] * 4)
        msg.joint_names = list(names)
        if len(names) != 6:
            for pt in msg.points:
                pt.positions = np.zeros(len(names))
        w.write(TOPIC, int(round(arrival * 1e9)), store.serialize_cdr(msg, KIND))
    w.close()


def test_on_time_messages_pass_and_late_or_wrong_ones_are_counted_with_their_reason(tmp_path):
    bag = tmp_path / 'bag'
    _write(bag, [(1.0, 1.0001, JOINTS),             # received just after its stamp: accepted
                 (1.0025, 1.0030, JOINTS),          # inside its 2.5 ms: accepted
                 (1.0050, 1.0050 + 2 * T, JOINTS),  # received after its end: ends in the past
                 (1.0075, 1.0076, JOINTS[:5])])     # one joint missing
    result = check_bag(bag)
    assert result['checked'] == 4 and result['refused'] == 2
    assert result['reasons'] == {'ends_in_past': 1, 'joint_count': 1}
    assert result['first_refusal'].startswith('1.0076 s: Joints')     # the first by arrival time


def test_the_settings_are_the_shipped_controller_configuration():
    s = controller_settings()
    assert s.joints == tuple(JOINTS) and s.allow_nonzero_velocity_at_trajectory_end
