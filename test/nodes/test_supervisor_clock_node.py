"""Supervisor and the clock: one /hil/frame per /clock message after applying everything
received, START before the first frame, frame-aligned run_duration stop, timer frames in real
time, and a SIGKILLed managed node process -> FAULT within 1 s of sim time (the test drives
/clock itself, so sim time is deterministic); a process exit reported by the launcher ->
FAULT at once; a shutdown never waits on a hung or dead node for more than shutdown_timeout."""
import os
import signal
import time

from diagnostic_msgs.msg import DiagnosticArray
from rosgraph_msgs.msg import Clock
from std_msgs.msg import Header

from hil_nodes import qos, topics
from hil_nodes.runtime.process_exit import ProcessExitReporter
from supervisor_fixtures import CALM, DUMMY_PATH, dummies, publish_event, stamp, supervisor, trigger, wait_mode


def _first_frame(ros, clock_pub, frames, t_ns=0, timeout=20.0):
    """Publish /clock = t until the gate answers: repeats of one time are legitimate (the mock
    re-publishes t_0 until the first command) and absorb DDS discovery."""
    end = time.monotonic() + timeout
    while not frames:
        assert time.monotonic() < end, 'no /hil/frame for /clock'
        clock_pub.publish(Clock(clock=stamp(t_ns)))
        ros.spin_for(0.05)


def _step(ros, clock_pub, frames, t_ns):
    n = len(frames)
    clock_pub.publish(Clock(clock=stamp(t_ns)))
    ros.spin_until(lambda: len(frames) > n, 10.0, f'frame for /clock {t_ns} ns')
    assert len(frames) == n + 1, 'exactly one frame per /clock message'
    return frames[-1]


def _clocked_run(ros, run_duration):
    """A supervisor starting a run of ``run_duration`` by itself, frames gated by the test's /clock:
    returned once its first frame is in (and the test's event publisher matched)."""
    frames = ros.collect(Header, topics.HIL_FRAME, qos.stream(True))
    clock_pub = ros.node.create_publisher(Clock, topics.CLOCK, qos.stream(True))
    events = ros.node.create_publisher(DiagnosticArray, topics.HIL_EVENTS, qos.command(100))
    sup = supervisor(ros, lockstep=True, use_sim_time=True, autostart_run=True, run_duration=run_duration, **CALM)
    _first_frame(ros, clock_pub, frames)
    ros.wait_for_subscribers(topics.HIL_EVENTS)
    return sup, frames, clock_pub, events


def test_frame_gate_one_frame_per_clock_and_run_duration_is_frame_aligned(ros):
    sup, frames, clock_pub, events = _clocked_run(ros, 0.01)
    # START was applied before the first frame: a lockstep run starts deterministically at t_0.
    assert all(f.frame_id == 'HOMING' for f in frames)
    assert all((f.stamp.sec, f.stamp.nanosec) == (0, 0) for f in frames)
    publish_event(ros, events, 'homed')
    publish_event(ros, events, 'synchronized')
    wait_mode(ros, sup, 'RUNNING')
    period = 2_500_000
    expected = []
    for k in (1, 1, 2, 3, 4, 5):   # a repeated time gets its own frame too (late joiners)
        f = _step(ros, clock_pub, frames, k * period)
        expected.append((k * period, 'RUNNING' if k * period < 10_000_000 else 'RETURNING_HOME'))
        assert (f.stamp.sec * 10**9 + f.stamp.nanosec, f.frame_id) == expected[-1]
    assert sup.run_duration_reached
    count = len(frames)
    ros.spin_for(0.2)
    assert len(frames) == count, 'no frame without a /clock message in lockstep'


def test_run_duration_ignored_while_already_returning(ros):
    sup, frames, clock_pub, events = _clocked_run(ros, 0.005)
    for name in ('homed', 'synchronized', 'safety_takeover'):
        publish_event(ros, events, name)
    wait_mode(ros, sup, 'SAFETY_RECOVERY')
    f = _step(ros, clock_pub, frames, 5_000_000)
    assert f.frame_id == 'SAFETY_RECOVERY' and sup.run_duration_reached


def test_realtime_frames_on_a_timer(ros):
    frames = ros.collect(Header, topics.HIL_FRAME, qos.stream(False))
    supervisor(ros, **{**CALM, 'lockstep': False, 'frame_period': 0.01})
    ros.spin_until(lambda: len(frames) >= 5, 20.0, 'timer frames')
    stamps = [f.stamp.sec * 10**9 + f.stamp.nanosec for f in frames]
    assert stamps == sorted(stamps) and all(f.frame_id == 'IDLE' for f in frames)


