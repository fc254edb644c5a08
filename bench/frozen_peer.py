"""What a frozen peer does to its publishers: a process publishes a 400 Hz-class stream (a burst of
5 messages every 0.5 ms) to a reader in another process, and the reader's process is frozen
(SIGSTOP) at a random moment, then thawed 0.25-0.35 s later, STOPS times. Prints how many freezes
made a ``publish()`` block, the longest block, and the longest gap of a 1 ms ticker thread in the
publishing process (the block holds the GIL: the whole Python process stops with it).

* ``shm``: ``ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST``, under which rmw_fastrtps always adds the
  shared-memory transport (rmw_fastrtps_shared_cpp/src/participant.cpp, the LOCALHOST case:
  ``use_builtin_transports = false``, a default ``SharedMemTransportDescriptor`` and UDPv4); its
  ports' health check waits ``healthy_check_timeout_ms`` (1000 ms by default, not settable
  under LOCALHOST) for the frozen listener (Fast DDS SharedMemGlobal::Port::healthy_check).
* ``udp``: the same in a network namespace of its own holding only a loopback (root and
  ``ip netns`` needed; skipped otherwise), with ``FASTDDS_BUILTIN_TRANSPORTS=UDPv4`` and
  ``ROS_AUTOMATIC_DISCOVERY_RANGE=SUBNET`` (the range under which Fast DDS takes its builtin
  transports from that variable). Nothing leaves the namespace.

docs/fault_matrix.md ("A frozen process freezes its publishers") says what the suite does about it.
"""
import os
import random
import shutil
import signal
import subprocess
import sys
import time

STOPS = int(os.environ.get('HIL_BENCH_FROZEN_STOPS', '60'))
NETNS = f'hil_frozen_{os.getpid()}'


def _reader() -> None:
    import rclpy
    from rclpy.qos import HistoryPolicy, QoSProfile, ReliabilityPolicy
    from std_msgs.msg import Float64MultiArray
    rclpy.init()
    node = rclpy.create_node('frozen_reader')
    qos = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE, history=HistoryPolicy.KEEP_LAST)
    node.create_subscription(Float64MultiArray, 'frozen_probe', lambda m: None, qos)
    print('ready', flush=True)
    rclpy.spin(node)


def _writer(stops: int) -> None:
    import threading

    import rclpy
    from rclpy.qos import HistoryPolicy, QoSProfile, ReliabilityPolicy
    from std_msgs.msg import Float64MultiArray
    rclpy.init()
    node = rclpy.create_node('frozen_writer')
    qos = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE, history=HistoryPolicy.KEEP_LAST)
    pub = node.create_publisher(Float64MultiArray, 'frozen_probe', qos)
    reader = subprocess.Popen([sys.executable, __file__, 'reader'], stdout=subprocess.PIPE)
    reader.stdout.readline()
    deadline = time.monotonic() + 30
    while pub.get_subscription_count() == 0:
        if time.monotonic() > deadline:
            raise SystemExit('the reader never matched')
        time.sleep(0.01)
    msg = Float64MultiArray(data=[0.0] * 10)
    done, worst_gap = False, [0.0]

    def tick():
        last = time.perf_counter()
        while not done:
            time.sleep(0.001)
            now = time.perf_counter()
            worst_gap[0], last = max(worst_gap[0], now - last), now
    ticker = threading.Thread(target=tick)
    ticker.start()
    blocked_stops, longest = 0, 0.0
    try:
        for _ in range(stops):
            start = time.monotonic()
            freeze_at, frozen, blocked = start + random.uniform(0.05, 0.15), False, False
            while time.monotonic() < start + 0.4:
                if not frozen and time.monotonic() > freeze_at:
                    os.kill(reader.pid, signal.SIGSTOP)
                    frozen = True
                for _ in range(5):
                    t0 = time.perf_counter()
                    pub.publish(msg)
                    took = time.perf_counter() - t0
                    longest = max(longest, took)
                    blocked |= took > 0.05
                time.sleep(0.0005)
            os.kill(reader.pid, signal.SIGCONT)
            blocked_stops += blocked
    finally:
        done = True
        ticker.join()
        reader.kill()
    print(f'{blocked_stops} {longest:.3f} {worst_gap[0]:.3f}')


def _run(env: dict, prefix: list[str]) -> tuple[int, float, float]:
    out = subprocess.run([*prefix, sys.executable, __file__, 'writer', str(STOPS)], env=env,
                         capture_output=True, text=True, timeout=60 + STOPS * 2)
    if out.returncode != 0:
        raise SystemExit(f'frozen_peer writer failed: {out.stderr[-2000:]}')
    blocked, longest, gap = out.stdout.split()[-3:]
    return int(blocked), float(longest), float(gap)


def main() -> None:
    env = dict(os.environ, ROS_DOMAIN_ID=str(170 + os.getpid() % 30), ROS_AUTOMATIC_DISCOVERY_RANGE='LOCALHOST')
    print(f'freezes_per_transport: {STOPS}')
    blocked, longest, gap = _run(env, [])
    print(f'shm_freezes_that_blocked_a_publish: {100 * blocked / STOPS:.0f} %')
    print(f'shm_longest_publish: {longest * 1e3:.0f} ms')
    print(f'shm_longest_gap_of_another_thread: {gap * 1e3:.0f} ms')
    if os.geteuid() != 0 or shutil.which('ip') is None:
        print('udp_skipped: needs_root_and_ip_netns')
        return
    subprocess.run(['ip', 'netns', 'add', NETNS], check=True)
    try:
        subprocess.run(['ip', 'netns', 'exec', NETNS, 'ip', 'link', 'set', 'lo', 'up'], check=True)
        udp_env = dict(env, ROS_AUTOMATIC_DISCOVERY_RANGE='SUBNET', FASTDDS_BUILTIN_TRANSPORTS='UDPv4')
        blocked, longest, gap = _run(udp_env, ['ip', 'netns', 'exec', NETNS])
    finally:
        subprocess.run(['ip', 'netns', 'delete', NETNS], check=False)
    print(f'udp_freezes_that_blocked_a_publish: {100 * blocked / STOPS:.0f} %')
    print(f'udp_longest_publish: {longest * 1e3:.0f} ms')
    print(f'udp_longest_gap_of_another_thread: {gap * 1e3:.0f} ms')


if __name__ == '__main__':
    if len(sys.argv) > 1 and sys.argv[1] == 'reader':
        _reader()
    elif len(sys.argv) > 1 and sys.argv[1] == 'writer':
        _writer(int(sys.argv[2]))
    else:
        main()
