"""A lab gamepad as the force joystick (hil_core.ft.joy_mapping) through the F/T node's limits
(hil_core.ft.joystick, the code ft_sensor runs on /joystick/wrench): for any stream of Joy
messages (any axes, NaN and inf included, any buttons, any spacing in time) the wrench applied
to the load never exceeds joystick_force_max / joystick_torque_max and never changes faster than
joystick_force_rate / joystick_torque_rate per sample; without the enable button nothing is
asked; the mapping is teleop_twist_joy's (written out here: zero inside the dead zone, the
scale at full deflection, continuous at the dead zone's edge); a missing or non-finite axis is
refused and asks for nothing."""
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from hil_core.ft.joy_mapping import NONE, JoyMapping
from hil_core.ft.joystick import JoystickLimits, JoystickLoad

MAP = JoyMapping(force_axes=(0, 1, 2), torque_axes=(3, NONE, 4), force_scale=(500.0, -80.0, 1e4),
                 torque_scale=(60.0, 5.0, -3.0), deadzone=0.15, enable_button=4)
LIMITS = JoystickLimits(force_max=50.0, torque_max=5.0, force_rate=200.0, torque_rate=20.0, timeout=0.5)

axis = st.one_of(st.floats(-1.0, 1.0), st.floats(allow_nan=True, allow_infinity=True), st.just(0.0))
joy = st.tuples(st.lists(axis, min_size=0, max_size=8), st.lists(st.integers(0, 1), min_size=0, max_size=8),
                st.integers(1, 200_000_000))          # axes, buttons, ns until the next sample


def expected(a: float, scale: float, dz: float) -> float:
    """teleop_twist_joy-like: nothing inside the dead zone, linear from its edge to full scale."""
    a = min(max(a, -1.0), 1.0)
    return 0.0 if abs(a) <= dz else math.copysign((abs(a) - dz) / (1 - dz), a) * scale


@settings(max_examples=300, deadline=None)
@given(st.lists(joy, min_size=1, max_size=40))
def test_any_joy_stream_stays_within_the_ft_nodes_limits(stream):
    load = JoystickLoad(LIMITS)
    t = 0
    prev = np.zeros(6)
    load.sample([t])
    for axes, buttons, gap in stream:
        w, why = MAP.wrench(axes, buttons)
        held = len(buttons) > 4 and buttons[4]
        if why is None:
            if not held:
                assert not w.any(), 'asked for a wrench without the enable button'
            else:
                for i, (ax, sc) in enumerate(zip((0, 1, 2, 3, NONE, 4), (*MAP.force_scale, *MAP.torque_scale))):
                    assert w[i] == pytest.approx(0.0 if ax == NONE else expected(axes[ax], sc, MAP.deadzone))
            assert load.command(w, t) is None
        else:
            assert held and ('axes' in why or 'not finite' in why)
        for k in range(3):                                       # three samples until the next message
            dt_ns = gap // 3 + 1
            t += dt_ns
            applied = load.sample([t])[0]
            assert np.linalg.norm(applied[:3]) <= LIMITS.force_max * (1 + 1e-12)
            assert np.linalg.norm(applied[3:]) <= LIMITS.torque_max * (1 + 1e-12)
            dt = dt_ns * 1e-9
            assert np.linalg.norm(applied[:3] - prev[:3]) <= LIMITS.force_rate * dt * (1 + 1e-9) + 1e-12
            assert np.linalg.norm(applied[3:] - prev[3:]) <= LIMITS.torque_rate * dt * (1 + 1e-9) + 1e-12
            prev = applied


def test_full_deflection_and_the_dead_zone():
    axes = [1.0, -1.0, 0.15, 0.575, 0.0]
    w, why = MAP.wrench(axes, [0, 0, 0, 0, 1])
    assert why is None
    np.testing.assert_allclose(w, [500.0, 80.0, 0.0, 30.0, 0.0, 0.0])
    # |a| just past the dead zone asks for just a little: continuous at its edge
    w, _ = MAP.wrench([0.15 + 1e-9, 0, 0, 0, 0], [0, 0, 0, 0, 1])
    assert 0 < w[0] < 1e-5


def test_refusals_name_the_axis():
    assert MAP.wrench([0.5] * 3, [0, 0, 0, 0, 1]) == (None, 'joy message has 3 axes; the mapping reads axis 3')
    w, why = MAP.wrench([0.5, math.nan, 0, 0, 0], [0, 0, 0, 0, 1])
    assert w is None and why == 'joy axis 1 is not finite (nan)'
    w, why = MAP.wrench([0.5, math.nan], [0, 0, 0, 0, 0])          # not enabled: nothing asked, nothing read
    assert why is None and not w.any()


@pytest.mark.parametrize('kwargs, text', [
    (dict(force_axes=(0, 1)), '3 force axes'),
    (dict(torque_axes=(0, -2, 1)), 'integers >= -1'),
    (dict(deadzone=1.0), 'deadzone must be in [0, 1)'),
    (dict(force_scale=(1.0, math.inf, 1.0)), 'finite'),
])
def test_bad_mappings_are_named(kwargs, text):
    assert text in JoyMapping(**kwargs).problem()
