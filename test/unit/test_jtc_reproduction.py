"""A Kilted JTC fed with the timebase's stream reproduces the servo setpoints.

A real :class:`TimeBaseEngine` (hexaslide_scaled IK) turns a moving reference into servo
setpoints; the messages are built in the two agreed formats (docs/lab_ros2_control.md):

* lockstep: header.stamp = frame time t_k, 4 points at 0.625 ... 2.5 ms (frame k's setpoints);
* real time: header.stamp = t_k, 8 points at 0.625 ... 5.0 ms = frame k's 4 setpoints followed
  by frame k+1's (the engine runs one frame ahead).

Each message is received ``delay`` after its stamp by :class:`JtcLoop` (the controller's
acceptance at receipt + its update loop, hil_core.drives.jtc_sampling). The reference is the servo
setpoint stream itself: the setpoints at their servo times, cubic Hermite between them
(what the mock drive follows, ``sample_knots``). Every message must pass the acceptance with
config/controllers.yaml's settings at its receipt time.
"""
import pathlib

import numpy as np
import pytest
import yaml

from hil_core.hexaslide import JOINT_NAMES, load_geometry
from hil_core.drives.joint_trajectory import JtcSettings, Trajectory, jtc_validate, sample_knots
from hil_core.drives.jtc_sampling import JtcLoop, State
from hil_core.timebase import TimeBaseConfig, TimeBaseEngine, hexaslide_ik

ROOT = pathlib.Path(__file__).resolve().parents[2]
CFG = TimeBaseConfig()
T, TS = CFG.move_time, CFG.servo_period
T_NS, TS_NS = int(round(T * 1e9)), int(round(TS * 1e9))
N_FRAMES = 160                                  # 0.4 s


def _controllers():
    return yaml.safe_load((ROOT / 'config' / 'controllers.yaml').read_text())


def _settings() -> JtcSettings:
    return JtcSettings.from_parameters(_controllers()['hexapod_controller']['ros__parameters'])


@pytest.fixture(scope='module')
def frames():
    """Servo setpoints of N frames of a real engine following a 3-axis sinusoidal reference
    (lockstep clocking: frame k at t_k = k T)."""
    home = load_geometry('hexaslide_scaled').home_height
    eng = TimeBaseEngine(CFG, hexaslide_ik('hexaslide_scaled'))

    def pose(t):
        return np.array([0.010 * np.sin(2 * np.pi * 1.5 * t), 0.008 * np.sin(2 * np.pi * 2.3 * t + 0.4),
                         home + 0.006 * np.sin(2 * np.pi * 3.1 * t), 0.0, 0.0, 0.0, 1.0])
    eng.start(pose(0.0), 0.0)
    out = []
    for k in range(1, N_FRAMES + 1):
        assert eng.write(pose(k * T), k * T) == 'ok'
        out.append(eng.step_frame(k * T))
    assert not any(f.fault for f in out)
    return out


def _messages(frames, fmt):
    """Frame k (1-based) has setpoints at t_k + i Ts, i = 1..4."""
    msgs = []
    for k in range(1, len(frames)):
        f = frames[k - 1]
        if fmt == 'lockstep':
            pos, vel, n = f.positions, f.velocities, 4
        else:
            g = frames[k]
            pos, vel, n = np.vstack([f.positions, g.positions]), np.vstack([f.velocities, g.velocities]), 8
        msgs.append(Trajectory.from_arrays(JOINT_NAMES, k * T_NS, np.arange(1, n + 1) * TS, pos, vel))
    return msgs


def _knots(frames):
    t = np.concatenate([k * T + np.arange(1, 5) * TS for k in range(1, len(frames) + 1)])
    return t, np.concatenate([f.positions for f in frames]), np.concatenate([f.velocities for f in frames])