def test_killed_node_process_faults_within_one_second_of_sim_time(ros):
    """A managed node in another process is SIGKILLed mid-run while this test drives /clock
    (frame by frame, sim time paced at half real time): FAULT, naming it, within 1 s of sim time."""
    proc = ros.spawn(str(DUMMY_PATH), ['-r', '__node:=victim', '-p', 'use_sim_time:=true'])
    dummies(ros, ['survivor'], use_sim_time=True)
    clock_pub = ros.node.create_publisher(Clock, topics.CLOCK, qos.stream(True))
    events = ros.node.create_publisher(DiagnosticArray, topics.HIL_EVENTS, qos.command(100))
    # Default sim timeout (0.5 s); a larger wall one so only the sim path can fire here.
    sup = supervisor(ros, managed_nodes=['victim', 'survivor'], lockstep=True, use_sim_time=True,
                     heartbeat_timeout_wall=5.0)
    frames = ros.collect(Header, topics.HIL_FRAME, qos.stream(True))
    sim_ns, period = 0, 2_500_000

    def frame_step(t_ns):
        """One lockstep frame, as the mock hardware does it: publish /clock, then wait until the
        supervisor has handled it (its frame is in), so the supervisor's sim time never lags
        behind ours however loaded the machine is."""
        n = len(frames)
        clock_pub.publish(Clock(clock=stamp(t_ns)))
        ros.spin_until(lambda: len(frames) > n, 10.0, f'frame for /clock {t_ns} ns')

    def run_paced(duration_ns, until=lambda: False):
        """Frames with sim time paced at half real time, as a lockstep run on a loaded machine
        goes (the wall timeout is set high, so only the sim timeout can fire). Pacing keeps a
        live peer's heartbeats, delayed by DDS and CPU load, from ageing in sim time faster
        than they would in a real run."""
        nonlocal sim_ns
        wall0, sim0 = time.monotonic(), sim_ns
        while sim_ns - sim0 < duration_ns and not until():
            sim_ns = sim0 + int((time.monotonic() - wall0) * 0.5e9) // period * period
            frame_step(sim_ns)

    ros.spin_until(lambda: sup.lifecycle != 'bringing_up', 40.0, 'bring-up of the subprocess node')
    assert sup.lifecycle == 'up', sup.bring_up_failure
    _first_frame(ros, clock_pub, frames)
    ros.wait_for_subscribers(topics.HIL_EVENTS)
    assert trigger(ros, topics.HIL_START)[0]
    for name in ('homed', 'synchronized'):
        publish_event(ros, events, name)
    ros.spin_until(lambda: sup.machine.mode.value == 'RUNNING', 10.0, 'RUNNING')
    run_paced(200_000_000)                      # a little with live heartbeats in sim time
    assert sup.machine.mode.value == 'RUNNING', sup.machine.fault_reason
    proc.kill()                                 # SIGKILL, then clean_dead_shm()
    kill_ns = sim_ns
    run_paced(2_000_000_000, until=lambda: sup.machine.mode.value == 'FAULT')
    assert sup.machine.mode.value == 'FAULT', f'no FAULT within 2 s of sim time: {sup.liveness.peers}'
    frame_step(sim_ns)                          # the next frame (a repeat of t) holds in FAULT
    assert frames[-1].frame_id == 'FAULT'
    detected_after = (sim_ns - kill_ns) * 1e-9
    assert detected_after < 1.0, f'FAULT {detected_after:.3f} s of sim time after the kill'
    assert 'node victim is dead' in sup.machine.fault_reason and 'sim time' in sup.machine.fault_reason
    ok, message = trigger(ros, topics.HIL_RESET)
    assert not ok and 'victim is dead' in message
    ok, message = trigger(ros, topics.HIL_SHUTDOWN)
    assert 'victim skipped (state dead)' in message and 'deactivate survivor' in message


