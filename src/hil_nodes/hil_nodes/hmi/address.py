"""Whether the HMI's page can be served on an address, asked before anything of a run starts
(`hil run --hmi`): viser itself would quietly take the next free port (hmi.app refuses that)."""
from __future__ import annotations

import errno
import socket


def port_problem(host: str, port: int) -> str:
    """'' when ``host:port`` can be bound now (port 0: any free one, always), else why not. The
    socket is set up as viser's server sets its own (SO_REUSEADDR, as asyncio does on Linux), so
    a port left in TIME_WAIT by the last run is not taken for busy."""
    if not port:
        return ''
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        return f'cannot serve on {host}: {exc.strerror}'
    family, kind, proto, _, address = infos[0]
    try:
        with socket.socket(family, kind, proto) as sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind(address)
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            return f'port {port} on {host} is in use'
        return f'cannot serve on {host}:{port}: {exc.strerror}'
    return ''
