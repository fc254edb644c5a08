"""The hexafloat system's mock drives (hil_sim.mock_hardware.node as config/systems/hexafloat.yaml builds
it: servo plant, hexapod_controller) over real DDS: lifecycle (spawned process), lockstep clock,
late and bad commands, real-time pacing. The test process plays the controller."""
import math
import pathlib

import numpy as np
import pytest
from diagnostic_msgs.msg import DiagnosticArray
from rcl_interfaces.msg import Parameter as ParameterMsg, ParameterType, ParameterValue
from rcl_interfaces.srv import SetParameters
from rosgraph_msgs.msg import Clock

from hil_nodes import topics
from hil_nodes.msgs.convert import ns_to_stamp, stamp_to_ns
from rig import SLIDERS as NAMES, SUBSTEP as SUB, statuses, system_drives, trajectory as command, values

T_NS = 2_500_000


def mock_values(diags):
    """(level, message, key/values) of the mock's statuses, oldest first."""
    return [(st.level, st.message, values(st)) for st in statuses(diags, node='mock_hexapod')]


def drives(ros, **params):
    """The hexafloat system's mock drives, up, on a lockstep clock unless told otherwise."""
    defaults = dict(lockstep=True, time_scale=0.0, lockstep_timeout=10.0, status_period=0.2)
    return system_drives(ros, 'hexafloat', **{**defaults, **params})


def hold(stamp_ns, pos=None):
    pos = np.zeros(6) if pos is None else pos
    return command(stamp_ns, [pos] * 4, [np.zeros(6)] * 4)


def test_lifecycle_via_change_state_including_refused_transitions(ros):
    config = pathlib.Path(__file__).resolve().parents[2] / 'config' / 'mock_hexapod.yaml'
    proc = ros.spawn('hil_sim.mock_hardware.node', ['-r', '__node:=mock_hexapod', '--params-file', str(config),
                                              '-p', 'robot_description:=urdf/hexafloat_scaled.urdf',
                                              '-p', 'controller:=hexapod_controller', '-p', 'bandwidth:=900.0'])
    diag = ros.collect(DiagnosticArray, topics.DIAGNOSTICS, 100)
    assert not ros.change_state('mock_hexapod', 'activate', timeout=30), 'activate before configure'
    assert ros.get_state('mock_hexapod') == 'unconfigured'
    assert not ros.change_state('mock_hexapod', 'configure'), 'bandwidth 900 Hz is too high for 125 us'
    ros.spin_until(lambda: any('configuration refused' in m and 'bandwidth' in m
                               for _, m, _ in mock_values(diag)), 10, 'refusal diagnostic')
    req = SetParameters.Request(parameters=[ParameterMsg(
        name='bandwidth', value=ParameterValue(type=ParameterType.PARAMETER_DOUBLE, double_value=50.0))])
    assert ros.call(SetParameters, '/mock_hexapod/set_parameters', req).results[0].successful
    clock = ros.collect(Clock, topics.CLOCK)
    assert ros.change_state('mock_hexapod', 'configure')
    assert ros.change_state('mock_hexapod', 'activate')
    assert ros.get_state('mock_hexapod') == 'active'
    ros.spin_until(lambda: len(clock) >= 2, 10, 're-published t_0')
    assert {stamp_to_ns(c.clock) for c in clock} == {0}
    assert not ros.change_state('mock_hexapod', 'cleanup'), 'cleanup is refused while active'
    assert ros.change_state('mock_hexapod', 'deactivate')
    assert ros.change_state('mock_hexapod', 'cleanup')
    assert ros.get_state('mock_hexapod') == 'unconfigured'
    assert ros.change_state('mock_hexapod', 'shutdown')
    assert ros.get_state('mock_hexapod') == 'finalized'
    assert proc.proc.poll() is None, 'the process outlives its finalized node until stopped'


