"""`hil run` makes its client participant only once every node process it started has its own
(hil_nodes.runtime.participant_ready, cli.processes.ProcessGroup.wait_participants): a real node
process says so right after rclpy.init and is waited for; a process that ends without saying so
is named, and the wait does not hang on it."""
import os
import sys

from hil_nodes.cli.processes import ProcessGroup
from hil_nodes.runtime.participant_ready import LINE


def test_a_node_process_is_waited_for_and_one_that_ends_first_is_named(tmp_path, domain_id):
    env = dict(os.environ, ROS_DOMAIN_ID=str(domain_id), ROS_AUTOMATIC_DISCOVERY_RANGE='LOCALHOST')
    group = ProcessGroup(tmp_path / 'logs', env)
    try:
        group.start('joy_wrench', [sys.executable, '-m', 'hil_nodes.joy_wrench.node'])
        group.start('broken', [sys.executable, '-c', 'import sys; sys.exit(3)'])
        assert group.wait_participants(timeout=60.0) == ['broken']
        assert group.procs['joy_wrench'].poll() is None        # up, spinning: its participant exists
        assert LINE in (tmp_path / 'logs' / 'joy_wrench.log').read_text().splitlines()
    finally:
        group.stop()
