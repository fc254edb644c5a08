"""The space-iiwa system's mock arm (hil_sim.mock_hardware.node as config/systems/space_iiwa.yaml builds
it: iiwa plant, velocity_controller) over real DDS: lockstep pairing by arrival (1 ms frames,
/clock owned), velocity tracking, refused commands end in a smooth watchdog stop, real-time mode
advances without commands."""
import numpy as np
import pytest

from hil_nodes.msgs.convert import stamp_to_ns
from rig import system_drives

SEED_Q0 = [-0.458149, 1.151219, 0.012566, 1.179319, -1.102175, -0.04468, 2.457249]   # seed 002 (rad)


def drives(ros, **params):
    return system_drives(ros, 'space_iiwa', **{'lockstep': True, 'lockstep_timeout': 5.0, 'status_period': 0.1,
                                               **params})


def test_lockstep_one_frame_per_command_and_velocity_tracking(ros):
    rig = drives(ros)
    first = rig.js[-1]
    assert stamp_to_ns(first.header.stamp) == 0
    np.testing.assert_allclose(first.position, SEED_Q0, atol=1e-12)
    assert len(first.effort) == 7 and np.abs(first.effort).max() > 1.0      # gravity load on the sensors
    ros.spin_for(0.3)                       # no command yet: time does not advance
    assert all(stamp_to_ns(m.header.stamp) == 0 for m in rig.js)
    cmd = np.array([0.1, -0.05, 0.1, 0.05, -0.1, 0.1, 0.2])
    for k in range(1, 301):
        js = rig.send(cmd)
        assert stamp_to_ns(js.header.stamp) == k * 1_000_000
        ros.spin_until(lambda: stamp_to_ns(rig.clock[-1].clock) == k * 1_000_000, 10, '/clock of the frame')
    np.testing.assert_allclose(js.velocity, cmd, atol=5e-3)


@pytest.mark.parametrize('bad, reason', [
    ([0.1] * 6, 'size_mismatch'),                   # the controller is deactivated: the watchdog brakes now
    ([0.1, np.nan, 0, 0, 0, 0, 0], 'non_finite'),   # dropped, the last command persists ...
    ([0, 0, 0, 0, 0, 0, 50.0], 'command_limit'),    # ... until command_timeout (sim) without a valid one
])
def test_refused_commands_end_in_a_smooth_stop(ros, bad, reason):
    rig = drives(ros, command_timeout=0.05)
    cmd = np.full(7, 0.2)
    for _ in range(300):
        rig.send(cmd)
    v0 = np.array(rig.js[-1].velocity)
    for _ in range(150):
        rig.send(bad)                          # each still advances the frame
    ros.spin_until(lambda: any('rejected' in m and f'({reason})' in m for m in rig.messages()), 10,
                   'rejection diagnostic')
    vel = np.array([m.velocity for m in rig.js[-151:]])
    assert np.abs(vel[-1]).max() < 0.25 * np.abs(v0).max()
    assert np.abs(np.diff(vel, axis=0)).max() < 0.05           # a ramp, not a jump
    ros.spin_until(lambda: any(m.startswith('watchdog: brak') for m in rig.messages()), 10, 'watchdog status')
    rig.send(cmd)                                              # after the stop: not followed until
    assert rig.node._watchdog.braking                          # the node is activated again
    assert np.abs(rig.send(cmd).velocity).max() < 0.25 * np.abs(v0).max()


def test_real_time_mode_advances_and_holds_without_commands(ros):
    rig = drives(ros, lockstep=False, time_scale=1.0, command_timeout=0.05)
    start = stamp_to_ns(rig.js[-1].header.stamp)                # the wall clock's frame grid
    ros.spin_until(lambda: stamp_to_ns(rig.js[-1].header.stamp) > start + 50_000_000, 20, 'time advancing')
    q = np.array(rig.js[-1].position)
    assert np.abs(q - SEED_Q0).max() < 2e-3          # holds still with gravity compensation
