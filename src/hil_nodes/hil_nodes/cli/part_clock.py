"""Clock offset and round trip between the parts of a run (docs/lab.md, "Two or three hosts").

Every part's launcher (`hil run --part`) answers pings on ``/hil/clock_ping`` and, from its
start, pings the others every ``PERIOD`` wall s until it has ``SAMPLES`` answers from each other
part of the split; the summary prints, per part, the median offset of that host's clock and the
median round trip (hil_core.supervision.clock_offset: NTP's four timestamps). The clocks are the
hosts' system clocks (``CLOCK_REALTIME``, what chrony or PTP keep in step): a lab sees how far
apart they are and what a message costs between them before it trusts a stamp from the other host.

Messages: sensor_msgs/TimeReference, the standard message for a time reference. A ping: header
stamp = ``t0`` (sent), header frame_id = the pinging part, source = ``part:seq``. A pong: header
stamp = ``t2`` (answer sent), frame_id = the answering part, time_ref = ``t1`` (ping received),
source = the ping's. The launcher's node spins these with the rest of its loop (no thread).

Real time across hosts (no ``/clock``: every node on its host's clock) is refused when the
clocks are further apart than ``hil_core.supervision.clock_bound`` allows (docs/realtime.md,
"Clocks across hosts"): before a part starts any process, ``check_clocks`` measures the other
parts' clocks in a child process (``python -m hil_nodes.cli.part_clock``: a DDS participant in
the launcher itself would start threads before its forks, see `hil run`) and refuses the run
with the parts, the offsets and the bound. Nothing has started then, so nothing moves.

``HIL_TEST_CLOCK_SHIFT_S`` (tests only) adds that many seconds to every clock reading this
part's ping/pong exchanges (the measurement only, never a node's clock): the other parts see
this host's clock shifted by it, so a test can exercise the refusal on one machine.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

from builtin_interfaces.msg import Time
from sensor_msgs.msg import TimeReference

from hil_core.supervision.clock_bound import LEAD_FRAMES, offset_bound, refusal
from hil_core.supervision.clock_offset import estimate
from hil_nodes import qos, topics
from hil_nodes.cli.discovery import discovery_line

SAMPLES = 9          # answers per other part: the median of an odd count is one sample
PERIOD = 0.1         # wall s between two pings
PENDING_MAX = 200    # pings kept waiting for their answers
SHIFT_ENV = 'HIL_TEST_CLOCK_SHIFT_S'    # tests only (module docstring)
QUIET = 0.5          # wall s without a ping of another part: it has its samples (the check lingers)
LINGER_MAX = 5.0     # wall s the check answers pings at most once it has its own samples
FRAME_DEFAULT = 0.0025
FINISH_S = 3.0       # wall s a launcher waits for its missing samples before the shutdown


def test_shift_ns() -> int:
    """The test-only shift of this part's ping/pong clock readings, ns (0 without it)."""
    raw = os.environ.get(SHIFT_ENV, '').strip()
    try:
        return int(round(float(raw) * 1e9)) if raw else 0
    except ValueError:
        raise ValueError(f'{SHIFT_ENV}={raw!r}: seconds as a number') from None


