"""hil_core.drives.plants: the <ros2_control> block as data, GenericSystem's mirror and integrate plants
against closed forms, and the adapters around the existing plants against those plants driven
directly (ServoAxes.follow, ArmSim.step, hybrid5 Plant.step), bit for bit."""
import math

import numpy as np
import pytest
import yaml
from hypothesis import example, given, settings, strategies as st

from hil_core.data_paths import config_file, urdf_file
from hil_core.hybrid5 import dynamics as dyn, kinematics as kin
from hil_core.hybrid5.params import load_params
from hil_core.iiwa.arm_sim import ArmSim, ArmSimParams
from hil_core.drives.plants import PLANTS, make_plant, plant_gains
from hil_core.drives.plants.controllers import TrajectoryFollower, controller_spec
from hil_core.drives.plants.description import parse_ros2_control
from hil_core.drives.plants.protocol import PlantSetup
from hil_core.drives.servo import ServoAxes, ServoConfig

CONTROLLERS = yaml.safe_load(config_file('controllers.yaml').read_text())
SEED_Q0 = [-0.458149, 1.151219, 0.012566, 1.179319, -1.102175, -0.04468, 2.457249]   # seed 002


def hardware(name):
    return parse_ros2_control(urdf_file(name).read_text())


def make_plant_class_interface(plant):
    from hil_core.drives.plants import plant_class
    return getattr(plant_class(plant), 'command_interface', 'position')


def velocity_iiwa():
    """The iiwa's block as a velocity-commanded one (GenericSystem's integrate oracle): its
    position command interface renamed."""
    text = urdf_file('iiwa14.urdf').read_text().replace('<command_interface name="position">',
                                                        '<command_interface name="velocity">')
    return parse_ros2_control(text).claimed('velocity')


def setup(urdf, plant, frame, decel=5.0, **gains):
    hw = velocity_iiwa() if urdf == 'iiwa-velocity' else hardware(urdf)
    if len({i for j in hw.joints for i in j.command}) > 1:      # as the mock's controller claims it
        hw = hw.claimed(make_plant_class_interface(plant))
    values = {g.name: g.default for g in plant_gains(plant)}
    values.update(gains)
    initial = {'position': hw.initial('position')}
    return PlantSetup(hw, values, frame, np.full(len(hw.joints), decel), initial, str(urdf_file(urdf)))


# --- <ros2_control> ------------------------------------------------------------------------------
def test_description_of_the_committed_urdfs():
    hexa = hardware('hexafloat_scaled.urdf')
    assert hexa.joint_names == tuple(f'slider_{i}' for i in range(1, 7))
    assert hexa.command_interface() == 'position' and hexa.plugin == 'mock_components/GenericSystem'
    lo, hi = hexa.command_limits()
    assert np.all(lo == -0.125) and np.all(hi == 0.1)                   # config/hexafloat_scaled.yaml stroke
    assert np.all(hexa.velocity_limits() == 1.0) and np.all(hexa.initial('position') == 0.0)
    iiwa = hardware('iiwa14.urdf')
    assert [list(j.command) for j in iiwa.joints] == [['position', 'effort']] * 7     # lbr_fri_ros2_stack's
    with pytest.raises(ValueError, match='same single command'):
        iiwa.command_interface()                       # the mock takes the one its controller claims
    iiwa = iiwa.claimed('position')
    assert iiwa.command_interface() == 'position'
    np.testing.assert_allclose(iiwa.initial('position'), SEED_Q0, atol=0)
    assert iiwa.command_limits()[1][0] == pytest.approx(math.radians(170), rel=1e-9)  # iiwa 14 A1: +-170 deg
    assert iiwa.velocity_limits()[0] == pytest.approx(math.radians(85), rel=1e-9)     # 85 deg/s
    with pytest.raises(ValueError, match='no .velocity. command'):
        hardware('iiwa14.urdf').claimed('velocity')
    hyb = hardware('hybrid5.urdf')
    prm = load_params()
    np.testing.assert_allclose(hyb.initial('position')[:3], kin.inverse(np.array([0.0, 0.0, 0.85]), prm.R),
                               atol=1e-9)                               # legs at the home pose
    assert hyb.command_interface() == 'effort' and list(hyb.command_limits()[1]) == [5000] * 3 + [500] * 2


