"""LifecycleDriver decisions with scripted services (no DDS): lost answers, lost requests,
slow transitions, refusals, timeouts, abort. The DDS paths are in the supervisor node tests;
here every loss the real middleware only shows under load is produced on purpose."""
import pytest
from lifecycle_msgs.msg import State
from lifecycle_msgs.srv import ChangeState, GetState
from rclpy.task import Future

import hil_nodes.framework.lifecycle_driver as driver_mod
from hil_core.supervision.lifecycle_plan import Step, bring_up_plan
from hil_nodes.framework.lifecycle_driver import LifecycleDriver
from hil_nodes import topics

ID_TO_NAME = {v: k for k, v in driver_mod.TRANSITION_IDS.items()}


class Clock:
    def __init__(self):
        self.t = 0.0

    def monotonic(self):
        return self.t


class FakeClient:
    def __init__(self, srv_type, name):
        self.srv_type, self.srv_name = srv_type, name
        self.ready = True
        self.requests: list[tuple[object, Future]] = []
        self.removed = 0

    @property
    def service_name(self):          # rclpy's: the name resolved (here at the root)
        return '/' + self.srv_name

    def service_is_ready(self):
        return self.ready

    def call_async(self, request):
        future = Future()
        self.requests.append((request, future))
        return future

    def remove_pending_request(self, future):
        self.removed += 1


class FakeTimer:
    def cancel(self):
        pass

    def reset(self):
        pass


class FakeNode:
    def __init__(self):
        self.clients = {}

    def create_client(self, srv_type, name):
        self.clients[name] = FakeClient(srv_type, name)
        return self.clients[name]

    def create_timer(self, period, callback, clock=None):
        return FakeTimer()


@pytest.fixture
def clock(monkeypatch):
    c = Clock()
    monkeypatch.setattr(driver_mod, 'time', c)
    return c


def make(nodes=('a', 'b'), transition_timeout=9.0, service_timeout=5.0):
    node = FakeNode()
    states = {}
    d = LifecycleDriver(node, list(nodes), service_timeout, transition_timeout,
                        on_state=states.__setitem__, state_of=lambda n: states.get(n, 'unknown'))
    results = []
    return d, node, states, results


def change(node, name):
    return node.clients[topics.lifecycle_service(name, 'change_state')]


def get_state(node, name):
    return node.clients[topics.lifecycle_service(name, 'get_state')]


def answer_change(client, success=True, index=-1):
    request, future = client.requests[index]
    res = ChangeState.Response(success=success)
    future.set_result(res)
    return ID_TO_NAME[request.transition.id]


def answer_state(client, label, index=-1):
    res = GetState.Response()
    res.current_state = State(label=label)
    client.requests[index][1].set_result(res)


def past_the_retry(clock, transition='configure'):
    """One node, one step started, and no answer until just past the retry period: the driver
    has asked the node's state once."""
    d, node, states, results = make(['a'])
    d.start('bring-up', [Step('a', transition)], results.append)
    clock.t += d.retry_period + 0.01
    d._tick()
    return d, node, states, results


def test_steps_run_in_order_one_at_a_time(clock):
    d, node, states, results = make()
    d.start('bring-up', bring_up_plan(['a', 'b']), results.append)
    order = []
    for name in ('a', 'b', 'a', 'b'):
        assert len(change(node, name).requests) == order.count(name) + 1   # only the current step
        order.append(name)
        answer_change(change(node, name))
        d._tick()
    assert results[0].ok and results[0].done == ['configure a', 'configure b', 'activate a', 'activate b']
    assert states == {'a': 'active', 'b': 'active'} and not d.busy


def test_lost_answer_is_recovered_from_get_state(clock):
    d, node, states, results = past_the_retry(clock)
    assert len(get_state(node, 'a').requests) == 1          # asks instead of waiting blindly
    answer_state(get_state(node, 'a'), 'inactive')
    d._tick()
    assert results[0].ok and d.resends == 0 and len(change(node, 'a').requests) == 1
    assert change(node, 'a').removed == 1                   # the lost answer will be ignored


def test_lost_request_is_sent_again_once(clock):
    d, node, states, results = past_the_retry(clock)
    answer_state(get_state(node, 'a'), 'unconfigured')
    d._tick()
    assert d.resends == 1 and len(change(node, 'a').requests) == 2
    answer_change(change(node, 'a'))
    d._tick()
    assert results[0].ok and results[0].done == ['configure a']


def test_slow_transition_is_waited_for(clock):
    d, node, states, results = make(['a'])
    d.start('bring-up', [Step('a', 'configure')], results.append)
    for k in range(3):
        clock.t += d.retry_period + 0.01
        d._tick()
        answer_state(get_state(node, 'a'), 'configuring')
        d._tick()
    assert not results and d.resends == 0
    answer_change(change(node, 'a'))
    d._tick()
    assert results[0].ok


