"""Messages for the bag tests, as the recorder gets them: serialized by rclpy."""
import importlib

from rclpy.serialization import serialize_message


def sample(msgtype: str, k: int) -> bytes:
    """A message of ``msgtype`` (rclpy's class, its defaults) whose content depends on ``k``: its
    header stamp and frame, a string or an array; serialized by rclpy, as the recorder gets it."""
    pkg, kind, name = msgtype.split('/')
    msg = getattr(importlib.import_module(f'{pkg}.{kind}'), name)()
    if hasattr(msg, 'header'):
        msg.header.stamp.sec, msg.header.stamp.nanosec, msg.header.frame_id = k, 7 * k, f'frame_{k}'
    if msgtype == 'sensor_msgs/msg/JointState':   # (rclpy leaves trailing bytes after empty double arrays)
        msg.name, msg.position, msg.velocity, msg.effort = ['j1', 'j2'], [0.1 * k, -0.2], [0.0, 1.0], [float(k), 0.0]
    elif msgtype == 'std_msgs/msg/String':
        msg.data = f'status {k}'
    elif msgtype == 'std_msgs/msg/Float64MultiArray':
        msg.data = [0.5 * k, -1.0, float(k % 7)]
    return serialize_message(msg)
