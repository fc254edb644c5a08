"""The reference_faults node: node.py (the ROS shell) and its own helpers."""