def test_lockstep_holds_t0_then_one_frame_per_command_and_tracks(ros):
    rig = drives(ros)
    ros.spin_until(lambda: len(rig.js) >= 3, 10, 're-publications of t_0')
    assert {stamp_to_ns(m.header.stamp) for m in rig.js} == {0}
    assert {stamp_to_ns(c.clock) for c in rig.clock} == {0}
    # A smooth 5 Hz sine on slider_1 (amplitude 5 mm), positions + velocities per substep.
    w, amp = 2 * math.pi * 5.0, 0.005
    errors = []
    for k in range(40):
        t = k * T_NS * 1e-9 + SUB * np.arange(1, 5)
        pos = np.zeros((4, 6))
        vel = np.zeros((4, 6))
        pos[:, 0] = amp * np.sin(w * t)
        vel[:, 0] = amp * w * np.cos(w * t)
        rig.send(command(k * T_NS, pos, vel))
        assert rig.stamp() == (k + 1) * T_NS
        errors.append(rig.js[-1].position[0] - pos[-1, 0])
    clocks = [stamp_to_ns(c.clock) for c in rig.clock]
    advancing = sorted(set(clocks))
    assert advancing == [k * T_NS for k in range(41)], 'every frame exactly once, none skipped'
    assert clocks == sorted(clocks), '/clock never goes back'
    # Full feedforward: once the start-up transient (setpoint velocity 0 -> A w) has decayed
    # the servo tracks to well below a micrometre.
    assert max(abs(e) for e in errors[-10:]) < 1e-6
    # No command for frame 40: sim time stays (timeout is 10 s).
    ros.spin_for(0.3)
    assert rig.stamp() == 40 * T_NS
    assert np.all(np.isfinite(rig.js[-1].position))


def test_late_command_holds_and_is_counted(ros):
    """lockstep_late: hold (diagnosis; the default brakes: test_mock_watchdog_node.py)."""
    rig = drives(ros, lockstep_timeout=0.1, lockstep_late='hold')
    pos = np.full(6, 1e-4)
    rig.send(command(0, [pos * (i + 1) / 4 for i in range(4)]))
    ros.spin_until(lambda: rig.stamp() >= 4 * T_NS, 20, 'timeout-driven frames')
    ros.spin_until(lambda: any(int(v.get('late_commands', '0')) >= 3 for _, _, v in mock_values(rig.diag)),
                   10, 'late_commands in diagnostics')
    values = mock_values(rig.diag)[-1][2]
    assert set(values) >= {'frames', 'late_commands', 'rejected_commands', 'sim_time'}
    assert int(values['frames']) == int(values['late_commands']) + 1
    assert float(values['sim_time']) == pytest.approx(int(values['frames']) * T_NS * 1e-9)
    # Holding the last setpoint with zero velocity feedforward: the axes settle on it, no jump.
    frames = [m for m in rig.js if stamp_to_ns(m.header.stamp) > 0]
    steps = np.diff([m.position[0] for m in frames])
    assert np.all(np.abs(steps) <= 1.0 * 2.5e-3)
    assert np.allclose(frames[-1].position, pos, atol=2e-5)