@pytest.mark.parametrize('xml, says', [
    ('<robot name="r"/>', 'exactly one'),
    ('<robot name="r"><ros2_control name="a"><hardware><plugin>p</plugin></hardware></ros2_control></robot>',
     'no joints'),
    ('<robot name="r"><ros2_control name="a"><hardware/></ros2_control></robot>', 'no <hardware><plugin>'),
    ('<robot name="r"><ros2_control name="a"><hardware><plugin>p</plugin></hardware><joint name="j">'
     '<command_interface name="position"><param name="min">1</param><param name="max">0</param>'
     '</command_interface></joint></ros2_control></robot>', 'min 1.0 >= max'),
])
def test_bad_blocks_are_refused_with_a_reason(xml, says):
    with pytest.raises(ValueError, match=says):
        parse_ros2_control(xml)


def test_mixed_command_interfaces_are_refused():
    xml = ('<robot name="r"><ros2_control name="a"><hardware><plugin>p</plugin></hardware>'
           '<joint name="a"><command_interface name="position"/></joint>'
           '<joint name="b"><command_interface name="velocity"/><state_interface name="position">'
           '<param name="initial_value">0.5</param></state_interface></joint></ros2_control></robot>')
    hw = parse_ros2_control(xml)
    assert list(hw.initial('position')) == [0.0, 0.5]                     # GenericSystem: none = 0
    with pytest.raises(ValueError, match='same single command'):
        hw.command_interface()


# --- GenericSystem oracles ------------------------------------------------------------------------
def test_mirror_state_is_the_last_command_and_nan_leaves_it():
    plant = make_plant('mirror', setup('hexafloat_scaled.urdf', 'mirror', 0.0025))
    plant.step(0.0025, {'position': np.array([[0.01, np.nan, 0.02, 0.0, 0.0, 0.03]])})
    plant.step(0.0025, {'position': np.array([[np.nan, 0.05, 0.04, 0.0, 0.0, np.nan]])})
    assert list(plant.states()['position']) == [0.01, 0.05, 0.04, 0.0, 0.0, 0.03]


def test_integrate_velocity_is_backward_euler_of_the_previous_velocity():
    plant = make_plant('integrate', setup('iiwa-velocity', 'integrate', 0.001))
    v = np.linspace(-0.3, 0.3, 7)
    for _ in range(10):
        plant.step(0.001, {'velocity': v[None, :]})
    s = plant.states()
    # the first step integrates the velocity state before the command (0): 9 steps of v
    np.testing.assert_allclose(s['position'], np.asarray(SEED_Q0) + 9 * 0.001 * v, rtol=0, atol=1e-14)
    assert np.all(s['velocity'] == v) and np.all(s['acceleration'] == 0.0)


def test_integrate_position_differences_give_velocity_and_acceleration():
    plant = make_plant('integrate', setup('hexafloat_scaled.urdf', 'integrate', 0.0025))
    h, a = 0.0025, 2.0
    for k in range(1, 6):
        plant.step(h, {'position': np.full((1, 6), 0.5 * a * (k * h) ** 2)})
    s = plant.states()
    assert s['velocity'][0] == pytest.approx(a * (5 - 0.5) * h, rel=1e-12)   # mean over the last step
    assert s['acceleration'][0] == pytest.approx(a, rel=1e-9)


def test_plants_refuse_an_infinite_command_and_a_wrong_step():
    plant = make_plant('mirror', setup('hexafloat_scaled.urdf', 'mirror', 0.0025))
    with pytest.raises(ValueError, match='infinite'):
        plant.step(0.0025, {'position': np.array([[np.inf] * 6])})
    with pytest.raises(ValueError, match='differs from the plant step'):
        plant.step(0.001, {'position': np.zeros((1, 6))})


