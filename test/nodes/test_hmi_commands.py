"""The HMI's operator inputs over DDS, the HMI node in the test's process (its widgets' own
callbacks called as a click would): the force joystick is published as a WrenchStamped in base
axes while pushing, then a few zeros, then nothing; the drag handle's pull and turn give the
gains' wrench; motion commands are checked as their node checks them and the node's answer is
shown (reference_source's refusal as it gives it; space_plant's set-point ranges; the G-code
parser's line). An end-effector target is checked for reachability with the running
space_plant's own parameters from the measured state: an unreachable one is refused with the
check's reason and never sent; a reachable one goes out as the attitude space_plant reads, and
space_plant's own answer is shown."""
import numpy as np
from geometry_msgs.msg import PoseStamped, WrenchStamped
from rcl_interfaces.srv import GetParameters

from hil_core.maths.rotations import quat_to_matrix
from hil_core.space.model import euler_zyx_to_matrix
from hil_nodes import qos, topics
from hil_nodes.hmi.node import HmiNode
from hil_nodes.msgs.convert import wrench_to_array
from hil_nodes.space_plant.node import SpacePlantNode
from hil_sim.reference_source.node import ReferenceSourceNode
from rig import build


def _hmi(ros):
    return ros.add_node(build(ros, HmiNode, port=0, joystick_rate=50.0))


def test_joystick_push_release_and_drag_handle(ros):
    hmi = _hmi(ros)
    got = ros.collect(WrenchStamped, topics.JOYSTICK_WRENCH, 50)
    ros.spin_until(lambda: hmi.count_subscribers(topics.JOYSTICK_WRENCH) >= 1, 10, 'the test subscribed')
    hmi.joystick_panel.push((0.0, 30.0, 0.0), (0.0, 0.0, 1.0))          # the Push button's call
    ros.spin_until(lambda: len(got) >= 5, 10, 'joystick messages')
    assert all(m.header.frame_id == 'hexapod_base' for m in got)
    np.testing.assert_allclose(wrench_to_array(got[-1].wrench), [0, 30, 0, 0, 0, 1])
    hmi.joystick_panel.release()
    ros.spin_until(lambda: not wrench_to_array(got[-1].wrench).any(), 10, 'the release')
    ros.spin_for(0.3)                                                   # 15 ticks at 50 Hz
    zeros = [m for m in got if not wrench_to_array(m.wrench).any()]
    assert len(zeros) == 3, 'three zeros after a release, then silence'
    # the handle pulled 10 mm along x and turned 0.2 rad about z: 500 N/m and 10 N m/rad
    hmi.joystick.from_handle((0.01, 0.0, 0.0), (np.cos(0.1), 0.0, 0.0, np.sin(0.1)))
    np.testing.assert_allclose(hmi.joystick.requested, [5.0, 0, 0, 0, 0, 2.0], atol=1e-12)


def test_motion_commands_are_checked_and_answered(ros, tmp_path):
    hmi = _hmi(ros)
    source = ros.add_node(build(ros, ReferenceSourceNode, lockstep=True))
    assert ros.change_state('reference_source', 'configure')
    answer = lambda: hmi.motion_panel.answer.content
    ros.spin_until(lambda: hmi.motion_panel.system == 'hexafloat_scripted', 10, 'the system seen')
    assert hmi.motion_panel.send_via.visible and not hmi.motion_panel.send_ee.visible

    hmi.send_command('via_points', '1.0 0.02 x')
    assert 'REFUSED' in answer() and "'x' is not a number" in answer()
    hmi.send_command('via_points', '1.0 0.02 0 0 0 0 0')
    ros.spin_until(lambda: 'REFUSED' in answer() and 'not active' in answer(), 10, "the node's answer")
    assert 'via points are taken while the script runs (reference_source is not active)' in answer()

    hmi.send_command('ee_target', ((2000.0, 0.0, 0.0), (0.0, 0.0, 0.0)))
    assert "REFUSED: parameter 'setpoint_position' = 2000.0 is outside its range" in answer()
    hmi.send_command('ee_target', ((1.4, -0.2, 0.1), (0.0, 0.0, 0.0)))      # in range: space_plant is asked
    assert '/space_plant/get_parameters is not available' in answer()

    bad = tmp_path / 'bad.nc'
    bad.write_text('G21 G90\nG1 X10 Y0\n')
    hmi.send_command('gcode', str(bad))
    assert 'REFUSED' in answer() and 'line 2' in answer()
    hmi.send_command('gcode', 'config/gcode/agh.nc')                  # valid: the node is not on the graph
    assert '/hybrid_controller/set_parameters is not available' in answer()


