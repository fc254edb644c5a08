"""The process's spin loop (hil_nodes.runtime.runner.spin_nodes) does not busy-loop while a
coroutine callback awaits (the supervisor's shutdown answer awaits the whole shutdown sequence).

rclpy's EventsExecutor re-queues every blocked coroutine at the start of each spin
(events_executor.cpp, ``spin()`` -> ``PostOutstandingTasks``), so a loop of ``spin_once`` calls
ran it over and over and never waited: one core at 100 % for the whole shutdown, and under
SCHED_FIFO on one core the threads that would complete it starved. Asserted in a process of its
own (``spin_nodes`` spins the default context): a coroutine that awaits a future completed by a
timer 0.3 s later completes, and the loop turns a few hundred times meanwhile, not tens of
thousands (about 0.3 s / the 0.5 ms nap; a busy loop turned ~200 000 times a second here).
"""
from __future__ import annotations

import os
import subprocess
import sys

SCRIPT = r'''
import time
import rclpy
from rclpy.node import Node
from rclpy.task import Future
from hil_nodes.runtime import runner

rclpy.init()
node = Node('napper')
fut, done, timers = Future(), [], {}

async def waits():
    timers['start'].cancel()
    turns = runner.TURNS[0]
    await fut
    done.append(runner.TURNS[0] - turns)

timers['start'] = node.create_timer(0.05, waits)
timers['finish'] = node.create_timer(0.35, lambda: fut.done() or fut.set_result(True))
end = time.monotonic() + 3.0
runner.spin_nodes([node], should_stop=lambda: bool(done) or time.monotonic() > end)
print('turns_while_awaiting', done[0] if done else 'never completed')
'''


def test_a_coroutine_awaiting_does_not_make_the_loop_spin_hot(ros):
    env = {**os.environ, 'ROS_DOMAIN_ID': str(ros.domain_id), 'ROS_AUTOMATIC_DISCOVERY_RANGE': 'LOCALHOST'}
    out = subprocess.run([sys.executable, '-c', SCRIPT], capture_output=True, text=True, timeout=120, env=env)
    line = [x for x in out.stdout.splitlines() if x.startswith('turns_while_awaiting')]
    assert line, out.stdout + out.stderr
    value = line[0].split()[1]
    assert value != 'never', 'the awaited future never let the coroutine complete'
    assert 0 < int(value) < 5_000, f'{value} turns while awaiting 0.3 s: the loop spins hot'
