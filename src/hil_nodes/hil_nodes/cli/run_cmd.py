"""`hil run <system>`: bring up a system's node graph, drive it through a run, shut it down.

The supervisor does the driving (autostart: configure + activate every managed node, request
START before the first frame, STOP at `--duration` of sim time, frame-aligned); this command
starts the processes, watches /hil/mode and /clock, prints progress, shuts everything down
(no orphans) and prints a `key: value` summary. A node process that ends early is reported to
the supervisor (/hil/process_exit), which makes the FAULT naming the node; if the supervisor
itself died, the run is a FAULT with that reason (cli/run_exits.py). `--hmi` starts the
operator's web HMI first, a process of its own, and prints its address (`hmi: http://HOST:PORT`)
before anything else; it is no node of the run: its end is said and the run goes on. Exit code
0 for a clean run; 1 if the system went to FAULT, real time was not held or there were safety events (a late
command: the drives had to act on their own, something stalled); 2 if it could not run at all.
"""
from __future__ import annotations

import dataclasses
import os
import pathlib
import sys
import tempfile
import time

import yaml

from hil_core.supervision.modes import HilMode
from hil_nodes.cli import calibration
from hil_nodes.cli.processes import ProcessGroup, clean_dead_shm
from hil_nodes.cli.run_client import RunClient
from hil_nodes.cli.run_exits import ExitWatch, wait_until_at_rest
from hil_nodes.cli.run_meter import RunMeter, rt_applied
from hil_nodes.cli.run_summary import drives_name, fault_reason, hear_the_fault_status, link_latency, run_summary
from hil_nodes.runtime.process_exit import describe_exit
from hil_nodes import topics
from hil_nodes.bringup.plan import (HMI, VIEW_THROTTLE, bringup_plan, hmi_commands, namespaced_files, process_commands,
                                   write_overrides)
from hil_nodes.bringup.system import BringupError, apply_scenario, load_scenario, load_system
from hil_nodes.bringup.parts import PartsError, split_of, supervisor_part
from hil_nodes.cli.discovery import discovery_line, dds_env
from hil_nodes.cli.part_clock import FINISH_S as CLOCK_FINISH_S, PartClock, check_clocks
from hil_nodes.cli.part_run import run_part

# wall s, after the shutdown answered, for the supervisor's last status and every managed node's
# deactivation status; a node the shutdown skipped (stalled, dead) sends none and costs all of it
FINAL_STATUS_WAIT = 1.0


def add_parser(sub) -> None:
    p = sub.add_parser('run', help='run a system (hexafloat, space-iiwa, ...) on the mock hardware')
    p.add_argument('system', help='system name (config/systems/<name>.yaml) or a YAML path')
    p.add_argument('--duration', type=float, default=None,
                   help="sim seconds before STOP (default: the scenario's duration, else 10)")
    clock = p.add_mutually_exclusive_group()
    clock.add_argument('--lockstep', dest='lockstep', action='store_true', default=True,
                       help='advance sim time frame by frame with the controller (default; deterministic)')
    clock.add_argument('--realtime', dest='lockstep', action='store_false', help='advance sim time with the wall clock')
    p.add_argument('--time-scale', type=float, default=None,
                   help='sim seconds per wall second (lockstep default: as fast as possible; realtime default 1)')
    p.add_argument('--record', metavar='DIR', help='record a rosbag2 (mcap) under DIR')
    p.add_argument('--isolated', action='store_true', help='one process per node instead of one process')
    p.add_argument('--own-process', metavar='NODE', action='append', default=[],
                   help='this node in a process of its own, the others in one container (repeatable; '
                        'to stop, kill or profile one node at the cost of two processes, not one per node)')
    p.add_argument('--seed', type=int, default=0, help='seed of every random source (faults, loads, scripts)')
    p.add_argument('--scenario', help='config/scenarios/<system>/<NAME>.yaml: per-node parameter values of an experiment')
    p.add_argument('--domain-id', type=int, default=None, help='ROS_DOMAIN_ID (default: $ROS_DOMAIN_ID or 0)')
    p.add_argument('--namespace', default='', metavar='NS',
                   help="push the whole graph under this namespace, e.g. /rig_a: every topic, service and the "
                        "clock move with it, so two rigs can share a DDS domain (default: the root)")
    p.add_argument('--network', action='store_true', help='let DDS discovery leave this machine (lab use)')
    # hosts (docs/lab.md "Two or three hosts"): one part of the graph per host, same domain id
    p.add_argument('--peers', metavar='ADDR,...', default='', help='discover the other hosts by unicast at these '
                   'addresses (ROS_STATIC_PEERS; for networks without multicast)')
    p.add_argument('--part', default='', help="start only this part of the system's split (hil plan shows them); "
                   'the part holding the supervisor takes --scenario, --duration and --record')
    p.add_argument('--split', default='', help="which split of the system file's parts (default: its first)")
    p.add_argument('--part-timeout', type=float, default=None, metavar='S',
                   help="wall s to wait for the other parts: the supervisor's for their nodes (default its "
                        "nodes_timeout, 120), a part without it for the supervisor's heartbeat (default 120)")
    p.add_argument('--stall-timeout', type=float, default=30.0, help='wall seconds without sim progress before giving up')
    p.add_argument('--quiet', action='store_true', help='no progress lines')
    p.add_argument('--rt', action='store_true',
                   help='ask for SCHED_FIFO priority, CPU affinity and mlockall (applied where permitted; '
                        'the summary says what was)')
    p.add_argument('--rt-priority', type=int, default=80, help='SCHED_FIFO priority with --rt (1-99)')
    p.add_argument('--rt-cpus', default='', help="CPU list for the node processes with --rt, e.g. '1' (default: all)")
    p.add_argument('--hmi', action='store_true', help="also start the operator's web HMI (docs/hmi.md), a process of "
                   'its own; its address is the first line printed')
    p.add_argument('--hmi-port', type=int, default=8080, help='TCP port of the HMI page (0: any free one)')
    p.add_argument('--hmi-host', default='127.0.0.1', help='address the HMI page is served on (default 127.0.0.1; '
                   'any other needs --hmi-token)')
    p.add_argument('--hmi-token', default='', help='control token the HMI page asks for before a control is sent')
    p.set_defaults(func=run)


