"""A jog and a new G-code program for hybrid_controller while it runs (the HMI's 'Jog' and
'Load program', or ``ros2 param set /hybrid_controller jog|gcode_file ...``): mock drives + the
controller in lockstep, the test as the supervisor's frame gate, the HMI in the test's process
sending them through the node's SetParameters service. In IDLE a jog moves the held pose by its
displacement (forward kinematics of the reference legs) and is refused without a feed or below
the base plane; a program with a G-code error is refused with
the parser's line; a valid one is taken, and the next run (HOMING, SYNCHRONIZING, RUNNING)
follows it: the platform, by the forward kinematics of the reference legs, goes along +x only,
where the configured program (config/gcode/agh.nc) starts towards -x, -y. While RUNNING a new
program or a jog is refused with the phase, and the reference goes on along the program taken."""
import numpy as np
from diagnostic_msgs.msg import DiagnosticArray
from rcl_interfaces.srv import SetParameters
from rclpy.parameter import Parameter
from sensor_msgs.msg import JointState
from std_msgs.msg import Header

from hil_core.hybrid5 import kinematics as kin
from hil_core.hybrid5.params import load_params
from hil_nodes import qos, topics
from hil_nodes.hmi.node import HmiNode
from hil_nodes.hybrid_controller.node import HybridControllerNode
from hil_sim.mock_hardware.system_mock import system_mock
from rig import build, start

P = load_params()
ORIGIN = np.array(P.work_origin)


def test_a_jog_and_a_new_program_are_taken_in_idle_and_refused_while_running(ros, tmp_path):
    mode = ['IDLE']
    ros.add_node(system_mock('hybrid5', dict(lockstep=True, lockstep_timeout=5.0, status_period=0.1),
                             context=ros.context))
    start(ros, HybridControllerNode, lockstep=True, status_period=0.1)
    hmi = ros.add_node(build(ros, HmiNode, port=0))
    frames = ros.node.create_publisher(Header, topics.HIL_FRAME, qos.stream(True))
    js = []

    def gate(msg):                                       # the supervisor's frame gate, in mode[0]
        js.append(msg)
        frames.publish(Header(stamp=msg.header.stamp, frame_id=mode[0]))
    ros.node.create_subscription(JointState, topics.JOINT_STATES, gate, qos.joint_states(True, depth=5000))
    events = ros.collect(DiagnosticArray, topics.HIL_EVENTS, qos.command(depth=100))
    refs = ros.collect(JointState, topics.HYBRID_REFERENCE, qos.stream(True, depth=50000))
    ros.bring_up('hybrid_controller')
    ros.bring_up('mock_hybrid5')
    ros.spin_until(lambda: len(js) > 20, 30, 'lockstep frames')
    ros.spin_until(lambda: hmi.motion_panel.system == 'hybrid5', 10, 'the system seen')
    ros.spin_until(lambda: hmi.service_client(SetParameters, topics.node_service('hybrid_controller', 'set_parameters')).service_is_ready(),
                   10, "the HMI's client of the node's parameters matched")
    answer = lambda: hmi.motion_panel.answer.content
    names = lambda: [s.name for a in events for s in a.status]

    # a jog in IDLE: the held pose moved by (2, -1, 0) mm, by the forward kinematics of the
    # reference legs; then refused: no feed (the HMI's own parse), below the base plane (the node)
    ros.spin_until(lambda: len(refs) > 5, 30, 'references')
    p0 = kin.forward(np.array(refs[-1].position[:3]), P.R)
    hmi.send_command('jog', 'X2 Y-1 F600')
    ros.spin_until(lambda: 'accepted' in answer() or 'REFUSED' in answer(), 10, "the node's answer to the jog")
    assert 'accepted' in answer(), answer()
    n_jog = len(refs)
    at_rest = lambda: len(refs) > n_jog + 50 and not any(refs[-1].velocity) and not any(refs[-50].velocity)
    ros.spin_until(at_rest, 120, 'the jog done')
    np.testing.assert_allclose(kin.forward(np.array(refs[-1].position[:3]), P.R) - p0, [0.002, -0.001, 0.0],
                               atol=1e-9)
    hmi.send_command('jog', 'X5')
    assert "REFUSED: jog: feed move before any F word: 'X5'" in answer()
    hmi.send_command('jog', 'G0 Z-900')
    ros.spin_until(lambda: 'REFUSED' in answer(), 10, "the node's refusal of the jog")
    assert 'not above the base plane' in answer(), answer()
    n_answers = answer()
    hmi.send_command('jog', 'G0 Z700')                       # z about 1.55 m: every leg past 1.6 m
    ros.spin_until(lambda: answer() != n_answers and 'REFUSED' in answer(), 10, "the node's refusal (travel)")
    assert 'takes hybrid5_leg_1 to 1.600' in answer() and 'outside its travel 0.6-1.6 m' in answer(), answer()

    bad = tmp_path / 'bad.nc'
    bad.write_text('G21 G90\nG1 X10 Y0\n')                       # a feed move before any F
    good = tmp_path / 'along_x.nc'
    good.write_text('G21 G90 G17\nG1 X2 F600\nG1 X4\n')        # 4 mm along +x at 0.6 m/min
    # the HMI's own check refuses the bad one before sending; the node refuses it too
    hmi.send_command('gcode', str(bad))
    assert 'REFUSED' in answer() and 'line 2' in answer()
    refused = ros.call(SetParameters, '/hybrid_controller/set_parameters', SetParameters.Request(
        parameters=[Parameter('gcode_file', value=str(bad)).to_parameter_msg()]))
    assert not refused.results[0].successful and 'line 2' in refused.results[0].reason

    hmi.send_command('gcode', str(good))
    ros.spin_until(lambda: 'accepted' in answer() or 'REFUSED' in answer(), 10, "the node's answer")
    assert 'accepted' in answer(), answer()

    mode[0] = 'HOMING'
    ros.spin_until(lambda: 'synchronized' in names(), 60, 'homed + synchronized')
    mode[0] = 'RUNNING'
    n0 = len(refs)
    ros.spin_until(lambda: len(refs) > n0 + 1500, 120, '1500 running frames')
    p = np.array([kin.forward(np.array(r.position[:3]), P.R) for r in refs[n0:]]) - ORIGIN
    assert p[-1, 0] > 1e-4, 'the platform did not go along +x: not the new program'
    assert np.abs(p[:, 1]).max() < 1e-6 and np.abs(p[:, 2]).max() < 1e-6

    hmi.send_command('gcode', 'config/gcode/agh.nc')
    ros.spin_until(lambda: 'REFUSED' in answer(), 10, "the node's refusal")
    assert 'a new program is taken in IDLE only' in answer() and 'now in RUNNING' in answer(), answer()
    hmi.send_command('jog', 'X1 F600')
    ros.spin_until(lambda: 'REFUSED' in answer(), 10, "the node's refusal of the jog")
    assert 'a jog is taken in IDLE only (the robot holds); now in RUNNING' in answer(), answer()
    n1 = len(refs)
    ros.spin_until(lambda: len(refs) > n1 + 200, 60, 'more running frames')
    x = [kin.forward(np.array(r.position[:3]), P.R)[0] - ORIGIN[0] for r in refs[n1:]]
    assert min(x) > 0 and np.all(np.diff(x) >= -1e-12), 'the running program changed'
