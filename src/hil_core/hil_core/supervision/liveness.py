"""Bond-style liveness of the nodes a supervisor watches, in two clocks.

Every node sends a heartbeat on a wall timer *and* on its node clock. The watcher records,
per node, when it last received one in **both** of its own clocks (sim time and a steady wall
clock) and declares the node dead when either age passes its timeout:

* the **sim** age catches a death while simulated time runs faster than real time (0.5 s of
  sim time may be a few wall milliseconds at a high time scale);
* the **wall** age catches a death while simulated time stands still (lockstep waiting for a
  command that a dead node will never send).

Receipt times are used (not the sender's stamp) so that the two ages are measured in the
watcher's clocks only: no comparison across clocks of different processes.

A death known by other means (the process that hosted the node exited, the node was
finalized) is recorded with ``mark_dead``: no timeout to wait for.

Checking of a node starts once it has been seen, or, for nodes that must be alive (the managed
ones after bring-up), from the moment ``arm`` is called. A dead node stays dead until it sends
a heartbeat again. Pure logic: the caller passes the clock readings.

A watcher that was itself stalled (no check for more than half the wall timeout: a starved
CPU, a blocked executor) skips one check: heartbeats that arrived meanwhile may still wait in
its queue, and its own stall is no proof that a peer died. The next check, one period later,
sees those heartbeats; a node that really died is caught then.

A node that comes back after a wall gap longer than ``stall_wall`` (a stopped process, a blocked
executor: shorter than a death) **stalled**: ``peer_stalls`` keeps (node, gap) for the owner to
report as a safety event. Only the part of the gap after the watcher's own last stall counts (the
same rule: before, the gap may be the watcher's own, its heartbeats queued, unread): a peer is
stalled when it was silent for more than ``stall_wall`` while the watcher kept checking. A
watcher that did not check for more than ``stall_wall`` keeps that gap in ``own_stalls`` (a
stalled supervisor stalls the whole lockstep loop).

With the graph split over hosts (``parts``: node -> the part, i.e. the host, that starts it; the
watcher's own part's nodes are not in it) a silent node is named with its part and the question
an operator has to answer: a node on another host that falls silent is as often a lost link or
host as a dead process, and every node of that part falls silent at once.
"""
from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass
class Peer:
    name: str
    last_sim: float | None = None      # watcher's sim time at the last heartbeat (s)
    last_wall: float | None = None     # watcher's steady time at the last heartbeat (s)
    seen: bool = False
    required: bool = False             # checked from arm() on even if never seen
    dead_reason: str = ''
    beats: int = 0


def _finite(name: str, value: float) -> float:
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f'{name} must be finite, got {value}')
    return value


def normalize_name(name: str) -> str:
    """'/ns/node' and 'ns/node' name the same node (heartbeats carry the fully qualified name)."""
    return str(name).strip().strip('/')


