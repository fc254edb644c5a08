"""Shared pytest fixtures: an isolated DDS domain per test, a test-side rclpy node, and
subprocess nodes that are always stopped (and whose Fast DDS shared memory is cleaned)."""
import os
import random

import pytest

# DDS never leaves this machine in tests; each pytest session starts at a random domain so
# parallel sessions on one machine do not cross-talk, and each test takes the next one.
os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'
os.environ.setdefault('RMW_IMPLEMENTATION', 'rmw_fastrtps_cpp')
os.environ.setdefault('MPLBACKEND', 'Agg')
# Under pytest-xdist (`make test` runs two workers) each worker has its own share of the
# domains 1-200, so two tests running at once never share one.
_WORKER = int(os.environ.get('PYTEST_XDIST_WORKER', 'gw0')[2:] or 0)
_SLOTS = 200 // max(1, int(os.environ.get('PYTEST_XDIST_WORKER_COUNT', '1')))
_DOMAIN_BASE = random.SystemRandom().randrange(0, _SLOTS)
_domain_counter = [0]


def next_domain_id() -> int:
    _domain_counter[0] += 1
    return 1 + _WORKER * _SLOTS + (_DOMAIN_BASE + _domain_counter[0]) % _SLOTS


@pytest.fixture
def domain_id():
    return next_domain_id()


@pytest.fixture
def ros(domain_id):
    """A RosHarness: its own rclpy context on a fresh domain, a test node, spin helpers."""
    from rosutil import RosHarness
    harness = RosHarness(domain_id)
    try:
        yield harness
    finally:
        harness.close()


@pytest.fixture
def artifacts_dir():
    """Where tests save figures a person may want to look at (test-artifacts/, git-ignored)."""
    root = os.path.join(os.path.dirname(os.path.dirname(__file__)), 'test-artifacts')
    os.makedirs(root, exist_ok=True)
    return root


# Files whose tests judge wall-clock behaviour (a real-time run, rates on the wall clock, a
# watchdog in wall time, a lockstep stall limit of 0.75 wall s): `make test` runs them alone, after
# the rest has run on two workers (docs/testing.md). On two workers, each starting graphs of
# several processes on this 2-core machine, a process waited for a core long enough to trip them.
SERIAL_FILES = {
    'test/system/test_lab_qos.py': 'a real-time run of the whole graph',
    'test/system/test_link_down.py': 'a real-time run over two emulated hosts',
    'test/system/test_two_hosts.py': 'a real-time run split over two parts (the supervisor gone)',
    'test/system/test_hil_run_hexafloat.py': "the supervisor's stall limit (0.75 wall s) in lockstep",
    'test/system/test_two_namespaces.py': 'two lockstep graphs at once: the stall limit (a rig faulted beside the other worker)',
    'test/system/test_hil_run_hmi.py': "the HMI's process in a real-time run",
    'test/nodes/test_ft_sensor_netft.py': 'Net F/T rates on the wall clock',
    'test/nodes/test_netft_loopback.py': 'Net F/T rates on the wall clock',
    'test/nodes/test_mock_watchdog_node.py': "the drives' watchdog in wall time",
    'test/nodes/test_mock_iiwa_node.py': "the iiwa drives' brake in wall time",
}


def pytest_collection_modifyitems(config, items):
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    for item in items:
        if os.path.relpath(str(item.fspath), root) in SERIAL_FILES:
            item.add_marker(pytest.mark.serial)


# The files that take longest on a worker of `make test`'s first step (seconds, setup and calls:
# a run with --durations=0 at calibration 0.87 s, 2026-11-29; the unit tests run in the second
# step, test/serial_beside_unit.sh): queued first, longest first (test/scheduling.py), so the
# many short files fill in behind them instead of one worker running a long one alone at the end.
LONG_FILES = {
    'test/system/test_hexafloat_scenarios.py': 91.5,
    'test/system/test_three_hosts.py': 77.2,
    'test/nodes/test_hmi_live.py': 55.3,
    'test/nodes/test_hybrid5_program.py': 16.6,
    'test/nodes/test_report_known_answers.py': 14.3,
    'test/system/test_hil_run_hmi_throttle.py': 12.9,
    'test/nodes/test_hybrid5_nodes.py': 12.5,
    'test/nodes/test_mock_hexapod_node.py': 11.9,
}


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    if config.getvalue('dist') != 'loadfile':
        return None
    from scheduling import LongestFirstFileScheduling
    return LongestFirstFileScheduling(config, log, LONG_FILES)
