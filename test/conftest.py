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
_DOMAIN_BASE = random.SystemRandom().randrange(1, 200)
_domain_counter = [0]


def next_domain_id() -> int:
    _domain_counter[0] += 1
    return 1 + (_DOMAIN_BASE + _domain_counter[0]) % 200


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
