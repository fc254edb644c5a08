"""The drive test's motion command: via points sent to reference_source through its standard
SetParameters service (what the HMI and `ros2 param set` call), with reference_source driving
an in-process mock_hexapod in lockstep and the test playing the supervisor. Malformed, out of
the sliders' travel (the URDF's <ros2_control> limits) and too fast commands are refused with
the reason and the script goes on exactly as the seed's sines say (computed here from the seed);
a valid command takes the sliders to the via point."""
import numpy as np
from rcl_interfaces.msg import Parameter as ParameterMsg, ParameterType, ParameterValue
from rcl_interfaces.srv import SetParameters
from rclpy.qos import QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
from trajectory_msgs.msg import JointTrajectory

from hil_nodes import qos, topics
from hil_nodes.msgs.convert import duration_to_sec, stamp_to_ns
from hil_sim.mock_hardware.system_mock import system_mock
from hil_sim.reference_source.node import ReferenceSourceNode
from rig import build
from test_reference_source_node import T_NS, Supervisor, flow

AMPS, FREQS, SEED = [0.005] * 6, [0.3, 0.4, 0.5, 0.6, 0.7, 0.8], 7
TRAVEL = (-0.125, 0.1)                       # urdf/hexafloat_scaled.urdf, every slider


def _set_via(ros, values):
    req = SetParameters.Request(parameters=[ParameterMsg(name='via_points', value=ParameterValue(
        type=ParameterType.PARAMETER_DOUBLE_ARRAY, double_array_value=[float(v) for v in values]))])
    return ros.call(SetParameters, '/reference_source/set_parameters', req).results[0]


def _script(tau):
    """The seed's sine script at tau s after the synchronization ramp began (scripted_motion's
    definition: phases drawn by numpy's default_rng(seed))."""
    phases = np.random.default_rng(SEED).uniform(0.0, 2 * np.pi, 6)
    return np.asarray(AMPS) * np.sin(2 * np.pi * np.asarray(FREQS) * tau + phases)


def test_via_points_refused_with_the_reason_or_followed(ros):
    mock = system_mock('hexafloat_scripted', dict(lockstep=True, time_scale=0.0, lockstep_timeout=10.0),
                       context=ros.context)
    source = build(ros, ReferenceSourceNode, lockstep=True, seed=SEED, sync_duration=0.2, amplitudes=AMPS,
                   homing_min_duration=0.05)
    sup = Supervisor(ros, flow())
    js = ros.collect(JointState, topics.JOINT_STATES, qos.joint_states(True, depth=1000))
    cmds = ros.collect(JointTrajectory, topics.HEXAPOD_JOINT_TRAJECTORY,
                       QoSProfile(depth=1000, reliability=ReliabilityPolicy.BEST_EFFORT))
    for node in (mock, source):
        ros.add_node(node)
    ros.bring_up('reference_source')
    ros.bring_up('mock_hexapod')
    ros.spin_until(lambda: source.motion.phase.value == 'RUNNING', 60, 'RUNNING')
    t_homed = next(t for t, name, _ in sup.events if name == 'homed')

    refused_from = sup.last
    malformed = _set_via(ros, [0.5, 0.01, 0.01])
    outside = _set_via(ros, [1.0, 0.0, 0.0, 0.15, 0.0, 0.0, 0.0])
    fast = _set_via(ros, [0.05, 0.09, 0.0, 0.0, 0.0, 0.0, 0.0])
    backwards = _set_via(ros, [1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.5, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0])
    assert not malformed.successful and '7 values per point' in malformed.reason
    assert not outside.successful and 'slider_3 = 0.15 m is outside its travel [-0.125, 0.1] m' in outside.reason
    assert not fast.successful and 'too fast' in fast.reason and 'slider_1' in fast.reason
    assert not backwards.successful and 'strictly increasing' in backwards.reason
    ros.spin_until(lambda: sup.frames * T_NS > refused_from + 0.1e9, 60, '0.1 s after the refusals')
    # nothing moved otherwise: every command since is the seed's script (sync ramp over, c = 1)
    points = [(stamp_to_ns(m.header.stamp) + int(round(duration_to_sec(p.time_from_start) * 1e9)), p.positions)
              for m in cmds if stamp_to_ns(m.header.stamp) >= refused_from for p in m.points]
    assert len(points) > 100
    for t, pos in points:
        np.testing.assert_allclose(pos, _script((t - t_homed) * 1e-9), atol=1e-12)

    target = [0.02, -0.01, 0.03, 0.0, 0.01, -0.02]
    accepted_at = sup.last
    ok = _set_via(ros, [0.5, *[0.5 * v for v in target], 1.0, *target])
    assert ok.successful, ok.reason
    ros.spin_until(lambda: sup.frames * T_NS > accepted_at + 1.4e9, 60, 'the via path and a hold')
    last = js[-1]
    np.testing.assert_allclose(last.position, target, atol=2e-5)        # at the last via point, held
    np.testing.assert_allclose(last.velocity, 0.0, atol=1e-4)
    mid = min(js, key=lambda m: abs(stamp_to_ns(m.header.stamp) - (accepted_at + T_NS + 0.5e9)))
    np.testing.assert_allclose(mid.position, 0.5 * np.asarray(target), atol=2e-4)   # through the first one
    pos = np.array([m.position for m in js if stamp_to_ns(m.header.stamp) >= accepted_at])
    assert np.all(np.abs(np.diff(pos, axis=0)) <= 0.2 * 2.5e-3 + 1e-9), 'no jump: within velocity_max'
    assert np.all((pos >= TRAVEL[0]) & (pos <= TRAVEL[1]))
