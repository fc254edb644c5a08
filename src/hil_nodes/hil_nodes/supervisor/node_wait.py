"""The supervisor's wait for the nodes before a bring-up (docs/supervisor.md, "Parts").

With the graph split over hosts (docs/lab.md) the other parts may start later than the
supervisor's, by hand on another PC. Configuring in bring-up order would then wait for the first
missing node alone and fail naming that one after ``service_timeout``; this wait names every
node of another part (``node_parts``) whose lifecycle services are not there yet, with its
part, says so every few seconds, and gives up after ``nodes_timeout`` wall seconds
with the same words, so the operator knows which host to start.
"""
from __future__ import annotations

import time
from typing import Callable

from rclpy.clock import Clock, ClockType

SAY_EVERY = 5.0     # wall s between two "waiting for" log lines
POLL = 0.05         # wall s between two looks at the services


def waiting_text(missing: list[str], node_parts: dict[str, str]) -> str:
    """'mock_hexapod (part hardware), planner' : the missing nodes, each with its part when
    another part starts it."""
    return ', '.join(f'{n} (part {node_parts[n]})' if n in node_parts else n for n in missing)


def parse_node_parts(entries: list[str]) -> dict[str, str]:
    return dict(e.split(':', 1) for e in entries)


class NodeWait:
    """Calls ``on_ready()`` once every node of ``missing()`` is there, or ``on_timeout(text)``
    after ``timeout`` wall s with the text naming those still missing."""

    def __init__(self, node, missing: Callable[[], list[str]], node_parts: dict[str, str], timeout: float,
                 on_ready: Callable[[], None], on_timeout: Callable[[str], None]):
        self._node, self._missing, self._parts = node, missing, node_parts
        self._timeout, self._on_ready, self._on_timeout = timeout, on_ready, on_timeout
        self._t0 = time.monotonic()
        self._said = self._t0
        self.text = ''          # whom it waits for now ('' once done)
        self.done = False
        self._timer = node.create_timer(POLL, self._tick, clock=Clock(clock_type=ClockType.STEADY_TIME))
        self._tick()

    def cancel(self) -> None:
        if not self.done:
            self.done = True
            self.text = ''
            self._node.destroy_timer(self._timer)

    def _tick(self) -> None:
        if self.done:
            return
        missing = self._missing()
        now = time.monotonic()
        if not missing:
            self.cancel()
            self._on_ready()
            return
        self.text = waiting_text(missing, self._parts)
        if now - self._t0 > self._timeout:
            text = f'waited {self._timeout:g} s for the lifecycle services of {self.text}'
            self.cancel()
            self._on_timeout(text)
        elif now - self._said >= SAY_EVERY:
            self._said = now
            self._node.get_logger().info(f'waiting for {self.text} ({now - self._t0:.0f} s)')
