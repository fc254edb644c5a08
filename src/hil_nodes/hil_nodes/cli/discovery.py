"""DDS discovery of `hil run` (docs/lab.md, "Two or three hosts"): on this machine only
(``ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST``, the default), on the subnet (``--network``:
SUBNET, multicast), or with static peers (``--peers ADDR,...``: ``ROS_STATIC_PEERS``, unicast
to those hosts, for networks without multicast; the range stays LOCALHOST, so nothing is sent
by multicast). Every part of a run uses the same domain id.

Across hosts (``--network`` or ``--peers``) every process of the run also gets the Fast DDS
profile config/fastdds_hosts.xml (``FASTDDS_DEFAULT_PROFILES_FILE``, unless the environment names
a profile already): UDP sends that never block, so a link that drops cannot stand the publishing
process still (the file says why)."""
from __future__ import annotations

import os

from hil_core.data_paths import config_file
from hil_nodes.bringup.names import static_peers

PROFILE_VAR = 'FASTDDS_DEFAULT_PROFILES_FILE'
HOSTS_PROFILE = 'fastdds_hosts.xml'


def dds_env(domain: int, network: bool, peers: str) -> dict[str, str]:
    """The environment of the run's processes; this process (its own DDS participant, the
    run's client) takes the same discovery settings."""
    env = dict(os.environ, ROS_DOMAIN_ID=str(domain), PYTHONUNBUFFERED='1')
    env['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'SUBNET' if network else 'LOCALHOST'
    env.pop('ROS_STATIC_PEERS', None)
    if peers:
        env['ROS_STATIC_PEERS'] = static_peers(peers)
    os.environ.update(ROS_AUTOMATIC_DISCOVERY_RANGE=env['ROS_AUTOMATIC_DISCOVERY_RANGE'])
    os.environ.pop('ROS_STATIC_PEERS', None)
    if peers:
        os.environ['ROS_STATIC_PEERS'] = env['ROS_STATIC_PEERS']
    if (network or peers) and not env.get(PROFILE_VAR):
        env[PROFILE_VAR] = os.environ[PROFILE_VAR] = str(config_file(HOSTS_PROFILE))
    return env


def discovery_line(env: dict[str, str]) -> str:
    """The summary's ``discovery``: range and peers."""
    peers = env.get('ROS_STATIC_PEERS', '')
    profile = env.get(PROFILE_VAR, '')
    return (env['ROS_AUTOMATIC_DISCOVERY_RANGE'] + (f', static peers {peers}' if peers else '')
            + (f', Fast DDS profile {profile}' if profile else ''))