@pytest.mark.parametrize('case, reason', [          # the JTC's rule, or the guard's (STYLE.md section 2)
    ('count', 'the hexapod_controller rules (joint_count)'),
    ('nan', 'the guard (non_finite)'),
    ('time', 'the hexapod_controller rules (time_not_increasing)'),
    ('names', 'the hexapod_controller rules (unknown_joint)'),
    ('limits', 'the guard (position_limit)'),
])
def test_bad_commands_rejected_with_diagnostic_and_joints_hold(ros, case, reason):
    rig = drives(ros, initial_positions=[0.002] * 6)       # at rest at 2 mm
    for k in range(3):
        rig.send(hold(k * T_NS, np.full(6, 0.002)))
    assert np.allclose(rig.js[-1].position, 0.002, atol=1e-12)
    held = list(rig.js[-1].position)
    stamp = rig.stamp()
    good = [[0.01] * 6] * 4
    msg = {
        'count': command(stamp, [[0.01] * 5] * 4, names=NAMES[:5]),
        'nan': command(stamp, good[:2] + [[0.01, float('nan'), 0.01, 0.01, 0.01, 0.01]] + good[:1]),
        'time': command(stamp, good, times=[SUB, 2 * SUB, 1.5 * SUB, 4 * SUB]),
        'names': command(stamp, good, names=NAMES[:5] + ['elbow']),
        'limits': command(stamp, [[0.5] * 6] * 4),
    }[case]
    frames = len(rig.js)
    rig.pub.publish(msg)
    ros.spin_until(lambda: any(lvl == b'\x02' and reason in m for lvl, m, _ in mock_values(rig.diag)),
                   10, 'rejection diagnostic')
    # a refused command does not take its frame's place: the frame still waits for a valid one
    assert len(rig.js) == frames and rig.stamp() == stamp
    for _ in range(3):          # refused again, then the frame's valid command: taken, no jump
        rig.pub.publish(msg.__class__(header=msg.header.__class__(stamp=ns_to_stamp(rig.stamp())),
                                      joint_names=msg.joint_names, points=msg.points))
        rig.send(hold(rig.stamp(), np.array(held)))
        assert np.allclose(rig.js[-1].position, held, atol=1e-9)
    ros.spin_until(lambda: any(v.get('rejected_commands') == '4' for _, _, v in mock_values(rig.diag)),
                   10, 'rejected_commands = 4')


def test_reordered_names_are_accepted_and_stale_stamps_ignored(ros):
    rig = drives(ros)
    target = np.array([0.001, 0.002, 0.003, 0.004, 0.005, 0.006])
    rig.send(command(0, [target[::-1]] * 4, names=NAMES[::-1]))
    for k in range(1, 200):
        rig.send(command(k * T_NS, [target] * 4))
    assert np.allclose(rig.js[-1].position, target, atol=1e-6)
    before = rig.stamp()
    rig.pub.publish(command(before - T_NS, [target] * 4))      # stale: frame already done
    ros.spin_until(lambda: any('stale' in m for _, m, _ in mock_values(rig.diag)), 10, 'stale warning')
    assert rig.stamp() == before


def test_realtime_advances_on_wall_timer_and_stamp_zero_starts_now(ros):
    # the watchdog is not the subject: its 0.2 s of wall time from the first command on once ran
    # out on a slow machine before the bad command came, and a braking drive looks at no command
    rig = drives(ros, lockstep=False, time_scale=4.0, command_timeout=10.0)
    ros.spin_until(lambda: rig.stamp() >= 20 * T_NS, 20, 'free-running frames without commands')
    target = np.full(6, 0.003)
    rig.pub.publish(command(0, [target], [np.zeros(6)], times=[0.05]))   # reach in 50 ms from now
    ros.spin_until(lambda: np.allclose(rig.js[-1].position, target, atol=1e-5), 20, 'target reached')
    stamps = [stamp_to_ns(m.header.stamp) for m in rig.js]
    assert all(b > a for a, b in zip(stamps, stamps[1:])), 'sim time only moves forward'
    assert all((b - a) % T_NS == 0 for a, b in zip(stamps, stamps[1:])), 'whole frames'
    # A bad command in real time: rejected, the drives keep holding the target.
    rig.pub.publish(command(0, [[0.01, float('nan'), 0, 0, 0, 0]], times=[0.05]))
    ros.spin_until(lambda: rig.node.rejected_commands == 1, 10, 'rejection')
    mark = rig.stamp()
    ros.spin_until(lambda: rig.stamp() >= mark + 20 * T_NS, 20, 'frames after the rejection')
    assert np.allclose(rig.js[-1].position, target, atol=1e-5)