def _time(ns: int) -> Time:
    return Time(sec=ns // 1_000_000_000, nanosec=ns % 1_000_000_000)


def _ns(t: Time) -> int:
    return t.sec * 1_000_000_000 + t.nanosec


class PartClock:
    def __init__(self, node, part: str, others: list[str], samples: int = SAMPLES, period: float = PERIOD):
        self.part, self.others, self.wanted = part, list(others), samples
        self.samples: dict[str, list[tuple[int, int, int, int]]] = {p: [] for p in self.others}
        self._pending: dict[int, int] = {}       # seq -> t0
        self._seq = 0
        self._node = node
        self._shift = test_shift_ns()
        self._created = time.monotonic()
        self.last_ping: dict[str, float] = {}    # other part -> monotonic time of its last ping
        self._ping = node.create_publisher(TimeReference, topics.HIL_CLOCK_PING, qos.command(50))
        self._pong = node.create_publisher(TimeReference, topics.HIL_CLOCK_PONG, qos.command(50))
        node.create_subscription(TimeReference, topics.HIL_CLOCK_PING, self._on_ping, qos.command(50))
        node.create_subscription(TimeReference, topics.HIL_CLOCK_PONG, self._on_pong, qos.command(50))
        self._timer = node.create_timer(period, self._tick) if self.others else None

    @property
    def done(self) -> bool:
        return all(len(s) >= self.wanted for s in self.samples.values())

    def wait_done(self, spin, limit: float) -> None:
        """Spin (``spin(timeout)``) until this part has its samples and the others stopped pinging
        (they have theirs: a part pings until it has), or ``limit`` wall s passed. The launcher
        that shuts the run down calls it first: a client that discovered the others late (a
        second or two across hosts, now and then) still gets its samples, and so do theirs. A
        part never heard from in a run at least ``limit`` long is not waited for: it never
        started (a bring-up that failed waiting for it) or cannot be reached."""
        end = time.monotonic() + limit
        absent = set()
        if time.monotonic() - self._created >= limit:
            absent = {p for p, got in self.samples.items() if not got and p not in self.last_ping}
        while time.monotonic() < end and not (self._done_but(absent) and self.others_quiet()):
            spin(0.05)

    def _done_but(self, absent: set[str]) -> bool:
        return all(len(s) >= self.wanted for p, s in self.samples.items() if p not in absent)

    def others_quiet(self) -> bool:
        """No other part pinged for ``QUIET`` wall s (each has its samples, or is gone)."""
        now = time.monotonic()
        return all(now - t > QUIET for t in self.last_ping.values())

    def _now(self) -> int:
        return time.time_ns() + self._shift

    def _tick(self) -> None:
        if self.done:
            self._node.destroy_timer(self._timer)
            self._timer = None
            return
        self._seq += 1
        if len(self._pending) >= PENDING_MAX:
            self._pending.pop(next(iter(self._pending)))
        t0 = self._now()
        self._pending[self._seq] = t0
        msg = TimeReference(source=f'{self.part}:{self._seq}')
        msg.header.frame_id = self.part
        msg.header.stamp = _time(t0)
        self._ping.publish(msg)

    def _on_ping(self, msg: TimeReference) -> None:
        t1 = self._now()
        if msg.header.frame_id == self.part:
            return
        self.last_ping[msg.header.frame_id] = time.monotonic()
        reply = TimeReference(source=msg.source, time_ref=_time(t1))
        reply.header.frame_id = self.part
        reply.header.stamp = _time(self._now())      # t2: as late as possible before it leaves
        self._pong.publish(reply)

    def _on_pong(self, msg: TimeReference) -> None:
        t3 = self._now()
        part, _, seq = msg.source.rpartition(':')
        if part != self.part or msg.header.frame_id not in self.samples or not seq.isdigit():
            return
        t0 = self._pending.get(int(seq))
        got = self.samples[msg.header.frame_id]
        if t0 is None or len(got) >= self.wanted:
            return
        t1, t2 = _ns(msg.time_ref), _ns(msg.header.stamp)
        if t3 >= t0 and t2 >= t1:        # a system clock stepped in between: not a sample
            got.append((t0, t1, t2, t3))

    def estimates(self) -> dict:
        """{other part: OffsetEstimate, or None when no answer came}."""
        return {part: (estimate(got) if got else None) for part, got in self.samples.items()}

    def summary(self) -> str:
        """'hardware: offset +0.004 ms, rtt 0.412 ms (median of 9, ...); model: ...' (the other
        host's clock minus this one's)."""
        out = []
        for part, got in self.samples.items():
            try:
                out.append(f'{part}: {estimate(got).describe()}')
            except ValueError:
                out.append(f'{part}: not measured (no answer)')
        return '; '.join(out) or 'no other part'


# --- the clock check before real time across hosts ---------------------------------------------

def wall_clock_across_hosts(plan) -> bool:
    """Whether the run is one part of several on the wall clock (real time at pace 1, or the
    lab's hardware): stamps from other hosts are then judged on this host's clock."""
    return bool(plan.part) and len(plan.parts) > 1 and not plan.clock_owner


def frame_and_lead(plan) -> tuple[float, int]:
    """(frame period s, the time base's lead in frames) of the plan, whichever part runs them."""
    from hil_nodes.bringup.plan import final_parameters
    frame, lead = None, LEAD_FRAMES
    for spec in list(plan.hil_nodes) + list(plan.others):
        values = final_parameters(spec)
        if spec.clock_owner and 'frame_period' in values:
            frame = float(values['frame_period'])
        if 'lead_frames' in values:
            lead = int(values['lead_frames'])
        if frame is None and 'move_time' in values:     # no drives of ours (the lab's): the time base's frame
            frame = float(values['move_time'])
    return frame or FRAME_DEFAULT, lead


def check_clocks(plan, system_name: str, args, env: dict, domain: int) -> int | None:
    """Before a part of a run on the wall clock starts anything: measure the other parts' clocks
    (a child process) and refuse the run when they are too far off. None: go on; else the exit
    code (2: it could not run), its summary printed."""
    if not wall_clock_across_hosts(plan):
        return None
    frame, lead = frame_and_lead(plan)
    bound = offset_bound(frame, lead)
    others = [p for p in plan.parts if p != plan.part]
    wait = args.part_timeout if args.part_timeout is not None else 120.0
    if not args.quiet:
        print(f'[hil] part {plan.part}: measuring the clocks of part(s) {", ".join(others)} (real time across '
              f'hosts tolerates {bound * 1e3:.3f} ms)', file=sys.stderr, flush=True)
    cmd = [sys.executable, '-m', 'hil_nodes.cli.part_clock', '--domain-id', str(domain), '--namespace',
           plan.namespace, '--part', plan.part, '--others', ','.join(others), '--timeout', f'{wait:g}']
    try:
        done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=wait + LINGER_MAX + 60.0)
        samples = json.loads(done.stdout.strip().splitlines()[-1]) if done.returncode == 0 else None
    except (subprocess.TimeoutExpired, ValueError, IndexError):
        samples, done = None, None
    except KeyboardInterrupt:       # (the child is stopped by subprocess.run)
        samples, done = None, subprocess.CompletedProcess(cmd, 130, '', 'interrupted')
    if samples is None:
        reason = f'the clock check did not answer: {(done.stderr if done else "timed out")[-500:].strip()}'
        estimates = {}
    else:
        estimates = {p: (estimate([tuple(s) for s in got]) if got else None) for p, got in samples.items()}
        reason = refusal(plan.part, estimates, bound, frame)
    clocks = '; '.join(f'{p}: {e.describe() if e else "not measured (no answer)"}' for p, e in estimates.items())
    if not reason:
        if not args.quiet:
            print(f'[hil] part {plan.part}: clocks within {bound * 1e3:.3f} ms: {clocks}', file=sys.stderr, flush=True)
        return None
    print(f'hil run: {reason}', file=sys.stderr, flush=True)
    summary = {'system': system_name, 'part': plan.part, 'split': plan.split, 'outcome': 'refused',
               'reason': reason, 'clocks': clocks or 'not measured', 'clock_bound_ms': f'{bound * 1e3:.3f}',
               'domain_id': domain, 'discovery': discovery_line(env)}
    for key, value in summary.items():
        print(f'{key}: {value}')
    return 2