Q0 = np.radians([-26.25, 65.96, 0.72, 67.57, -63.15, -2.56, 140.79])      # seed 002 initial joints


def test_ee_target_checked_for_reachability_and_answered_by_space_plant(ros):
    hmi = _hmi(ros)
    # space_plant with lbr_fri_ros2_stack's joint names (its hardware mode): the HMI reads the
    # joints by the node's own values, not its Param table's defaults
    lbr = [f'lbr_A{i}' for i in range(1, 8)]
    plant = ros.add_node(build(ros, SpacePlantNode, joint_names=lbr))
    assert ros.change_state('space_plant', 'configure') and ros.change_state('space_plant', 'activate')
    answer = lambda: hmi.motion_panel.answer.content
    targets = ros.collect(PoseStamped, topics.SPACE_EE_SETPOINT, qos.command())
    ros.spin_until(lambda: hmi.count_subscribers(topics.SPACE_EE_SETPOINT) >= 1, 10, 'the test subscribed')
    ros.spin_until(lambda: hmi.motion_panel.system == 'space_iiwa', 10, 'the system seen')
    ros.spin_until(lambda: hmi.service_client(GetParameters, topics.node_service('space_plant', 'get_parameters')).service_is_ready(), 10,
                   "the HMI's client of space_plant's parameters matched")
    euler = (-88.38, -37.27, -56.99)                                    # seed 002's target attitude

    hmi.send_command('ee_target', ((1.448, -0.236, 0.094), euler))      # no state heard yet
    ros.spin_until(lambda: 'REFUSED' in answer(), 10, 'the refusal')
    assert 'cannot check reachability: no joint state heard yet for lbr_A1' in answer()

    # the state the HMI drained from /joint_states and /tf: the seed's start, satellite at rest
    hmi.view.positions.update({f'iiwa_joint_{i + 1}': 0.0 for i in range(7)})      # the mock's names: not these
    hmi.view.positions.update(dict(zip(lbr, map(float, Q0))))
    hmi.view.tf.set('world', 'satellite', (0.0, 0.0, 0.0), (0.0, 0.0, 0.0, 1.0))
    hmi.send_command('ee_target', ((3.0, 0.0, 0.0), (0.0, 0.0, 0.0)))   # in range, 3 m away
    ros.spin_until(lambda: 'REFUSED' in answer(), 30, 'the reachability verdict')
    assert 'REFUSED: unreachable from the measured state: not reached within 20 s of the model' in answer()
    ros.spin_for(0.3)
    assert not targets, 'an unreachable target was sent'

    hmi.send_command('ee_target', ((1.448, -0.236, 0.094), euler))      # the seed's target: reachable
    ros.spin_until(lambda: 'accepted' in answer() or 'REFUSED' in answer(), 30, "space_plant's answer")
    assert 'accepted: space_plant: new EE set-point (checked: reached in' in answer(), answer()
    assert len(targets) == 1 and targets[0].header.frame_id == 'world'
    q = targets[0].pose.orientation
    np.testing.assert_allclose(quat_to_matrix([q.x, q.y, q.z, q.w]), euler_zyx_to_matrix(np.radians(euler)),
                               atol=1e-12)
    np.testing.assert_allclose(plant.plant.r_des, [1.448, -0.236, 0.094])   # the node took it