# --- adapters against their plants ----------------------------------------------------------------
def test_servo_plant_follows_the_trajectory_as_servo_axes_follow_does():
    """The emulated JTC's command rows into ServoPlant equal ServoAxes.follow on the same knots."""
    s = setup('hexafloat_scaled.urdf', 'servo', 0.0025)
    plant = make_plant('servo', s)
    follower = TrajectoryFollower(controller_spec(CONTROLLERS, 'hexapod_controller'), s.hardware, np.zeros(6))
    cfg = plant.config
    oracle = ServoAxes(ServoConfig(**{k: getattr(cfg, k) for k in cfg.__dataclass_fields__}), np.zeros(6))
    rng = np.random.default_rng(3)
    for k in range(60):
        t0 = k * 0.0025
        kt = t0 + 0.000625 * np.arange(1, 5)
        pos = 0.01 * np.sin(7 * kt)[:, None] * rng.uniform(0.5, 1, 6)
        vel = None if k % 5 == 2 else 0.07 * np.cos(7 * kt)[:, None] * np.ones(6)
        follower.apply((kt - t0, pos, vel), t0, t0, plant.states)
        knots = follower.knots
        plant.step(plant.step_size, follower.commands(t0, 20, plant.step_size))
        oracle.follow(t0, 4, *knots)
        assert np.array_equal(plant.states()['position'], oracle.position)
        assert np.array_equal(plant.states()['velocity'], oracle.velocity)
        assert np.array_equal(plant.states()['effort'], oracle.acceleration)


def test_servo_plant_follow_is_step_of_the_commands_bit_for_bit():
    """ServoPlant.follow (the mock drives' frame in one compiled call) against step(commands) on a
    twin: trajectories with and without velocities, holds (one knot), braking knots, frames past
    the end; a setpoint that is not finite, another step size or step count: False and nothing
    changed, so step decides (and it holds or refuses as before)."""
    s = setup('hexafloat_scaled.urdf', 'servo', 0.0025)
    fast, plain = make_plant('servo', s), make_plant('servo', s)
    spec = controller_spec(CONTROLLERS, 'hexapod_controller')
    ctl_fast, ctl_plain = (TrajectoryFollower(spec, s.hardware, np.zeros(6)) for _ in range(2))
    h, rng, taken = fast.step_size, np.random.default_rng(5), 0
    for k in range(200):
        t0 = k * 0.0025
        kt = t0 + 0.000625 * np.arange(1, 9)
        pos = 0.01 * np.sin(7 * kt)[:, None] * rng.uniform(0.5, 1, 6)
        vel = None if k % 7 == 3 else 0.07 * np.cos(7 * kt)[:, None] * np.ones(6)
        for ctl, plant in ((ctl_fast, fast), (ctl_plain, plain)):
            if k % 50 == 10:
                ctl.hold(t0)
            elif k % 50 == 20:
                ctl.brake(t0, np.full(6, 5.0), 0.000625)
            elif k % 50 < 30 and k % 50 > 20:
                pass                                  # braking goes on, then runs past its end
            elif k % 2 == 0:
                ctl.apply((kt - t0, pos, vel), t0, t0, plant.states)
        taken += fast.follow(h, 20, t0, ctl_fast.knots)
        plain.step(h, ctl_plain.commands(t0, 20, h))
        for key in ('position', 'velocity', 'effort'):
            assert np.array_equal(fast.states()[key], plain.states()[key]), (k, key)
    assert taken == 200
    before = fast.states()
    nan_knots = (np.array([0.0, 1.0]), np.full((2, 6), np.nan), None)
    assert not fast.follow(h, 20, 0.5, nan_knots)
    assert not fast.follow(h * 2, 20, 0.5, ctl_fast.knots) and not fast.follow(h, 0, 0.5, ctl_fast.knots)
    assert not fast.follow(h, 20, 0.5, (np.array([0, 1]), np.zeros((2, 6)), None))     # int knot times
    assert all(np.array_equal(before[k], fast.states()[k]) for k in before)


