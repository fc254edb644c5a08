"""The reference_source node: node.py (the ROS shell) and its own helpers."""
