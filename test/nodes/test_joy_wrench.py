"""joy_wrench over DDS: sensor_msgs/Joy messages as the joy package publishes them become the
operator's wrench on /joystick/wrench (frame joystick_frame) while the enable button is held,
the mapping's value (axis x scale past the dead zone, written out here); released, three zeros
then silence; a message the mapping refuses (an axis missing) publishes nothing; a bad mapping
stops the node at start naming the parameter."""
import numpy as np
import pytest
from geometry_msgs.msg import WrenchStamped
from sensor_msgs.msg import Joy

from hil_nodes import topics
from hil_nodes.framework.param_table import ParameterError
from hil_nodes.joy_wrench.node import JoyWrenchNode
from hil_nodes.msgs.convert import wrench_to_array
from rig import build


def test_joy_messages_become_the_joystick_wrench(ros):
    node = ros.add_node(build(ros, JoyWrenchNode, force_axes=[0, 1, -1], torque_axes=[-1, -1, 3],
                              force_scale=[40.0, -20.0, 0.0], torque_scale=[0.0, 0.0, 2.0], deadzone=0.2,
                              enable_button=5, joystick_frame='ft_sensor'))
    got = ros.collect(WrenchStamped, topics.JOYSTICK_WRENCH, 50)
    pad = ros.node.create_publisher(Joy, topics.JOY, 10)
    ros.spin_until(lambda: node.count_subscribers(topics.JOYSTICK_WRENCH) >= 1
                   and pad.get_subscription_count() >= 1, 10, 'matched')

    def send(axes, buttons):
        pad.publish(Joy(axes=[float(a) for a in axes], buttons=list(buttons)))

    held = [0, 0, 0, 0, 0, 1]
    send([0.6, -1.0, 0.0, 0.1], held)
    ros.spin_until(lambda: got, 10, 'the wrench')
    # (0.6 - 0.2) / 0.8 * 40 = 20 N; -1 -> -1 * -20 = 20 N; 0.1 inside the dead zone: 0
    np.testing.assert_allclose(wrench_to_array(got[-1].wrench), [20.0, 20.0, 0.0, 0.0, 0.0, 0.0], atol=1e-12)
    assert got[-1].header.frame_id == 'ft_sensor'

    send([0.6, -1.0], held)                                   # axis 3 missing: refused, nothing sent
    ros.spin_for(0.3)
    assert len(got) == 1 and node.refused == 1

    for _ in range(6):                                         # enable released: 3 zeros, then silence
        send([0.6, -1.0, 0.0, 0.9], [0] * 6)
    ros.spin_until(lambda: len(got) >= 4, 10, 'the release')
    ros.spin_for(0.3)
    assert len(got) == 4 and not any(wrench_to_array(m.wrench).any() for m in got[1:])


def test_a_bad_mapping_stops_the_node(ros):
    with pytest.raises(ParameterError, match='deadzone'):
        build(ros, JoyWrenchNode, deadzone=2.0)
