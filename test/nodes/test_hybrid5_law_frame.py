"""hil_core.hybrid5.law_frame: the drives' quiet law steps in one compiled call, against the plain
loop of mock_hardware.link.ServoLink (its oracle), with the real controller node and mock drives
in this process (real-time frames of 25 steps, called by the test, no wall clock).

Each run goes IDLE -> HOMING -> SYNCHRONIZING -> RUNNING -> RETURNING_HOME -> IDLE -> HOMING ->
FAULT, the modes following the controller's events as the supervisor would, with a stall of the
drives (skipped frames) on the way. Required after every frame, bit for bit: the plant's state,
the controller's integrators, the motion's phase and last reference, the node's counters and
largest errors, the drives' command, applied effort and refusals, the events and the published
references. The compiled steps must have run most cycles, and the plain loop the rest: the
changes of phase and the brakes, and, in the variants, saturated outputs (the law's force_max
just above the hold), outputs the drives refuse (their limits narrowed) and a tracking fault.
"""
import numpy as np
import pytest

from hil_core.hybrid5 import kinematics as kin, law_frame
from hil_core.supervision.modes import HilMode
from hil_nodes import topics
from hil_nodes.hybrid_controller.node import HybridControllerNode
from hil_nodes.runtime import servo_link
from hil_sim.mock_hardware.system_mock import system_mock
from rig import start

RT = dict(lockstep=False, time_scale=1.0, frame_period=0.0025, substeps=25, watchdog=False)
# the supervisor's answer to each event of the controller
NEXT_MODE = {'homed': 'SYNCHRONIZING', 'synchronized': 'RUNNING', 'home_reached': 'IDLE'}
FRAMES = 520
REQUESTS = {2: 'HOMING', 130: 'RETURNING_HOME', 400: 'HOMING', 470: 'FAULT'}
STALL_AT = 60           # the drives skip 7 frames here (a stall of the process)


def _narrow_drive_limits(controller, force: float) -> None:
    """The drives' forward command controller refuses leg forces beyond ``force`` (N)."""
    lo, hi = (np.array(x, dtype=float) for x in controller.limits)
    lo[:3], hi[:3] = -force, force
    controller.set_limits(lo, hi)


def _run(ros, compiled: bool, law_params: dict, drive_force: float | None = None):
    ctl_node = start(ros, HybridControllerNode, lockstep=False, **law_params)
    ctl_node.trigger_configure()
    (p0, _, _), _ = ctl_node.path.sample_cycle(0)
    start_pose = np.asarray(p0, float) + [0.002, -0.001, 0.0015]       # a few mm off the path's start
    legs = list(kin.ik_scalar(*start_pose, ctl_node.prm.R))
    mock = ros.add_node(system_mock('hybrid5', dict(RT, initial_positions=[*legs, 0.01, 0.0]), context=ros.context))
    mock.trigger_configure()
    mock.trigger_activate()
    mock._link.compiled = compiled
    if drive_force is not None:
        _narrow_drive_limits(mock.controller, drive_force)
    events, refs = [], []
    node_event = ctl_node._event

    def event(t_ns, name, why):
        events.append((t_ns, name))
        node_event(t_ns, name, why)
        if name in NEXT_MODE:
            ctl_node.mode = NEXT_MODE[name]
    ctl_node._event = event
    node_publish = ctl_node.publish_reference
    ctl_node.publish_reference = lambda ref, stamp: (refs.append((_flat(ref), stamp.sec * 10**9 + stamp.nanosec)),
                                                     node_publish(ref, stamp))
    ctl_node.trigger_activate()
    ctl_node.mode = 'IDLE'
    quiet_cycles = [0]
    node_quiet = ctl_node.quiet_steps

    def counted_quiet(*args):
        done = node_quiet(*args)
        quiet_cycles[0] += 0 if done is None else done.steps
        return done
    ctl_node.quiet_steps = counted_quiet
    snaps = []
    t0 = mock_t0(mock)
    try:
        for f in range(FRAMES):
            if f in REQUESTS:
                ctl_node.mode = REQUESTS[f]
            if f == STALL_AT:
                mock.k += 7
            mock._step()
            snaps.append(_snapshot(ctl_node, mock))
    finally:
        ctl_node.trigger_deactivate()
        ros.executor.remove_node(ctl_node)
        ros.executor.remove_node(mock)
        ctl_node.destroy_node()
        mock.destroy_node()
    return snaps, events, refs, quiet_cycles[0], t0


def _flat(ref) -> np.ndarray:
    (l, ld, ldd), (th, w, e), p = ref
    return np.array([*l, *ld, *ldd, *th, *w, *e, *np.asarray(p, float)])