class LivenessMonitor:
    """Heartbeat ages of a fixed set of nodes in sim and wall time (see the module docstring)."""

    # A node past its sim-time timeout is dead only if it has been silent that long in wall time
    # too (capped by the wall timeout): in lockstep sim time can run several times faster than
    # wall time (0.5 s of sim time in 0.1 s of wall time), and a node that the lockstep clock does
    # not wait for can fall behind it (the admittance while the planner homes). Such a node is
    # slow, not dead. With a fixed 0.25 s of wall time a second pytest worker on the two cores
    # starved an isolated lockstep run's admittance that long, and CI called it dead. In real
    # time both clocks agree and nothing changes; a death in fast lockstep is caught after
    # ``timeout_sim`` of wall time instead of 0.25 s, and a node the clock waits for stops the
    # sim clock when it dies, so the wall timeout catches it with no sim time passing.

    def __init__(self, names, timeout_sim: float, timeout_wall: float, stall_wall: float = 0.0,
                 parts: dict[str, str] | None = None):
        self.timeout_sim = _finite('timeout_sim', timeout_sim)
        self.timeout_wall = _finite('timeout_wall', timeout_wall)
        self.stall_wall = _finite('stall_wall', stall_wall)     # 0: stalls are not watched
        self.sim_death_min_wall = min(self.timeout_sim, self.timeout_wall)
        if self.timeout_sim <= 0 or self.timeout_wall <= 0 or self.stall_wall < 0:
            raise ValueError('liveness timeouts must be positive')
        self.peers: dict[str, Peer] = {}
        for name in names:
            key = normalize_name(name)
            if not key:
                raise ValueError('empty node name')
            if key in self.peers:
                raise ValueError(f'node {key} listed twice')
            self.peers[key] = Peer(key)
        self.parts = {normalize_name(n): p for n, p in (parts or {}).items()}
        self.armed = False
        self.unknown_beats = 0
        self.stalls = 0                    # checks skipped because the watcher itself stalled
        self.peer_stalls: list[tuple[str, float]] = []   # (node, wall gap) of nodes that stalled
        self.own_stalls: list[float] = []                # wall gaps between the watcher's own checks
        self._last_check_wall: float | None = None
        self._watcher_stalled_at: float | None = None    # end of the watcher's last own stall
        self._armed_at: float | None = None

    def beat(self, name: str, now_sim: float, now_wall: float) -> bool:
        """Record a heartbeat of ``name`` received now; False if the node is not watched."""
        peer = self.peers.get(normalize_name(name))
        if peer is None:
            self.unknown_beats += 1
            return False
        now_sim, now_wall = _finite('now_sim', now_sim), _finite('now_wall', now_wall)
        if peer.last_wall is not None and not peer.dead_reason and self._stalled(peer.last_wall, now_wall):
            self.peer_stalls.append((peer.name, now_wall - peer.last_wall))
        peer.last_sim = now_sim
        peer.last_wall = now_wall
        peer.seen = True
        peer.beats += 1
        peer.dead_reason = ''  # alive again (it may still need a new bring-up: the owner decides)
        return True

    def label(self, name: str) -> str:
        """'node planner', or 'node mock_hexapod (part hardware)' for a node of another part."""
        part = self.parts.get(name)
        return f'node {name} (part {part})' if part else f'node {name}'

    def _lost(self, name: str) -> str:
        """What a silence of ``name`` adds to its reason: the question for another host's node."""
        part = self.parts.get(name)
        return f': part {part} silent: link or host lost?' if part else ''

    def _watched_silence(self, since: float, now_wall: float) -> float:
        """How long a peer silent from ``since`` to now has been silent while the watcher was
        checking: from the later of ``since`` and the end of the watcher's own last stall.
        Before that end its heartbeats may be in the watcher's queue, unread; once the watcher
        has been back a while, a queued heartbeat would have been read."""
        end = self._watcher_stalled_at
        return now_wall - (since if end is None else max(since, end))

    def _stalled(self, since: float, now_wall: float) -> bool:
        """A peer silent from ``since`` to now stalled, if the watcher checked all along."""
        if not self.armed or self.stall_wall <= 0 or now_wall - since <= self.stall_wall:
            return False
        if self._last_check_wall is None or now_wall - self._last_check_wall > 0.5 * self.stall_wall:
            return False               # the watcher has not checked for a while: its own stall
        if self._armed_at is None or since < self._armed_at:
            return False               # silent during the bring-up (a transition blocks a node)
        return self._watched_silence(since, now_wall) > self.stall_wall

    def silent(self, now_wall: float) -> list[tuple[str, float]]:
        """Alive peers silent now for more than half the stall limit (wall s) while the watcher
        was checking: what a fault reported by someone else names (the drives' watchdog sees a
        missing command, not who stopped sending it). Empty while the watcher has not checked
        for that long itself; a peer silent since before the watcher's own last stall ended is
        named once the watcher has been back for that long."""
        limit = 0.5 * self.stall_wall
        now_wall = _finite('now_wall', now_wall)
        if limit <= 0 or not self.armed or self._last_check_wall is None or now_wall - self._last_check_wall > limit:
            return []
        return [(n, now_wall - p.last_wall) for n, p in self.peers.items()
                if p.last_wall is not None and not p.dead_reason and self._watched_silence(p.last_wall, now_wall) > limit]

    def silent_reasons(self, now_wall: float) -> list[str]:
        """``silent`` as the texts a fault names them with."""
        return [f'{self.label(n)} silent: no heartbeat for {age:.3f} s of wall time{self._lost(n)}'
                for n, age in self.silent(now_wall)]

    def stall_reasons(self) -> list[str]:
        return [f'{self.label(n)} stalled: no heartbeat for {gap:.3f} s of wall time '
                f'(stall limit {self.stall_wall:g} s)' for n, gap in self.peer_stalls]

    def arm(self, now_sim: float, now_wall: float, required=()) -> None:
        """Start checking. ``required`` nodes not seen yet get ``now`` as their last heartbeat,
        so they are declared dead if none arrives within the timeouts."""
        now_sim = _finite('now_sim', now_sim)
        now_wall = _finite('now_wall', now_wall)
        self.armed = True
        self._last_check_wall = self._armed_at = now_wall
        for name in required:
            peer = self.peers[normalize_name(name)]
            peer.required = True
            if peer.last_wall is None:
                peer.last_sim, peer.last_wall = now_sim, now_wall

    def ages(self, now_sim: float, now_wall: float) -> dict[str, tuple[float | None, float | None]]:
        """Per node (sim age, wall age) in seconds; None for a node never seen nor armed."""
        now_sim = _finite('now_sim', now_sim)
        now_wall = _finite('now_wall', now_wall)
        out = {}
        for name, peer in self.peers.items():
            if peer.last_wall is None:
                out[name] = (None, None)
                continue
            if now_sim < peer.last_sim:
                # Sim time went backwards (a restarted clock owner): restart the sim age
                # from here rather than reporting a negative age.
                peer.last_sim = now_sim
            out[name] = (now_sim - peer.last_sim, max(0.0, now_wall - peer.last_wall))
        return out

    def check(self, now_sim: float, now_wall: float) -> list[tuple[str, str]]:
        """Newly dead nodes as (name, reason); nothing before ``arm``."""
        now_sim = _finite('now_sim', now_sim)
        now_wall = _finite('now_wall', now_wall)
        if not self.armed:
            return []
        previous, self._last_check_wall = self._last_check_wall, now_wall
        if previous is not None and self.stall_wall > 0 and now_wall - previous > 0.5 * self.stall_wall:
            self._watcher_stalled_at = now_wall
            if now_wall - previous > self.stall_wall:
                self.own_stalls.append(now_wall - previous)
        if previous is not None and now_wall - previous > 0.5 * self.timeout_wall:
            self.stalls += 1
            return []
        newly = []
        for name, (age_sim, age_wall) in self.ages(now_sim, now_wall).items():
            peer = self.peers[name]
            if age_sim is None or peer.dead_reason:
                continue
            what = 'last heartbeat' if peer.seen else 'no heartbeat since bring-up'
            if age_sim > self.timeout_sim and age_wall > self.sim_death_min_wall:
                peer.dead_reason = (f'{self.label(name)} is dead: {what} {age_sim:.3f} s ago in sim time '
                                    f'(timeout {self.timeout_sim:g} s){self._lost(name)}')
            elif age_wall > self.timeout_wall:
                peer.dead_reason = (f'{self.label(name)} is dead: {what} {age_wall:.3f} s ago in wall time '
                                    f'(timeout {self.timeout_wall:g} s){self._lost(name)}')
            else:
                continue
            newly.append((name, peer.dead_reason))
        return newly

    def mark_dead(self, name: str, reason: str) -> bool:
        """Declare a watched node dead for a reason known otherwise (its process exited, it
        was finalized): True if it was alive until now, False if already dead or not watched.
        Like a heartbeat timeout, it stays dead until it beats again."""
        peer = self.peers.get(normalize_name(name))
        if peer is None or peer.dead_reason:
            return False
        peer.dead_reason = reason or f'node {peer.name} is dead'
        return True

    def dead(self) -> dict[str, str]:
        return {name: p.dead_reason for name, p in self.peers.items() if p.dead_reason}

    def blocking_reason(self) -> str:
        """Empty when every watched node is alive, else the dead nodes' reasons joined."""
        return '; '.join(self.dead().values())
