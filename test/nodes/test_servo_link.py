"""hil_nodes.runtime.servo_link: hybrid5's law in the drives' loop (real time, one process).

The mock drives (config/systems/hybrid5.yaml, real-time frames of 25 steps) and the hybrid
controller live in this test's process, as in the one-process container; the test calls the
frames itself (no wall clock, no spinning). Asserted: the drives take the law offered on their
command topic and call it once per plant step with the encoder positions; the plant then follows
exactly the loop written with hil_core alone (Hybrid5Motion + HybridController + dynamics.Plant,
one step each, the seed's saturation); a law output beyond the drives' limits is refused and the
command before it stays; no output is the drives' own stop; the watchdog's brake stops asking;
lockstep and a withdrawn law run on messages.
"""
import numpy as np
import pytest

from hil_core.hybrid5 import dynamics as dyn, kinematics as kin
from hil_core.hybrid5.motion import Hybrid5Motion
from hil_core.hybrid5.tracking import HybridController
from hil_nodes import topics
from hil_nodes.runtime import servo_link
from hil_nodes.hybrid_controller.node import HybridControllerNode
from hil_sim.mock_hardware.system_mock import system_mock
from rig import build, start

RT = dict(lockstep=False, time_scale=1.0, frame_period=0.0025, substeps=25, watchdog=False)


def _mock(ros, **params):
    node = ros.add_node(system_mock('hybrid5', dict(RT, **params), context=ros.context))
    node.trigger_configure()
    node.trigger_activate()
    return node


def _frames(mock, n):
    for _ in range(n):
        mock._step()


class FakeLaw:
    def __init__(self, out):
        self.out, self.calls, self.frames, self.attached = out, [], [], 0

    def attach(self):
        self.attached += 1

    def detach(self):
        self.attached -= 1

    def cycle(self, t_ns, position):
        self.calls.append((t_ns, np.array(position)))
        return self.out(len(self.calls)) if callable(self.out) else self.out

    def frame_done(self, t_ns):
        self.frames.append(t_ns)


def test_the_drives_call_an_offered_law_at_every_plant_step(ros):
    mock = _mock(ros)
    hold = mock.plant._static_effort()
    law = FakeLaw(hold)
    servo_link.offer(topics.HYBRID_EFFORT_COMMANDS, law)
    try:
        t0 = mock.t_ns
        _frames(mock, 2)
        assert law.attached == 1
        assert [t for t, _ in law.calls] == [t0 + i * 100_000 for i in range(50)]        # 25 steps a frame
        assert law.frames == [t0 + 2_500_000, t0 + 5_000_000]
        np.testing.assert_array_equal(law.calls[-1][1], mock.plant.positions())  # before the last step...
        np.testing.assert_allclose(mock.plant.applied, hold)                        # ...its output applied
        servo_link.withdraw(topics.HYBRID_EFFORT_COMMANDS, law)                    # the controller goes
        _frames(mock, 1)
        assert law.attached == 0 and mock.plant.braking         # its last output is not held: the drives stop
        servo_link.offer(topics.HYBRID_EFFORT_COMMANDS, law)
        _frames(mock, 1)
        assert law.attached == 1
        mock.trigger_deactivate()
        assert law.attached == 0                                                    # let go
    finally:
        servo_link.withdraw(topics.HYBRID_EFFORT_COMMANDS, law)


def test_a_refused_output_keeps_the_command_before_and_no_output_is_the_drives_stop(ros):
    mock = _mock(ros, watchdog=True, supervisor_timeout=60.0)
    hold = mock.plant._static_effort()
    outputs = {1: hold, 2: np.array([1e7, 0, 0, 0, 0])}                 # the second beyond force_max
    law = FakeLaw(lambda n: outputs.get(n, hold if n < 25 else None))    # none from the 25th step on
    servo_link.offer(topics.HYBRID_EFFORT_COMMANDS, law)
    try:
        _frames(mock, 1)
        assert mock.refused['guard'] == 1 and 'command_limit' in mock.last_refusal
        assert mock.plant.braking                                          # the last step had no command
        law.out = lambda n: hold
        _frames(mock, 1)
        assert not mock.plant.braking and np.allclose(mock.plant.applied, hold)
        assert mock._watchdog_brake(mock._watchdog.trip('test: stop')) and mock._watchdog.braking
        asked = len(law.calls)
        _frames(mock, 2)
        assert len(law.calls) == asked                                     # braking: the law is not asked
    finally:
        servo_link.withdraw(topics.HYBRID_EFFORT_COMMANDS, law)


