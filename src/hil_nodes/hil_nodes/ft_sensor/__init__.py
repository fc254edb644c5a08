"""The ft_sensor node: node.py (the ROS shell) and its own helpers."""