def _measure(domain: int, namespace: str, part: str, others: list[str], timeout: float) -> dict:
    """The check's child: ping the other parts until each answered SAMPLES times (or ``timeout``),
    then go on answering their pings until they have stopped pinging (they have theirs too):
    {other part: [[t0, t1, t2, t3], ...]}."""
    import rclpy
    from rclpy.context import Context
    from rclpy.executors import SingleThreadedExecutor
    context = Context()
    rclpy.init(context=context, domain_id=domain, args=[])
    try:
        node = rclpy.create_node('hil_clock_check', namespace=namespace or None, context=context)
        executor = SingleThreadedExecutor(context=context)
        executor.add_node(node)
        clock = PartClock(node, part, others)
        start = time.monotonic()
        while not clock.done and time.monotonic() - start < timeout:
            executor.spin_once(timeout_sec=0.05)
        finished = time.monotonic()
        while time.monotonic() - finished < LINGER_MAX:
            last = max([finished, *clock.last_ping.values()])
            if time.monotonic() - last > QUIET:
                break
            executor.spin_once(timeout_sec=0.05)
        return {p: [list(s) for s in got] for p, got in clock.samples.items()}
    finally:
        rclpy.shutdown(context=context)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="hil run's clock check between the parts of a run (one JSON line)")
    ap.add_argument('--domain-id', type=int, required=True)
    ap.add_argument('--namespace', default='')
    ap.add_argument('--part', required=True)
    ap.add_argument('--others', required=True, help='the other parts, comma-separated')
    ap.add_argument('--timeout', type=float, default=120.0, help='wall s to wait for their answers')
    a = ap.parse_args(argv)
    print(json.dumps(_measure(a.domain_id, a.namespace, a.part, [p for p in a.others.split(',') if p], a.timeout)),
          flush=True)
    return 0


if __name__ == '__main__':
    sys.exit(main())
