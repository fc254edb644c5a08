"""``joy_wrench``: a lab gamepad as the force joystick (docs/hmi.md, "Force joystick"). The ROS
``joy`` package publishes the pad's axes and buttons on topics.JOY (sensor_msgs/Joy, at its
``autorepeat_rate`` while held); this node maps each message to the operator's wrench request
(``hil_core.ft.joy_mapping``: an axis and a scale per component, a dead zone, an enable button)
and publishes it on topics.JOYSTICK_WRENCH (geometry_msgs/WrenchStamped), as the HMI's drag
handle does: while pushing, then a few zeros after a release, then nothing. The F/T node limits
it in magnitude and rate and releases it when it goes silent, whoever sends it.

A plain rclpy node outside the managed graph (an operator input like the HMI): run it next to
``ros2 run joy joy_node`` with ``python -m hil_nodes.joy_wrench.node --ros-args -p ...``.
A message the mapping refuses (a missing or non-finite axis) is logged (throttled) and asks
for nothing."""
from __future__ import annotations

import sys

import numpy as np
from geometry_msgs.msg import WrenchStamped
from rclpy.node import Node
from sensor_msgs.msg import Joy

from hil_nodes import topics
from hil_nodes.framework.plain_params import run_plain
from hil_nodes.joy_wrench.params import PARAMS, load_parameters

__all__ = ['PARAMS', 'JoyWrenchNode', 'main']

RELEASE_REPEATS = 3               # zeros sent after a release (a lost one does not leave a push on)


class JoyWrenchNode(Node):
    PARAMS = PARAMS

    def __init__(self, node_name: str = 'joy_wrench', **kwargs):
        super().__init__(node_name, **kwargs)
        self.p, self.mapping = load_parameters(self)
        self._zeros_left = 0
        self.refused = 0
        self._pub = self.create_publisher(WrenchStamped, topics.JOYSTICK_WRENCH, 10)
        self.create_subscription(Joy, topics.JOY, self._on_joy, 10)

    def _on_joy(self, msg: Joy) -> None:
        w, why = self.mapping.wrench(msg.axes, msg.buttons)
        if why is not None:
            self.refused += 1
            self.get_logger().warning(f'joy message refused: {why}', throttle_duration_sec=2.0)
            return
        if w.any():
            self._zeros_left = RELEASE_REPEATS
        elif self._zeros_left > 0:
            self._zeros_left -= 1
        else:
            return
        out = WrenchStamped()
        out.header.stamp = self.get_clock().now().to_msg()
        out.header.frame_id = self.p.joystick_frame
        f, t = out.wrench.force, out.wrench.torque
        f.x, f.y, f.z, t.x, t.y, t.z = (float(v) for v in np.asarray(w, float))
        self._pub.publish(out)


def main(args: list[str] | None = None) -> int:
    return run_plain(JoyWrenchNode, 'joy_wrench', args)


if __name__ == '__main__':
    sys.exit(main())
