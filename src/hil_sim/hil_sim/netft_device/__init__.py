"""The netft_device node: node.py (the ROS shell) and its own helpers."""