def effective_parameters(specs, overrides: pathlib.Path) -> dict:
    """{node: {param: value}} as the nodes received them: parameter files, then the run's values
    (keys by node name: a key's namespace, '/rig_a/planner', is the run's)."""
    out: dict = {}
    for path in [p for s in specs for p in s.params] + [overrides]:
        data = yaml.safe_load(pathlib.Path(path).read_text()) or {}
        for node, body in data.items():
            values = (body or {}).get('ros__parameters', {})
            targets = [s.name for s in specs] if node in ('/**', '**') else [node.rstrip('/').rsplit('/', 1)[-1]]
            for name in targets:
                out.setdefault(name, {}).update(values)
    return out


def plan_for(args):
    """(system, plan) of `hil run`'s arguments: the same plan as `ros2 launch hil_nodes
    hil.launch.py` (recorder first: it records from t_0). Fills ``args.duration`` in (the
    scenario's, else 10 s). BringupError when it cannot be made."""
    raw = load_system(args.system)
    scenario = load_scenario(raw, args.scenario) if args.scenario else None
    system = apply_scenario(raw, scenario)
    if args.duration is None and not _apart(args, raw):
        args.duration = scenario.duration if scenario is not None and scenario.duration else 10.0
    plan = bringup_plan(raw, scenario, split=args.split, part=args.part, peers=args.peers,
                        nodes_timeout=args.part_timeout, mode='mock', lockstep=args.lockstep, record=args.record,
                        rt=args.rt, time_scale=args.time_scale, duration=args.duration, seed=args.seed,
                        rt_priority=args.rt_priority, rt_cpus=args.rt_cpus,
                        # one process: FIFO; one per node: round robin (FIFO peers never preempt)
                        rt_policy='rr' if args.isolated else 'fifo', hmi=args.hmi, hmi_port=args.hmi_port,
                        hmi_host=args.hmi_host, hmi_token=args.hmi_token, namespace=args.namespace)
    return system, plan


def _apart(args, desc) -> bool:
    """Whether ``args`` start a part without the supervisor."""
    try:
        return bool(args.part) and supervisor_part(split_of(desc, args.split)[1]) != args.part
    except PartsError as exc:
        raise BringupError(str(exc)) from None


