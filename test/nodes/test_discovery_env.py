"""hil_nodes.cli.discovery: across hosts (`--network`, `--peers`) every process of a run gets the
Fast DDS profile config/fastdds_hosts.xml, whose UDP transport never blocks a send (a dropped link
stood the publishing process still), unless the environment names a profile already; on one host
none is set."""
import os
import xml.etree.ElementTree as ET

import pytest

from hil_nodes.cli import discovery

NS = {'d': 'http://www.eprosima.com'}


@pytest.fixture(autouse=True)
def _clean_environ(monkeypatch):
    # dds_env also sets this process's environment (its own participant takes the same settings)
    for var in ('FASTDDS_DEFAULT_PROFILES_FILE', 'ROS_STATIC_PEERS', 'ROS_AUTOMATIC_DISCOVERY_RANGE'):
        monkeypatch.delenv(var, raising=False)


@pytest.mark.parametrize('network, peers', [(True, ''), (False, '10.0.0.2')])
def test_across_hosts_every_process_takes_the_non_blocking_profile(network, peers):
    env = discovery.dds_env(7, network, peers)
    path = env['FASTDDS_DEFAULT_PROFILES_FILE']
    assert os.environ['FASTDDS_DEFAULT_PROFILES_FILE'] == path and path.endswith('config/fastdds_hosts.xml')
    root = ET.parse(path).getroot()
    udp = [t for t in root.iterfind('.//d:transport_descriptor', NS) if t.findtext('d:type', namespaces=NS) == 'UDPv4']
    assert [t.findtext('d:non_blocking_send', namespaces=NS) for t in udp] == ['true']
    participant = root.find('.//d:participant', NS)
    assert participant.get('is_default_profile') == 'true'
    used = [t.text for t in participant.iterfind('.//d:userTransports/d:transport_id', NS)]
    kinds = {t.findtext('d:transport_id', namespaces=NS): t.findtext('d:type', namespaces=NS)
             for t in root.iterfind('.//d:transport_descriptor', NS)}
    assert sorted(kinds[u] for u in used) == ['SHM', 'UDPv4']          # shared memory kept on one host
    assert participant.findtext('.//d:useBuiltinTransports', namespaces=NS) == 'false'
    assert discovery.discovery_line(env).endswith(f'Fast DDS profile {path}')


def test_one_host_sets_no_profile_and_a_users_profile_is_kept(monkeypatch):
    env = discovery.dds_env(7, False, '')
    assert 'FASTDDS_DEFAULT_PROFILES_FILE' not in env and discovery.discovery_line(env) == 'LOCALHOST'
    monkeypatch.setenv('FASTDDS_DEFAULT_PROFILES_FILE', '/lab/udp_only.xml')
    env = discovery.dds_env(7, False, '10.0.0.2')
    assert env['FASTDDS_DEFAULT_PROFILES_FILE'] == '/lab/udp_only.xml'
