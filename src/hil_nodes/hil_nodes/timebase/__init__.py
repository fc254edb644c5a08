"""The timebase node: node.py (the ROS shell) and its own helpers."""
