"""The floor under the real-time CPU budget: what rclpy and Fast DDS cost here per 400 Hz stream,
before any node does any work (one process, EventsExecutor, spun with a finite timeout as the
runner does).

* an idle 400 Hz timer (a wake-up and a Python callback per tick);
* a 400 Hz PoseStamped stream: publish only (no subscriber), then to 1 and 2 subscribers in the
  same process, then with a raw (serialized) subscriber as the recorder takes it.
Prints CPU-s per wall-s of the process (all its threads: DDS receive threads included).

Across processes (``cross``): a second process publishes 1 or 4 WrenchStamped topics at 400 Hz
and this one reads them raw, served by the EventsExecutor (an executor wake-up per message, as a
recorder in a process of its own did) or drained every 20 ms (``hil_nodes.recorder.polled_readers``).
"""
import os
import subprocess
import sys
import time

import rclpy
from geometry_msgs.msg import PoseStamped
from rclpy.experimental import EventsExecutor
from rclpy.qos import qos_profile_sensor_data

SECONDS = float(os.environ.get('HIL_BENCH_SECONDS', '5'))
PERIOD = 0.0025


def _measure(setup, domain_id: int | None = None) -> float:
    context = rclpy.Context()
    rclpy.init(context=context, domain_id=200 + os.getpid() % 30 if domain_id is None else domain_id)
    node = rclpy.create_node('cost_probe', context=context)
    executor = EventsExecutor(context=context)
    executor.add_node(node)
    setup(node)

    def spin(seconds):
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            executor.spin_once(timeout_sec=0.1)
    spin(1.0)                                 # discovery, first messages
    c0, w0 = time.process_time(), time.monotonic()
    spin(SECONDS)
    cost = (time.process_time() - c0) / (time.monotonic() - w0)
    executor.shutdown()
    node.destroy_node()
    rclpy.shutdown(context=context)
    return cost


def _stream(n_subs: int, raw: bool = False):
    def setup(node):
        pub = node.create_publisher(PoseStamped, '/cost_probe', qos_profile_sensor_data)
        msg = PoseStamped()
        for _ in range(n_subs):
            node.create_subscription(PoseStamped, '/cost_probe', lambda m: None, qos_profile_sensor_data, raw=raw)
        node.create_timer(PERIOD, lambda: pub.publish(msg))
    return setup


def _publisher_process(n_topics: int, seconds: float) -> None:
    """Child: n_topics WrenchStamped streams at 400 Hz, published back to back each tick."""
    from geometry_msgs.msg import WrenchStamped
    context = rclpy.Context()
    rclpy.init(context=context, domain_id=int(os.environ['HIL_COST_DOMAIN']))
    node = rclpy.create_node('cost_source', context=context)
    executor = EventsExecutor(context=context)
    executor.add_node(node)
    pubs = [node.create_publisher(WrenchStamped, f'/cost_probe_{i}', qos_profile_sensor_data)
            for i in range(n_topics)]
    msg = WrenchStamped()
    node.create_timer(PERIOD, lambda: [p.publish(msg) for p in pubs])
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        executor.spin_once(timeout_sec=0.1)


def _cross(n_topics: int, drained: bool) -> float:
    from geometry_msgs.msg import WrenchStamped
    from rclpy.qos import QoSProfile, ReliabilityPolicy
    from hil_nodes.recorder.polled_readers import PolledReaders
    domain = 170 + os.getpid() % 20
    qos = QoSProfile(depth=100, reliability=ReliabilityPolicy.BEST_EFFORT)
    topics = [f'/cost_probe_{i}' for i in range(n_topics)]

    def setup(node):
        if drained:
            readers = PolledReaders(node.context, 'cost_probe')
            for topic in topics:
                readers.add(WrenchStamped, topic, qos, lambda data, t: None)
            node.create_timer(0.02, readers.drain)
        else:
            for topic in topics:
                node.create_subscription(WrenchStamped, topic, lambda m: None, qos, raw=True)
    child = subprocess.Popen([sys.executable, __file__, 'publisher', str(n_topics), str(SECONDS + 4)],
                             env={**os.environ, 'HIL_COST_DOMAIN': str(domain)})
    try:
        return _measure(setup, domain)
    finally:
        child.wait(timeout=SECONDS + 10)


if __name__ == '__main__' and sys.argv[1:2] == ['publisher']:
    _publisher_process(int(sys.argv[2]), float(sys.argv[3]))
elif __name__ == '__main__':
    idle = _measure(lambda node: None)
    print(f'rclpy.idle_process: {idle:.3f} cpu_s_per_s')
    timer = _measure(lambda node: node.create_timer(PERIOD, lambda: None))
    print(f'rclpy.timer_400hz: {timer - idle:.3f} cpu_s_per_s')
    for n in (0, 1, 2):
        print(f'rclpy.stream_400hz_{n}_subscribers: {_measure(_stream(n)) - timer:.3f} cpu_s_per_s')
    print(f'rclpy.stream_400hz_1_raw_subscriber: {_measure(_stream(1, raw=True)) - timer:.3f} cpu_s_per_s')
    for n in (1, 4):
        for drained in (False, True):
            how = 'drained_20ms' if drained else 'served'
            print(f'rclpy.cross_process_{n}_raw_400hz_{how}: {_cross(n, drained):.3f} cpu_s_per_s')