def test_lockstep_drives_and_a_withdrawn_law_run_on_messages(ros):
    law = FakeLaw(np.zeros(5))
    servo_link.offer(topics.HYBRID_EFFORT_COMMANDS, law)
    try:
        assert _mock(ros, lockstep=True, time_scale=0.0, frame_period=0.0001, substeps=1)._servo_law() is None
        mock = _mock(ros)
        assert mock._servo_law() is law
        servo_link.withdraw(topics.HYBRID_EFFORT_COMMANDS, law)
        assert mock._servo_law() is None and law.attached == 0
    finally:
        servo_link.withdraw(topics.HYBRID_EFFORT_COMMANDS, law)


def test_the_linked_loop_is_the_seed_loop_written_with_hil_core(ros):
    """The controller node's law in the drives (servo_link) against the same closed loop written
    directly: every plant state equal, over 0.1 s of homing from a displaced pose -- with 60
    frames skipped by the drives on the way (a stall of the process), which the law does not
    count as time: its reference goes on from where it was, as the frozen plant does."""
    displaced = [0.01, -0.005, 0.84]
    ctl_node = start(ros, HybridControllerNode, lockstep=False)
    ctl_node.trigger_configure()
    prm = ctl_node.prm
    legs = list(kin.ik_scalar(*displaced, prm.R))
    mock = _mock(ros, initial_positions=[*legs, 0.02, 0.0])
    ctl_node.trigger_activate()                     # offers its law (servo_link: true by default)
    ctl_node.mode = 'HOMING'                        # as the supervisor's /hil/frame would say
    try:
        # the same loop with hil_core alone, from the same state
        plant = dyn.Plant(prm, kin.forward(np.array(legs), prm.R), [0.02, 0.0], prm.Ts)
        p = ctl_node.p
        motion = Hybrid5Motion(prm, ctl_node.path, p.home, p.homing_feed, p.fault_deceleration, p.sync_time)
        ctl = HybridController(prm, ctl_node.path, np.float64)
        lim = np.array([p.force_max] * 3 + [p.torque_max] * 2)
        frames = 40
        _frames(mock, 10)
        mock.k += 60                 # the drives skipped 60 frames (a stall): their world stood still
        _frames(mock, frames - 10)
        assert ctl_node.linked and ctl_node.counters['cycles'] == frames * 25
        assert ctl_node.counters['skipped_cycles'] == 60 * 25
        for k in range(frames * 25):
            l, th = plant.measure()
            ref, _ = motion.cycle(k, 'HOMING', l, th)
            out = ctl.cycle(k, l, th, ref)
            u = np.clip(np.r_[out.F, out.tau], -lim, lim)
            plant.step(u[:3], u[3:])
        inner = mock.plant.plant
        np.testing.assert_allclose(inner.p, plant.p, rtol=0, atol=1e-12)
        np.testing.assert_allclose(inner.v, plant.v, rtol=0, atol=1e-10)
        np.testing.assert_allclose(inner.theta, plant.theta, rtol=0, atol=1e-12)
        assert np.linalg.norm(plant.v) > 1e-4                               # it moved: homing
    finally:
        ctl_node.trigger_deactivate()
        assert servo_link.offered(topics.HYBRID_EFFORT_COMMANDS) is None


def test_a_destroyed_controller_takes_its_law_along(ros):
    """Destroyed while active (a test, a crash in the container's shutdown): no stale law stays
    for the next drives of the process."""
    ctl_node = build(ros, HybridControllerNode, lockstep=False)
    ctl_node.trigger_configure()
    ctl_node.trigger_activate()
    assert servo_link.offered(topics.HYBRID_EFFORT_COMMANDS) is ctl_node._law
    ctl_node.destroy_node()
    assert servo_link.offered(topics.HYBRID_EFFORT_COMMANDS) is None