def _run(frames, fmt, rate, delays_ns, phase_ns=0):
    """Feed the messages to a JTC at ``rate`` Hz; (max |command - setpoint| in m, refusals, updates)."""
    msgs = _messages(frames, fmt)
    knot_t, knot_p, knot_v = _knots(frames)
    settings = _settings()
    loop = JtcLoop(settings, rate, frames[0].positions[0], interpolate_from_desired_state=True)
    per = loop.update_period_ns
    receipt = [m.stamp_ns + int(d) for m, d in zip(msgs, delays_ns)]
    u = receipt[0] // per * per + phase_ns
    if u < receipt[0]:
        u += per
    i, errors = 0, []
    while u < msgs[-3].stamp_ns:
        while i < len(msgs) and receipt[i] <= u:
            assert jtc_validate(msgs[i], settings, receipt[i]), f'message {i} refused'
            loop.receive(msgs[i], receipt[i])
            i += 1
        cmd = loop.update(u, per, State(loop.command.positions if loop.command is not None
                                        else frames[0].positions[0]))
        if i >= 2:                              # from the second message on (first: from rest)
            ref, _ = sample_knots(knot_t, knot_p, knot_v, np.array([(u + per) / 1e9]))
            errors.append(float(np.max(np.abs(cmd.positions - ref[0]))))
        u += per
    return max(errors), sum(loop.refused.values()), len(errors)


def test_the_stream_moves_and_every_message_ends_moving(frames):
    _, _, knot_v = _knots(frames)
    assert np.max(np.abs(knot_v)) > 0.05                       # m/s: a real motion
    ends = [m.points[-1].velocities for m in _messages(frames, 'realtime')]
    assert sum(np.max(np.abs(v)) > 1e-7 for v in ends) > 0.9 * len(ends)
    # ... so a JTC with the default allow_nonzero_velocity_at_trajectory_end refuses them
    m = _messages(frames, 'realtime')[40]
    assert jtc_validate(m, JtcSettings(tuple(JOINT_NAMES)), m.stamp_ns).reason == 'nonzero_end_velocity'


@pytest.mark.parametrize('rate', [1000.0, 1600.0])
@pytest.mark.parametrize('delay', ['zero', 'constant', 'jitter', 'largest'])
def test_real_time_format_reproduces_the_setpoints_within_1_um(frames, rate, delay):
    n = len(frames) - 1
    per = int(1e9 / rate)
    largest = T_NS - per                        # a message may be up to one frame minus one period late
    d = {'zero': np.zeros(n), 'constant': np.full(n, 300_000),
         'jitter': np.random.default_rng(5).integers(0, largest + 1, n), 'largest': np.full(n, largest)}[delay]
    for phase in (0, 170_000):                  # update grid not aligned with the frames
        err, refused, updates = _run(frames, 'realtime', rate, d, phase)
        assert refused == 0 and updates > 0.35 * rate
        assert err < 1e-6, f'{err * 1e6:.3f} um'
        assert err < 1e-12                      # in fact exact: every command lies on the same cubic


def test_real_time_format_later_than_one_frame_minus_a_period_is_not_exact(frames):
    """The margin is real: a message later than T - period leaves the JTC holding the end of the
    previous one for an update (a hold of the last point as given)."""
    err, refused, _ = _run(frames, 'realtime', 1000.0, np.full(len(frames) - 1, 2_400_000))
    assert refused == 0 and err > 1e-6


def test_lockstep_format_is_exact_on_the_servo_grid(frames):
    """At the servo rate with the update grid on the frames, a lockstep message delivered before
    the update at its stamp reproduces the setpoints exactly (it is meant for the lockstep mock;
    at 1 kHz, or delivered after its stamp, a JTC deviates by up to ~0.1 mm here)."""
    n = len(frames) - 1
    for early in (0, 400_000):
        err, refused, _ = _run(frames, 'lockstep', 1600.0, np.full(n, -early))
        assert refused == 0 and err < 1e-12
    err, _, _ = _run(frames, 'lockstep', 1000.0, np.zeros(n))
    assert err > 1e-6


def test_at_the_servo_rate_the_commands_are_the_setpoints_themselves(frames):
    """1.6 kHz on the frame grid: command of update u = the engine's setpoint at u + 0.625 ms."""
    msgs = _messages(frames, 'realtime')
    settings = _settings()
    loop = JtcLoop(settings, 1600.0, frames[0].positions[0], interpolate_from_desired_state=True)
    worst = 0.0
    for k, m in enumerate(msgs[:-2], start=1):
        loop.receive(m, m.stamp_ns)
        for i in range(4):                      # updates at t_k + i Ts command t_k + (i+1) Ts
            cmd = loop.update(m.stamp_ns + i * TS_NS, TS_NS, State(frames[0].positions[0]))
            worst = max(worst, float(np.max(np.abs(cmd.positions - frames[k - 1].positions[i]))))
    assert worst < 1e-12
