"""`hil run <system> --part NAME` for a part without the supervisor (docs/lab.md, "Two or three
hosts"): the drives' host, or the model's.

It starts the part's processes, waits for the supervisor's heartbeat (another host: the part
holding it starts its nodes and drives the run), follows the run and ends:

- when the supervisor's shutdown reached it: every managed node of this part went back to
  unconfigured (or finalized) after it had been active, or the supervisor said ``lifecycle:
  down``. Exit 0 when the run it saw ended in IDLE without a FAULT and the drives here never
  acted without a command, 1 otherwise;
- when, once a node of this part is active, the supervisor has been gone for its liveness limit
  (the drives' ``supervisor_timeout``, the same limit at which their watchdog brakes on its
  own): it waits for the drives to be at rest (their watchdog's stop), then stops its
  processes. Exit 1. Before that (the supervisor's host configuring, compiling its kernels) a
  silence is judged at ``--part-timeout``;
- when the supervisor never came within ``--part-timeout`` (default 120 wall s). Exit 2.

A node process of this part that ends is reported to the supervisor (/hil/process_exit), whose
FAULT and shutdown then end this part as above. It prints its own ``key: value`` summary.
"""
from __future__ import annotations

import sys
import time

from lifecycle_msgs.msg import TransitionEvent
from std_msgs.msg import Header

from hil_core.supervision.link_latency import summary_line
from hil_core.supervision.liveness import normalize_name
from hil_core.supervision.modes import HilMode
from hil_nodes import topics
from hil_nodes.bringup.parts import supervisor_part
from hil_nodes.cli.discovery import discovery_line
from hil_nodes.cli.part_clock import PartClock
from hil_nodes.cli.processes import ProcessGroup, clean_dead_shm
from hil_nodes.cli.run_client import RunClient
from hil_nodes.cli.run_exits import ExitWatch, wait_until_at_rest
from hil_nodes.runtime.process_exit import describe_exit

SUPERVISOR = 'supervisor'
WAIT_DEFAULT = 120.0      # wall s for the supervisor's first heartbeat without --part-timeout
LIVENESS_DEFAULT = 3.0    # wall s: the drives' supervisor_timeout default (their watchdog)
DOWN_STATES = ('unconfigured', 'finalized')


def liveness_limit(plan) -> float:
    """Wall s without the supervisor's heartbeat after which this part ends: the longest
    ``supervisor_timeout`` of its drives (their watchdog brakes at it), else the default."""
    from hil_nodes.bringup.plan import final_parameters
    limits = [float(v) for s in plan.hil_nodes for k, v in final_parameters(s).items()
              if k == 'supervisor_timeout' and float(v) > 0]
    return max(limits) if limits else LIVENESS_DEFAULT


class PartWatch:
    """What a part without the supervisor hears of the run: the supervisor's heartbeat and its
    own managed nodes' lifecycle states."""

    def __init__(self, client: RunClient, managed: list[str]):
        self.client = client
        self.last_beat: float | None = None        # wall time of the supervisor's last heartbeat
        self.states: dict[str, list[str]] = {n: [] for n in managed}
        client.node.create_subscription(Header, topics.HIL_HEARTBEAT, self._on_beat, 50)
        for name in managed:
            client.node.create_subscription(TransitionEvent, topics.lifecycle_service(name, 'transition_event'),
                                            lambda msg, n=name: self.states[n].append(msg.goal_state.label), 10)

    def _on_beat(self, msg: Header) -> None:
        if normalize_name(msg.frame_id) == SUPERVISOR:
            self.last_beat = time.monotonic()

    def active(self) -> bool:
        """Some node of this part was activated: from then on the supervisor's silence is judged
        at the liveness limit (before, it may be busy configuring its own nodes: compiling
        kernels, importing; there is nothing to brake yet). The supervisor leaves IDLE only
        after it activated every node: its latched mode tells so even when this part's
        transition events went out before its subscription matched (they are volatile)."""
        return any('active' in seen for seen in self.states.values()) or \
            any(m != HilMode.IDLE for _, m in self.client.modes)

    def shut_down(self) -> bool:
        """The supervisor's shutdown reached this part: it said so, or every managed node here
        went down after it had been active ('deactivating' tells that too, should the volatile
        'active' event have gone out before this part's subscription matched)."""
        if self.client.value(SUPERVISOR, 'lifecycle') == 'down':
            return True
        return bool(self.states) and all(('active' in seen or 'deactivating' in seen) and seen[-1] in DOWN_STATES
                                         for seen in self.states.values())


def run_clean(modes: list[str]) -> bool:
    """A run that started, ended in IDLE and never went to FAULT."""
    return (HilMode.FAULT not in modes and bool(modes) and modes[-1] == HilMode.IDLE
            and any(m != HilMode.IDLE for m in modes))