def run(args) -> int:
    try:
        system, plan = plan_for(args)
    except BringupError as exc:
        print(f'hil run: {exc}', file=sys.stderr)
        return 2
    domain = args.domain_id if args.domain_id is not None else int(os.environ.get('ROS_DOMAIN_ID', '0'))
    env = dds_env(domain, args.network, args.peers)
    run_dir = pathlib.Path(tempfile.mkdtemp(prefix=f'hil_{system.name}_'))
    try:    # under a namespace, the parameter files keyed by node name: rewritten with it
        plan = namespaced_files(plan, run_dir / 'params')
    except (OSError, ValueError) as exc:
        print(f'hil run: {exc}', file=sys.stderr)
        return 2
    bag_path, specs = plan.bag_path, plan.hil_nodes
    overrides = write_overrides(plan, run_dir / 'run_params.yaml')
    try:
        commands = _process_layout(plan, overrides, args)
    except BringupError as exc:
        print(f'hil run: {exc}', file=sys.stderr)
        return 2
    # real time across hosts: the other parts' clocks first, before anything starts (docs/realtime.md)
    refused = check_clocks(plan, system.name, args, env, domain)
    if refused is not None:
        return refused
    if plan.part and 'supervisor' not in {s.name for s in specs}:     # another host drives the run
        return run_part(args, system, plan, commands, env, domain, run_dir, overrides)
    if plan.hmi is not None:
        from hil_nodes.hmi.address import port_problem
        problem = port_problem(args.hmi_host, args.hmi_port)
        if problem:
            print(f'hil run: --hmi-port {args.hmi_port}: {problem}: give another --hmi-port, or 0 for any free one',
                  file=sys.stderr)
            return 2
    group = ProcessGroup(run_dir / 'logs', env)
    client = meter = clock = speed = speed_after = None
    wall0 = time.monotonic()
    outcome, run_fault, hmi_url, hmi_exit = 'error', '', '', {}
    try:  # from the first process on: whatever happens, every process is stopped below
        if plan.hmi is not None:
            hmi_url = _start_hmi(group, plan, overrides)
            if not hmi_url and group.procs[HMI].poll() is not None:   # said once, in _start_hmi
                hmi_exit[HMI] = group.procs[HMI].returncode
        # the machine's speed, with the real-time figures and verdict it explains: measured while
        # the graph's processes import (a core of their own at that time), read at the end
        speed = calibration.start() if not args.lockstep else None
        for name, cmd, extra_env in commands:   # one process per node (--isolated) or one container
            group.start(name, cmd, extra_env)   # --rt: its HIL_RT_* requests (hil_nodes.runtime.rt_setup)
        # the client only now: its DDS participant starts threads, and a fork of a process with
        # threads may hang in the child's preexec_fn (ProcessGroup.start: a hil run once hung
        # for good that way when the client came first). A client that matches the graph late
        # gets no CPU figure (RunMeter says so) rather than a wrong one. And only once the node
        # processes have their DDS participants: made before them, the client was now and then
        # never discovered (hil_nodes.runtime.participant_ready says when)
        group.wait_participants()
        client = RunClient(domain, plan.namespace)
        if plan.part:      # the other hosts' clocks: offset and round trip (docs/lab.md)
            clock = PartClock(client.node, plan.part, [p for p in plan.parts if p != plan.part])
        meter = RunMeter({name: proc.pid for name, proc in group.procs.items()}, apart=(HMI, VIEW_THROTTLE.name))
        exits = ExitWatch(client.node, commands)     # the graph's processes: the HMI is none of them
        outcome, run_fault = _follow(client, group, args, meter, exits, _frame_period(specs, overrides), hmi_exit)
        if outcome == 'fault':   # the stop runs to its end before anything is deactivated
            wait_until_at_rest(client, args.lockstep)
        # the machine's speed again, while the graph stops (the run's figures are taken): one
        # reading at the start can vouch for a speed the run did not get (cli.calibration)
        speed_after = calibration.start() if speed is not None else None
        # a dead supervisor has no status to wait for and no shutdown service to call: the
        # processes are stopped below either way
        alive = ['supervisor'] if exits.supervisor_alive else []
        # the drives' last status carries the frame counters, whichever host they run on
        client.wait_fresh_diagnostics([s.name for s in specs + list(plan.others) if s.clock_owner] + alive)
        if clock is not None:     # the other parts answer until the shutdown below: let the exchange end
            clock.wait_done(client.spin_once, CLOCK_FINISH_S)
        if exits.supervisor_alive:
            statuses_before = client.diag_counts.get('supervisor', 0)
            ok, message = client.call_trigger(topics.HIL_SHUTDOWN, timeout=30.0)
            if not ok:
                print(f'hil run: shutdown: {message}', file=sys.stderr)
            _wait_final_statuses(client, [n for n in plan.managed if n not in exits.dead_nodes], statuses_before)
        else:
            _drain(client)
    except KeyboardInterrupt:
        outcome = 'interrupted'
    finally:
        wall = time.monotonic() - wall0
        # read back what the processes really run with, while they still run
        rt_line = rt_applied({n: p.pid for n, p in group.procs.items()}) if args.rt else 'not requested'
        own_shm = group.shm_units()
        killed = group.stop()
        summary = run_summary(system, args, domain, client, wall, outcome, bag_path, run_dir, killed, run_fault)
        if plan.part:
            summary.update(part=plan.part, split=plan.split, discovery=discovery_line(env),
                           clocks=clock.summary() if clock is not None else 'not measured')
        if plan.hmi is not None:
            summary['hmi'] = _hmi_summary(hmi_url, hmi_exit)
        if client is not None and meter is not None:
            summary.update(meter.figures(client.sim_time))
            summary['rt'] = rt_line
        if client is not None:      # F/T sample -> the drives' receipt, across hosts (docs/lab.md)
            summary['link_latency'] = link_latency(client, plan, clock)
        if speed is not None:
            summary['calibration'] = calibration.summary_line(calibration.result(speed, timeout=5.0))
        if speed_after is not None:
            summary['calibration_after'] = calibration.summary_line(calibration.result(speed_after, timeout=5.0),
                                                                    'stopped')
        if client is not None:
            client.close()
        # our own participant mapped the ports of the nodes it talked to: a dead node's port is
        # no longer in use only now (the clean-up in group.stop() had to keep it)
        clean_dead_shm(group.log_dir / 'shm_cleanup.log', own=own_shm)
    if bag_path is not None and bag_path.exists():
        # The run manifest next to the bag: what `hil report` needs to recompute the ideal motion.
        # every part's nodes, with the plan's values: the report recomputes the ideal motion from the
        # model's, which may run on another host
        whole = dataclasses.replace(plan, processes=plan.processes + plan.others)
        parameters = effective_parameters(whole.hil_nodes, write_overrides(whole, run_dir / 'all_parts_params.yaml')
                                          if plan.others else overrides)
        # only a recorded run's end needs it: imported here, it does not delay every start by
        # about 1 CPU-s (numba, scipy.linalg through the report's designed values)
        from hil_nodes.cli.run_accounting import accounting_summary, run_accounting
        rows, _ = run_accounting(bag_path, parameters, client.diag if client is not None else {})
        summary.update(accounting_summary(rows))
        # the namespace: the bag's topics are under it (hil_nodes.recorder.bag.bag_namespace)
        manifest = {'summary': summary, 'scenario': args.scenario or '', 'namespace': plan.namespace,
                    'parameters': parameters}
        if rows is not None:
            manifest['accounting'] = [r.as_dict() for r in rows]
        (bag_path / 'hil_run.yaml').write_text(yaml.safe_dump(manifest, sort_keys=False))
    for key, value in summary.items():
        print(f'{key}: {value}')
    if outcome in ('error', 'interrupted'):
        return 2
    if outcome == 'fault' or int(summary['faults'] or 0) > 0:
        return 1
    if str(summary.get('realtime_held', '')).startswith('NO'):
        print(f"hil run: real time was not held: {summary['realtime_held'][4:]}", file=sys.stderr)
        return 1
    if summary.get('safety_events', 'none') != 'none':   # a stalled run is never clean
        print(f"hil run: not a clean run: {summary['safety_events']}", file=sys.stderr)
        return 1
    return 0


