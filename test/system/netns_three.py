"""Several emulated hosts on this machine (docs/lab.md, "Two or three hosts"; the two-host pair is
netns_hosts.py): one network namespace per host, each with a veth link to a bridge in a
namespace of its own (the lab's switch), each process started with a private /dev/shm (as in
netns_hosts.py), so Fast DDS can neither use shared memory nor loopback between the hosts: every
message crosses two veth links and the bridge by UDP. Nothing is made in this machine's own
network namespace; the namespaces (and with them the links and the bridge) are always deleted,
with any process left in them. ``link(host, up)`` takes a host's link down or up (its end at the
bridge); ``rx_packets``/``tx_packets`` read its counters.

Needs root and iproute2 (as netns_hosts.py: ``unavailable()`` says why not).
"""
from __future__ import annotations

import json
import subprocess
import uuid

from netns_hosts import EmulatedHosts, unavailable  # noqa: F401  (unavailable: the same requirements)

SUBNET = '10.218.{}.{}'


def _ip(*args: str) -> str:
    return subprocess.run(['ip', *args], check=True, capture_output=True, text=True).stdout


class Hosts(EmulatedHosts):
    """Hosts ``names`` (e.g. 'abc') with addresses ``addr[name]`` on one /24, joined by a bridge."""

    def __init__(self, names: str = 'abc'):
        tag = uuid.uuid4().hex[:6]
        net = int(tag[:2], 16)
        self.names = tuple(names)
        self.ns = {h: f'hil{tag}{h}' for h in self.names}
        self.switch = f'hil{tag}sw'
        self.extra_namespaces = (self.switch,)
        self.addr = {h: SUBNET.format(net, i + 1) for i, h in enumerate(self.names)}
        self.dev = {h: f'hv{tag}{h}' for h in self.names}          # the host's end
        self.port = {h: f'hp{tag}{h}' for h in self.names}         # its end at the bridge
        self.procs: list[subprocess.Popen] = []
        try:
            _ip('netns', 'add', self.switch)
            _ip('-n', self.switch, 'link', 'add', 'br0', 'type', 'bridge')
            _ip('-n', self.switch, 'link', 'set', 'br0', 'up')
            for h in self.names:
                ns = self.ns[h]
                _ip('netns', 'add', ns)
                _ip('-n', ns, 'link', 'add', self.dev[h], 'type', 'veth', 'peer', 'name', self.port[h],
                    'netns', self.switch)
                _ip('-n', ns, 'addr', 'add', f'{self.addr[h]}/24', 'dev', self.dev[h])
                _ip('-n', ns, 'link', 'set', self.dev[h], 'up')
                _ip('-n', ns, 'link', 'set', 'lo', 'up')
                _ip('-n', self.switch, 'link', 'set', self.port[h], 'master', 'br0')
                _ip('-n', self.switch, 'link', 'set', self.port[h], 'up')
        except BaseException:
            self.close()
            raise

    def peers(self, host: str) -> str:
        """The other hosts' addresses, for ``--peers``."""
        return ','.join(self.addr[h] for h in self.names if h != host)

    def link(self, host: str, up: bool) -> None:
        """Take ``host``'s link down (or up again) at the bridge: its end there, so the host's
        own interface loses its carrier too."""
        _ip('-n', self.switch, 'link', 'set', self.port[host], 'up' if up else 'down')

    def _stats(self, host: str) -> dict:
        [info] = json.loads(_ip('-n', self.ns[host], '-s', '-j', 'link', 'show', 'dev', self.dev[host]))
        return info['stats64']

    def rx_packets(self, host: str) -> int:
        return int(self._stats(host)['rx']['packets'])

    def tx_packets(self, host: str) -> int:
        return int(self._stats(host)['tx']['packets'])