def test_lockstep_time_scale_never_lets_sim_time_run_ahead_of_wall_time(ros):
    import time
    rig = drives(ros, time_scale=0.1)          # at most 0.1 sim s per wall s
    rig.send(hold(0))
    start_wall, start_sim = time.monotonic(), rig.stamp()
    for k in range(1, 21):
        rig.send(hold(k * T_NS))
    sim = (rig.stamp() - start_sim) * 1e-9
    # One-sided (load can only slow a run down): 50 ms of sim time took at least 0.5 s of wall time.
    assert sim == pytest.approx(20 * T_NS * 1e-9)
    assert time.monotonic() - start_wall >= sim / 0.1 - 0.0025 / 0.1


def test_a_pause_of_its_own_process_is_no_late_command_but_a_missing_one_still_is(ros):
    """The node's process stands still for 1 s (this test's, which spins it) with the next
    frame's command already in its queue: the first poll after it finds its own pause and waits
    again rather than braking (the chain's command was not late: CI's faults scenario, a 1 s
    freeze of the container); a command that then never comes is late one
    lockstep_timeout later, and the drives brake (the default lockstep_late)."""
    import time
    rig = drives(ros, lockstep_timeout=0.3)
    rig.send(hold(0))
    rig.pub.publish(hold(T_NS))
    time.sleep(1.0)                                          # nothing spins: a whole-process pause
    ros.spin_until(lambda: rig.stamp() >= 2 * T_NS, 10, 'the frame after the pause')
    ros.spin_until(lambda: rig.values() and int(rig.values()[-1]['own_pauses']) >= 1, 10, 'own_pauses counted')
    after_pause = rig.values()[-1]
    assert after_pause['late_commands'] == '0' and after_pause['braking'] == 'False' and rig.fault() is None
    assert float(after_pause['longest_own_pause_s']) >= 0.9            # the 1 s the test stood still
    ros.spin_until(lambda: rig.fault() is not None, 10, 'the brake for the command that never came')
    assert 'no command for frame 0.0050 s within lockstep_timeout (0.3 s)' in rig.fault().message


@pytest.mark.parametrize('clock', ['lockstep', 'realtime'])
@pytest.mark.parametrize('supervisor', ['beating', 'silent'])
def test_a_stop_for_a_missing_command_names_a_supervisor_silent_as_long(ros, supervisor, clock):
    """The fault matrix's SIGSTOP supervisor row: a stopped supervisor can freeze the processes
    that publish to it (docs/fault_matrix.md), so the frame's command stops coming with it and
    the drives' watchdog stops the run first. The stop then names the supervisor, silent more
    than half the time the command was waited for; beating, it names only the command. Lockstep
    waits lockstep_timeout for the frame's command; real time command_timeout for any."""
    from std_msgs.msg import Header
    beat = ros.node.create_publisher(Header, topics.HIL_HEARTBEAT, 10)
    beats = []
    alive = [True]

    def tick():
        if alive[0]:
            beat.publish(Header(frame_id='/supervisor'))
            beats.append(beat.get_subscription_count())
    ros.node.create_timer(0.05, tick)
    rig = (drives(ros, lockstep_timeout=0.3) if clock == 'lockstep'
           else drives(ros, lockstep=False, time_scale=1.0, command_timeout=0.3))
    ros.spin_until(lambda: sum(1 for n in beats if n > 0) >= 4, 10, 'beats the drives have matched')
    alive[0] = supervisor == 'beating'
    if clock == 'lockstep':
        rig.send(hold(0))                               # the command of the next frame never comes
    else:
        rig.pub.publish(hold(0))                        # one command (stamp 0: now), then none
    ros.spin_until(lambda: rig.fault() is not None, 10, 'the brake for the command that never came')
    said = rig.fault().message
    assert ('no command for frame 0.0025 s within lockstep_timeout (0.3 s)' if clock == 'lockstep'
            else '(command_timeout 0.3 s)') in said, said
    if supervisor == 'beating':
        assert 'silent' not in said, said
    else:
        silence = float(said.split('node supervisor silent: no heartbeat for ')[1].split(' s')[0])
        # silent since before the wait began: at least the wait, as the message gives it to the ms
        # (the last beat can come a fraction of a millisecond before the command: "0.300")
        assert silence >= 0.3, said
