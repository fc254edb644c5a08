"""The `key: value` summary `hil run` prints at a run's end (docs/hil_run.md, "The summary"), from
what its client heard: the drives' counters, the supervisor's modes, faults, stalls and real-time
health, the link latency across hosts."""
from __future__ import annotations

import time

from hil_core.supervision.link_latency import summary_line
from hil_core.supervision.modes import HilMode
from hil_nodes import topics
from hil_nodes.cli.run_client import RunClient


def realtime_held(client: RunClient) -> str:
    held = client.value('supervisor', 'realtime_held')
    if not held:
        return 'unknown (no health report)'
    if held == 'True':
        if client.value('supervisor', 'health_judged') == 'False':
            # the run ended (or stopped for another reason) within its first health window
            return 'not judged (the run ended or stopped within its first health window, health_min_span)'
        warnings = client.value('supervisor', 'health_warnings', '0')
        return 'yes' if warnings in ('0', '') else f'yes, with {warnings} warning(s)'
    return f"NO: {client.value('supervisor', 'realtime_reason') or 'see the supervisor status'}"


def drives_name(client: RunClient) -> str:
    return 'mock_hexapod' if 'mock_hexapod' in client.diag else next(
        (n for n in client.diag if n.startswith('mock_')), '')


def _count(value: str) -> int:
    try:
        return int(value or 0)
    except ValueError:
        return 0


def safety_events(client: RunClient, hw: str, lockstep: bool) -> str:
    """What made the run unsafe short of a FAULT, i.e. a stall somewhere: a node that came back
    after a heartbeat gap (the supervisor's stalls) or, in lockstep, a late command (the drives had
    to act on their own, hold or brake, because a frame's command did not come at all; in real
    time late frames are the supervisor's real-time health, judged by their share)."""
    events = []
    if _count(client.value('supervisor', 'stalls', '0')):
        events.append(client.value('supervisor', 'stall_reason'))
    late = _count(client.value(hw, 'late_commands', '0')) if lockstep else 0
    if late:
        events.append(f'{late} late command(s): the drives acted without a command')
    return '; '.join(events) or 'none'


def link_latency(client: RunClient, plan, clock) -> str:
    drives = drives_name(client)
    where = next((p for p, names in plan.parts.items() if drives in names), '')
    apart = bool(plan.part) and bool(where) and where != plan.part
    return summary_line(client.diag.get(drives), apart, clock.samples.get(where) if apart and clock else None)


def hear_the_fault_status(client: RunClient, timeout: float = 2.0) -> None:
    """The supervisor publishes its mode, then its status with the reason; the two topics reach
    the client in either order, so a FAULT heard first would print the status before it (under
    load, "bringing up: waiting for ..." instead of why the bring-up failed). Wait for the status
    that says FAULT, at most ``timeout`` s (a supervisor that died says nothing more)."""
    deadline = time.monotonic() + timeout
    while client.value('supervisor', 'mode') != HilMode.FAULT.value and time.monotonic() < deadline:
        client.spin_once(0.05)


def fault_reason(client: RunClient) -> str:
    return client.value('supervisor', 'fault_reason') or client.diag_messages.get('supervisor', 'see logs')


def run_summary(system, args, domain, client, wall, outcome, bag_path, run_dir, killed, run_fault='') -> dict:
    if client is None:   # interrupted before the system could be watched
        return {'system': system.name, 'scenario': args.scenario or '', 'outcome': outcome, 'faults': '0',
                'bag': str(bag_path) if bag_path else '', 'logs': str(run_dir / 'logs'),
                'killed_processes': ','.join(killed)}
    hw = drives_name(client)
    extra = {key.split('/')[1]: client.value(key.split('/')[0], key.split('/')[1]) for key in system.summary}
    return {
        'system': system.name,
        'scenario': args.scenario or '',
        'outcome': outcome,
        'layout': 'isolated' if args.isolated else 'one-process',
        'clock': 'lockstep' if args.lockstep else 'realtime',
        'seed': args.seed,
        'domain_id': domain,
        **({'namespace': topics.namespace(args.namespace)} if topics.namespace(args.namespace) else {}),
        'sim_time_s': f'{client.sim_time:.4f}',
        'wall_time_s': f'{wall:.2f}',
        'sim_per_wall': f'{client.sim_time / wall:.3f}' if wall > 0 else '0',
        'frames': client.value(hw, 'frames', '0'),
        'late_commands': client.value(hw, 'late_commands', '0'),
        'rejected_commands': client.value(hw, 'rejected_commands', '0'),
        'faults': '1' if run_fault else client.value('supervisor', 'faults', '1' if outcome == 'fault' else '0'),
        'fault_reason': run_fault or (fault_reason(client) if outcome == 'fault' else ''),
        'modes': ' -> '.join(m for _, m in client.modes),
        'safety_events': safety_events(client, hw, args.lockstep),
        # the supervisor's real-time health judgement over the run (never "clean" when not held)
        'realtime_held': realtime_held(client),
        **extra,
        'bag': str(bag_path) if bag_path else '',
        'logs': str(run_dir / 'logs'),
        'killed_processes': ','.join(killed),
    }
