"""What the mock drives say in their status "<node>: drives" (hil_sim.mock_hardware.node): the
level and message of the moment, and the figures every status and refusal carries (frame
counters, refusals by layer, watchdog, the peak second difference of the drives' own stop, the
setpoints' ages at receipt).

Apart from the node's frame cycle because it only reads what the cycle counted: plain functions
of the node, called on its steady status timer and whenever it tells a problem. ``SetpointAges``
is the one piece of state only the status uses.
"""
from __future__ import annotations

from hil_core.supervision.link_latency import AgeHistogram
from hil_nodes.framework.base import ERROR, OK, WARN


def hardware_name(robot) -> str:
    """What the statuses are about: the simulated hardware (``robot`` None before configure)."""
    return f'{robot.hardware.name} ({robot.plant_name} plant, hil_sim)' if robot else 'mock hardware (hil_sim)'


class SetpointAges:
    """The setpoints' age at receipt (docs/lab.md "Two or three hosts": the link's latency)."""

    def __init__(self):
        self.histogram = AgeHistogram()
        self._figures = (0, None, None)        # (count, p50, p99) last computed

    def add(self, age_ns: int) -> None:
        self.histogram.add(age_ns)

    def values(self, clock: str) -> dict:
        """The status figures, ages on ``clock`` ('sim' or 'wall')."""
        ages = self.histogram
        if ages.count != self._figures[0]:     # (a pass over the bins: only when new ages came)
            self._figures = (ages.count, *ages.percentiles(50.0, 99.0))
        count, p50, p99 = self._figures
        return dict(setpoint_age_clock=clock, setpoint_ages=count,
                    setpoint_age_p50_ms='' if p50 is None else round(p50, 3),
                    setpoint_age_p99_ms='' if p99 is None else round(p99, 3))


def counters(node) -> dict:
    """The figures every status of the drives carries. Setpoint ages for stamped commands only:
    a forward command has no stamp."""
    wd, p = node._watchdog, node.p
    ages = node._ages.values('sim' if node.sim_clock else 'wall') if node.robot.spec.trajectory else {}
    return dict(frames=node.frames, late_commands=node.late_commands,
                rejected_commands=node.rejected_commands, refused_by_controller=node.refused['controller'],
                refused_by_guard=node.refused['guard'], last_refusal=node.last_refusal,
                stale_commands=node.stale_commands, realtime_overruns=node.overruns,
                own_pauses=node._pacing.own_pauses, longest_own_pause_s=round(node._pacing.longest_own_pause, 3),
                sim_time=node._rel(node.t_ns) + p.start_time, plant=node.robot.plant_name,
                controller=node.robot.spec.name, braking=wd.braking, watchdog_trips=wd.core.trips,
                watchdog_reason=wd.core.reason, stop_peak_d2p=node._stop.peak,
                disable_commands=p.disable_commands, **ages)


def tell_refusal(node, verdict, stamp_ns: int) -> None:
    """A refused command, told as an error status and in the log."""
    layer = verdict.layer
    who = f'the {node.robot.spec.name} rules' if layer == 'controller' else 'the guard'
    text = f'rejected command: refused by {who} ({verdict.reason}): {verdict.detail}'
    # each reason told once per second, twice the default interval: every report logs an error too
    if node.report_problem(f'refusal {layer} {verdict.reason}', ERROR, text, interval=1.0,
                           figures=lambda: counters(node)):
        node.get_logger().error(f'{text} (stamp {stamp_ns * 1e-9:.6f} s)')


def tell_stale(node, frame_ns: int) -> None:
    """A valid lockstep command ignored: its frame (``frame_ns``) is past or already has one."""
    node.status(WARN, f'ignored a stale or duplicate command for {frame_ns * 1e-9:.6f} s '
                      f'(frame is at {node.t_ns * 1e-9:.6f} s)', **counters(node))


def tell_braking(node, reason: str) -> None:
    """The watchdog tripped: the drives brake to rest."""
    node.status(ERROR, f'watchdog: braking to rest: {reason}', **counters(node))


def summary(node) -> tuple[int, str]:
    """(level, message) of the periodic status: the worst of braked, controller deactivated,
    late commands since the last status, then the waiting or running state."""
    inactive = getattr(node.controller, 'deactivated_by', '')
    if node._watchdog.braking:
        return ERROR, f'watchdog: braked to rest: {node._watchdog.core.reason}'
    if inactive:
        return ERROR, f'{node.robot.spec.name} deactivated: {inactive}'
    if node._late_since_status:
        return WARN, f'{node._late_since_status} late command(s): {node.controller.late_action}'
    if node.p.lockstep and not node.started:
        return OK, 'waiting for the first command (sim time held at t_0)'
    return OK, 'running' if node.active else 'inactive'