def test_servo_plant_holds_a_joint_without_a_command():
    s = setup('hexafloat_scaled.urdf', 'servo', 0.0025)
    plant = make_plant('servo', s)
    rows = np.zeros((20, 6))
    rows[:, 1] = np.nan
    rows[:, 0] = 0.001
    for _ in range(200):
        plant.step(plant.step_size, {'position': rows})
    pos = plant.states()['position']
    assert pos[0] == pytest.approx(0.001, abs=1e-9) and pos[1] == 0.0


def test_servo_plant_refuses_a_bandwidth_its_step_cannot_carry():
    with pytest.raises(ValueError, match='bandwidth 900'):
        make_plant('servo', setup('hexafloat_scaled.urdf', 'servo', 0.0025, bandwidth=900.0))


def test_iiwa_plant_is_arm_sim_and_brakes_at_its_deceleration_without_a_command():
    """Position commands: the drives' velocity target is the reference's difference quotient plus
    position_gain x (reference - measured) (ArmSim driven directly with it, bit for bit); without
    a command the reference's velocity ramps to rest at the deceleration and its position follows
    that ramp (a braking trajectory, never a jump)."""
    s = setup('iiwa14.urdf', 'iiwa', 0.001, decel=5.0)
    plant = make_plant('iiwa', s)
    kp = plant.position_gain
    assert kp == 10.0
    oracle = ArmSim(ArmSimParams(), str(urdf_file('iiwa14.urdf')))
    oracle.reset(SEED_Q0)
    cmd = np.array([0.1, -0.05, 0.1, 0.05, -0.1, 0.1, 0.2])
    ref = np.array(SEED_Q0)
    for _ in range(200):
        new = ref + cmd * 0.001
        plant.step(0.001, {'position': new[None, :]})
        oracle.step((new - ref) / 0.001 + kp * (ref - oracle.q), 0.001)
        ref = new
    assert np.array_equal(plant.states()['position'], oracle.q)
    assert np.array_equal(plant.states()['effort'], oracle.tau_measured)
    # tracking the position stream: the velocity lag of the 20 Hz loop, caught up by the position loop
    assert np.abs(plant.states()['position'] - ref).max() < 1e-3
    np.testing.assert_allclose(plant.states()['velocity'], cmd, atol=1e-2)
    refs, vels = [ref], []
    for _ in range(60):                                  # no command: the reference brakes to rest
        plant.step(0.001, {'position': np.full((1, 7), np.nan)})
        refs.append(plant.reference.copy())
        vels.append(plant.reference_velocity.copy())
    expected_v = [np.sign(cmd) * np.maximum(np.abs(cmd) - 5.0 * 0.001 * (i + 1), 0.0) for i in range(60)]
    np.testing.assert_allclose(vels, expected_v, rtol=0, atol=1e-9)
    # positions: the integral of that ramp (independent: cumulative sum of v h)
    np.testing.assert_allclose(refs[1:], ref + np.cumsum(np.array(expected_v) * 0.001, axis=0), rtol=0, atol=1e-12)
    assert np.all(np.abs(np.diff(np.array(vels), axis=0)) <= 5.0 * 0.001 + 1e-9)       # within a_max


def test_iiwa_plant_holds_where_it_is_before_the_first_command():
    """NaN from the start (lbr's init_command: the measured position): the reference stays at
    the initial position, no motion beyond the gravity-compensated hold."""
    plant = make_plant('iiwa', setup('iiwa14.urdf', 'iiwa', 0.001))
    for _ in range(100):
        plant.step(0.001, {'position': np.full((1, 7), np.nan)})
    assert np.array_equal(plant.reference, np.array(SEED_Q0))
    assert np.abs(plant.states()['position'] - SEED_Q0).max() < 1e-3


