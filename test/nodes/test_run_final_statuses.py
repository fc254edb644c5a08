"""`hil run`, after the shutdown answered, waits for the statuses its summary reads instead of a
fixed time (hil_nodes.cli.run_cmd._wait_final_statuses): the supervisor's next status and every
managed node's deactivation status; a node deactivated and activated again is not done."""
from diagnostic_msgs.msg import DiagnosticArray

from hil_nodes import topics
from hil_nodes.cli.run_client import RunClient
from hil_nodes.cli.run_cmd import _wait_final_statuses

from rig import run_status


def _client(ros):
    pub = ros.node.create_publisher(DiagnosticArray, topics.DIAGNOSTICS, 10)
    client = RunClient(ros.domain_id)
    assert client.spin_until(lambda: pub.get_subscription_count() >= 1, 10.0)
    return pub, client


def test_it_returns_once_the_supervisor_and_every_managed_node_said_their_last(ros):
    pub, client = _client(ros)
    try:
        pub.publish(run_status('supervisor', 'up', faults=0))
        assert client.spin_until(lambda: client.diag_counts.get('supervisor') == 1, 10.0)
        before = client.diag_counts['supervisor']
        pub.publish(run_status('planner', 'inactive'))
        pub.publish(run_status('mock_hexapod', 'inactive', frames=812))
        pub.publish(run_status('mock_hexapod', 'inactive'))
        # the supervisor's status after the shutdown is still missing: not done
        assert not _wait_final_statuses(client, ['mock_hexapod', 'planner'], before, timeout=0.5)
        pub.publish(run_status('supervisor', 'down', faults=0))
        assert _wait_final_statuses(client, ['mock_hexapod', 'planner'], before, timeout=10.0)
        assert client.value('mock_hexapod', 'frames') == '812'
    finally:
        client.close()


def test_a_node_activated_again_after_a_deactivation_is_not_deactivated(ros):
    pub, client = _client(ros)
    try:
        pub.publish(run_status('planner', 'inactive'))
        assert client.spin_until(lambda: 'planner' in client.deactivated, 10.0)
        pub.publish(run_status('planner', 'active'))
        pub.publish(run_status('supervisor', 'down'))
        assert client.spin_until(lambda: 'supervisor' in client.diag_counts, 10.0)
        assert 'planner' not in client.deactivated
        assert not _wait_final_statuses(client, ['planner'], 0, timeout=0.5)
        pub.publish(run_status('planner', 'inactive'))
        assert _wait_final_statuses(client, ['planner'], 0, timeout=10.0)
    finally:
        client.close()
