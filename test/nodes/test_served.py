"""hil_nodes.runtime.served and the fine timer slack: what the spin loop relies on to end an executor
slice at the first idle turn (hil_nodes.runtime.runner)."""
import ctypes
import ctypes.util
import inspect
import threading

from hil_nodes.runtime import rt_setup
from hil_nodes.runtime.served import SERVED, counted


def test_a_counted_callback_counts_and_keeps_its_signature():
    got = []

    def on_message(msg, info=None):
        got.append((msg, info))
        return 'done'
    wrapped = counted(on_message)
    before = SERVED[0]
    assert wrapped('m') == 'done' and wrapped('n', info='i') == 'done'
    assert SERVED[0] == before + 2 and got == [('m', None), ('n', 'i')]
    # rclpy decides from the signature whether to pass TimerInfo / MessageInfo
    assert inspect.signature(wrapped) == inspect.signature(on_message)
    assert list(inspect.signature(counted(lambda: None)).parameters) == []


def test_the_signature_is_computed_once_and_is_that_of_the_bound_callback():
    """rclpy's EventsExecutor asks inspect.signature at every timer call: it must find it ready
    (``__signature__``), the bound method's (no self), with a TimerInfo parameter kept."""
    from rclpy.timer import TimerInfo

    class Node:
        def on_timer(self, info: TimerInfo = None):
            return info

        def on_tick(self):
            return 'tick'
    node = Node()
    wrapped, plain = counted(node.on_timer), counted(node.on_tick)
    assert wrapped.__signature__ is inspect.signature(wrapped)         # no recomputation
    assert list(inspect.signature(wrapped).parameters) == ['info']
    assert inspect.signature(wrapped).parameters['info'].annotation is TimerInfo
    assert list(inspect.signature(plain).parameters) == [] and plain() == 'tick'


def _slack_ns() -> int:
    libc = ctypes.CDLL(ctypes.util.find_library('c'))
    return libc.prctl(30, 0, 0, 0, 0)          # PR_GET_TIMERSLACK: this thread's, in ns


def test_an_async_callback_stays_a_coroutine_function():
    import asyncio

    async def on_request(request, response):
        return (request, response)
    wrapped = counted(on_request)
    before = SERVED[0]
    assert inspect.iscoroutinefunction(wrapped)          # rclpy awaits it (async services)
    assert asyncio.run(wrapped('q', 'r')) == ('q', 'r') and SERVED[0] == before + 1


def test_the_fine_timer_slack_is_set_for_the_thread_and_inherited():
    seen = {}

    def child():
        seen['child'] = _slack_ns()

    def parent():
        seen['before'] = _slack_ns()
        seen['ok'] = rt_setup.fine_timer_slack()
        seen['parent'] = _slack_ns()
        t = threading.Thread(target=child)
        t.start()
        t.join()
    t = threading.Thread(target=parent)        # (not this test process's main thread)
    t.start()
    t.join()
    seen.pop('before')          # (the default is 50 us; a test process may have set its own)
    assert seen == {'ok': True, 'parent': rt_setup.TIMER_SLACK_NS, 'child': rt_setup.TIMER_SLACK_NS}
