"""The names a bring-up plan takes from its user, checked before anything starts: the graph's
namespace (as rcl checks one) and the static peers of discovery across hosts (as rcl reads
``ROS_STATIC_PEERS``)."""
from __future__ import annotations

import re

from hil_nodes import topics
from hil_nodes.bringup.system import BringupError

_TOKEN = re.compile(r'[A-Za-z_][A-Za-z0-9_]*')


def graph_namespace(namespace: str | None) -> str:
    """A namespace argument as the plan holds it ('' = the root, else '/a/b'), checked as rcl
    checks one (tokens of letters, digits and '_', not starting with a digit)."""
    ns = topics.namespace(namespace)
    bad = [t for t in ns.split('/')[1:] if not _TOKEN.fullmatch(t)]
    if bad or '~' in str(namespace or '') or '{' in str(namespace or ''):
        raise BringupError(f'namespace {namespace!r}: each part must be letters, digits and _, '
                           'not starting with a digit (e.g. /rig_a)')
    return ns


def static_peers(peers: str) -> str:
    """ROS_STATIC_PEERS (';'-separated, as rcl reads it) of a comma-separated address list."""
    out = [a.strip() for a in peers.replace(';', ',').split(',') if a.strip()]
    bad = [a for a in out if not re.fullmatch(r'[A-Za-z0-9.:\-\[\]/]+', a)]
    if not out or bad:
        raise BringupError(f'peers {peers!r}: comma-separated host names or addresses' + (f' ({bad})' if bad else ''))
    return ';'.join(out)