def _process_layout(plan, overrides, args) -> list[tuple[str, list[str], dict[str, str]]]:
    """(name, command, extra environment) per process: one per node (--isolated), one container,
    or the --own-process nodes alone and the others in one container (in bring-up plan order)."""
    own = set(args.own_process)
    if args.isolated or not own:
        return process_commands(plan, overrides, args.isolated)
    names = {s.name for s in plan.hil_nodes}
    if own - names:
        raise BringupError(f'--own-process: no node {sorted(own - names)} in {plan.system} '
                           f'(nodes: {", ".join(sorted(names))})')
    rest = [s for s in plan.processes if s.kind != 'hil' or s.name not in own]
    container = process_commands(dataclasses.replace(plan, processes=tuple(rest)), overrides, False)
    out = []
    for spec in plan.hil_nodes:
        if spec.name in own:
            out += process_commands(dataclasses.replace(plan, processes=(spec,)), overrides, True)
        elif container:
            out += container
            container = []
    return out


def _start_hmi(group: ProcessGroup, plan, overrides, timeout: float = 60.0) -> str:
    """Start the HMI and wait for the address it prints on its first line (docs/hmi.md); print
    it as this command's own first line. A HMI that does not come up is said and the run goes on
    without it: it is no part of the graph."""
    [(name, cmd, extra_env)] = hmi_commands(plan, overrides)
    group.start(name, cmd, extra_env)
    address, why = group.wait_for_line(name, r'^hmi: (http://\S+)\s*$', timeout)
    if address:
        print(f'hmi: {address}', flush=True)
    else:
        print(f'hil run: the HMI did not start ({why}); the run goes on without it (logs in {group.log_dir})',
              file=sys.stderr, flush=True)
    return address