def run_part(args, system, plan, commands, env, domain, run_dir, overrides) -> int:
    home = supervisor_part(plan.parts)
    wait = args.part_timeout if args.part_timeout is not None else WAIT_DEFAULT
    limit = liveness_limit(plan)
    group = ProcessGroup(run_dir / 'logs', env)
    client = clock = None
    wall0 = time.monotonic()
    outcome, reason, supervisor = 'error', '', 'never heard'
    try:
        for name, cmd, extra_env in commands:
            group.start(name, cmd, extra_env)
        group.wait_participants()                        # (hil_nodes.runtime.participant_ready)
        client = RunClient(domain, plan.namespace)       # after the forks (see `hil run`)
        exits = ExitWatch(client.node, commands)
        watch = PartWatch(client, [s.name for s in plan.hil_nodes if s.managed])
        clock = PartClock(client.node, plan.part, [p for p in plan.parts if p != plan.part])
        if not args.quiet:
            print(f'[hil] part {plan.part}: waiting for the supervisor (part {home})', file=sys.stderr, flush=True)
        next_progress = time.monotonic() + 2.0
        while True:
            client.spin_once(0.05)
            now = time.monotonic()
            exits.poll(group.dead(), now, group.log_dir)
            if watch.last_beat is not None and supervisor == 'never heard':
                supervisor = 'heard'
            if watch.shut_down():
                supervisor = 'shut this part down'
                # the supervisor's "lifecycle: down" can come before the drives' last status,
                # which holds the run's frame and late-command counters
                client.wait_deactivated([s.name for s in plan.hil_nodes if s.clock_owner])
                modes = [m for _, m in client.modes]
                outcome = 'done' if run_clean(modes) and not exits.deaths else 'fault'
                if outcome == 'fault':
                    reason = '; '.join(exits.deaths) or client.value(SUPERVISOR, 'fault_reason') or \
                        f'the run did not end in IDLE (modes {" -> ".join(modes) or "none heard"})'
                break
            if watch.last_beat is None:
                if now - wall0 > wait:
                    reason = (f'no heartbeat of the supervisor (part {home}) within {wait:g} s: is that part '
                              'started, on the same domain id, with discovery reaching this host?')
                    print(f'hil run: {reason}', file=sys.stderr, flush=True)
                    break
            elif now - watch.last_beat > (limit if watch.active() else wait):
                supervisor = f'gone (no heartbeat for {limit:g} s)'
                print(f'hil run: the supervisor (part {home}) is gone: no heartbeat for {limit:g} s; waiting '
                      'for the drives to brake on their watchdog', file=sys.stderr, flush=True)
                wait_until_at_rest(client, plan.lockstep)
                outcome = 'fault'
                reason = f'the supervisor (part {home}) was gone for {limit:g} s before the run ended'
                break
            if group.dead() and len(group.dead()) == len(group.procs):
                outcome, reason = 'fault', '; '.join(exits.deaths) or 'every process of this part ended'
                break
            if not args.quiet and now >= next_progress:
                next_progress = now + 2.0
                print(f'[hil] part {plan.part}: mode {client.mode or "unknown"}, supervisor {supervisor}',
                      file=sys.stderr, flush=True)
    except KeyboardInterrupt:
        outcome = 'interrupted'
    finally:
        own_shm = group.shm_units()
        exited = {n: describe_exit(c) for n, c in group.dead().items()}    # before the stop: on their own
        killed = group.stop()
        summary = _summary(system, plan, client, outcome, reason, supervisor, domain, env, wall0, run_dir, killed,
                           exited)
        summary['clocks'] = clock.summary() if clock is not None else 'not measured'
        drives = next((s.name for s in plan.hil_nodes if s.clock_owner), '')
        if drives:     # F/T sample -> the drives' receipt: the setpoints come from the supervisor's part
            summary['link_latency'] = summary_line(client.diag.get(drives) if client is not None else None, True,
                                                   clock.samples.get(home) if clock is not None else None,
                                                   drives_here=True)
        if client is not None:
            client.close()
        clean_dead_shm(group.log_dir / 'shm_cleanup.log', own=own_shm)
    for key, value in summary.items():
        print(f'{key}: {value}')
    if outcome != 'done':
        return 1 if outcome == 'fault' else 2
    # lockstep: every command has its frame, so one late is not a clean run; in real time the
    # late share is the supervisor's real-time health (its FAULT), as on one host (`hil run`)
    if plan.lockstep and summary['late_commands'] not in ('', '0', 'not heard'):
        print(f"hil run: not a clean run: {summary['late_commands']} late command(s): the drives acted without "
              'a command', file=sys.stderr)
        return 1
    return 0


def _summary(system, plan, client, outcome, reason, supervisor, domain, env, wall0, run_dir, killed, exited) -> dict:
    local = [s.name for s in plan.hil_nodes]
    hw = next((n for n in local if n.startswith('mock_')), '')
    # a counter of this part's drives never heard says so (not an empty field): their status is
    # local, so that is this host's discovery, not the link
    value = (lambda node, key, default='': client.value(node, key, default or 'not heard')) \
        if client is not None else (lambda node, key, default='': default)
    return {
        'system': system.name,
        'part': plan.part,
        'split': plan.split,
        'nodes': ','.join(local),
        'outcome': outcome,
        'reason': reason,
        'supervisor': supervisor,
        'modes': ' -> '.join(m for _, m in client.modes) if client is not None else '',
        'frames': value(hw, 'frames', '') if hw else '',
        'late_commands': value(hw, 'late_commands', '') if hw else '',
        'rejected_commands': value(hw, 'rejected_commands', '') if hw else '',
        # the drives' own stop: watchdog trips and the brake's peak second difference of positions
        'watchdog_trips': value(hw, 'watchdog_trips', '') if hw else '',
        'watchdog_reason': value(hw, 'watchdog_reason', '') if hw else '',
        'stop_peak_d2p': value(hw, 'stop_peak_d2p', '') if hw else '',
        'faults': value(SUPERVISOR, 'faults', ''),
        'domain_id': domain,
        'discovery': discovery_line(env),
        'wall_time_s': f'{time.monotonic() - wall0:.2f}',
        'logs': str(run_dir / 'logs'),
        'process_exits': ', '.join(f'{n} {d}' for n, d in exited.items()),
        'killed_processes': ','.join(killed),
    }
