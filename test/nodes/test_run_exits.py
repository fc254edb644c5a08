"""hil run's handling of processes that end early (hil_nodes.cli.run_exits): which nodes a process
hosts, one report per process on /hil/process_exit, and the run's verdict (the supervisor's FAULT
is waited for a bounded time; a dead supervisor is the launcher's own FAULT once the hardware
reported its watchdog stop, or after a bounded wait)."""
from hil_nodes import topics
from hil_nodes.cli import run_exits
from hil_nodes.cli.run_exits import ExitWatch, hosted_nodes


class _Publisher:
    def __init__(self):
        self.sent = []

    def publish(self, msg):
        self.sent.append(msg)


class _Node:
    """What ExitWatch needs of a node: a publisher and a subscription (kept to be called)."""

    def __init__(self):
        self.pub = _Publisher()
        self.callbacks = {}

    def create_publisher(self, msg_type, topic, qos):
        return self.pub

    def create_subscription(self, msg_type, topic, callback, qos):
        self.callbacks[topic] = callback


def test_hosted_nodes_of_one_process_per_node_and_of_the_container():
    assert hosted_nodes(['python', '-m', 'hil_nodes.planner.node', '--ros-args', '-r', '__node:=planner',
                         '--params-file', 'x.yaml']) == ['planner']
    assert hosted_nodes(['python', '-m', 'hil_nodes.runtime.container', '--node', 'hil_nodes.planner.node:planner',
                         '--node', 'hil_nodes.supervisor.node:supervisor', '--ros-args']) == ['planner', 'supervisor']


def test_a_dead_node_is_reported_once_and_left_to_the_supervisor_for_a_bounded_time_then_a_fault():
    node = _Node()
    watch = ExitWatch(node, [('planner', ['python', '-r', '__node:=planner'], {}),
                             ('container', ['python', '--node', 'm:supervisor'], {})])
    watch.poll({}, 10.0, '/logs')
    assert watch.verdict(10.0) is None and node.pub.sent == []
    watch.poll({'planner': -9}, 10.0, '/logs')
    watch.poll({'planner': -9}, 10.1, '/logs')                  # reported once
    assert len(node.pub.sent) == 1
    status = node.pub.sent[0].status[0]
    assert (status.name, status.hardware_id, status.message) == ('planner', 'planner', 'was killed by SIGKILL')
    assert watch.supervisor_alive and watch.verdict(10.0 + run_exits.FAULT_WAIT - 0.01) is None
    outcome, reason = watch.verdict(10.0 + run_exits.FAULT_WAIT + 0.01)
    assert outcome == 'fault'                  # a death, said by the launcher in the supervisor's words
    assert reason == ('node planner is dead: its process planner was killed by SIGKILL (the supervisor, '
                      f'alive, did not go to FAULT within {run_exits.FAULT_WAIT:g} s)')


def test_a_dead_supervisor_is_a_fault_after_the_hardware_stop_or_a_bounded_wait(monkeypatch):
    from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
    for stop_reported in (True, False):
        node = _Node()
        watch = ExitWatch(node, [('supervisor', ['python', '-r', '__node:=supervisor'], {})])
        watch.poll({'supervisor': -9}, 100.0, '/logs')
        assert not watch.supervisor_alive and watch.verdict(100.1) is None
        if stop_reported:
            monkeypatch.setattr(run_exits.time, 'monotonic', lambda: 101.0)
            node.callbacks[topics.HIL_EVENTS](DiagnosticArray(status=[DiagnosticStatus(
                name='fault', hardware_id='mock_hexapod', message='watchdog: braking to rest')]))
            assert watch.verdict(101.0 + run_exits.AFTER_HARDWARE_STOP - 0.01) is None   # braking frames kept
            outcome, reason = watch.verdict(101.0 + run_exits.AFTER_HARDWARE_STOP + 0.01)
            assert reason.endswith('; mock_hexapod: watchdog: braking to rest')
        else:
            assert watch.verdict(100.0 + run_exits.HARDWARE_STOP_WAIT - 0.01) is None
            outcome, reason = watch.verdict(100.0 + run_exits.HARDWARE_STOP_WAIT + 0.01)
            assert reason.endswith('no watchdog stop reported by the hardware')
        assert outcome == 'fault'
        assert reason.startswith('supervisor is dead: its process supervisor was killed by SIGKILL')
