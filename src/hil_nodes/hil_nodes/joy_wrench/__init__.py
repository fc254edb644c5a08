"""joy_wrench: a lab gamepad (sensor_msgs/Joy) as the force joystick."""