def _snapshot(node, mock) -> dict:
    inner, ctl = mock.plant.plant, node.ctl
    return {
        'plant': np.concatenate((inner.p, inner.v, inner.theta, inner.omega)),
        'integrators': [x.copy() for x in (ctl._il, ctl._fl, ctl._it, ctl._ft)],
        'phase': node.motion.phase, 'last_ref': _flat(node.motion.last),
        'counters': dict(node.counters), 'max_err': dict(node.max_err), 'faulted': node.faulted,
        'last_ns': node.last_ns - mock_t0(mock), 't0_ns': node.t0_ns - mock_t0(mock),
        'command': mock.controller.command.copy(), 'applied': np.array(mock.plant.applied), 'braking': mock.plant.braking,
        'refused': dict(mock.refused),
    }


def mock_t0(mock) -> int:
    """The drives' first frame time (their frames run on the wall clock's grid)."""
    return mock.t_ns - mock.k * mock.frame_ns


def _differing(a: dict, b: dict) -> list:
    out = []
    for key in a:
        x, y = a[key], b[key]
        if isinstance(x, np.ndarray):
            same = np.array_equal(x, y, equal_nan=True)
        elif isinstance(x, list):
            same = all(np.array_equal(u, v) for u, v in zip(x, y))
        else:
            same = x == y
        if not same:
            out.append((key, x, y))
    return out


def _compare(ros, law_params: dict, drive_force: float | None = None):
    plain = _run(ros, False, law_params, drive_force)
    fast = _run(ros, True, law_params, drive_force)
    assert plain[3] == 0 and fast[3] > 0
    for f, (a, b) in enumerate(zip(plain[0], fast[0])):
        assert not _differing(a, b), f'frame {f}: compiled and plain law frames differ: {_differing(a, b)}'
    assert [name for _, name in fast[1]] == [name for _, name in plain[1]]   # the same events...
    assert [t - fast[4] for t, _ in fast[1]] == [t - plain[4] for t, _ in plain[1]]   # ...at the same cycles
    assert len(fast[2]) == len(plain[2])
    for (ra, ta), (rb, tb) in zip(plain[2], fast[2]):
        assert ta - plain[4] == tb - fast[4] and np.array_equal(ra, rb)  # the same published references
    return fast, plain


@pytest.fixture(autouse=True)
def _no_law_left():
    yield
    assert servo_link.offered(topics.HYBRID_EFFORT_COMMANDS) is None


def test_the_compiled_law_frame_is_the_plain_loop_through_every_phase(ros):
    (snaps, events, _, quiet, _), _ = _compare(ros, {})
    names = [name for _, name in events]
    assert names == ['homed', 'synchronized', 'home_reached', 'homed', 'synchronized'], names
    cycles = snaps[-1]['counters']['cycles']
    assert snaps[-1]['counters']['skipped_cycles'] == 7 * 25
    assert snaps[-1]['phase'] is HilMode.FAULT
    # the compiled steps ran nearly everything but the brakes (RETURNING_HOME's and FAULT's)
    assert quiet > 0.75 * cycles, (quiet, cycles)
    assert 0 < snaps[-1]['max_err']['legs_m'] < 1e-3


def test_saturated_outputs_go_to_the_plain_loop(ros):
    """force_max just above what holding the platform takes: the law saturates in homing's
    accelerations, mid-frame; the steps before are compiled, the saturated ones plain."""
    (snaps, _, _, quiet, _), _ = _compare(ros, {'force_max': 480.0})
    saturated = snaps[-1]['counters']['saturated']
    assert saturated > 50 and quiet > 0.3 * snaps[-1]['counters']['cycles'], (saturated, quiet)


def test_outputs_the_drives_refuse_go_to_the_plain_loop(ros):
    (snaps, _, _, quiet, _), _ = _compare(ros, {'force_max': 1e6}, drive_force=480.0)
    refused = sum(snaps[-1]['refused'].values())
    assert refused > 50 and quiet > 0.3 * snaps[-1]['counters']['cycles'], (refused, quiet)


def test_a_tracking_fault_goes_to_the_plain_loop(ros):
    (snaps, events, _, quiet, _), _ = _compare(ros, {'max_tracking_error': 2e-6})
    assert ('fault' in [name for _, name in events]) and snaps[-1]['faulted'] and quiet > 0


def test_state_arrays_the_frozen_kernel_does_not_take_run_nothing():
    law_frame.warm_up()
    law = law_frame.LawArrays(0, law_frame.NEVER, 0, 0, np.zeros(18), None, 0.6, np.zeros(7), np.zeros(14),
                              np.zeros(8, np.int64), np.zeros(9), np.zeros(14), np.zeros(6, np.int64),
                              np.zeros(6, np.float32), np.ones(5), 1e-3)
    drive = law_frame.DriveArrays(np.zeros(15), np.zeros(3), np.zeros(3), np.zeros(2), np.zeros(2), 1e-4, 0.0, 0.0,
                                  np.arange(5), -np.ones(5), np.ones(5))
    assert law_frame.quiet_steps(25, law, drive).steps == 0