def test_iiwa_gain_defaults_are_arm_sim_defaults():
    p, g = ArmSimParams(), {x.name: x.default for x in plant_gains('iiwa')}
    pairs = dict(armature='armature', coulomb_friction='fc', viscous_friction='viscous', stiffness='stiffness',
                 joint_damping='joint_damping', ripple_amplitude='ripple_amplitude', ripple_periods='ripple_periods',
                 velocity_bandwidth_hz='velocity_bandwidth_hz', static_ratio='fs_ratio', stribeck_velocity='vs',
                 bristle_stiffness='sigma0', bristle_damping='sigma1', friction='friction', flexible='flexible')
    for gain, field in pairs.items():
        assert np.all(np.asarray(g[gain]) == np.asarray(getattr(p, field))), gain


def test_hybrid5_plant_is_the_plant_and_holds_its_load_without_a_command():
    s = setup('hybrid5.urdf', 'hybrid5', 1e-4, decel=1.0)
    plant = make_plant('hybrid5', s)
    prm = load_params()
    oracle = dyn.Plant(prm, kin.forward(s.initial['position'][:3], prm.R), (0.0, 0.0), 1e-4, 1)
    push = np.array([600.0, 500.0, 550.0, 3.0, 2.0])
    for _ in range(300):
        plant.step(1e-4, {'effort': push[None, :]})
        oracle.step(push[:3], push[3:])
    assert np.array_equal(plant.plant.p, oracle.p) and np.array_equal(plant.states()['effort'], push)
    v0 = np.abs(plant.states()['velocity'])
    for _ in range(3000):                               # 0.3 s with NaN: the holding brake
        plant.step(1e-4, {'effort': np.full((1, 5), np.nan)})
    v = plant.states()['velocity']
    assert v0.max() > 1e-3 and np.all(np.abs(v) < 1e-3 * v0.max() + 1e-6)


def test_every_plant_has_a_module_and_gains_have_distinct_names():
    names = [g.name for p in PLANTS for g in plant_gains(p)]
    assert len(names) == len(set(names))


@settings(max_examples=60, deadline=None)
@given(p0=st.lists(st.floats(-0.1, 0.08), min_size=6, max_size=6),
       v0=st.lists(st.floats(-1.0, 1.0), min_size=6, max_size=6),
       decel=st.floats(0.5, 6.0))
@example(p0=[0.0, 0.0, 0.0, 0.0, 0.0, -0.078125], v0=[0.0, 0.0, 0.0, 0.0, 0.0, -1.0], decel=0.5)
def test_a_braking_setpoint_never_exceeds_the_deceleration_and_ends_at_rest(p0, v0, decel):
    """Safety invariant of the watchdog stop as the drives receive it: the JTC emulation's
    command rows (velocity feedforward per plant step) change by at most decel * h per step and
    reach zero; the position never reverses."""
    s = setup('hexafloat_scaled.urdf', 'servo', 0.0025)
    f = TrajectoryFollower(controller_spec(CONTROLLERS, 'hexapod_controller'), s.hardware, np.zeros(6))
    f.knots = (np.array([0.0, 1.0]), np.vstack([p0, np.array(p0) + np.array(v0)]), np.vstack([v0, v0]))
    f.brake(0.0, np.full(6, decel), 0.000625)
    h = 0.000125
    rows = f.commands(0.0, int((np.abs(v0).max() / decel + 0.01) / h), h)      # past the stop
    v = np.vstack([v0, rows['velocity']])
    # rounding of the Hermite velocity: position differences over the 0.625 ms knot spacing, with
    # positions up to ~1 m along a 2 s stop, come out within a few eps * |p| / dt (4e-13 each);
    # 1e-12 was exceeded by 1.0e-12 in the example below (|p| 1.08 m); the bound, 1.2e-11 there, is
    # 2e-7 of decel * h
    rounding = 32 * np.finfo(float).eps * max(1.0, float(np.abs(f.knots[1]).max())) / 0.000625
    assert np.all(np.abs(np.diff(v, axis=0)) <= decel * h + rounding)
    assert np.all(rows['velocity'][-1] == 0.0)
    assert np.all(np.diff(rows['position'], axis=0) * np.sign(v0) >= -1e-15)
