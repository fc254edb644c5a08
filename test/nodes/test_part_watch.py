"""What a part without the supervisor hears (hil_nodes.cli.part_run.PartWatch, RunClient), over
DDS: the supervisor's latched mode says the part's nodes were activated even when their volatile
transition events went out before the part's subscription matched; the drives' counters are
final once their deactivation status ("inactive") came in; the shutdown is heard from the
nodes going down even when their activation was not."""
from diagnostic_msgs.msg import DiagnosticArray
from lifecycle_msgs.msg import State, TransitionEvent
from std_msgs.msg import String

from hil_nodes import qos, topics
from hil_nodes.cli.part_run import PartWatch
from hil_nodes.cli.run_client import RunClient

from rig import run_status


def _spin_until(client: RunClient, predicate, timeout: float = 10.0) -> None:
    import time
    end = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < end, 'condition not met in time'
        client.spin_once(0.05)


def test_the_supervisors_mode_marks_the_part_active_without_its_transition_events(ros):
    # the supervisor left IDLE (it activated every node) before this part's client existed
    mode = ros.node.create_publisher(String, topics.HIL_MODE, qos.latched(20))
    events = ros.node.create_publisher(TransitionEvent, topics.lifecycle_service('mock_hexapod', 'transition_event'),
                                       10)
    mode.publish(String(data='IDLE'))
    mode.publish(String(data='HOMING'))
    client = RunClient(ros.domain_id)
    try:
        watch = PartWatch(client, ['mock_hexapod'])
        assert not watch.active()
        _spin_until(client, lambda: client.mode == 'HOMING')
        assert watch.states == {'mock_hexapod': []} and watch.active()
        # and the events themselves still count when they are heard
        fresh = PartWatch(client, ['mock_hexapod'])
        client.modes.clear()
        assert not fresh.active()
        _spin_until(client, lambda: events.get_subscription_count() >= 2)
        events.publish(TransitionEvent(goal_state=State(id=State.PRIMARY_STATE_ACTIVE, label='active')))
        _spin_until(client, lambda: fresh.states['mock_hexapod'] == ['active'])
        assert fresh.active()
    finally:
        client.close()


def test_the_drives_counters_are_final_after_their_deactivation_status(ros):
    pub = ros.node.create_publisher(DiagnosticArray, topics.DIAGNOSTICS, 10)
    client = RunClient(ros.domain_id)
    try:
        _spin_until(client, lambda: pub.get_subscription_count() >= 1)
        pub.publish(run_status('mock_hexapod', 'running', frames=400, late_commands=0))
        _spin_until(client, lambda: client.value('mock_hexapod', 'frames') == '400')
        assert 'mock_hexapod' not in client.deactivated
        # deactivation: the drives' last counters, then the base's "inactive" (hil_nodes.framework.base)
        pub.publish(run_status('mock_hexapod', 'inactive', frames=812, late_commands=1))
        pub.publish(run_status('mock_hexapod', 'inactive'))
        client.wait_deactivated(['mock_hexapod'], timeout=10.0)
        assert client.deactivated == {'mock_hexapod'}
        assert (client.value('mock_hexapod', 'frames'), client.value('mock_hexapod', 'late_commands')) == ('812', '1')
    finally:
        client.close()


def _event(label: str) -> TransitionEvent:
    return TransitionEvent(goal_state=State(label=label))


def test_the_shutdown_is_heard_from_the_nodes_going_down_without_their_activation(ros):
    """The supervisor's "lifecycle: down" may never cross (its process is stopped right after),
    and the part may have missed the volatile 'active' event: a node that went through
    'deactivating' to 'unconfigured' was shut down from active all the same."""
    events = ros.node.create_publisher(TransitionEvent, topics.lifecycle_service('mock_hexapod', 'transition_event'),
                                       10)
    client = RunClient(ros.domain_id)
    try:
        watch = PartWatch(client, ['mock_hexapod'])
        _spin_until(client, lambda: events.get_subscription_count() >= 1)
        for label in ('inactive', 'cleaningup', 'unconfigured'):      # a configure undone: never active
            events.publish(_event(label))
        _spin_until(client, lambda: len(watch.states['mock_hexapod']) == 3)
        assert not watch.shut_down()
        for label in ('deactivating', 'inactive', 'cleaningup'):
            events.publish(_event(label))
        _spin_until(client, lambda: len(watch.states['mock_hexapod']) == 6)
        assert not watch.shut_down()                                  # not down yet
        events.publish(_event('unconfigured'))
        _spin_until(client, watch.shut_down)
    finally:
        client.close()