def test_dead_node_coming_back_still_blocks_reset(ros):
    """Wall-time death (sim time standing still), then the node reappears under the same name:
    alive again, but its lifecycle state is unknown (a restart), so RESET stays refused."""
    first, = dummies(ros, ['a'])
    sup = supervisor(ros, managed_nodes=['a'], heartbeat_timeout_sim=60.0, heartbeat_timeout_wall=1.0,
                     frame_period=0.05)
    ros.spin_until(lambda: sup.lifecycle == 'up', 30.0, 'bring-up')
    ros.executor.remove_node(first)
    first.destroy_node()                        # no more heartbeats from a
    wait_mode(ros, sup, 'FAULT', timeout=20.0)
    assert 'node a is dead' in sup.machine.fault_reason and 'wall time' in sup.machine.fault_reason
    assert sup.states['a'] == 'dead'
    ok, message = trigger(ros, topics.HIL_RESET)
    assert not ok and 'node a is dead' in message
    dummies(ros, ['a'])                         # "restarted": unconfigured, beating again
    ros.spin_until(lambda: not sup.liveness.dead(), 20.0, 'heartbeat of the new a')
    ok, message = trigger(ros, topics.HIL_RESET)
    assert not ok and 'managed node a is unknown (heartbeat back after death)' in message



def test_process_exit_reported_by_the_launcher_faults_at_once_naming_the_node(ros):
    """What `hil run` does when its ProcessGroup sees a child die: the node is dead at once
    (heartbeat timeouts set far away here), and the shutdown skips it without waiting."""
    _, b = dummies(ros, ['a', 'b'])
    sup = supervisor(ros, managed_nodes=['a', 'b'], heartbeat_timeout_sim=60.0, heartbeat_timeout_wall=60.0,
                     frame_period=0.05)
    ros.spin_until(lambda: sup.lifecycle == 'up', 30.0, 'bring-up')
    ros.executor.remove_node(b)                  # its "process" is gone: no more heartbeats
    reporter = ProcessExitReporter(ros.node)
    ros.wait_for_subscribers(topics.HIL_PROCESS_EXIT)
    assert reporter.report('b', ['b'], -signal.SIGKILL) and not reporter.report('b', ['b'], -9)
    wait_mode(ros, sup, 'FAULT')
    assert sup.machine.fault_reason == 'node b is dead: its process b was killed by SIGKILL'
    assert sup.states['b'] == 'dead'
    ok, message = trigger(ros, topics.HIL_RESET)
    assert not ok and 'node b is dead' in message
    ok, message = trigger(ros, topics.HIL_SHUTDOWN)
    assert ok and message == 'shutdown: deactivate a, cleanup a; b skipped (state dead)'


def test_shutdown_is_bounded_for_a_hung_node_and_skips_a_silent_one(ros):
    """A managed node process frozen by SIGSTOP (its services exist but never answer): a
    shutdown right away gives it shutdown_timeout once and drops its other steps; once it has
    been silent for shutdown_silence, a shutdown skips it outright."""
    proc = ros.spawn(str(DUMMY_PATH), ['-r', '__node:=hung'])
    dummies(ros, ['ok'])
    sup = supervisor(ros, managed_nodes=['hung', 'ok'], heartbeat_timeout_sim=60.0, heartbeat_timeout_wall=60.0,
                     frame_period=0.05, shutdown_timeout=1.0, shutdown_silence=600.0)
    ros.spin_until(lambda: sup.lifecycle == 'up', 40.0, 'bring-up of the subprocess node')
    assert sup.lifecycle == 'up', sup.bring_up_failure
    os.kill(proc.proc.pid, signal.SIGSTOP)
    try:
        ok, message = trigger(ros, topics.HIL_SHUTDOWN)
        assert not ok
        assert message.startswith('shutdown: deactivate ok, cleanup ok; FAILED: deactivate of node hung: ')
        assert ('no answer within 1 s' in message or 'not available after 1 s' in message), message
        assert message.endswith('not run (node hung does not answer): cleanup hung')
    finally:
        proc.kill()


def test_shutdown_skips_a_node_silent_for_longer_than_shutdown_silence(ros):
    journal = []
    late, = dummies(ros, ['late'], journal)
    dummies(ros, ['fine'], journal)
    sup = supervisor(ros, managed_nodes=['late', 'fine'], heartbeat_timeout_sim=60.0, heartbeat_timeout_wall=60.0,
                     frame_period=0.05, shutdown_silence=0.3)
    ros.spin_until(lambda: sup.lifecycle == 'up', 30.0, 'bring-up')
    ros.executor.remove_node(late)              # alive but silent: as a process stuck in a callback
    ros.spin_for(0.6)
    ok, message = trigger(ros, topics.HIL_SHUTDOWN)
    assert ok and message.startswith('shutdown: deactivate fine, cleanup fine; late skipped (state silent for ')
    assert ('late', 'deactivate') not in journal
    ros.executor.add_node(late)