def _hmi_summary(address: str, hmi_exit: dict[str, int]) -> str:
    if not address:
        return 'not started'
    if HMI in hmi_exit:
        return f'{address} (its process {describe_exit(hmi_exit[HMI])} during the run)'
    return address


def _follow(client: RunClient, group: ProcessGroup, args, meter: RunMeter, exits: ExitWatch,
            frame_period: float, hmi_exit: dict[str, int]) -> tuple[str, str]:
    """Spin until the run ends: back to IDLE after it started, FAULT (a process that ended is
    reported to the supervisor, which makes it one), or stall. (outcome, the launcher's own fault
    reason: only when the supervisor itself died). The HMI's end is no node's death: it is said
    once (and kept in ``hmi_exit``), never reported to the supervisor."""
    started = False
    next_progress = time.monotonic() + 2.0
    while True:
        client.spin_once(0.05)
        mode = client.mode
        # any mode past IDLE in the history: a client that matched late gets the latched modes in
        # one burst and may see only the final IDLE in this loop (the run then never ended)
        if any(m != HilMode.IDLE for _, m in client.modes):
            started = True
        meter.observe(started and mode not in (HilMode.IDLE, HilMode.FAULT), _progress(client, frame_period))
        if mode == HilMode.FAULT:
            meter.stop()
            hear_the_fault_status(client)
            print(f'hil run: FAULT: {fault_reason(client)}', file=sys.stderr)
            return 'fault', ''
        if started and mode == HilMode.IDLE:
            meter.stop()
            return 'done', ''
        now = time.monotonic()
        dead = group.dead()
        if HMI in dead and HMI not in hmi_exit:
            hmi_exit[HMI] = dead[HMI]
            print(f'hil run: the HMI {describe_exit(dead[HMI])}; the run goes on without it (logs in '
                  f'{group.log_dir})', file=sys.stderr, flush=True)
        exits.poll({name: code for name, code in dead.items() if name != HMI}, now, group.log_dir)
        verdict = exits.verdict(now)
        if verdict is not None:
            meter.stop()
            print(f'hil run: {verdict[0].upper()}: {verdict[1]}', file=sys.stderr)
            return verdict if verdict[0] == 'fault' else (verdict[0], '')
        if exits.first_exit is None and now - client.last_progress_wall > args.stall_timeout:
            print(f'hil run: no simulation progress for {args.stall_timeout:.0f} s (mode {mode or "unknown"}); '
                  f'logs in {group.log_dir}', file=sys.stderr)
            return 'error', ''
        if not args.quiet and now >= next_progress:
            next_progress = now + 2.0
            print(f'[hil] sim {client.sim_time:7.2f} / {args.duration:.2f} s  mode {mode or "starting"}',
                  file=sys.stderr, flush=True)


def _frame_period(specs, overrides) -> float:
    for name, values in effective_parameters(specs, overrides).items():
        if name.startswith('mock_') and 'frame_period' in values:
            return float(values['frame_period'])
    return 0.0025


def _progress(client: RunClient, frame_period: float) -> tuple[int, float] | None:
    """(fresh statuses so far, sim s) of the run's progress: the mock hardware's integrated frames,
    or the supervisor's run time where no mock runs (hardware mode)."""
    hw = drives_name(client)
    frames = client.progress(hw, 'frames') if hw else None
    if frames is not None:
        return frames[0], int(frames[1] or 0) * frame_period
    run_time = client.progress('supervisor', 'run_time')
    return None if run_time is None else (run_time[0], float(run_time[1] or 0.0))


def _wait_final_statuses(client: RunClient, managed: list[str], supervisor_statuses: int,
                         timeout: float = FINAL_STATUS_WAIT) -> bool:
    """After the shutdown answered: spin until the statuses the summary reads are in, the
    supervisor's (it sends one as it answers) and each managed node's deactivation (its
    counters came before it), or ``timeout`` wall s (a node the shutdown skipped, stalled or
    dead, sends none). True when all came."""
    return client.spin_until(lambda: client.diag_counts.get('supervisor', 0) > supervisor_statuses
                             and client.deactivated.issuperset(managed), timeout)


def _drain(client: RunClient, seconds: float = 0.5) -> None:
    """The supervisor is dead: nobody deactivates anything; let the last diagnostics in."""
    client.spin_until(lambda: False, seconds)