def test_transition_event_counts_as_done(clock):
    d, node, states, results = make(['a'])
    d.start('bring-up', [Step('a', 'configure')], results.append)
    states['a'] = 'inactive'                                 # seen on /a/transition_event
    clock.t += d.retry_period + 0.01
    d._tick()
    assert results[0].ok and not get_state(node, 'a').requests


def test_late_first_request_after_a_resend_is_success(clock):
    d, node, states, results = past_the_retry(clock)
    answer_state(get_state(node, 'a'), 'unconfigured')
    d._tick()                                                # resent
    answer_change(change(node, 'a'), success=False)          # the first one got there meanwhile
    d._tick()
    answer_state(get_state(node, 'a'), 'inactive')
    d._tick()
    assert results[0].ok


@pytest.mark.parametrize('label, reason', [('finalized', 'transition not done (node is finalized)'),
                                            ('unconfigured', 'transition not done (node is unconfigured)'),
                                            ('inactive', 'refused or failed by the node (node is inactive)')])
def test_resend_refused_fails_with_the_state(clock, label, reason):
    d, node, states, results = past_the_retry(clock, 'activate')
    answer_state(get_state(node, 'a'), 'inactive')
    d._tick()
    answer_change(change(node, 'a'), success=False)
    d._tick()
    answer_state(get_state(node, 'a'), label)
    d._tick()
    assert not results[0].ok and reason in results[0].failures[0]


def test_refusal_stops_a_bring_up_but_not_a_shutdown(clock):
    d, node, states, results = make()
    d.start('bring-up', bring_up_plan(['a', 'b']), results.append)
    answer_change(change(node, 'a'), success=False)
    d._tick()
    assert results[0].failures == ['configure of node a: refused or failed by the node']
    assert results[0].done == [] and not change(node, 'b').requests
    d.start('shutdown', [Step('b', 'cleanup'), Step('a', 'cleanup')], results.append, stop_on_failure=False)
    answer_change(change(node, 'b'), success=False)
    d._tick()
    answer_change(change(node, 'a'))
    d._tick()
    assert results[1].done == ['cleanup a'] and results[1].failures == ['cleanup of node b: refused or failed by the node']


def test_timeouts(clock):
    d, node, states, results = make(['a', 'b'], transition_timeout=3.0, service_timeout=1.0)
    change(node, 'b').ready = False
    d.start('bring-up', [Step('a', 'configure'), Step('b', 'configure')], results.append, stop_on_failure=False)
    for _ in range(10):                                      # nothing ever answers
        clock.t += 0.5
        d._tick()
    assert results[0].failures == ['configure of node a: no answer within 3 s',
                                   'configure of node b: service /b/change_state not available after 1 s']


def test_abort_lets_the_step_in_flight_finish(clock):
    d, node, states, results = make()
    d.start('bring-up', bring_up_plan(['a', 'b']), results.append)
    d.abort('shutdown requested')
    assert not results                                       # configure a still in flight
    answer_change(change(node, 'a'))
    d._tick()
    assert results[0].done == ['configure a'] and not results[0].ok
    assert 'not run: configure b, activate a, activate b' in results[0].failures[0]
    with pytest.raises(ValueError):
        d.start('x', [Step('ghost', 'configure')], results.append)


def test_a_shutdown_with_its_own_timeout_gives_a_silent_node_one_timeout(clock):
    """Shutdown timeouts shorter than the bring-up's; a node that does not answer its first
    step is not tried again for its later steps; the others are brought down."""
    d, node, states, results = make(['a', 'b'], transition_timeout=30.0, service_timeout=30.0)
    steps = [Step('b', 'deactivate'), Step('a', 'deactivate'), Step('b', 'cleanup'), Step('a', 'cleanup')]
    d.start('shutdown', steps, results.append, stop_on_failure=False, service_timeout=2.0, transition_timeout=2.0)
    clock.t += 2.01                                          # b never answers (nor its get_state)
    d._tick()
    assert len(get_state(node, 'b').requests) == 1           # asked once, at a third of 2 s
    for name in ('a', 'a'):
        answer_change(change(node, name))
        d._tick()
    assert results[0].done == ['deactivate a', 'cleanup a'] and len(change(node, 'b').requests) == 1
    assert results[0].failures == ['deactivate of node b: no answer within 2 s',
                                   'not run (node b does not answer): cleanup b']
    d.start('bring-up', [Step('b', 'configure')], results.append)   # the next sequence: own timeouts again
    clock.t += 2.01
    d._tick()
    assert len(results) == 1 and d.busy


def test_a_node_known_dead_fails_at_once_without_a_call(clock):
    d, node, states, results = make(['a', 'b'])
    states['b'] = 'dead'
    d.start('shutdown', [Step('b', 'deactivate'), Step('a', 'deactivate'), Step('b', 'cleanup')], results.append,
            stop_on_failure=False)
    answer_change(change(node, 'a'))
    d._tick()
    assert results[0].done == ['deactivate a'] and not change(node, 'b').requests
    assert results[0].failures == ['deactivate of node b: node is dead',
                                   'not run (node b does not answer): cleanup b']
