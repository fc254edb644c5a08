"""The recorder node: node.py (the ROS shell) and its own helpers."""
